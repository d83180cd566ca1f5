// A small second reader written from docs/FORMAT.md §4, §7 and §12 on top of
// the pure functions of verify.js and trust/roles.js (no client, no network):
// the reading algorithm of the spec, in code. The vector tests read the
// committed trees and every tampered variant with it, beside the client.
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { createHash } from 'node:crypto'
import {
  verifyFsinfo, verifyChunk, verifyDirPage, verifyChunkIndex, checkPagePlacement, checkChunkIndexPlacement, checkFreshness
} from 'rotree-client/verify'
import {
  NotFoundError, NotADirectoryError, SymlinkLoopError, BadPathError, IsADirectoryError, HashMismatchError
} from 'rotree-client/errors'
import { compareBytes, utf8, MAX_FSINFO, MAX_SYMLINK_HOPS, decodeFsinfoV2, MAX_FSINFO_V2, decodeTrustDoc, refOfReleaseRoot } from 'rotree-client/format'
import { parseFragment, checkAddress, walkTrust, verifyFsinfoV2 } from 'rotree-client/trust'

const sha = b => createHash('sha256').update(b).digest('hex')

export class OfflineTree {
  /** FORMAT.md §7 steps 1–2: fsinfo.json, capped, then verified against the user's key. */
  static async open (dir, publicKey, now) {
    const bytes = await fs.readFile(path.join(dir, 'fsinfo.json'))
    assert.ok(bytes.length <= MAX_FSINFO + 1)
    const info = verifyFsinfo(bytes, { publicKey, now })
    return new OfflineTree(dir, info.root, info.rootMtime)
  }

  /**
   * FORMAT.md §12.4 and §12.9, docs/TRUST.md rules 10–14 in their order:
   * the family and name, the trust documents from the first (which the
   * address certifies) to the newest there is (the update comes first), then
   * retirement, the document fsinfo.json names, the thresholds and times.
   */
  static async openV2 (dir, fragment, now) {
    const { anchor, name } = parseFragment(fragment)
    const bytes = await fs.readFile(path.join(dir, 'fsinfo.json'))
    assert.ok(bytes.length <= MAX_FSINFO_V2 + 1)
    const info = decodeFsinfoV2(bytes)
    checkAddress(info, anchor, name)
    const docs = []
    for (let n = 1; ; n++) {
      const bytes = await fs.readFile(path.join(dir, 'trust', n + '.json')).catch(err => { if (err.code === 'ENOENT') return null; throw err })
      if (bytes === null) break
      docs.push(decodeTrustDoc(bytes))
    }
    const trust = walkTrust(null, docs, anchor)
    verifyFsinfoV2(info, { anchor, name, trust, now, skewMs: 300e3, graceMs: 0, checkFreshness })
    return new OfflineTree(dir, refOfReleaseRoot(info.release.root), info.release.root.mtime)
  }

  constructor (dir, root, rootMtime) { this.dir = dir; this.root = root; this.rootMtime = rootMtime; this.reached = new Set() }

  get rootEntry () { return { name: '', type: 'dir', dir: this.root, entries: undefined, mtime: this.rootMtime } }

  /** §7 step 3: a blob by handle, checked for size and hash before anything parses it (and decoded, §12.6). */
  async blob (ref) {
    const bytes = new Uint8Array(await fs.readFile(path.join(this.dir, 'h', ref.hash)))
    const chunk = await verifyChunk(bytes, ref)
    this.reached.add(ref.hash)
    return chunk
  }

  async page (ref, expect) {
    const bytes = new Uint8Array(await fs.readFile(path.join(this.dir, 'h', ref.hash)))
    const page = await verifyDirPage(bytes, ref)
    this.reached.add(ref.hash)
    checkPagePlacement(page, expect) // §4.4 placement checks
    return page
  }

  /** §4.4 lookup: descend index pages to the one leaf that may hold the name. */
  async lookup (dirEntry, nameBytes) {
    let page = await this.page(dirEntry.dir, { entries: dirEntry.entries })
    let next // upper bound inherited from the ancestors' ranges
    while (page.kind === 'index') {
      const cs = page.children
      if (compareBytes(nameBytes, cs[0].firstNameBytes) < 0) return null
      let i = cs.length - 1
      while (compareBytes(cs[i].firstNameBytes, nameBytes) > 0) i--
      next = cs[i + 1]?.firstNameBytes ?? next
      page = await this.page(cs[i], { level: page.level - 1, firstNameBytes: cs[i].firstNameBytes, nextNameBytes: next, entries: cs[i].entries })
    }
    return page.entries.find(e => compareBytes(e.nameBytes, nameBytes) === 0) ?? null
  }

  /** §4.4 listing: every leaf in order. */
  async * entries (dirEntry) {
    const self = this
    async function * walk (ref, expect) {
      const page = await self.page(ref, expect)
      if (page.kind === 'leaf') { yield * page.entries; return }
      const cs = page.children
      for (let i = 0; i < cs.length; i++) {
        yield * walk(cs[i], { level: page.level - 1, firstNameBytes: cs[i].firstNameBytes, nextNameBytes: cs[i + 1]?.firstNameBytes ?? expect.nextNameBytes, entries: cs[i].entries })
      }
    }
    yield * walk(dirEntry.dir, { entries: dirEntry.entries })
  }

  /** §4.6 path resolution. */
  async resolve (p, follow = true) {
    const queue = []
    for (const c of p.split('/')) {
      if (c === '' || c === '.') continue
      if (c === '..') { if (!queue.length) throw new BadPathError('above root'); queue.pop() } else queue.push(c)
    }
    const stack = [this.rootEntry]; const names = []
    let hops = 0
    while (queue.length) {
      const c = queue.shift()
      if (c === '' || c === '.') continue
      if (c === '..') {
        if (stack.length === 1) throw new SymlinkLoopError('symlink leads above the tree root')
        stack.pop(); names.pop(); continue
      }
      const dir = stack.at(-1)
      if (dir.type !== 'dir') throw new NotADirectoryError('/' + names.join('/'))
      const e = await this.lookup(dir, utf8.encode(c))
      if (!e) throw new NotFoundError('/' + [...names, c].join('/'))
      if (e.type === 'symlink' && (queue.length > 0 || follow)) {
        if (++hops > MAX_SYMLINK_HOPS) throw new SymlinkLoopError('too many symlinks')
        if (e.target.startsWith('/')) { stack.length = 1; names.length = 0 }
        queue.unshift(...e.target.split('/'))
        continue
      }
      stack.push(e.type === 'dir' ? { ...e, entries: e.size } : e); names.push(c)
    }
    return { entry: stack.at(-1), path: '/' + names.join('/') }
  }

  /** §4.3: a file's bytes, from inline data, a chunk list or a chunk-index tree. */
  async read (entry) {
    if (entry.type === 'dir') throw new IsADirectoryError('directory')
    if (entry.inline) return entry.inline
    const parts = []
    if (entry.chunks) for (const c of entry.chunks) parts.push(await this.blob(c))
    else {
      const walk = async (ref, level, bytes) => {
        const idx = await verifyChunkIndex(new Uint8Array(await fs.readFile(path.join(this.dir, 'h', ref.hash))), ref)
        this.reached.add(ref.hash)
        checkChunkIndexPlacement(idx, { level, bytes })
        for (const c of idx.children) {
          if (level === 1) parts.push(await this.blob(c))
          else await walk(c, level - 1, c.bytes)
        }
      }
      await walk(entry.index, entry.index.levels, entry.size)
    }
    const out = Buffer.concat(parts)
    assert.equal(out.length, entry.size)
    // §12.7: a version-2 file's SHA-256, checked at the end
    if (typeof entry.sha256 === 'string' && sha(out) !== entry.sha256) throw new HashMismatchError('the file does not hash to its entry\'s SHA-256')
    return out
  }

  /** Every path below the root: { '/': stat, '/a': stat, … } with content hashes. */
  async walkAll () {
    const out = {}
    const visit = async (entry, p) => {
      const d = { type: entry.type, size: entry.size, mtime: entry.mtime, exec: !!entry.exec }
      if (entry.type === 'symlink') d.target = entry.target
      if (entry.type === 'file') d.sha256 = sha(await this.read(entry))
      const kids = []
      if (entry.type === 'dir') for await (const e of this.entries(entry)) kids.push(e)
      if (entry.type === 'dir') d.size = kids.length
      out[p] = d
      for (const k of kids) await visit(k.type === 'dir' ? { ...k, entries: k.size } : k, (p === '/' ? '' : p) + '/' + k.name)
    }
    await visit(this.rootEntry, '/')
    return out
  }

  /** Read a path the way a client would: a directory is listed, a file read whole. */
  async readPath (p) {
    const { entry } = await this.resolve(p, true)
    if (entry.type === 'dir') { const n = []; for await (const e of this.entries(entry)) n.push(e.name); return n }
    return this.read(entry)
  }
}


/** Catch the error of fn and return its code (also from inside an AllMirrorsFailedError). */
export async function codeOf (fn) {
  try { await fn() } catch (err) {
    if (err.code === 'ROTREE_ALL_MIRRORS_FAILED' && err.errors?.length) return err.errors.map(e => e.code).join(',')
    return err.code ?? String(err)
  }
  return 'no error'
}

export const pick = (d, keys) => Object.fromEntries(keys.filter(k => d[k] !== undefined).map(k => [k, d[k]]))
export const STAT_KEYS = ['type', 'size', 'mtime', 'exec', 'target', 'sha256']

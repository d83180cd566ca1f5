// A private tree end to end (docs/FORMAT.md §12.8), as its publisher, its
// readers and its keyless mirrors use it: real files (a few MB of
// /usr/share/doc and some made-up ones), the CLI in child processes, a real
// `rotree serve` on port 0, and the library beside it.
//
//   - what OUT publishes (everything outside OUT/.rotree/) holds no name and
//     no 16-byte run of any source file, of any page a reader decrypts, or of
//     any blob key; .rotree/ is 0700 and private.json 0600;
//   - a reader with its identity gets the source's bytes (cat, get, ls, stat,
//     the library); without one, or with another, ROTREE_NO_ACCESS in one line;
//   - the keyring opens with the `age` tool;
//   - a mirror without any identity pulls, fscks, is repaired, and still
//     serves the tree to its readers;
//   - a removed reader decrypts nothing published after its removal;
//   - a public OUT is not turned private, nor a private one public.
import { test, describe, before, after } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { createHash } from 'node:crypto'
import { execFileSync } from 'node:child_process'
import { openTree } from 'rotree-client'
import { openKeyring, unwrapRoot, walkManifest, parseIdentities, decodeEpoch } from 'rotree-client/access'
import { decodeDirPage, decodeChunkIndex, decodeFsinfoV2, openSealed, fromHex } from 'rotree-client/format'
import { verifyDecoded } from 'rotree-client/verify'
import { tmpdir, writeTree, prng } from '../helpers/fixtures.js'
import { needs } from '../helpers/tools.js'
import { rotree, start } from '../cli/helpers.js'

const DOC = '/usr/share/doc'
const DOC_BUDGET = 3 << 20 // bytes of /usr/share/doc copied into SRC (it is 100+ MB on a desktop)
const DOC_FILE_MAX = 256 << 10
const V2 = { version: 2 }
const sha = b => createHash('sha256').update(b).digest('hex')

// every child runs without the identity, config or reader state of the user running the tests
for (const k of Object.keys(process.env)) if (k.startsWith('ROTREE_')) delete process.env[k]
const cli = (args, env = {}) => rotree(args, { env })

/** Copy regular files of /usr/share/doc (each at most DOC_FILE_MAX) until `budget` bytes; returns bytes copied. */
async function copyDocs (dest, budget) {
  let total = 0
  async function copyDir (from, to) {
    let names
    try { names = (await fs.readdir(from)).sort() } catch { return }
    for (const n of names) {
      if (total >= budget) return
      const src = path.join(from, n)
      const st = await fs.lstat(src)
      if (st.isDirectory()) { await copyDir(src, path.join(to, n)); continue }
      if (!st.isFile() || st.size > DOC_FILE_MAX) continue
      let bytes
      try { bytes = await fs.readFile(src) } catch { continue }
      await fs.mkdir(to, { recursive: true })
      await fs.writeFile(path.join(to, n), bytes)
      total += bytes.length
    }
  }
  await copyDir(DOC, dest)
  return total
}

/** Every entry under dir: relative path → { type, bytes?, target? }. */
async function listTree (dir) {
  const out = new Map()
  async function walk (rel) {
    for (const n of (await fs.readdir(path.join(dir, rel))).sort()) {
      const r = rel ? rel + '/' + n : n
      const p = path.join(dir, r)
      const st = await fs.lstat(p)
      if (st.isSymbolicLink()) out.set(r, { type: 'symlink', target: await fs.readlink(p) })
      else if (st.isDirectory()) { out.set(r, { type: 'dir' }); await walk(r) } else out.set(r, { type: 'file', bytes: await fs.readFile(p), exec: (st.mode & 0o111) !== 0 })
    }
  }
  await walk('')
  return out
}

/** Every regular file under dir (relative names), skipping `skip` (top-level names). */
async function filesUnder (dir, skip = []) {
  const out = []
  async function walk (rel) {
    for (const n of (await fs.readdir(path.join(dir, rel))).sort()) {
      const r = rel ? rel + '/' + n : n
      if (!rel && skip.includes(n)) continue
      const st = await fs.lstat(path.join(dir, r))
      if (st.isDirectory()) await walk(r)
      else if (st.isFile()) out.push(r)
    }
  }
  await walk('')
  return out
}

// ---- finding 16-byte runs: every 16-byte window of the published files in
// an open-addressing table of their offsets (a 32-bit hash of the window
// picks the slot; a hit is confirmed byte by byte), then every window of
// every source looked up. Complete (every window of both sides) and linear.
const W = 16
function hash16 (dv, i) {
  let h = 0x9747b28c
  for (let k = 0; k < 16; k += 4) {
    let x = Math.imul(dv.getUint32(i + k, true), 0xcc9e2d51)
    x = Math.imul((x << 15) | (x >>> 17), 0x1b873593)
    h ^= x
    h = (Math.imul((h << 13) | (h >>> 19), 5) + 0xe6546b64) | 0
  }
  h ^= h >>> 16; h = Math.imul(h, 0x85ebca6b); h ^= h >>> 13; h = Math.imul(h, 0xc2b2ae35); h ^= h >>> 16
  return h >>> 0
}

class WindowIndex {
  /** @param {{ name: string, bytes: Buffer }[]} files */
  constructor (files) {
    this.files = files
    this.starts = []
    let total = 0; let windows = 0
    for (const f of files) { this.starts.push(total); total += f.bytes.length; windows += Math.max(0, f.bytes.length - W + 1) }
    this.buf = Buffer.concat(files.map(f => f.bytes))
    this.dv = new DataView(this.buf.buffer, this.buf.byteOffset, this.buf.length)
    let size = 1024
    while (size < windows * 2) size *= 2
    this.mask = size - 1
    this.slots = new Int32Array(size).fill(-1)
    files.forEach((f, n) => {
      for (let i = this.starts[n], end = this.starts[n] + f.bytes.length - W; i <= end; i++) this.insert(i)
    })
  }

  insert (pos) {
    let s = hash16(this.dv, pos) & this.mask
    while (this.slots[s] !== -1) {
      if (this.buf.compare(this.buf, pos, pos + W, this.slots[s], this.slots[s] + W) === 0) return
      s = (s + 1) & this.mask
    }
    this.slots[s] = pos
  }

  /** Where the window src[i, i+16) is in the published files, or -1. */
  find (src, dv, i) {
    let s = hash16(dv, i) & this.mask
    while (this.slots[s] !== -1) {
      const p = this.slots[s]
      if (this.buf.compare(src, i, i + W, p, p + W) === 0) return p
      s = (s + 1) & this.mask
    }
    return -1
  }

  /** The published file an offset is in, and the offset in it. */
  at (pos) {
    let lo = 0; let hi = this.starts.length - 1
    while (lo < hi) { const m = (lo + hi + 1) >> 1; if (this.starts[m] <= pos) lo = m; else hi = m - 1 }
    return { file: this.files[lo].name, offset: pos - this.starts[lo] }
  }

  /** Every window of `bytes` found, as { at (offset in bytes), file, offset }; `allow(hit, i)` may excuse one. */
  hits (bytes, allow = () => false) {
    const out = []
    const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.length)
    for (let i = 0; i + W <= bytes.length; i++) {
      const p = this.find(bytes, dv, i)
      if (p < 0) continue
      const hit = { at: i, ...this.at(p) }
      if (!allow(hit, i)) out.push(hit)
    }
    return out
  }
}

/**
 * A private release walked with an identity, through the library: the
 * keyring opened, the root unwrapped and checked against the release's
 * commitment, then every page decrypted and decoded. Returns every ref
 * reached (with its key) and the pages' inner (stored, before the seal) and
 * decoded bytes.
 */
async function walkPrivate (out, info, identity) {
  const blob = hash => fs.readFile(path.join(out, 'h', hash))
  const { epoch, key: epochKey } = await openKeyring(await blob(info.access.keyring.hash), identity)
  assert.equal(epoch, info.access.epoch)
  const { ref: root } = await unwrapRoot(epochKey, info.access.root, info.release.root.private)
  const refs = new Map()
  const pages = []
  const refOf = c => ({ hash: c.hash, size: c.size, storedSize: c.storedSize, codec: c.codec, key: c.key })
  async function open (ref, kind) {
    refs.set(ref.hash, ref)
    const stored = await blob(ref.hash)
    assert.ok(ref.key, `${kind} ${ref.hash} is a sealed blob's ref`)
    const decoded = Buffer.from(await verifyDecoded(stored, ref))
    if (kind !== 'chunk') pages.push({ hash: ref.hash, kind, inner: Buffer.from(await openSealed(stored, ref.key)), decoded })
    return decoded
  }
  async function dir (ref) {
    const page = decodeDirPage(await open(ref, 'dir'), V2)
    if (page.kind === 'index') { for (const c of page.children) await dir(refOf(c)); return }
    for (const e of page.entries) {
      if (e.dir) await dir(refOf(e.dir))
      for (const c of e.chunks ?? []) if (!refs.has(c.hash)) await open(refOf(c), 'chunk')
      if (e.lead && !refs.has(e.lead.hash)) await open(refOf(e.lead), 'chunk')
      if (e.index) await cindex(refOf(e.index))
    }
  }
  async function cindex (ref) {
    const idx = decodeChunkIndex(await open(ref, 'cindex'), V2)
    for (const c of idx.children) {
      if (refs.has(c.hash)) continue
      if (idx.level === 1) await open(refOf(c), 'chunk'); else await cindex(refOf(c))
    }
  }
  await dir(root)
  return { epochKey, root, refs, pages }
}

/** The blobs a release's manifest lists (hash → stored size) and its pages' handles, walked without a key. */
async function manifestOf (out, info) {
  const blobs = new Map(); const pages = new Set()
  await walkManifest(info.release.manifest, async ref => { pages.add(ref.hash); return new Uint8Array(await fs.readFile(path.join(out, 'h', ref.hash))) }, b => { blobs.set(b.hash, b.size) })
  return { blobs, pages }
}

const readFsinfo = async dir => decodeFsinfoV2(await fs.readFile(path.join(dir, 'fsinfo.json')))
const oneLineNoAccess = (r, what) => {
  assert.equal(r.code, 1, `${what}: exit 1 (${r.err})`)
  assert.match(r.err, /^rotree: ROTREE_NO_ACCESS: [^\n]*\n  [^\n]*\n$/, `${what}: one line, ROTREE_NO_ACCESS`)
  assert.doesNotMatch(r.err, /HASH_MISMATCH|BAD_FORMAT|[0-9a-f]{64}/, `${what}: no hash, no format error`)
  assert.equal(r.out, '', `${what}: nothing on stdout`)
}
async function codeOf (fn) {
  try { await fn() } catch (err) {
    if (err.code === 'ROTREE_ALL_MIRRORS_FAILED' && err.errors?.length) return err.errors.map(e => e.code).join(',')
    return err.code ?? String(err)
  }
  return 'no error'
}

describe('a private tree, end to end (FORMAT.md §12.8)', { timeout: 180_000 }, () => {
  const S = {} // what the steps share
  const cleanups = []
  const T = { after: fn => cleanups.push(fn) } // start() stops its process through t.after
  before(async () => {
    S.dir = await tmpdir('rotree-private-e2e-')
    S.src = path.join(S.dir, 'src')
    S.out = path.join(S.dir, 'out')
    S.docBytes = await copyDocs(path.join(S.src, 'doc'), DOC_BUDGET)
    const words = ['private', 'tree', 'sealed', 'reader', 'epoch', 'keyring', 'mirror', 'blob', 'page', 'root', 'the', 'of']
    const r = prng(700_000, 'private-e2e text')
    let text = ''
    for (let i = 0; text.length < 700_000; i++) text += words[r[i] % words.length] + (r[i] % 9 === 0 ? '\n' : ' ')
    S.bigText = text.slice(0, 700_000)
    await writeTree(S.src, {
      'made-up/several-chunks.txt': S.bigText, // compressed chunks
      'made-up/random-chunks.bin': prng(600_000, 'private-e2e random'), // raw (incompressible) chunks
      'made-up/run-me.sh': { data: '#!/bin/sh\necho "a private executable"\n', mode: 0o755 },
      'made-up/ünïcödé-名前.txt': 'a UTF-8 name\n',
      'made-up/empty-file': '',
      'made-up/link-to-script': { symlink: 'run-me.sh' },
      'made-up/deeper/still/changes.txt': 'version one of a file the revocation step changes\n'
    })
    S.env = { A: { ROTREE_STATE: path.join(S.dir, 'state-a') }, B: { ROTREE_STATE: path.join(S.dir, 'state-b') }, none: { ROTREE_STATE: path.join(S.dir, 'state-none') } }
    S.key = path.join(S.dir, 'publisher.key')
    let k = await cli(['keygen', S.key])
    assert.equal(k.code, 0, k.err)
    S.pub = k.out.trim().split('\n').at(-1)
    S.ids = {}
    for (const who of ['A', 'B', 'stranger']) {
      const file = path.join(S.dir, `${who}.key`)
      k = await cli(['keygen', '--reader', file])
      assert.equal(k.code, 0, k.err)
      const recipient = k.out.trim().split('\n').at(-1)
      assert.match(recipient, /^age1[0-9a-z]+$/)
      const text = await fs.readFile(file, 'utf8')
      S.ids[who] = { file, recipient, text, identity: parseIdentities(text)[0] }
    }
    const b = await cli(['build', S.src, S.out, '--key', S.key, '--private', '--reader', S.ids.A.recipient, '--reader', S.ids.B.recipient, '--no-fsync'])
    assert.equal(b.code, 0, b.err)
    const serve = await start(T, ['serve', S.out, '--port', '0'])
    S.url = serve.match[1]
    S.addr = `${S.url}#${S.pub}`
    S.info = await readFsinfo(S.out)
    S.sourceTree = await listTree(S.src)
  })
  after(async () => {
    for (const fn of cleanups.reverse()) await fn()
    if (S.dir) await fs.rm(S.dir, { recursive: true, force: true })
  })

  test('OUT publishes no name, no 16-byte run of a source file, a decrypted page or a key; .rotree/ is 0700, private.json 0600', async () => {
    assert.ok(S.info.access && S.info.release.root.private, 'a private release')
    assert.equal((await fs.stat(path.join(S.out, '.rotree'))).mode & 0o777, 0o700)
    assert.equal((await fs.stat(path.join(S.out, '.rotree', 'private.json'))).mode & 0o777, 0o600)

    // what a mirror gets: every file of OUT outside .rotree/
    const published = await filesUnder(S.out, ['.rotree'])
    assert.ok(published.includes('fsinfo.json') && published.some(f => f.startsWith('h/')) && published.some(f => f.startsWith('history/')), published.join(' '))
    const files = await Promise.all(published.map(async name => ({ name, bytes: await fs.readFile(path.join(S.out, name)) })))
    const index = new WindowIndex(files)

    // which of them are sealed: the blobs the manifest lists, each reached (with its key) by a reader
    const { blobs: listed, pages: manifestPages } = await manifestOf(S.out, S.info)
    const walk = await walkPrivate(S.out, S.info, S.ids.A.identity)
    assert.deepEqual([...walk.refs.keys()].sort(), [...listed.keys()].sort(), 'the manifest lists exactly the blobs the root reaches')
    for (const [h, ref] of walk.refs) assert.equal(listed.get(h), ref.storedSize, `${h}: the manifest's stored size`)
    const sealed = name => name.startsWith('h/') && listed.has(name.slice(2))
    assert.ok(published.filter(sealed).length >= 10, 'a tree of many sealed blobs')

    // runs that are the format's own text (JSON members, the age header) are in any
    // private tree's unsealed files: a reference tree of one made-up file gives them
    const ref = path.join(S.dir, 'reference')
    await writeTree(path.join(ref, 'src'), { x: 'x' })
    const rb = await cli(['build', path.join(ref, 'src'), path.join(ref, 'out'), '--key', S.key, '--private', '--reader', S.ids.stranger.recipient])
    assert.equal(rb.code, 0, rb.err)
    const refInfo = await readFsinfo(path.join(ref, 'out'))
    const refSealed = (await manifestOf(path.join(ref, 'out'), refInfo)).blobs
    const refFiles = (await filesUnder(path.join(ref, 'out'), ['.rotree'])).filter(n => !(n.startsWith('h/') && refSealed.has(n.slice(2))))
    const formatText = new WindowIndex(await Promise.all(refFiles.map(async name => ({ name, bytes: await fs.readFile(path.join(ref, 'out', name)) }))))
    const formatRun = (hit, bytes, i) => !sealed(hit.file) && formatText.find(bytes, new DataView(bytes.buffer, bytes.byteOffset, bytes.length), i) >= 0

    // 1. no 16-byte run of any source file
    let sourceBytes = 0
    for (const [rel, e] of S.sourceTree) {
      if (e.type !== 'file') continue
      sourceBytes += e.bytes.length
      const hits = index.hits(e.bytes, (hit, i) => formatRun(hit, e.bytes, i))
      assert.deepEqual(hits.slice(0, 3), [], `src/${rel}: ${hits.length} run(s) of it published`)
    }
    assert.ok(sourceBytes > 1_400_000, `${sourceBytes} source bytes`)

    // 2. no 16-byte run of a page as a reader decrypts it (its inner bytes, and decoded):
    // names, inline files, symlink targets, keys and file hashes. The manifest lists the
    // handles the pages hold (that is what it is for): hits there are the handles.
    assert.ok(walk.pages.filter(p => p.kind === 'dir').length > 20, 'directory pages')
    for (const p of walk.pages) {
      for (const bytes of [p.inner, p.decoded]) {
        const hits = index.hits(bytes, (hit, i) => (hit.file.startsWith('h/') && manifestPages.has(hit.file.slice(2))) || formatRun(hit, bytes, i))
        assert.deepEqual(hits.slice(0, 3), [], `${p.kind} page ${p.hash}: ${hits.length} run(s) of it published`)
      }
    }

    // 3. no blob key, and no epoch key
    const keys = [...new Set([...walk.refs.values()].map(r => r.key))].map(k => Buffer.from(fromHex(k)))
    keys.push(Buffer.from(walk.epochKey))
    for (const k of keys) assert.deepEqual(index.hits(k), [], 'a key published')

    // 4. no name (basenames of 4 bytes or more) and no symlink target. A name of 4 bytes
    // turns up by chance in megabytes of ciphertext (about bytes / 2^32 times), so those
    // are looked for outside the sealed blobs only: a page stored in the clear would
    // have shown in 2. above
    const names = new Set()
    for (const [rel, e] of S.sourceTree) {
      names.add(path.posix.basename(rel))
      if (e.type === 'symlink') names.add(e.target)
    }
    let checked = 0
    for (const n of names) {
      const needle = Buffer.from(n)
      if (needle.length < 4) continue
      for (const f of files) {
        if (needle.length < 5 && sealed(f.name)) continue
        assert.equal(f.bytes.indexOf(needle), -1, `the name ${JSON.stringify(n)} is in ${f.name}`)
      }
      checked++
    }
    assert.ok(checked > 30, `${checked} names looked for`)
  })

  test('a reader with its identity gets the source: cat, get, ls, stat, the library, ROTREE_IDENTITY and a remote', async () => {
    const A = ['--identity', S.ids.A.file]
    // cat: a made-up multi-chunk file, and a /usr/share/doc file when there is one
    const docFile = [...S.sourceTree].find(([rel, e]) => e.type === 'file' && rel.startsWith('doc/') && e.bytes.length > 1000)
    for (const [rel, want] of [['made-up/several-chunks.txt', Buffer.from(S.bigText)], ...(docFile ? [[docFile[0], docFile[1].bytes]] : [])]) {
      const c = await cli(['cat', S.addr, '/' + rel, ...A], S.env.A)
      assert.equal(c.code, 0, c.err)
      assert.ok(c.stdout.equals(want), `cat /${rel}`)
    }
    // get: the whole tree
    const copy = path.join(S.dir, 'copy-a')
    const g = await cli(['get', S.addr, '/', '-o', copy, ...A], S.env.A)
    assert.equal(g.code, 0, g.err)
    const got = await listTree(copy)
    assert.deepEqual([...got.keys()], [...S.sourceTree.keys()])
    for (const [rel, e] of S.sourceTree) {
      const x = got.get(rel)
      assert.equal(x.type, e.type, rel)
      if (e.type === 'file') { assert.ok(x.bytes.equals(e.bytes), rel); assert.equal(x.exec, e.exec, rel) }
      if (e.type === 'symlink') assert.equal(x.target, e.target, rel)
    }
    // ls and stat
    const ls = await cli(['ls', S.addr, '/made-up', ...A], S.env.A)
    assert.equal(ls.code, 0, ls.err)
    assert.deepEqual(ls.out.trim().split('\n').map(l => l.replace(/[/@*]$/, '')).sort(), (await fs.readdir(path.join(S.src, 'made-up'))).sort())
    const st = await cli(['stat', S.addr, '/made-up/random-chunks.bin', '--json', ...A], S.env.A)
    assert.equal(st.code, 0, st.err)
    const sj = JSON.parse(st.out)
    assert.equal(sj.type, 'file')
    assert.equal(sj.size, 600_000)
    assert.equal(sj.sha256, sha(prng(600_000, 'private-e2e random')))
    // the library: every file, read whole, and a listing
    const tree = await openTree(S.addr, { identity: S.ids.A.text, stateDir: null })
    try {
      for (const [rel, e] of S.sourceTree) {
        if (e.type !== 'file') continue
        assert.ok(Buffer.from(await tree.readFile('/' + rel)).equals(e.bytes), rel)
      }
      assert.deepEqual((await tree.readdir('/made-up/deeper')), ['still'])
    } finally { tree.close() }
    // ROTREE_IDENTITY, and a remote that remembers the identity file
    const env = await cli(['cat', S.addr, '/made-up/run-me.sh'], { ...S.env.A, ROTREE_IDENTITY: S.ids.A.file })
    assert.equal(env.code, 0, env.err)
    assert.equal(env.out, '#!/bin/sh\necho "a private executable"\n')
    const add = await cli(['remote', 'add', 'secret', S.addr, '--identity', S.ids.B.file], S.env.B)
    assert.equal(add.code, 0, add.err)
    const viaRemote = await cli(['cat', 'secret:/made-up/ünïcödé-名前.txt'], S.env.B)
    assert.equal(viaRemote.code, 0, viaRemote.err)
    assert.equal(viaRemote.out, 'a UTF-8 name\n')
  })

  test('no identity, or another one: ROTREE_NO_ACCESS in one line (exit 1), from the CLI and the library', async () => {
    for (const [what, extra] of [['no identity', []], ['a stranger\'s identity', ['--identity', S.ids.stranger.file]]]) {
      oneLineNoAccess(await cli(['cat', S.addr, '/made-up/run-me.sh', ...extra], S.env.none), `cat, ${what}`)
      oneLineNoAccess(await cli(['ls', S.addr, '/', ...extra], S.env.none), `ls, ${what}`)
      oneLineNoAccess(await cli(['stat', S.addr, '/made-up', ...extra], S.env.none), `stat, ${what}`)
      const dest = path.join(S.dir, 'denied-' + what.replace(/\W+/g, '-'))
      oneLineNoAccess(await cli(['get', S.addr, '/', '-o', dest, ...extra], S.env.none), `get, ${what}`)
      assert.equal(await fs.lstat(dest).then(() => true, () => false), false, `get, ${what}: nothing written`)
    }
    for (const identity of [undefined, S.ids.stranger.text]) {
      let tree
      const code = await codeOf(async () => {
        tree = await openTree(S.addr, { identity, stateDir: null })
        await tree.readFile('/made-up/run-me.sh')
      })
      tree?.close()
      assert.equal(code, 'ROTREE_NO_ACCESS', identity ? 'a stranger' : 'no identity')
    }
  })

  test('the age tool opens the keyring with a reader\'s identity file: the payload rtK 0x02, the epoch, its key', { skip: needs('age') }, async () => {
    const keyring = path.join(S.out, 'h', S.info.access.keyring.hash)
    const payload = execFileSync('age', ['-d', '-i', S.ids.A.file, keyring])
    assert.ok(payload.subarray(0, 4).equals(Buffer.from('rtK\x02', 'latin1')))
    const viaAge = decodeEpoch(new Uint8Array(payload))
    const viaLib = await openKeyring(new Uint8Array(await fs.readFile(keyring)), S.ids.B.identity)
    assert.equal(viaAge.epoch, S.info.access.epoch)
    assert.deepEqual(viaAge, viaLib)
    assert.throws(() => execFileSync('age', ['-d', '-i', S.ids.stranger.file, keyring], { stdio: 'pipe' }), 'a stranger\'s identity opens nothing')
  })

  test('a keyless mirror: pull, fsck, a flipped and a deleted blob found and repaired, and readers read it', async () => {
    const mirror = path.join(S.dir, 'mirror')
    const p = await cli(['pull', S.addr, mirror], S.env.none) // no identity anywhere
    assert.equal(p.code, 0, p.err)
    const fsck = async (...args) => {
      const r = await cli(['fsck', mirror, '--key', S.pub, '--json', ...args], S.env.none)
      return { code: r.code, report: JSON.parse(r.out), err: r.err }
    }
    let f = await fsck()
    assert.equal(f.code, 0, f.err)
    assert.equal(f.report.ok, true)
    const { blobs } = await manifestOf(mirror, S.info)
    assert.equal(f.report.blobs.reachable >= blobs.size, true)
    // the largest sealed blob flipped, a small one (a page, likely) deleted
    const bySize = [...blobs].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    const flipped = bySize[0][0]; const deleted = bySize.at(-1)[0]
    const fp = path.join(mirror, 'h', flipped)
    const bytes = await fs.readFile(fp)
    bytes[bytes.length >> 1] ^= 0x40
    await fs.chmod(fp, 0o644).catch(() => {})
    await fs.writeFile(fp, bytes)
    await fs.rm(path.join(mirror, 'h', deleted))
    f = await fsck()
    assert.equal(f.code, 1)
    assert.equal(f.report.ok, false)
    assert.deepEqual(f.report.corrupt.map(c => c.hash), [flipped])
    assert.deepEqual(f.report.missing.map(c => c.hash), [deleted])
    f = await fsck('--repair-from', S.addr)
    assert.equal(f.code, 0, f.err)
    assert.equal(f.report.ok, true)
    f = await fsck()
    assert.equal(f.code, 0, f.err)
    assert.ok((await fs.readFile(fp)).equals(await fs.readFile(path.join(S.out, 'h', flipped))))
    // the mirror serves the tree to its readers, who need their identity still
    const srv = await start(T, ['serve', mirror, '--port', '0'])
    const addr = `${srv.match[1]}#${S.pub}`
    const copy = path.join(S.dir, 'copy-from-mirror')
    const g = await cli(['get', addr, '/', '-o', copy, '--identity', S.ids.A.file], S.env.none)
    assert.equal(g.code, 0, g.err)
    const got = await listTree(copy)
    assert.deepEqual([...got.keys()], [...S.sourceTree.keys()])
    for (const [rel, e] of S.sourceTree) if (e.type === 'file') assert.ok(got.get(rel).bytes.equals(e.bytes), rel)
    oneLineNoAccess(await cli(['cat', addr, '/made-up/run-me.sh'], S.env.none), 'the mirror, no identity')
  })

  test('a removed reader decrypts nothing published after its removal (FORMAT.md §12.8 "Epochs")', async () => {
    // B reads (and its reader state holds the current root)
    const before = await cli(['cat', S.addr, '/made-up/deeper/still/changes.txt', '--identity', S.ids.B.file], S.env.B)
    assert.equal(before.code, 0, before.err)
    const oldInfo = await readFsinfo(S.out)
    const oldBlobs = new Set(await fs.readdir(path.join(S.out, 'h')))

    // B removed; a file changed; rebuilt
    const rm = await cli(['access', 'remove', S.out, S.ids.B.recipient])
    assert.equal(rm.code, 0, rm.err)
    const list = await cli(['access', 'list', S.out, '--json'])
    assert.deepEqual(JSON.parse(list.out).readers, [S.ids.A.recipient])
    const changed = 'version two, published after B was removed: B must never read this line\n'
    await fs.writeFile(path.join(S.src, 'made-up/deeper/still/changes.txt'), changed)
    const b = await cli(['build', S.src, S.out, '--key', S.key, '--no-fsync'])
    assert.equal(b.code, 0, b.err)
    const newInfo = await readFsinfo(S.out)
    assert.ok(newInfo.access.epoch > oldInfo.access.epoch, 'a new epoch')
    assert.notEqual(newInfo.release.root.private, oldInfo.release.root.private)

    // A reads the new root; B is refused, through the CLI (with the state that saw the old root) and the library
    const a = await cli(['cat', S.addr, '/made-up/deeper/still/changes.txt', '--identity', S.ids.A.file], S.env.A)
    assert.equal(a.code, 0, a.err)
    assert.equal(a.out, changed)
    oneLineNoAccess(await cli(['cat', S.addr, '/made-up/deeper/still/changes.txt', '--identity', S.ids.B.file], S.env.B), 'B after its removal')
    let tree
    assert.equal(await codeOf(async () => { tree = await openTree(S.addr, { identity: S.ids.B.text, stateDir: null }); await tree.readFile('/made-up/run-me.sh') }), 'ROTREE_NO_ACCESS')
    tree?.close()

    // What B could have learnt: the old epoch key (from the old keyring, with its
    // identity) and every key in the old root's refs (the old tree walked with it).
    const old = await walkPrivate(S.out, oldInfo, S.ids.B.identity)
    const bKeys = new Set([...old.refs.values()].map(r => r.key))
    bKeys.add(Buffer.from(old.epochKey).toString('hex'))
    // The new keyring holds no stanza for B; the new root does not unwrap under the old epoch key.
    const newKeyring = new Uint8Array(await fs.readFile(path.join(S.out, 'h', newInfo.access.keyring.hash)))
    await assert.rejects(openKeyring(newKeyring, S.ids.B.identity), { code: 'ROTREE_NO_ACCESS' })
    await assert.rejects(unwrapRoot(old.epochKey, newInfo.access.root, newInfo.release.root.private), { code: 'ROTREE_BAD_FORMAT' })
    // Every blob published since (in h/ now, not before) opens under none of those keys:
    // the changed file's chunk, the pages above it up to the new root, the new manifest
    // pages and keyring.
    const fresh = (await fs.readdir(path.join(S.out, 'h'))).filter(h => !oldBlobs.has(h))
    const now = await walkPrivate(S.out, newInfo, S.ids.A.identity)
    const freshSealed = fresh.filter(h => now.refs.has(h))
    // the changed (inline) file's directory and the three above it, up to the root
    assert.ok(freshSealed.length >= 4, `the pages from the changed file up: ${freshSealed.length}`)
    assert.ok(freshSealed.includes(now.root.hash), 'the new root page is new')
    for (const h of fresh) {
      const bytes = new Uint8Array(await fs.readFile(path.join(S.out, 'h', h)))
      for (const k of bKeys) await assert.rejects(openSealed(bytes, k), { code: 'ROTREE_BAD_FORMAT' }, `${h} opens under a key B held`)
    }
    // What B still reads: the blobs it held keys for. Blobs are not re-encrypted
    // (their keys come from the tree secret, not the epoch), so the new root still
    // reaches the unchanged files' chunks and pages, under the keys B saw; they are the
    // bytes B could already read, published before its removal, and B cannot tell from
    // them which of them the new root still uses.
    const kept = [...now.refs.values()].filter(r => old.refs.has(r.hash))
    assert.ok(kept.length > 0, 'unchanged blobs are shared by the old and the new root')
    for (const r of kept) {
      assert.ok(oldBlobs.has(r.hash), 'published before the removal')
      assert.equal(r.key, old.refs.get(r.hash).key, 'under the key B saw')
    }
  })

  // A directory of more entries than one page holds, and a file of more than
  // MAX_DIRECT_CHUNKS (32) chunks, are reached through an index page whose
  // children's refs carry their keys in the sealed blob (FORMAT.md §12.8). These
  // two fail while decodeDirPage and decodeChunkIndex (client-js/src/format/dirpage.js,
  // chunkindex.js) leave the key out of the children they return: the build's own
  // manifest walk cannot open a directory's leaves, and a reader cannot read the file.
  test('a directory cut into leaves under an index page: built and read back', async () => {
    const src = path.join(S.dir, 'wide-src'); const out = path.join(S.dir, 'wide-out')
    const files = {}
    for (let i = 0; i < 400; i++) files[`wide/f-${String(i).padStart(3, '0')}.txt`] = `line ${i} of a wide directory\n`.repeat(20)
    await writeTree(src, files)
    const b = await cli(['build', src, out, '--key', S.key, '--private', '--reader', S.ids.A.recipient, '--no-fsync'])
    assert.equal(b.code, 0, b.err)
    const srv = await start(T, ['serve', out, '--port', '0'])
    const copy = path.join(S.dir, 'wide-copy')
    const g = await cli(['get', `${srv.match[1]}#${S.pub}`, '/', '-o', copy, '--identity', S.ids.A.file], S.env.A)
    assert.equal(g.code, 0, g.err)
    for (const [rel, text] of Object.entries(files)) assert.equal(await fs.readFile(path.join(copy, rel), 'utf8'), text, rel)
  })

  test('a file of more than 32 chunks, under a chunk index: built and read back', async () => {
    const src = path.join(S.dir, 'long-src'); const out = path.join(S.dir, 'long-out')
    const data = prng(10_000_000, 'private-e2e long file')
    await writeTree(src, { 'long.bin': data })
    const b = await cli(['build', src, out, '--key', S.key, '--private', '--reader', S.ids.A.recipient, '--no-fsync'])
    assert.equal(b.code, 0, b.err)
    const srv = await start(T, ['serve', out, '--port', '0'])
    const c = await cli(['cat', `${srv.match[1]}#${S.pub}`, '/long.bin', '--identity', S.ids.A.file], S.env.A)
    assert.equal(c.code, 0, c.err)
    assert.equal(sha(c.stdout), sha(data))
  })

  test('a published public OUT is not turned private, nor a private OUT public: usage errors (exit 2)', async () => {
    const pubOut = path.join(S.dir, 'public-out')
    const p = await cli(['build', S.src, pubOut, '--key', S.key])
    assert.equal(p.code, 0, p.err)
    const before = await fs.readFile(path.join(pubOut, 'fsinfo.json'))
    let r = await cli(['build', S.src, pubOut, '--key', S.key, '--private', '--reader', S.ids.A.recipient])
    assert.equal(r.code, 2, r.err)
    assert.match(r.err, /public tree/)
    r = await cli(['build', S.src, pubOut, '--key', S.key, '--reader', S.ids.A.recipient])
    assert.equal(r.code, 2, r.err)
    assert.ok((await fs.readFile(path.join(pubOut, 'fsinfo.json'))).equals(before), 'the public tree unchanged')
    assert.equal(await fs.lstat(path.join(pubOut, '.rotree', 'private.json')).then(() => true, () => false), false)

    // the private OUT: not as format 1, and not without its state (which is what keeps it private)
    const privBefore = await fs.readFile(path.join(S.out, 'fsinfo.json'))
    r = await cli(['build', S.src, S.out, '--key', S.key, '--format', '1'])
    assert.equal(r.code, 2, r.err)
    assert.ok((await fs.readFile(path.join(S.out, 'fsinfo.json'))).equals(privBefore), 'the private tree unchanged')
    const stateless = path.join(S.dir, 'private-without-state')
    await fs.cp(S.out, stateless, { recursive: true })
    await fs.rm(path.join(stateless, '.rotree'), { recursive: true })
    r = await cli(['build', S.src, stateless, '--key', S.key])
    assert.equal(r.code, 2, r.err)
    assert.match(r.err, /private tree/)
    assert.ok((await fs.readFile(path.join(stateless, 'fsinfo.json'))).equals(privBefore), 'still the private release')
  })
})

// The middle step of a build: SRC becomes blobs in h/ and one root ref, in
// one streaming pass.
//
// Directories are opened and listed depth first, in name order (src-dirs.js:
// each through its parent's checked handle), and a directory's files go to
// the pool (chunk-pool.js) as soon as it is listed; it is encoded on this
// thread once its files and subdirectories are done (post-order), and then
// everything kept about its children is dropped. So memory holds the
// directories on the path being walked and those whose files are being read
// (at most BUSY_DIRS, with at most BACKLOG files asked for and not answered),
// never the whole tree: it grows with the widest directory, not with the
// number of files.
//
// A directory with a build index record (build-index.js) is compared with
// it: a file whose lstat matches its record is not read (the pool's workers
// do the lstat); a directory whose children all match, and whose blobs are
// still in h/, gives back its ref without being encoded. An unchanged
// inlined file of a directory that did change is read again for its bytes
// (≤ 4 KiB, cheaper than keeping every inlined byte in the index).
import { BuildInputError } from 'rotree-client/errors'
import { checkName } from 'rotree-client/src/format/entry.js'
import { MAX_SYMLINK, MAX_DEPTH, MAX_PATH, MAX_NAME } from 'rotree-client/src/format/limits.js'
import path from 'node:path'
import { openRoot, openChild, listDir, listDirBytes, lstatChild, readlinkChild, closeHandle } from './src-dirs.js'
import { T_FILE, T_SYMLINK, T_DIR } from './dir-record.js'
import { encodeDir, relOf } from './encode-dir.js'
import { compareNames } from './names.js'

const BACKLOG = 4096 // files asked of the pool and not answered
const BUSY_DIRS = 256 // directories with files being read (each holds a handle)
const YIELD_MS = 10
const strictUtf8 = new TextDecoder('utf-8', { fatal: true })
const F = 1; const D = 2; const L = 3

/** A directory being walked. */
export class Dir {
  constructor (parent, slot, name, rel, depth, key) {
    this.parent = parent; this.slot = slot; this.name = name; this.rel = rel; this.depth = depth; this.key = key
    this.h = null // its handle (src-dirs.js)
    this.seen = null // the lstat its parent's listing took of it
    this.names = null; this.kinds = null
    this.res = null // per child: undefined (pending), null (skipped), { kind, ... }
    this.record = null; this.recIdx = null
    this.waiting = 0; this.files = 0 // children not settled; of them, files
    this.changed = true // anything differs from the record (no record: yes)
    this.round = 0
  }
}

export class TreeWalker {
  /**
   * @param {object} o
   * @param {string} o.src as given, for messages @param {string} o.srcAbs
   * @param {import('./build-index.js').BuildIndex} o.index
   * @param {import('../lib/published/blob-store.js').StatBlobStore} o.store
   * @param {import('./chunk-pool.js').ChunkPool} o.pool
   * @param {'fail'|'skip'} o.onBad @param {(m: string) => void} o.warn
   * @param {(bytes: number, files: number) => void} o.progress
   * @param {(rel: string) => (void|Promise<void>)} [o.onListed] after a directory was listed, before
   *   anything in it is opened (tests change SRC at exactly that moment)
   * @param {(f: { path: string, size: number, sha256: string }) => void} [o.onFile] every file of the tree
   */
  constructor (o) {
    Object.assign(this, o)
    this.totals = { files: 0, bytes: 0, dirs: 0, symlinks: 0, skipped: [] }
    this.handles = new Set()
    this.busy = 0
    this.failed = null
    this.wake = null
    this.result = null
  }

  /** @returns {Promise<{ mtime: number, dir: { hash: string, size: number } }>} the root entry of fsinfo.json */
  async run () {
    const root = new Dir(null, -1, '', '/', 0, 'd:')
    root.h = openRoot(this.src, this.srcAbs)
    this.viaProc = root.h.viaProc
    this.handles.add(root.h)
    this.result = deferred()
    const stack = [root]
    let last = performance.now()
    try {
      while (stack.length && !this.failed) {
        await this.room()
        if (this.failed) break
        const d = stack.pop()
        if (d !== root && !this.open(d)) continue
        await this.list(d, stack)
        // let the pool's answers in: directories finish, and what they held goes
        if (performance.now() - last > YIELD_MS) { await new Promise(resolve => setImmediate(resolve)); last = performance.now() }
      }
      const ref = await this.result.promise
      return { mtime: Math.floor(root.h.st.mtimeMs), dir: { hash: ref.hash, size: ref.size } }
    } finally {
      for (const h of this.handles) closeHandle(h)
      this.handles.clear()
    }
  }

  fail (err) {
    if (this.failed) return
    this.failed = err
    this.result.reject(err)
    this.poke()
  }

  poke () { const w = this.wake; this.wake = null; w?.() }

  async room () {
    for (;;) {
      if (this.failed) return
      if (this.pool.backlog() > BACKLOG) { await this.pool.drain(BACKLOG / 2); continue }
      if (this.busy > BUSY_DIRS) { await new Promise(resolve => { this.wake = resolve }); continue }
      return
    }
  }

  // --skip-bad: warn and go on; else the build fails
  bad (rel, why, cause) {
    const err = why instanceof Error ? why : new BuildInputError(`${rel}: ${why}`, { cause, details: { path: rel } })
    if (this.onBad !== 'skip' || err.code !== 'ROTREE_BUILD_INPUT') throw err
    this.totals.skipped.push(err.message)
    this.warn(`skipping ${err.message}`)
  }

  open (d) {
    try {
      d.h = openChild(d.parent.h, d.name, d.rel, d.seen, this.viaProc)
      this.handles.add(d.h)
      return true
    } catch (err) {
      try { this.bad(d.rel, err) } catch (e) { this.fail(e); return false }
      this.childDone(d.parent, d.slot, null)
      return false
    }
  }

  async list (d, stack) {
    const prefix = d.rel === '/' ? '/' : d.rel + '/'
    let ents
    try {
      ents = listDir(d.h)
    } catch (err) {
      try { this.bad(d.rel, `cannot read directory (${err.code})`, err) } catch (e) { return this.fail(e) }
      this.release(d)
      if (d.parent) this.childDone(d.parent, d.slot, null)
      else this.fail(new BuildInputError(`${this.src}: cannot read directory (${err.code})`, { cause: err }))
      return
    }
    // a name that is not UTF-8 comes out with a U+FFFD: only then read the names as bytes
    const badNames = ents.some(e => e.name.includes('\ufffd')) ? notUtf8(d.h) : null
    // names in byte order, each with its type after a NUL (which no name holds, and sorts first)
    const keyed = new Array(ents.length)
    for (let i = 0; i < ents.length; i++) {
      const e = ents[i]
      keyed[i] = e.name + '\0' + (e.isFile() ? F : e.isDirectory() ? D : e.isSymbolicLink() ? L : 0)
    }
    ents = null
    keyed.sort()
    if (keyed.some(n => /[\ud800-\uffff]/.test(n))) keyed.sort(compareNames)
    const names = []; const kinds = []
    for (const k of keyed) {
      const name = k.slice(0, -2); const kind = k.charCodeAt(k.length - 1) - 48
      const rel = prefix + name
      try {
        if (badNames?.has(name)) { this.bad(path.posix.join(d.rel, badNames.get(name)), 'name is not valid UTF-8'); continue }
        // FORMAT.md §2: readers refuse paths past these bounds, so never publish one
        if (d.depth + 1 > MAX_DEPTH) { this.bad(rel, `deeper than ${MAX_DEPTH} path components`); continue }
        // (a UTF-16 unit is at most 3 UTF-8 bytes: short strings need no byte count)
        if (rel.length * 3 > MAX_PATH && Buffer.byteLength(rel) > MAX_PATH) { this.bad(rel.slice(0, 80) + '…', `path longer than ${MAX_PATH} bytes`); continue }
        if (name.length * 3 > MAX_NAME && !checkName(name)) { this.bad(rel, 'name cannot be published'); continue }
      } catch (err) { return this.fail(err) }
      names.push(name); kinds.push(kind)
    }
    const n = names.length
    d.names = names; d.kinds = kinds; d.res = new Array(n)
    this.totals.dirs++
    try {
      d.record = this.partial ? await this.index.get(d.key) : await this.index.next(d.key)
    } catch (err) { return this.fail(err) }
    if (this.failed) return
    const rec = d.record
    // each child's row in the record, by name (both are in byte order)
    d.recIdx = new Int32Array(n).fill(-1)
    if (rec) {
      const rn = rec.names
      let same = rn.length === n
      for (let i = 0, j = 0; i < n && j < rn.length;) {
        const c = names[i] === rn[j] ? 0 : compareNames(names[i], rn[j])
        if (c === 0) d.recIdx[i++] = j++; else { same = false; if (c < 0) i++; else j++ }
      }
      d.changed = !same
    }
    const files = []; const subdirs = []
    for (let i = 0; i < n; i++) {
      let kind = kinds[i]
      const name = names[i]; const rel = prefix + name
      let st = null
      try {
        if (kind !== F) {
          try { st = lstatChild(d.h, name) } catch (err) { this.bad(rel, `cannot stat (${err.code})`, err); d.res[i] = null; d.changed = true; continue }
          kind = st.isFile() ? F : st.isDirectory() ? D : st.isSymbolicLink() ? L : 0
        }
        if (kind === F) { files.push(i); continue }
        if (kind === D) {
          const c = new Dir(d, i, name, rel, d.depth + 1, d.key + '\0' + name)
          c.seen = st
          subdirs.push(c)
          continue
        }
        if (kind === L) { d.res[i] = this.symlink(d, i, rel, st); continue }
        this.bad(rel, `is ${st.isFIFO() ? 'a fifo' : st.isSocket() ? 'a socket' : st.isCharacterDevice() || st.isBlockDevice() ? 'a device' : 'a special file'}`)
        d.res[i] = null; d.changed = true
      } catch (err) {
        if (err.code !== 'ROTREE_BUILD_INPUT' || this.failed) return this.fail(err)
        d.res[i] = null; d.changed = true // skipped
      }
    }
    // the listing is taken (and its subdirectories' lstat): nothing in it is opened yet
    try { await this.onListed?.(d.rel) } catch (err) { return this.fail(err) }
    d.waiting = files.length + subdirs.length
    d.files = files.length
    if (d.files) this.busy++
    for (let k = subdirs.length - 1; k >= 0; k--) stack.push(subdirs[k])
    const dirRef = { open: d.h.prefix, rel: prefix }
    for (let k = 0; k < files.length; k++) {
      const i = files[k]
      const ri = d.recIdx[i]
      let expect = null
      if (ri >= 0 && rec.type(ri) === T_FILE) {
        expect = { size: rec.f(ri, 1), mtimeMs: rec.f(ri, 2), ctimeMs: rec.f(ri, 3), ino: rec.f(ri, 4), dev: rec.f(ri, 5) }
      } else d.changed = true
      this.pool.file(dirRef, names[i], expect, expect ? expect.size : 0, (err, r) => this.fileDone(d, i, err, r))
      // a wide directory is fed to the pool as it drains, not all at once
      if ((k & 255) === 255 && this.pool.backlog() > BACKLOG) { await this.room(); if (this.failed) return }
    }
    if (d.waiting === 0) this.finish(d)
  }

  symlink (d, i, rel, st) {
    let tb
    try { tb = readlinkChild(d.h, d.names[i]) } catch (err) { this.bad(rel, `cannot read symlink (${err.code})`, err); return null }
    let target
    try { target = strictUtf8.decode(tb) } catch { this.bad(rel, 'symlink target is not valid UTF-8'); return null }
    if (tb.length > MAX_SYMLINK) { this.bad(rel, 'symlink target too long'); return null }
    if (target.startsWith('/')) { this.bad(rel, `symlink to absolute path ${target} leaves the tree`); return null }
    // FORMAT.md §4.6: a target resolves lexically from the link's directory and must stay inside
    // normalise relative to the root: posix.normalize clamps '..' at '/' for absolute paths and would hide an escape
    const resolved = path.posix.normalize(path.posix.join(path.posix.dirname(rel.slice(1)), target))
    if (resolved === '..' || resolved.startsWith('../')) { this.bad(rel, `symlink to ${target} leaves the tree`); return null }
    this.totals.symlinks++
    const ri = d.recIdx[i]
    if (ri < 0 || d.record.type(ri) !== T_SYMLINK || d.record.target(ri) !== target || Math.floor(d.record.f(ri, 1)) !== Math.floor(st.mtimeMs)) d.changed = true
    return { kind: 'link', target, mtimeMs: st.mtimeMs }
  }

  fileDone (d, i, err, r) {
    if (this.failed) return
    if (err) {
      try { this.bad(null, err) } catch (e) { return this.fail(e) }
      d.res[i] = null; d.changed = true
    } else {
      // r null: unchanged since its record (in the first round); a FileResult: read now
      if (r) {
        if (d.round === 0) { this.index.stats.misses++; d.changed = true } else if (d.res[i]?.missing) this.index.stats.misses++
        else { this.index.stats.hits++; this.index.stats.reread++; this.index.stats.hitBytes += r.size }
        this.totals.files++; this.totals.bytes += r.size
        this.progress(r.size, 1)
      } else {
        const size = d.record.f(d.recIdx[i], 1)
        this.index.stats.hits++; this.index.stats.hitBytes += size
        this.totals.files++; this.totals.bytes += size
        this.progress(size, 1)
      }
      d.res[i] = { kind: 'file', r }
    }
    if (--d.files === 0) { this.busy--; this.poke() }
    if (--d.waiting === 0) this.finish(d)
  }

  childDone (d, i, v) {
    if (this.failed) return
    d.res[i] = v
    const ri = d.recIdx[i]
    if (!v || ri < 0 || d.record.type(ri) !== T_DIR || Math.floor(d.record.f(ri, 1)) !== Math.floor(v.mtimeMs)) d.changed = true
    else {
      const old = d.record.dirRef(ri)
      if (old.hash !== v.ref.hash || old.size !== v.ref.size || old.entries !== v.ref.entries) d.changed = true
    }
    if (--d.waiting === 0) this.finish(d)
  }

  finish (d) {
    this._finish(d).catch(err => this.fail(err))
  }

  async _finish (d) {
    if (this.failed) return
    const rec = d.record
    if (d.round === 0 && rec) {
      d.round = 1
      // what the record gives must still be in h/ (unless the index vouches for h/ as a whole)
      const again = []
      for (let i = 0; i < d.names.length; i++) {
        const v = d.res[i]
        if (!v || v.kind !== 'file' || v.r) continue
        const chunks = rec.chunks(d.recIdx[i])
        if (chunks === null) continue
        let sum = 0
        for (const c of chunks) sum += c.size
        // a record whose chunks do not add up (a damaged index), or whose chunks are gone: read the file
        if (sum !== rec.f(d.recIdx[i], 1) || (!this.index.trusted && !chunks.every(c => this.store.has(c.hash)))) {
          again.push(i); v.missing = true; d.changed = true
          this.index.stats.hits--; this.index.stats.hitBytes -= rec.f(d.recIdx[i], 1)
          this.totals.files--; this.totals.bytes -= rec.f(d.recIdx[i], 1)
        }
      }
      if (!d.changed && !this.index.trusted && !rec.blobs().every(h => this.store.has(h))) d.changed = true
      // an unchanged inlined file: its bytes are in the page being replaced, not in the index
      if (d.changed) {
        for (let i = 0; i < d.names.length; i++) {
          const v = d.res[i]
          if (v && v.kind === 'file' && !v.r && !v.missing && rec.chunks(d.recIdx[i]) === null) {
            again.push(i)
            this.index.stats.hits--; this.index.stats.hitBytes -= rec.f(d.recIdx[i], 1)
            this.totals.files--; this.totals.bytes -= rec.f(d.recIdx[i], 1)
          }
        }
      }
      if (again.length) {
        again.sort((a, b) => a - b)
        d.waiting = again.length; d.files = again.length; this.busy++
        const dirRef = { open: d.h.prefix, rel: d.rel === '/' ? '/' : d.rel + '/' }
        for (const i of again) this.pool.file(dirRef, d.names[i], null, rec.f(d.recIdx[i], 1), (err, r) => this.fileDone(d, i, err, r))
        return
      }
    }
    let ref
    if (rec && !d.changed) {
      ref = rec.ref
      this.index.stats.dirHits++
      this.release(d)
    } else {
      const out = await encodeDir(d, bytes => this.store.put(bytes), (st, at) => this.index.racy(st, at))
      if (this.failed) return
      ref = out.ref
      this.index.stats.racy += out.racy
      this.index.put(d.key, out.record)
      this.release(d)
    }
    if (this.onFile) this.reportFiles(d)
    const mtimeMs = d.h.st.mtimeMs
    d.res = null; d.record = null; d.names = null
    if (d.parent) this.childDone(d.parent, d.slot, { kind: 'dir', ref, mtimeMs })
    else this.result.resolve(ref)
  }

  release (d) {
    closeHandle(d.h)
    this.handles.delete(d.h)
  }

  reportFiles (d) {
    for (let i = 0; i < d.names.length; i++) {
      const v = d.res[i]
      if (!v || v.kind !== 'file') continue
      const rel = relOf(d, d.names[i])
      if (v.r) this.onFile({ path: rel, size: v.r.size, sha256: v.r.sha256 })
      else { const ri = d.recIdx[i]; this.onFile({ path: rel, size: d.record.f(ri, 1), sha256: d.record.sha256(ri) }) }
    }
  }
}

// names of a directory that are not UTF-8: the string readdir gave → the name as latin1, for the message
function notUtf8 (h) {
  const out = new Map()
  for (const nb of listDirBytes(h)) {
    try { strictUtf8.decode(nb) } catch { out.set(nb.toString('utf8'), nb.toString('latin1')) }
  }
  return out
}

function deferred () {
  let resolve, reject
  const promise = new Promise((res, rej) => { resolve = res; reject = rej })
  promise.catch(() => {})
  return { promise, resolve, reject }
}

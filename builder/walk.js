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
// number of files. Per child a directory keeps its name, a state byte and,
// for a file read, where its result lies in the batch buffer the pool
// answered with (file-batch.js); objects are made only while it is encoded.
//
// A directory with a build index record (build-index.js) is compared with
// it: a file whose lstat matches its record is not read (the pool's workers
// do the lstat); a directory whose children all match, and whose blobs are
// still in h/, gives back its ref without being encoded. An unchanged
// inlined file of a directory that did change is read again for its bytes
// (≤ 4 KiB, version 2: 16 KiB; cheaper than keeping every inlined byte in the index).
//
// A partial walk (`dirty`: `rotree build --watch`, watch.js) looks only at
// the directories the file system reported changes in ('dirty': listed and
// checked like any other) and at their ancestors ('path': taken from their
// records, except the subdirectory on the way down); every other directory
// is its record. A subdirectory of a dirty directory that is another
// directory now (inode, device or mtime) is walked whole ('full').
import path from 'node:path'
import { BuildInputError } from 'rotree-client/errors'
import { checkName, refOf, MAX_SYMLINK, MAX_DEPTH, MAX_PATH, MAX_NAME } from 'rotree-client/format'
import { openRoot, openChild, listDir, lstatChild, readlinkChild, closeHandle } from './src-dirs.js'
import { Dir, notUtf8, deferred } from './walk-dir.js'
import { T_FILE, T_RACY, T_SYMLINK, T_DIR } from './dir-record.js'
import { encodeDir, blobPutter, relOf, recordReached } from './encode-dir.js'
import { PENDING, READ, SAME, SKIPPED, SUBDIR, LINK, AGAIN_MISSING, AGAIN_BYTES } from './child-state.js'
import { fileSizeAt } from './file-batch.js'
import { compareNames } from './names.js'

const BACKLOG = 4096 // files asked of the pool and not answered
const BUSY_DIRS = 256 // directories with files being read (each holds a handle)
const YIELD_MS = 10
const strictUtf8 = new TextDecoder('utf-8', { fatal: true }) // symlink targets
const F = 1; const D = 2; const L = 3
// what became of each child: child-state.js
export { PENDING, READ, SAME, SKIPPED, SUBDIR, LINK, Dir }

export class TreeWalker {
  /**
   * @param {object} o
   * @param {string} o.src as given, for messages @param {string} o.srcAbs
   * @param {import('./build-index.js').BuildIndex} o.index
   * @param {import('../lib/published/blob-store.js').StatBlobStore} o.store
   * @param {import('./chunk-pool.js').ChunkPool} o.pool
   * @param {'fail'|'skip'} o.onBad @param {(m: string) => void} o.warn
   * @param {(bytes: number, files: number, rel?: string) => void} o.progress files done (and, with
   *   files 0, bytes of the large file `rel` done so far: the next call with `rel` and 1 file completes it)
   * @param {Set<string> | null} [o.dirty] a partial walk: the directories to look at (paths in the tree)
   * @param {(rel: string) => (void|Promise<void>)} [o.onListed] after a directory was listed, before
   *   anything in it is opened (tests change SRC at exactly that moment)
   * @param {(rel: string, abs: string, st: object) => void} [o.onDir] a directory was opened, before it is listed (watch.js watches it)
   * @param {(rel: string) => void} [o.onGone] a directory (and what was below it) is gone
   * @param {(f: { path: string, size: number, sha256: string }) => void} [o.onFile] every file looked at
   * @param {{ test: (rel: string, isDir: boolean) => boolean } | null} [o.exclude] entries to leave out (exclude.js)
   * @param {1|2} [o.version=1] the format version of the tree (FORMAT.md §12): the pool and the
   *   index must be of the same one (chunk-pool.js, build-index.js)
   * @param {((inner: Uint8Array) => { stored: Uint8Array, key: string }) | null} [o.seal] a private tree's
   *   (builder/seal.js, FORMAT.md §12.8): every blob sealed, every record sealed; the pool seals the same way
   */
  constructor (o) {
    Object.assign(this, o)
    this.dirty ??= null
    this.exclude ??= null
    this.version ??= 1
    this.seal ??= null
    this.putBlob = blobPutter(this.store, this.version, this.seal)
    // a private tree's manifest lists every blob its root reaches (FORMAT.md §12.8): a full walk
    // visits every directory and collects them (hash → stored size); a partial one takes
    // subtrees from their records unvisited, and its release walks OUT/h instead
    /** @type {Map<string, number> | null} */
    this.reached = this.seal !== null && this.dirty === null ? new Map() : null
    if (this.pool) this.pool.onBigBytes = (rel, n) => this.progress(n, 0, rel)
    this.totals = { files: 0, bytes: 0, dirs: 0, symlinks: 0, skipped: [], excluded: 0 }
    this.gone = [] // index keys of directories that left the tree (a partial walk)
    this.handles = new Set()
    this.busy = 0
    this.peakBusy = 0
    this.failed = null
    this.wake = null
    this.result = null
    // a partial walk: every directory above one to look at is on the way down to it
    this.onPath = new Set()
    if (this.dirty) for (const rel of this.dirty) for (let p = rel; p !== '/'; p = path.posix.dirname(p)) this.onPath.add(path.posix.dirname(p))
  }

  /**
   * @returns {Promise<{ mtime: number, dir: { hash: string, size: number, storedSize?: number, codec?: string } }>}
   *   the root of fsinfo.json: its top page's ref (size decoded; storedSize and codec when stored compressed)
   */
  async run () {
    const root = new Dir(null, -1, '', '/', 0, 'd:', this.dirty ? (this.dirty.has('/') ? 'dirty' : 'path') : 'full')
    root.h = openRoot(this.src, this.srcAbs)
    this.viaProc = root.h.viaProc
    this.handles.add(root.h)
    this.onDir?.('/', root.h.abs, root.h.st)
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
      return { mtime: Math.floor(root.h.st.mtimeMs), dir: refOf(ref) }
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
      this.onDir?.(d.rel, d.h.abs, d.h.st)
      return true
    } catch (err) {
      try { this.bad(d.rel, err) } catch (e) { this.fail(e); return false }
      this.childDone(d.parent, d.slot, null)
      return false
    }
  }

  async list (d, stack) {
    try {
      d.record = this.dirty ? await this.index.get(d.key) : await this.index.next(d.key)
    } catch (err) { return this.fail(err) }
    if (this.failed) return
    // a directory on the way down is its record, unless there is none or a child of it is racy
    if (d.mode === 'path' && !this.fromRecord(d)) d.mode = 'dirty'
    if (d.mode !== 'path' && !this.listed(d)) return
    const prefix = d.rel === '/' ? '/' : d.rel + '/'
    const { names, kinds } = d
    const n = names.length
    this.totals.dirs++
    const rec = d.record
    const files = []; const subdirs = []
    for (let i = 0; i < n; i++) {
      if (d.state[i] !== PENDING) continue // from the record (a directory on the way down)
      let kind = kinds[i]
      const name = names[i]; const rel = prefix + name
      let st = null
      try {
        if (kind !== F) {
          try { st = lstatChild(d.h, name) } catch (err) { this.bad(rel, `cannot stat (${err.code})`, err); this.skip(d, i); continue }
          kind = st.isFile() ? F : st.isDirectory() ? D : st.isSymbolicLink() ? L : 0
        }
        if (kind === F) { files.push(i); continue }
        if (kind === D) {
          const ri = d.recIdx[i]
          const mode = this.childMode(d, rel, ri, st)
          if (mode === null) {
            // unchanged, and nothing under it to look at: its record's ref
            d.state[i] = SUBDIR
            d.extra[i] = { ref: rec.dirRef(ri), mtimeMs: rec.f(ri, 1), ino: st.ino, dev: st.dev }
            continue
          }
          const c = new Dir(d, i, name, rel, d.depth + 1, d.key + '\0' + name, mode)
          c.seen = st
          subdirs.push(c)
          continue
        }
        if (kind === L) { this.symlink(d, i, rel, st); continue }
        this.bad(rel, `is ${st.isFIFO() ? 'a fifo' : st.isSocket() ? 'a socket' : st.isCharacterDevice() || st.isBlockDevice() ? 'a device' : 'a special file'}`)
        this.skip(d, i)
      } catch (err) {
        return this.fail(err) // bad() throws only when the build is to fail
      }
    }
    // the listing is taken (and its subdirectories' lstat): nothing in it is opened yet
    try { await this.onListed?.(d.rel) } catch (err) { return this.fail(err) }
    d.waiting = files.length + subdirs.length
    d.files = files.length
    if (d.files) { this.busy++; if (this.busy > this.peakBusy) this.peakBusy = this.busy }
    for (let k = subdirs.length - 1; k >= 0; k--) stack.push(subdirs[k])
    const dirRef = { open: d.h.prefix, rel: prefix }
    d.cb = (i, err, buf, pos) => this.fileDone(d, i, err, buf, pos)
    for (let k = 0; k < files.length; k++) {
      const i = files[k]
      const ri = d.recIdx[i]
      const known = ri >= 0 && rec.type(ri) === T_FILE
      if (!known) d.changed = true
      this.pool.file(dirRef, names[i], known ? rec : null, ri, known ? rec.f(ri, 1) : 0, d.cb, i)
      // a wide directory is fed to the pool as it drains, not all at once
      if ((k & 255) === 255 && this.pool.backlog() > BACKLOG) { await this.room(); if (this.failed) return }
    }
    if (d.waiting === 0) this.finish(d)
  }

  // What to do with a subdirectory: walk it (in which mode), or null: take it from the record.
  childMode (d, rel, ri, st) {
    if (d.mode === 'full') return 'full'
    if (this.dirty.has(rel)) return 'dirty'
    const same = ri >= 0 && d.record.sameDir(ri, st)
    if (this.onPath.has(rel)) return same ? 'path' : 'full'
    return same ? null : 'full'
  }

  // A directory's children from the file system, in byte order; false when it could not be listed.
  listed (d) {
    let ents
    try {
      ents = listDir(d.h)
    } catch (err) {
      try { this.bad(d.rel, `cannot read directory (${err.code})`, err) } catch (e) { this.fail(e); return false }
      this.release(d)
      if (d.parent) this.childDone(d.parent, d.slot, null)
      else this.fail(new BuildInputError(`${this.src}: cannot read directory (${err.code})`, { cause: err }))
      return false
    }
    const prefix = d.rel === '/' ? '/' : d.rel + '/'
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
    if (keyed.some(k => /[\ud800-\uffff]/.test(k))) keyed.sort(compareNames)
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
        // --exclude: left out before anything is opened (a directory's dirent type says it is one)
        if (this.exclude !== null && this.exclude.test(rel, kind === D)) { this.totals.excluded++; continue }
      } catch (err) { this.fail(err); return false }
      names.push(name); kinds.push(kind)
    }
    this.setChildren(d, names, Uint8Array.from(kinds))
    const rec = d.record
    d.changed = !rec
    if (rec) {
      // each child's row in the record, by name (both are in byte order)
      const rn = rec.names
      let same = rn.length === names.length
      for (let i = 0, j = 0; i < names.length && j < rn.length;) {
        const c = names[i] === rn[j] ? 0 : compareNames(names[i], rn[j])
        if (c === 0) d.recIdx[i++] = j++; else { same = false; if (c < 0) i++; else j++ }
      }
      d.changed = !same
    }
    return true
  }

  // A directory on the way down to one that changed: its children are its record's.
  fromRecord (d) {
    const rec = d.record
    if (!rec) return false
    const names = rec.names
    const kinds = new Uint8Array(names.length)
    for (let i = 0; i < names.length; i++) {
      const t = rec.type(i)
      if (t === T_RACY) return false // its stat cannot be trusted: list the directory
      kinds[i] = t === T_FILE ? F : t === T_DIR ? D : L
    }
    this.setChildren(d, names, kinds)
    d.changed = false
    const prefix = d.rel === '/' ? '/' : d.rel + '/'
    for (let i = 0; i < names.length; i++) {
      d.recIdx[i] = i
      if (kinds[i] === F) {
        d.state[i] = SAME
        const size = rec.f(i, 1)
        this.index.stats.hits++; this.index.stats.hitBytes += size
        this.totals.files++; this.totals.bytes += size
      } else if (kinds[i] === L) {
        d.state[i] = LINK
        d.extra[i] = { target: rec.target(i), mtimeMs: rec.f(i, 1) }
        this.totals.symlinks++
      } else if (!this.dirty.has(prefix + names[i]) && !this.onPath.has(prefix + names[i])) {
        d.state[i] = SUBDIR
        d.extra[i] = { ref: rec.dirRef(i), mtimeMs: rec.f(i, 1), ino: rec.f(i, 4), dev: rec.f(i, 5) }
      }
      // else PENDING: list() lstat()s it and walks it
    }
    return true
  }

  setChildren (d, names, kinds) {
    const n = names.length
    d.names = names; d.kinds = kinds
    d.state = new Uint8Array(n); d.rbuf = new Array(n); d.rpos = new Int32Array(n); d.extra = new Array(n)
    d.recIdx = new Int32Array(n).fill(-1)
  }

  skip (d, i) { d.state[i] = SKIPPED; d.changed = true }

  symlink (d, i, rel, st) {
    let tb
    try { tb = readlinkChild(d.h, d.names[i]) } catch (err) { this.bad(rel, `cannot read symlink (${err.code})`, err); return this.skip(d, i) }
    let target
    try { target = strictUtf8.decode(tb) } catch { this.bad(rel, 'symlink target is not valid UTF-8'); return this.skip(d, i) }
    if (tb.length > MAX_SYMLINK) { this.bad(rel, 'symlink target too long'); return this.skip(d, i) }
    if (target.startsWith('/')) { this.bad(rel, `symlink to absolute path ${target} leaves the tree`); return this.skip(d, i) }
    // FORMAT.md §4.6: a target resolves lexically from the link's directory and must stay inside
    // normalise relative to the root: posix.normalize clamps '..' at '/' for absolute paths and would hide an escape
    const resolved = path.posix.normalize(path.posix.join(path.posix.dirname(rel.slice(1)), target))
    if (resolved === '..' || resolved.startsWith('../')) { this.bad(rel, `symlink to ${target} leaves the tree`); return this.skip(d, i) }
    this.totals.symlinks++
    const ri = d.recIdx[i]
    if (ri < 0 || d.record.type(ri) !== T_SYMLINK || d.record.target(ri) !== target || Math.floor(d.record.f(ri, 1)) !== Math.floor(st.mtimeMs)) d.changed = true
    d.state[i] = LINK
    d.extra[i] = { target, mtimeMs: st.mtimeMs }
  }

  fileDone (d, i, err, buf, pos) {
    if (this.failed) return
    const stats = this.index.stats
    if (err) {
      try { this.bad(null, err) } catch (e) { return this.fail(e) }
      this.skip(d, i)
    } else if (buf) {
      // read now: in the first round because it changed, or again for its bytes or its chunks
      const size = fileSizeAt(buf, pos)
      const was = d.state[i]
      if (was === PENDING) { stats.misses++; d.changed = true } else if (was === AGAIN_MISSING) stats.misses++
      else { stats.hits++; stats.reread++; stats.hitBytes += size }
      d.state[i] = READ; d.rbuf[i] = buf; d.rpos[i] = pos
      this.totals.files++; this.totals.bytes += size
      this.progress(size, 1, (d.rel === '/' ? '/' : d.rel + '/') + d.names[i])
    } else {
      // unchanged since its record
      const size = d.record.f(d.recIdx[i], 1)
      stats.hits++; stats.hitBytes += size
      d.state[i] = SAME
      this.totals.files++; this.totals.bytes += size
      this.progress(size, 1)
    }
    if (--d.files === 0) { this.busy--; this.poke() }
    if (--d.waiting === 0) this.finish(d)
  }

  childDone (d, i, v) {
    if (this.failed) return
    if (!v) this.skip(d, i)
    else {
      d.state[i] = SUBDIR; d.extra[i] = v
      const ri = d.recIdx[i]; const rec = d.record
      if (ri < 0 || rec.type(ri) !== T_DIR || Math.floor(rec.f(ri, 1)) !== Math.floor(v.mtimeMs)) d.changed = true
      else {
        const old = rec.dirRef(ri)
        if (old.hash !== v.ref.hash || old.size !== v.ref.size || old.entries !== v.ref.entries) d.changed = true
      }
    }
    if (--d.waiting === 0) this.finish(d)
  }

  finish (d) {
    this._finish(d).catch(err => this.fail(err))
  }

  // what the record gives must still be in h/ (unless the index vouches for h/ as a whole);
  // an unchanged inlined file of a directory that changed is read again for its bytes
  again (d) {
    const rec = d.record; const stats = this.index.stats
    const again = []
    const unread = i => { const size = rec.f(d.recIdx[i], 1); stats.hits--; stats.hitBytes -= size; this.totals.files--; this.totals.bytes -= size }
    for (let i = 0; i < d.names.length; i++) {
      if (d.state[i] !== SAME) continue
      const ri = d.recIdx[i]
      const chunks = rec.chunks(ri)
      if (chunks === null) continue
      let sum = 0
      for (const c of chunks) sum += c.size
      // a record whose chunks do not add up (a damaged index), or whose chunks are gone: read the file
      if (sum !== rec.f(ri, 1) || (!this.index.trusted && !chunks.every(c => this.store.has(c.hash)))) {
        again.push(i); d.state[i] = AGAIN_MISSING; d.changed = true; unread(i)
      }
    }
    if (!d.changed && !this.index.trusted && !rec.blobs().every(h => this.store.has(h))) d.changed = true
    if (d.changed) {
      for (let i = 0; i < d.names.length; i++) {
        if (d.state[i] === SAME && rec.chunks(d.recIdx[i]) === null) { again.push(i); d.state[i] = AGAIN_BYTES; unread(i) }
      }
    }
    return again.sort((a, b) => a - b)
  }

  async _finish (d) {
    if (this.failed) return
    const rec = d.record
    if (d.round === 0 && rec) {
      d.round = 1
      const again = this.again(d)
      if (again.length) {
        d.waiting = again.length; d.files = again.length; this.busy++
        const dirRef = { open: d.h.prefix, rel: d.rel === '/' ? '/' : d.rel + '/' }
        d.cb ??= (i, err, buf, pos) => this.fileDone(d, i, err, buf, pos)
        for (const i of again) this.pool.file(dirRef, d.names[i], null, -1, rec.f(d.recIdx[i], 1), d.cb, i)
        return
      }
    }
    let ref
    if (rec && !d.changed) {
      ref = rec.ref
      this.index.stats.dirHits++
      if (this.reached) recordReached(d, this.store, this.reached)
    } else {
      const out = await encodeDir(d, this.putBlob, (st, at) => this.index.racy(st, at), this.version, this.seal !== null, this.reached)
      if (this.failed) return
      ref = out.ref
      this.index.stats.racy += out.racy
      this.index.put(d.key, out.record)
      if (this.dirty && rec) this.forgetGone(d)
    }
    this.release(d)
    if (this.onFile) this.reportFiles(d)
    const v = { ref, mtimeMs: d.h.st.mtimeMs, ino: d.h.st.ino, dev: d.h.st.dev }
    d.state = d.rbuf = d.rpos = d.extra = d.record = d.names = null
    if (d.parent) this.childDone(d.parent, d.slot, v)
    else this.result.resolve(ref)
  }

  // A partial walk: the records of subdirectories that left this directory, and everything below them.
  forgetGone (d) {
    const rec = d.record; const rn = rec.names
    const kept = new Uint8Array(rn.length) // record rows that are still a subdirectory here
    for (let i = 0; i < d.names.length; i++) if (d.recIdx[i] >= 0 && d.state[i] === SUBDIR) kept[d.recIdx[i]] = 1
    for (let j = 0; j < rn.length; j++) {
      if (rec.type(j) !== T_DIR || kept[j]) continue
      const key = d.key + '\0' + rn[j]
      this.gone.push(key)
      this.onGone?.(relOf(d, rn[j]))
    }
  }

  release (d) {
    closeHandle(d.h)
    this.handles.delete(d.h)
  }

  reportFiles (d) {
    for (let i = 0; i < d.names.length; i++) {
      const s = d.state[i]
      const rel = relOf(d, d.names[i])
      if (s === READ) this.onFile({ path: rel, size: fileSizeAt(d.rbuf[i], d.rpos[i]), sha256: d.rbuf[i].toString('hex', d.rpos[i] + 56, d.rpos[i] + 88) })
      else if (s === SAME) { const ri = d.recIdx[i]; this.onFile({ path: rel, size: d.record.f(ri, 1), sha256: d.record.sha256(ri) }) }
    }
  }
}

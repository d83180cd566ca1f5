// The incremental build index: OUT/.rotree/build-index, a `level` database
// remembering what the last build made of each source directory, so a
// rebuild neither reads nor encodes what did not change.
//
//   "d:" + key(dir) → the directory's record (dir-record.js): its ref, its
//        blobs, and every child as the last build saw it (a file's stat,
//        whole-file SHA-256 and chunks; a symlink's target; a subdirectory's ref)
//        key(dir): "" for SRC itself, then "\0" + name for each component, so
//        keys sort in the order a depth-first walk in name order visits the
//        directories, and a full build reads the records in one forward pass
//   "meta:params" → fingerprint of the chunking and encoding code (paramsFingerprint)
//   "meta:h"      → OUT/h as it was when the last build committed (hIdentity)
//   "meta:totals" → that build's files and bytes (the next build's progress total)
//
// Each record says which format version it was built for (dir-record.js):
// a build of one version takes no record of the other (its refs and blobs
// are the other version's), and overwrites it with its own. So the same OUT
// can be built as version 1 and then version 2 (or back): the first build of
// the new version reads and encodes everything, as a clean build does.
//
// Memory: a full build streams the records in walk order; only the
// directories being worked on are decoded. Nothing per file stays in memory.
//
// A record is used only while its stats match: size, mtime, ctime, inode and
// device of every file. ctime cannot be set by a user (utimes and chmod update
// it), so bytes rewritten under an old size and a forged mtime still miss.
// Every record gives back exactly the entry a clean build makes.
//
// Blobs a record names must still be in h/. Rather than list h/ (a million
// names) or stat every blob, the index remembers h/'s device, inode and
// change time (nanoseconds) at commit: while h/ is the same directory with
// the same ctime, no name in it was added, removed or renamed (any such
// change sets it; no user can set it back), so every blob the records name is
// still there. When it differs (gc, pull, fsck --repair-from, a blob deleted
// by hand, a killed build) the build checks each record's blobs with stat
// before using it (`trusted` false). A ctime of whole seconds (a coarse file
// system) is trusted only once it is older than the commit by 2 s.
//
// Racy entries (git's "racily clean" problem): a file whose ctime or mtime is
// within `racyMs` of when it was read could be rewritten within the clock's
// granularity without any stat field changing, so it is recorded as racy:
// never taken as unchanged, read again next time.
//
// A build holds OUT's folder lock (lib/published/lock.js), the one every
// writer of a published folder takes, from before the index is opened until
// it is closed, so a build, gc, resign or `sign --publish` cannot interleave
// with each other, nor with a `pull` or `fsck --repair-from` into the same
// folder. LevelDB's own lock on the database (one process at a time) stays as
// a second line. A killed build's lock is stale and taken over.
import fs from 'node:fs/promises'
import { statSync } from 'node:fs'
import path from 'node:path'
import { createHash } from 'node:crypto'
import { Level } from 'level'
import { LockedError } from 'rotree-client/errors'
import { lockDir } from '../lib/published/lock.js'
import { buildDirectory, buildFileBody, limits } from 'rotree-client/format'
import { DEFLATE_LEVEL, packBlob } from 'rotree-client/codec'
import { DirRecord } from './dir-record.js'
import { compareNames } from './names.js'

export const INDEX_DIR = path.join('.rotree', 'build-index')
const SCHEMA = 6
const PARAMS_KEY = 'meta:params'
const H_KEY = 'meta:h'
const TOTALS_KEY = 'meta:totals'
const DIR = 'd:'
const DIR_END = 'd;'
const FLUSH_OPS = 1024
const FLUSH_BYTES = 8 << 20
const READ_AHEAD = 1 << 20 // bytes of records per trip to LevelDB's thread
export const DEFAULT_RACY_MS = 3000

/** The index key of a directory from its path components. */
export const dirKey = parts => DIR + parts.map(p => '\0' + p).join('')

let _params = null
// BUILD_FORMAT names the code that decides what a file or directory becomes:
// FastCDC's masks and gear table, the entry and page encodings, how the
// builder fills an entry, how version 2 compresses a blob and where its lead
// chunk is cut (FORMAT.md §5.1, §12.6). Raise it with any change to those
// (builder/chunk-file.js, big-file.js, encode-dir.js, walk.js, dir-record.js,
// and client-js/src/format/): records written by the old code must not be
// reused by the new. The samples below catch what a dependency changes
// underneath (the format limits, this zlib, the page encoders).
export const BUILD_FORMAT = 1
// a fixed text for the zlib sample: what version 2 stores compressed (FORMAT.md §12.6)
const DEFLATE_SAMPLE = Buffer.from('rotree build index: a sample of text that deflate compresses. '.repeat(64))

/**
 * What the index's contents depend on: the schema, BUILD_FORMAT, every
 * format limit, the deflate level and the zlib that compresses version-2
 * blobs (another zlib may compress differently: FORMAT.md §12.6), and the
 * blobs of a sample text, directory and chunk index. A different fingerprint
 * empties the index.
 */
export async function paramsFingerprint () {
  if (_params) return _params
  const h = createHash('sha256')
  h.update(JSON.stringify({ SCHEMA, BUILD_FORMAT, limits: { ...limits }, deflate: { level: DEFLATE_LEVEL, zlib: process.versions.zlib } }))
  h.update(packBlob(DEFLATE_SAMPLE).stored)
  const put = async b => { h.update(b); return { hash: createHash('sha256').update(b).digest('hex'), size: b.length } }
  const ref = i => ({ hash: createHash('sha256').update(String(i)).digest('hex'), size: 1000 + i })
  const body = await buildFileBody(Array.from({ length: limits.MAX_DIRECT_CHUNKS + 9 }, (_, i) => ref(i)), put)
  await buildDirectory([
    { name: 'inline', type: 'file', size: 3, mtime: 1, exec: true, inline: Uint8Array.of(1, 2, 3) },
    { name: 'chunks', type: 'file', size: 2001, mtime: -1, exec: false, chunks: [ref(1)] },
    { name: 'index', type: 'file', size: 1e9, mtime: 2, exec: false, ...body },
    { name: 'dir', type: 'dir', size: 7, mtime: 3, dir: ref(2) },
    { name: 'link', type: 'symlink', size: 0, mtime: 4, target: '../x' }
  ], put)
  _params = h.digest('hex')
  return _params
}

function busy (out, err) {
  return new LockedError(`${out} is in use by another rotree build, gc, sign or resign (${INDEX_DIR} is locked)`, { cause: err })
}

// LevelDB maps the tables it has open into memory, and the pages a full walk
// reads stay resident (and counted in the process's RSS) while they are
// mapped: with its defaults (1,000 open tables of 2 MiB) a 10-million-file
// index (~600 MB) would all be. Smaller tables, and LevelDB's minimum of
// open ones, keep what is mapped at once to ~40 MB whatever the index's size.
// A 1 MiB memtable and a 2 MiB block cache (LevelDB's defaults: 4 and 8): the
// index is written in order and read once per rebuild, so neither buys
// anything, and the memtable's arena, freed at every flush between the
// buffers that live on, is what fragments malloc's heap as the build goes.
const DB_OPTIONS = { keyEncoding: 'utf8', valueEncoding: 'view', maxFileSize: 512 << 10, maxOpenFiles: 74, writeBufferSize: 1 << 20, cacheSize: 2 << 20 }

async function openDb (out, warn) {
  const location = path.join(out, INDEX_DIR)
  for (let attempt = 0; ; attempt++) {
    const db = new Level(location, DB_OPTIONS)
    try {
      await db.open()
      return db
    } catch (err) {
      if (err.code === 'LEVEL_LOCKED' || err.cause?.code === 'LEVEL_LOCKED') throw busy(out, err)
      // the index is a cache: a damaged one is rebuilt, not fatal
      if (attempt > 0) throw err
      warn(`build index ${location} cannot be opened (${err.cause?.message || err.message}); starting a new one`)
      await fs.rm(location, { recursive: true, force: true })
    }
  }
}

/**
 * OUT/h's identity: device, inode, ctime and mtime in nanoseconds, as text.
 * @returns {string | null}
 */
export function hIdentity (out) {
  const st = statSync(path.join(out, 'h'), { bigint: true, throwIfNoEntry: false })
  return st ? [st.dev, st.ino, st.ctimeNs, st.mtimeNs].join(' ') : null
}

export class BuildIndex {
  /**
   * @param {string} out
   * @param {{ rehash?: boolean, racyMs?: number, warn?: (m: string) => void, version?: 1|2 }} [o]
   *   rehash: ignore what is recorded (every file is read, every directory encoded) and record afresh;
   *   version: the format version being built: records of the other one are not taken
   */
  static async open (out, { rehash = false, racyMs = DEFAULT_RACY_MS, warn = () => {}, version = 1, sealed = false } = {}) {
    if (version !== 1 && version !== 2) throw new RangeError('format version must be 1 or 2, got ' + version)
    const lock = await lockDir(out, 'rotree build')
    let db = null
    try {
      db = await openDb(out, warn)
      const idx = new BuildIndex(db, lock, out, { rehash, racyMs, warn, version, sealed })
      await idx._load()
      return idx
    } catch (err) {
      await db?.close()
      await lock.release()
      throw err
    }
  }

  constructor (db, lock, out, { rehash, racyMs, warn, version = 1, sealed = false }) {
    this.version = version
    this.sealed = sealed // a private tree's build: only sealed records are taken, and a public build takes none
    this.db = db
    this.lock = lock
    this.out = out
    this.rehash = rehash
    this.racyMs = racyMs
    this.warn = warn
    this.trusted = false // h/ unchanged since the last commit (see above); set by begin()
    this.committed = null // { id, at }: h/ at the last commit (hIdentity), and when
    this.totals = null // { files, bytes } of the last full build
    this.pending = []; this.pendingBytes = 0
    this.queued = 0 // writes this build, for commit()
    this.flushing = Promise.resolve()
    this.iter = null // the forward pass over "d:" records (records())
    this.stats = {}
  }

  async _load () {
    const fp = await paramsFingerprint()
    const [stored, h, totals] = await this.db.getMany([PARAMS_KEY, H_KEY, TOTALS_KEY])
    if (stored === undefined || Buffer.from(stored).toString() !== fp) {
      // new index, or built with other parameters: nothing in it can be trusted
      if (stored !== undefined) this.invalidated = true
      await this.db.clear()
      await this.db.put(PARAMS_KEY, Buffer.from(fp))
      return
    }
    if (totals) try { this.totals = JSON.parse(Buffer.from(totals).toString()) } catch {}
    if (h) {
      const [id, at] = Buffer.from(h).toString().split('|')
      this.committed = { id, at: Number(at) }
    }
  }

  /** Start a build (Builder.run): fresh counts, and whether h/ is as the last commit left it. */
  begin () {
    if (this.iter && !this.iter.done) this.iter.it.close().catch(() => {})
    this.iter = null
    this.stats = { hits: 0, hitBytes: 0, misses: 0, reread: 0, racy: 0, dirHits: 0, dirsEncoded: 0, pruned: 0, otherVersion: 0, invalidated: false, trusted: false }
    this.trusted = false
    if (this.committed) {
      const { id, at } = this.committed
      const ctimeNs = BigInt(id.split(' ')[2])
      // a file system that keeps whole seconds could hide a change made in the same second
      const coarse = ctimeNs % 1_000_000_000n === 0n && BigInt(at) * 1_000_000n - ctimeNs < 2_000_000_000n
      this.trusted = hIdentity(this.out) === id && !coarse
    }
    this.stats.trusted = this.trusted
    // reported once, by the first build after the fingerprint changed
    this.stats.invalidated = this.invalidated === true
    this.invalidated = false
  }

  /** Is a file too fresh to be trusted by its stat (changed within racyMs of `at`)? */
  racy (st, at = Date.now()) { return Math.max(st.mtimeMs, st.ctimeMs) > at - this.racyMs }

  /**
   * Records in key order, for a full walk: each call must ask for a key after
   * the last one asked. Records passed over belong to directories that are
   * gone: they are deleted. With rehash every answer is null (and every record
   * is rewritten or deleted).
   * @param {string} key @returns {Promise<DirRecord | null>}
   */
  async next (key) {
    this.iter ??= { it: this.db.iterator({ gte: DIR, lt: DIR_END, highWaterMarkBytes: READ_AHEAD }), buf: [], at: 0, done: false }
    const s = this.iter
    for (;;) {
      if (s.at === s.buf.length) {
        if (s.done) return null
        s.buf = await s.it.nextv(256); s.at = 0
        if (s.buf.length === 0) { s.done = true; await s.it.close(); return null }
      }
      const [k, v] = s.buf[s.at]
      const c = compareNames(k, key)
      if (c > 0) return null
      s.at++
      if (c === 0) return this.rehash ? null : this._ours(v)
      this._queue({ type: 'del', key: k }); this.stats.pruned++
    }
  }

  /** One record, by key (a partial build: only some directories are looked at). */
  async get (key) {
    if (this.rehash) return null
    const v = await this.db.get(key)
    return v === undefined ? null : this._ours(v)
  }

  // a record built for this build's format version, or null (it is replaced when its directory is encoded)
  _ours (v) {
    const rec = new DirRecord(v)
    if (rec.version === this.version && rec.sealed === this.sealed) return rec
    this.stats.otherVersion++
    return null
  }

  /** Remember a directory just encoded (a Buffer from encodeRecord). */
  put (key, value) { this.stats.dirsEncoded++; this._queue({ type: 'put', key, value }) }

  /** Forget a directory (it was encoded without a record: a child was skipped). */
  del (key) { this.stats.dirsEncoded++; this._queue({ type: 'del', key }) }

  _queue (op) {
    this.pending.push(op); this.queued++
    this.pendingBytes += op.value ? op.value.length : 0
    if (this.pending.length >= FLUSH_OPS || this.pendingBytes >= FLUSH_BYTES) this._flush()
  }

  // Batches go out while the build runs, so a killed first build of a large
  // tree still leaves most of its work recorded. Everything a record names is
  // already renamed into h/ when it is queued.
  _flush () {
    const ops = this.pending; this.pending = []; this.pendingBytes = 0
    if (ops.length) {
      this.flushing = this.flushing.then(() => this.db.batch(ops))
      this.flushing.catch(() => {}) // reported by commit(), not as an unhandled rejection
    }
    return this.flushing
  }

  /**
   * Write what is pending; after a full walk, delete the records of
   * directories after the last one visited; after a partial one, the records
   * of directories that left the tree (and of everything below them); and
   * remember h/ as it is now.
   * @param {{ full: boolean, gone?: string[], totals?: { files: number, bytes: number } | null }} o
   */
  async commit ({ full, gone = [], totals = null }) {
    if (full && this.iter && !this.iter.done) {
      for (;;) {
        for (; this.iter.at < this.iter.buf.length; this.iter.at++) { this._queue({ type: 'del', key: this.iter.buf[this.iter.at][0] }); this.stats.pruned++ }
        this.iter.buf = await this.iter.it.nextv(256); this.iter.at = 0
        if (!this.iter.buf.length) break
      }
      this.iter.done = true
      await this.iter.it.close()
    }
    for (const key of gone) { this._queue({ type: 'del', key }); this.stats.pruned++ }
    if (totals) { this.totals = totals; this._queue({ type: 'put', key: TOTALS_KEY, value: Buffer.from(JSON.stringify(totals)) }) }
    await this._flush()
    for (const key of gone) await this.db.clear({ gte: key + '\0', lt: key + '\x01' })
    // After many writes (a first build), leave them in a table rather than in
    // LevelDB's log: the next open would replay the log, which costs the next
    // rebuild more than the flush costs here (docs/BENCHMARKS.md P6, notes).
    // A range of one key compacts little beyond the flushed memtable.
    if (this.queued >= FLUSH_OPS) await this.db.compactRange(PARAMS_KEY, PARAMS_KEY)
    this.queued = 0
    // last, after every record it vouches for is written
    const id = hIdentity(this.out)
    if (id) {
      this.committed = { id, at: Date.now() }
      await this.db.put(H_KEY, Buffer.from(`${id}|${this.committed.at}`))
    }
  }

  async close () {
    try { await this.flushing } catch {}
    try { if (this.iter && !this.iter.done) await this.iter.it.close() } catch {}
    try { await this.db.close() } finally { await this.lock.release() }
  }
}

/**
 * Every file the last build of OUT recorded, with its size and whole-file
 * SHA-256 (in directory order), whichever format version it built. Takes
 * OUT's lock while it reads, so not while a build (or --watch) holds it. An
 * index written by other code (another fingerprint: its records may be laid
 * out otherwise) lists nothing, as the next build would empty it.
 * @param {string} out
 * @returns {AsyncGenerator<{ path: string, size: number, sha256: string }>}
 */
export async function * recordedFiles (out) {
  const lock = await lockDir(out, 'rotree build index reader')
  const db = new Level(path.join(out, INDEX_DIR), DB_OPTIONS)
  try {
    await db.open()
    const fp = await db.get(PARAMS_KEY)
    if (fp === undefined || Buffer.from(fp).toString() !== await paramsFingerprint()) return
    for await (const [k, v] of db.iterator({ gte: DIR, lt: DIR_END })) {
      const rec = new DirRecord(v)
      const dir = k.slice(DIR.length).split('\0').join('/')
      const names = rec.names
      for (let i = 0; i < names.length; i++) {
        const t = rec.type(i)
        if (t === 1 || t === 4) yield { path: `${dir}/${names[i]}`, size: rec.f(i, 1), sha256: rec.sha256(i) }
      }
    }
  } finally {
    await db.close()
    await lock.release()
  }
}

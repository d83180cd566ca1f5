// The gateway's verified-blob cache on disk: each blob a plain file, bounded
// in bytes, least recently used out first, kept across restarts. It plugs into
// a Tree as opts.blobCache: the Tree puts only blobs it has verified, and
// verifies again whatever get() returns, because disks rot: a bad
// entry costs one re-fetch (tree.stats.localFaults counts them), never a wrong byte.
//
// Layout, in the cache folder:
//   blobs/<first two hex digits>/<hash>   the blob's bytes, written to
//       <hash>.<random>.tmp and renamed, so a reader never sees half a blob
//   a `level` (classic-level) database of small records, !m!<hash> →
//       "<size> <tick>": its size and last use, so a restart rebuilds the
//       LRU order without reading any blob. Its lock is the cache's: one
//       process per folder.
// A blob's file is written before its record and its record deleted before
// its file, so a crash leaves at most files without records; opening the
// cache deletes those (and any *.tmp), and the records of files that are gone.
// The recency order lives in memory (a Map in use order); a hit's new tick is
// written back lazily, every few seconds, not on the read path.
//
// Why files and not LevelDB values (as before): a hit is one open, an fstat and one
// pread into the reader's own buffer (a pooled one for a streamed download,
// client-js/src/fetch/buffer-pool.js), where a LevelDB value was read into
// LevelDB's block buffer, copied into a new JS buffer and left to V8, and
// LevelDB's mapped tables and buffers grew the gateway's memory (P9 and P2 in
// docs/BENCHMARKS.md).
//
// The folder is the gateway's alone (docs/SECURITY.md, the local user; made
// 0700, refused at start when it is a symlink, another user's or writable by
// others: lib/private-folder.js), and nothing here follows or blocks on what
// it finds: whoever could write there could plant a link at a name the cache
// writes (a file of the gateway's user overwritten with a blob) or a FIFO
// where it reads (an open that holds one of libuv's threads for good). A
// temporary file is created O_EXCL|O_NOFOLLOW (disk-cache-worker.js); an
// entry is opened O_NOFOLLOW|O_NONBLOCK and read only when fstat on that
// descriptor finds a regular file of the recorded size; anything else at an
// entry's name is a miss, removed (unlinked, never followed).
//
// Every method swallows its own I/O errors (counted in stats().errors): a full
// or broken disk makes the cache miss, it never fails a request.
//
// Writes do not hold up the request that fetched the blob: put() queues the
// write and returns at once; the queue is one promise chain (so a put and a
// later eviction of the same blob reach the disk in order) and is bounded in
// bytes: when the disk falls behind, further blobs are not cached (counted as
// `dropped`) rather than piling up in memory (docs/BENCHMARKS.md, P9). A blob waiting
// in the queue is served from it. The files are written by a thread of their
// own (disk-cache-writer.js): put() copies the blob into its ring, which is
// that bound, so a download's buffer is free at once and the writes do not
// wait their turn behind the main thread's work. Puts that arrive while the
// queue is busy go to the thread as one batch, their records as one LevelDB
// batch.
import fs from 'node:fs'
import path from 'node:path'
import { Level } from 'level'
import { StateError } from 'rotree-client/errors'
import { ensurePrivateFolder, whyNotPrivate } from '../lib/private-folder.js'
import { BlobFileWriter } from './disk-cache-writer.js'

const FLUSH_MS = 5000
const MAX_PENDING_BYTES = 4 << 20 // blob bytes waiting to be written (the writing thread's ring)
const HEX64 = /^[0-9a-f]{64}$/
const HEX2 = /^[0-9a-f]{2}$/
const BLOBS = 'blobs'
// an entry is read without following a link at its name, and a FIFO there
// answers the open at once instead of when a writer comes (O_NONBLOCK does
// nothing to a regular file's reads)
const READ_FLAGS = fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0) | (fs.constants.O_NONBLOCK ?? 0)
const rmName = p => fs.promises.rm(p, { force: true, recursive: true }) // lstat first: a link is unlinked, never followed

export class DiskCache {
  /** Use openDiskCache(). */
  constructor (db, dir, maxBytes, log) {
    this.db = db
    this.dir = dir
    this.maxBytes = maxBytes
    this.log = log
    this.blobDir = path.join(dir, BLOBS)
    this.meta = db.sublevel('m', { keyEncoding: 'utf8', valueEncoding: 'utf8' })
    this.index = new Map() // hash → { size, tick }; Map order = use order, oldest first
    this.bytes = 0
    this.tick = 0
    this.dirty = new Set() // hashes whose tick changed since the last flush
    this.counts = { hits: 0, misses: 0, puts: 0, dropped: 0, evictions: 0, errors: 0 }
    this.files = new BlobFileWriter(MAX_PENDING_BYTES) // the blob files, written on a thread of their own
    this.pending = new Map() // hash → its slot in files' ring, until written
    this.pendingBytes = 0
    this.chain = Promise.resolve() // the write queue
    this.putBatch = null // puts queued together and not started yet (put, _writeBatch)
    this.timer = setInterval(() => { this._flush() }, FLUSH_MS)
    this.timer.unref()
    this.closed = false
  }

  async _load () {
    // a cache written before blobs were files holds them as LevelDB values
    // (sublevel "b"): it starts empty, and those values are deleted
    const old = this.db.sublevel('b', { keyEncoding: 'utf8', valueEncoding: 'view' })
    let legacy = false
    for await (const k of old.keys({ limit: 1 })) legacy = k !== undefined
    if (legacy) {
      await old.clear()
      await this.meta.clear()
      await this.db.compactRange?.('!', '~').catch(() => {})
    }
    const recs = []
    for await (const [hash, v] of this.meta.iterator()) {
      const [size, tick] = v.split(' ').map(Number)
      if (HEX64.test(hash) && Number.isSafeInteger(size) && Number.isSafeInteger(tick)) recs.push({ hash, size, tick })
    }
    recs.sort((a, b) => a.tick - b.tick)
    for (const r of recs) {
      this.index.set(r.hash, { size: r.size, tick: r.tick })
      this.bytes += r.size
      this.tick = Math.max(this.tick, r.tick)
    }
    await this._sweep()
    await this._evict() // the limit may have shrunk since the last run
  }

  /**
   * Delete what no record names (a crash between a blob's file and its
   * record, a *.tmp) and whatever is not a regular file or a folder of ours
   * at a name the cache uses; then drop the records whose file is gone.
   */
  async _sweep () {
    const blobs = await lstatOrNull(this.blobDir)
    if (blobs !== null && whyNotPrivate(blobs) !== null) await rmName(this.blobDir)
    await fs.promises.mkdir(this.blobDir, { recursive: true, mode: 0o700 })
    const kept = new Set()
    for (const sub of await fs.promises.readdir(this.blobDir, { withFileTypes: true })) {
      const subdir = path.join(this.blobDir, sub.name)
      // a link here would lead the listing and the deletes below out of the
      // cache; a folder someone else can write could get one later
      if (!HEX2.test(sub.name) || !sub.isDirectory() || whyNotPrivate(await fs.promises.lstat(subdir)) !== null) {
        await rmName(subdir)
        continue
      }
      for (const f of await fs.promises.readdir(subdir, { withFileTypes: true })) {
        if (f.isFile() && f.name.slice(0, 2) === sub.name && this.index.has(f.name)) kept.add(f.name)
        else await rmName(path.join(subdir, f.name))
      }
    }
    const gone = [...this.index.keys()].filter(h => !kept.has(h))
    for (const h of gone) this._forget(h)
    await this._del(gone)
  }

  _path (hash) { return path.join(this.blobDir, hash.slice(0, 2), hash) }

  /**
   * The blob's file, exactly `size` bytes, into a buffer of `pool` when one
   * is given; undefined when absent, short, or not a regular file.
   */
  _read (hash, size, pool) {
    const file = this._path(hash)
    return new Promise(resolve => {
      fs.open(file, READ_FLAGS, (err, fd) => {
        if (err) { if (err.code !== 'ENOENT') this._error('get', notAFile(file, err)); return resolve(undefined) }
        // the descriptor's own type and size: what the name held when it was opened
        fs.fstat(fd, (err1, st) => {
          if (err1 || !st.isFile() || st.size !== size) {
            fs.close(fd, () => {})
            if (err1) this._error('get', err1)
            else if (!st.isFile()) this._error('get', notAFile(file))
            return resolve(undefined) // a file of another size: a miss, as a short read is
          }
          const taken = pool === null ? null : pool.take(size)
          const buf = taken === null ? Buffer.allocUnsafeSlow(size) : taken.subarray(0, size)
          fs.read(fd, buf, 0, size, 0, (err2, n) => {
            fs.close(fd, () => {})
            if (!err2 && n === size) return resolve(buf)
            if (taken !== null) pool.lend(taken, 0) // nobody saw it: back at once
            if (err2) this._error('get', err2)
            resolve(undefined)
          })
        })
      })
    })
  }

  /**
   * @param {string} hash
   * @param {import('rotree-client/fetch').BufferPool | null} [pool] read into a buffer
   *   of this pool, claimed once (the Tree's, for a streamed chunk: it gives it back)
   * @returns {Promise<Uint8Array|undefined>} unverified: the Tree checks it
   */
  async get (hash, pool = null) {
    const e = this.index.get(hash)
    if (e === undefined || this.closed) { this.counts.misses++; return undefined }
    // one still waiting to be written: a copy of its bytes in the writer's ring
    const queued = this.pending.get(hash)
    let bytes = queued === undefined ? undefined : this.files.read(queued)
    if (bytes === undefined) bytes = await this._read(hash, e.size, pool)
    if (bytes === undefined) { // its file is gone, short or not a file: the record goes too, and the name
      this.counts.misses++
      if (this.index.get(hash) === e) { this._forget(hash); this._del([hash]) }
      return undefined
    }
    this.counts.hits++
    if (this.index.get(hash) === e) { // still present: move it to the recent end
      this.index.delete(hash)
      e.tick = ++this.tick
      this.index.set(hash, e)
      this.dirty.add(hash)
    }
    return bytes
  }

  /**
   * Queue a verified blob for storing (the Tree calls this after verifying it); returns at once.
   * done(), when given, runs once this cache no longer holds `bytes`: at once, since they are
   * copied into the writing thread's ring (or not stored); the Tree may then reuse that buffer.
   */
  put (hash, bytes, done) {
    if (this.closed || this.index.has(hash) || bytes.length > this.maxBytes || !HEX64.test(hash)) return done?.()
    const slot = this.files.take(bytes)
    done?.()
    if (slot === null) { this.counts.dropped++; return }
    const e = { size: bytes.length, tick: ++this.tick }
    this.index.set(hash, e) // claimed now, so a second put of the same blob is a no-op
    this.bytes += e.size
    this.pending.set(hash, slot)
    this.pendingBytes += e.size
    // puts that arrive while the queue is busy wait together: their files go
    // to the writing thread in one message and their records in one batch
    if (this.putBatch === null) {
      const batch = []
      this._queue(() => this._writeBatch(batch))
      this.putBatch = batch
    }
    this.putBatch.push({ hash, slot, e })
    this._evict()
  }

  /** One batch of puts: their files written by the writing thread, then their records. */
  async _writeBatch (batch) {
    if (this.putBatch === batch) this.putBatch = null // later puts start a batch of their own
    const errs = await this.files.write(batch.map(({ hash, slot }) => ({ file: this._path(hash), slot })))
    const written = []
    for (let i = 0; i < batch.length; i++) {
      const { hash, e, slot } = batch[i]
      if (this.pending.get(hash) === slot) this.pending.delete(hash) // not a later put of the same blob
      this.pendingBytes -= e.size
      if (errs[i] === null) written.push({ type: 'put', key: hash, value: `${e.size} ${e.tick}` })
      else {
        this._error('put', errs[i])
        if (this.index.get(hash) === e) this._forget(hash)
      }
    }
    this.files.free(batch[batch.length - 1].slot) // no get() reads these slots any more
    if (written.length === 0) return
    try {
      await this.meta.batch(written)
      this.counts.puts += written.length
    } catch (err) {
      // without their records the files are swept at the next open; this run still serves them
      this._error('put', err)
    }
  }

  /** Run fn after every write queued before it. */
  _queue (fn) {
    this.putBatch = null // what is queued after this must not join a batch queued before it
    const p = this.chain.then(fn)
    this.chain = p.catch(() => {})
    return p
  }

  /** Resolves when every queued write (files and records) is done; nothing is fsynced: a crash may lose or tear the last ones, which the Tree's check of every get() catches. */
  flush () { return this.chain }

  /** Drop an entry (the Tree calls this when a cached blob failed verification). */
  delete (hash) {
    this._forget(hash)
    return this._del([hash])
  }

  _forget (hash) {
    const e = this.index.get(hash)
    if (e === undefined) return
    this.index.delete(hash)
    this.dirty.delete(hash)
    this.bytes -= e.size
  }

  _del (hashes) {
    if (this.closed || hashes.length === 0) return this.chain
    return this._queue(async () => {
      // the record first: a crash in between leaves a file the next open sweeps
      try {
        await this.meta.batch(hashes.map(h => ({ type: 'del', key: h })))
      } catch (err) { this._error('delete', err); return }
      for (const h of hashes) {
        try { await rmName(this._path(h)) } catch (err) { this._error('delete', err) }
      }
    })
  }

  _evict () {
    if (this.bytes <= this.maxBytes) return this.chain
    const gone = []
    for (const [hash, e] of this.index) {
      if (this.bytes <= this.maxBytes) break
      this.index.delete(hash)
      this.dirty.delete(hash)
      this.bytes -= e.size
      gone.push(hash)
    }
    this.counts.evictions += gone.length
    return this._del(gone)
  }

  /** Write back the recency of entries read since the last time. */
  _flush () {
    if (this.closed || this.dirty.size === 0) return this.chain
    const ops = []
    for (const hash of this.dirty) {
      const e = this.index.get(hash)
      if (e) ops.push({ type: 'put', key: hash, value: `${e.size} ${e.tick}` })
    }
    this.dirty.clear()
    return this._queue(async () => {
      try { await this.meta.batch(ops) } catch (err) { this._error('flush', err) }
    })
  }

  _error (what, err) {
    this.counts.errors++
    this.log?.error?.(`rotree gateway: disk cache ${what} failed: ${err.cause?.message ?? err.message}`)
  }

  stats () {
    return { dir: this.dir, entries: this.index.size, bytes: this.bytes, maxBytes: this.maxBytes, pendingBytes: this.pendingBytes, ...this.counts }
  }

  async close () {
    if (this.closed) return
    clearInterval(this.timer)
    await this._flush()
    await this.chain
    this.closed = true
    await this.files.close()
    await this.db.close()
  }
}

/**
 * Open (or create) the cache at `dir`. LevelDB admits one process per
 * directory, so a second gateway on the same folder gets a clear error; a
 * folder that is a symlink, another user's, or writable by its group or
 * others is refused (StateError).
 * @param {string} dir
 * @param {{ maxBytes: number, log?: { error?: Function } | null }} o
 * @returns {Promise<DiskCache>}
 */
export async function openDiskCache (dir, { maxBytes, log = null }) {
  if (!Number.isSafeInteger(maxBytes) || maxBytes <= 0) throw new RangeError('disk cache maxBytes must be a positive integer')
  try {
    await ensurePrivateFolder(dir, 'the blob cache folder')
    await removeSpecials(dir)
  } catch (err) {
    if (err instanceof StateError) throw err
    throw new StateError(`cannot open the blob cache ${dir}: ${err.message}`, { cause: err })
  }
  // The database holds only small records now (the blobs are files); its
  // options are LevelDB's defaults.
  const db = new Level(dir, { keyEncoding: 'utf8', valueEncoding: 'utf8' })
  try {
    await db.open()
  } catch (err) {
    const locked = err.code === 'LEVEL_LOCKED' || err.cause?.code === 'LEVEL_LOCKED'
    throw new StateError(locked
      ? `the blob cache ${dir} is in use by another process (LevelDB allows one); give each gateway its own cache directory (--cache-dir)`
      : `cannot open the blob cache ${dir}: ${err.cause?.message ?? err.message}`, { cause: err })
  }
  const cache = new DiskCache(db, dir, maxBytes, log)
  try {
    await cache._load()
    await cache.flush()
  } catch (err) {
    await cache.close().catch(() => {})
    throw new StateError(`cannot read the blob cache ${dir}: ${err.cause?.message ?? err.message}`, { cause: err })
  }
  return cache
}

/**
 * Remove every link, FIFO, socket or device in the cache folder itself:
 * LevelDB opens its files there by name (CURRENT, LOG, LOCK, MANIFEST-*,
 * *.dbtmp) without O_NOFOLLOW. Once the folder is the gateway's alone
 * (ensurePrivateFolder), nobody else can put one back.
 */
async function removeSpecials (dir) {
  for (const d of await fs.promises.readdir(dir, { withFileTypes: true })) {
    if (!d.isFile() && !d.isDirectory()) await fs.promises.unlink(path.join(dir, d.name)) // unlink never follows
  }
}

/** The error to log for what is at an entry's name when it is not a regular file (`err`: why it could not be opened). */
function notAFile (file, err) {
  const kind = err === undefined ? 'not a regular file' : err.code === 'ELOOP' || err.code === 'EMLINK' ? 'a symlink' : err.code === 'ENXIO' ? 'a socket' : null
  return kind === null ? err : new StateError(`${file} is ${kind} (planted there?): never followed; a miss, and removed`)
}

async function lstatOrNull (p) {
  try { return await fs.promises.lstat(p) } catch (err) { if (err.code === 'ENOENT') return null; throw err }
}

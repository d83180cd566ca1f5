// The gateway's verified-blob cache on disk: `level` (classic-level), bounded
// in bytes, least recently used out first, kept across restarts. It plugs into
// a Tree as opts.blobCache: the Tree puts only blobs it has verified, and
// verifies again whatever get() returns, because disks rot: a bad
// entry costs one re-fetch (tree.stats.localFaults counts them), never a wrong byte.
//
// Layout (two sublevels, written together in one batch):
//   !b!<hash>  the blob's bytes
//   !m!<hash>  "<size> <tick>": its size and last use, so a restart rebuilds
//              the LRU order from small records without reading any blob
// The recency order lives in memory (a Map in use order); a hit's new tick is
// written back lazily, every few seconds, not on the read path.
//
// Every method swallows its own I/O errors (counted in stats().errors): a full
// or broken disk makes the cache miss, it never fails a request.
//
// Writes do not hold up the request that fetched the blob: put() queues the
// write and returns at once; the queue is one promise chain (so a put and a
// later eviction of the same blob reach LevelDB in order) and is bounded in
// bytes: when the disk falls behind, further blobs are not cached (counted as
// `dropped`) rather than piling up in memory (docs/BENCHMARKS.md, P9). A blob waiting
// in the queue is served from it.
import { Level } from 'level'
import { StateError } from 'rotree-client/errors'

const FLUSH_MS = 5000
const MAX_PENDING_BYTES = 8 << 20
const HEX64 = /^[0-9a-f]{64}$/

export class DiskCache {
  /** Use openDiskCache(). */
  constructor (db, dir, maxBytes, log) {
    this.db = db
    this.dir = dir
    this.maxBytes = maxBytes
    this.log = log
    this.blobs = db.sublevel('b', { keyEncoding: 'utf8', valueEncoding: 'view' })
    this.meta = db.sublevel('m', { keyEncoding: 'utf8', valueEncoding: 'utf8' })
    this.index = new Map() // hash → { size, tick }; Map order = use order, oldest first
    this.bytes = 0
    this.tick = 0
    this.dirty = new Set() // hashes whose tick changed since the last flush
    this.counts = { hits: 0, misses: 0, puts: 0, dropped: 0, evictions: 0, errors: 0 }
    this.pending = new Map() // hash → bytes queued for writing
    this.pendingBytes = 0
    this.chain = Promise.resolve() // the write queue
    this.timer = setInterval(() => { this._flush() }, FLUSH_MS)
    this.timer.unref()
    this.closed = false
  }

  async _load () {
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
    await this._evict() // the limit may have shrunk since the last run
  }

  /** @param {string} hash @returns {Promise<Uint8Array|undefined>} unverified: the Tree checks it */
  async get (hash) {
    const e = this.index.get(hash)
    if (e === undefined || this.closed) { this.counts.misses++; return undefined }
    // a copy of one still queued: its buffer goes back to the Tree's pool once written (put's done)
    const queued = this.pending.get(hash)
    let bytes = queued === undefined ? undefined : Uint8Array.prototype.slice.call(queued) // a copy, also of a Buffer
    if (bytes === undefined) {
      try { bytes = await this.blobs.get(hash, { fillCache: false }) } catch (err) { this._error('get', err) }
    }
    if (bytes === undefined) { this.counts.misses++; this._forget(hash); return undefined }
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
   * done(), when given, runs once this cache no longer holds `bytes` (at once when it does not
   * store them, else once they are written): the Tree may then read another chunk into that buffer.
   */
  put (hash, bytes, done) {
    if (this.closed || this.index.has(hash) || bytes.length > this.maxBytes || !HEX64.test(hash)) return done?.()
    if (this.pendingBytes + bytes.length > MAX_PENDING_BYTES) { this.counts.dropped++; return done?.() }
    const e = { size: bytes.length, tick: ++this.tick }
    this.index.set(hash, e) // claimed now, so a second put of the same blob is a no-op
    this.bytes += e.size
    this.pending.set(hash, bytes)
    this.pendingBytes += e.size
    this._queue(async () => {
      try {
        await this.db.batch([
          { type: 'put', sublevel: this.blobs, key: hash, value: bytes },
          { type: 'put', sublevel: this.meta, key: hash, value: `${e.size} ${e.tick}` }
        ])
        this.counts.puts++
      } catch (err) {
        this._error('put', err)
        if (this.index.get(hash) === e) this._forget(hash)
      } finally {
        this.pending.delete(hash)
        this.pendingBytes -= e.size
        done?.()
      }
    })
    this._evict()
  }

  /** Run fn after every write queued before it. */
  _queue (fn) {
    const p = this.chain.then(fn)
    this.chain = p.catch(() => {})
    return p
  }

  /** Resolves when every queued write has reached LevelDB. */
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
      try {
        await this.db.batch(hashes.flatMap(h => [
          { type: 'del', sublevel: this.blobs, key: h },
          { type: 'del', sublevel: this.meta, key: h }
        ]))
      } catch (err) { this._error('delete', err) }
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
    await this.db.close()
  }
}

/**
 * Open (or create) the cache at `dir`. LevelDB admits one process per
 * directory, so a second gateway on the same folder gets a clear error.
 * @param {string} dir
 * @param {{ maxBytes: number, log?: { error?: Function } | null }} o
 * @returns {Promise<DiskCache>}
 */
export async function openDiskCache (dir, { maxBytes, log = null }) {
  if (!Number.isSafeInteger(maxBytes) || maxBytes <= 0) throw new RangeError('disk cache maxBytes must be a positive integer')
  // No snappy: release files are mostly compressed already, and trying costs
  // CPU on every write. Bigger table files (LevelDB's default is 2 MiB, two
  // or three blobs) mean fewer files and compactions. The memtable stays at its
  // 4 MiB default: it is resident memory (P9).
  const db = new Level(dir, { keyEncoding: 'utf8', valueEncoding: 'view', compression: false, maxFileSize: 32 << 20 })
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

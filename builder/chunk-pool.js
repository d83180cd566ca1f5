// The threads that stat, read, chunk, hash and store a build's files.
//
// Reading, FastCDC's loop, SHA-256 and the blob writes are most of a full
// build's CPU time, and files are independent: a small pool of worker threads
// (chunk-worker.js) takes them in batches (file-batch.js), while the main
// thread walks the tree, keeps the build index and encodes directories. A
// worker writes the chunks it cuts straight into h/ (temporary name, then
// rename, as lib/published/blob-store.js does), so only names, sizes and
// hashes cross between threads, in one transferred buffer per batch; the
// bytes of an inlined file (≤ INLINE_MAX) come back in it too. In a rebuild
// the workers also do the lstat of every file the build index knows, and
// read only those that changed.
//
// What a file becomes is decided by chunkFileSync alone, whichever thread
// runs it; a file of BIG_FILE bytes or more is chunked on several threads at
// once with the same cut points (big-file.js). Directories are encoded on the
// main thread in name order from the results. So the tree, and every blob in
// h/, is the same for any number of threads and any scheduling
// (test/builder/chunk-pool.test.js).
//
// Starting a worker costs CPU (a V8 isolate and its modules; docs/BENCHMARKS.md
// P6, notes): a rebuild that reads a handful of files does them on the main
// thread and never starts one. Workers start once the files asked for (or,
// when their size is not known before they are read, read on this thread) pass
// `workersAfter` bytes, or WORKERS_AFTER_FILES files, or WORKERS_AFTER_CHECKS
// lstat() checks; until they are ready the main thread keeps going. With workersAfter 0 they start at once and take
// every file (the tests use this to know which thread read what).
//
// Errors: a file's error (BuildInputError, ENOSPC, ...) comes back from the
// worker as data and is rebuilt here as the same class with the same code,
// message and fields (lib/thread-error.js), so callers see what a read on the
// main thread throws.
// A worker that dies fails every file it held and the pool. close() stops the
// workers (an abort flag they check between reads, then terminate) and never
// leaves a thread keeping the process alive; idle workers are unref'd anyway.
import { Worker } from 'node:worker_threads'
import { availableParallelism } from 'node:os'
import { readdirSync, rmSync } from 'node:fs'
import path from 'node:path'
import * as errors from 'rotree-client/errors'
import { readBuffer } from './chunk-file.js'
import { runBatch, walkResults, fileAt, fileSizeAt, bigAt, encodeFile, eachChunkAt, SAME, FILE, BIG, ERROR } from './file-batch.js'
import { chunkBig, BIG_FILE, SEGMENT } from './big-file.js'
import { TMP_PREFIX } from '../lib/published/blob-store.js'
import { sealerOf } from './seal.js'
import { encodeError, decodeError } from '../lib/thread-error.js'

// the one thread-error codec (lib/thread-error.js), named here too for chunk-worker.js
export { encodeError, decodeError }

/** More threads than this only contend for the disk and the h/ directory. */
export const MAX_THREADS = 4
export const WORKERS_AFTER = 16 << 20 // bytes
const WORKERS_AFTER_FILES = 1024 // small files: this thread does a thousand while a worker starts (docs/BENCHMARKS.md P6, notes)
const WORKERS_AFTER_CHECKS = 4096 // lstat only: far cheaper than reading a file, so many more before a worker pays (same notes)
const BATCH_BYTES = 4 << 20 // a batch: up to this many bytes of files (when their size is known) or BATCH_FILES files
const BATCH_FILES = 128
const IN_FLIGHT = 2 // messages per worker: the next one waits in its port while it works
const SLICE_MS = 20 // main-thread reading yields to the event loop this often
const DRAIN_MS = 5000 // close(): how long in-flight work gets to stop before terminate()
// Format version 2 deflates every chunk (deflate's rate on one core:
// docs/BENCHMARKS.md P6): a file this large that the main thread meets (before
// the workers are up, or in a rebuild that reads a few files) goes to the
// workers through big-file.js, which cuts it exactly as chunkFileSync would,
// rather than holding the main thread while all of it is deflated.
const MAIN_BIG_V2 = 4 << 20

/** The default pool size: one thread per core, at most MAX_THREADS; none on one core (nothing to win). */
export function defaultThreads () {
  const cores = availableParallelism()
  return cores < 2 ? 0 : Math.min(MAX_THREADS, cores)
}

/**
 * @typedef {{ open: string, rel: string }} DirRef where a directory's files are opened, and its path in the tree
 * @typedef {(i: number, err: Error | null, buf?: Buffer | null, pos?: number) => void} FileCallback
 *   buf null: checked and unchanged (SAME); else the file's FILE record in buf at pos (file-batch.js fileAt)
 * @typedef {{ statInto: (row: number, out: Float64Array, at: number) => void }} StatSource
 *   where a file's expected stat comes from (a build index record, dir-record.js)
 */
export class ChunkPool {
  /**
   * @param {import('../lib/published/blob-store.js').StatBlobStore} store h/, and the account of what was written
   * @param {{ threads?: number, workersAfter?: number, bigAt?: number }} [o]
   *   threads: worker threads (0: everything on the main thread);
   *   workersAfter: bytes asked for before they start (0: at the first file);
   *   bigAt: files of this size or more are chunked on several threads (with ≥ 2 of them),
   *   in segments of `segment` bytes;
   *   version: the tree's format version, how chunks are stored (chunk-file.js storeChunk;
   *   in version 2 they are compressed on the thread that reads them);
   *   secret: a private tree's secret (64 hex): its chunks are sealed there too
   */
  constructor (store, { threads = defaultThreads(), workersAfter = WORKERS_AFTER, bigAt = BIG_FILE, segment = SEGMENT, version = 1, secret = null } = {}) {
    this.store = store
    this.version = version
    this.secret = secret // a private tree's (FORMAT.md §12.8): every thread seals what it stores
    this.seal = sealerOf(secret)
    this.threads = threads
    this.workersAfter = workersAfter
    this.bigAt = threads >= 2 ? bigAt : Infinity
    this.mainBigAt = version === 2 && threads > 0 ? Math.min(this.bigAt, MAIN_BIG_V2) : this.bigAt
    this.segment = segment
    this.queue = []; this.head = 0 // of file items
    this.tasks = [] // big-file tasks, before any file
    this.inFlight = 0 // files given to a thread and not answered
    this.asked = 0; this.askedFiles = 0; this.askedChecks = 0
    this.workers = [] // of { w, ready, inflight, jobs: Map<id, job>, drained }
    this.nextId = 0
    this.scheduled = false
    this.buf = null // the main thread's read buffer, made on first use
    this.failed = null
    this.closed = false
    this.waiters = [] // of { below, resolve }: drain()
    this.stats = { threads: 0, mainFiles: 0, workerFiles: 0, batches: 0, bigFiles: 0 }
    /** @type {((rel: string, bytes: number) => void) | null} bytes of a large file done so far (big-file.js), for progress */
    this.onBigBytes = null
  }

  /**
   * Look at one file: read, chunk and store it; or, with an expected stat
   * (the build index's record of it), lstat it first and read it only if it changed.
   * @param {DirRef} dir @param {string} name
   * @param {StatSource | null} src @param {number} row the file's row in src (its expected stat)
   * @param {number} size what the file is thought to be (for batching; 0 unknown)
   * @param {FileCallback} cb called once, with `i`
   * @param {number} i
   */
  file (dir, name, src, row, size, cb, i) {
    if (this.failed) return cb(i, this.failed)
    if (this.closed) return cb(i, stopped())
    this.queue.push({ dir, name, src, row, size, cb, i })
    if (!src) { this.asked += size; this.askedFiles++ } else this.askedChecks++
    this._schedule()
  }

  /**
   * The same as a promise (tests, and the odd single file).
   * @param {import('./chunk-file.js').FileStat | null} [expect]
   * @returns {Promise<import('./chunk-file.js').FileResult | null>} null: unchanged
   */
  chunk (dir, name, expect = null, size = 0) {
    const src = expect && { statInto: (row, out, at) => { out[at] = expect.size; out[at + 1] = expect.mtimeMs; out[at + 2] = expect.ctimeMs; out[at + 3] = expect.ino; out[at + 4] = expect.dev } }
    const settle = (resolve, reject) => (i, err, buf, pos) => {
      if (err) return reject(err)
      if (!buf) return resolve(null)
      const r = fileAt(buf, pos)
      delete r.written // the store has counted them
      resolve(r)
    }
    return new Promise((resolve, reject) => this.file(dir, name, src, 0, size, settle(resolve, reject), 0))
  }

  /** Files asked for and not yet answered. */
  backlog () { return this._pending() + this.inFlight }

  /** Resolves once the backlog is at most `below` (the walker keeps the pool fed, not flooded). */
  drain (below) {
    if (this.backlog() <= below || this.failed || this.closed) return Promise.resolve()
    return new Promise(resolve => this.waiters.push({ below, resolve }))
  }

  _wake () {
    if (!this.waiters.length) return
    const n = this.backlog()
    const done = this.failed || this.closed
    this.waiters = this.waiters.filter(w => (n <= w.below || done) ? (w.resolve(), false) : true)
  }

  /** One part of a large file's work (big-file.js), on a worker. @returns {Promise<any>} */
  task (msg) {
    if (this.failed) return Promise.reject(this.failed)
    if (this.closed) return Promise.reject(stopped())
    return new Promise((resolve, reject) => {
      this.tasks.push({ msg, resolve, reject })
      if (this.workers.length === 0) this._start()
      this._schedule()
    })
  }

  _schedule () {
    if (this.scheduled) return
    this.scheduled = true
    // setImmediate: every file asked for in this turn of the event loop can go out in one batch
    setImmediate(() => { this.scheduled = false; this._pump() })
  }

  _pending () { return this.queue.length - this.head }

  _take () {
    const e = this.queue[this.head]; this.queue[this.head++] = undefined
    if (this.head > 1024 && this.head * 2 > this.queue.length) { this.queue = this.queue.slice(this.head); this.head = 0 }
    return e
  }

  _pump () {
    if (this.closed || this.failed) return
    if (this.workers.length === 0 && this.threads > 0 && this._pending() > 0 &&
        (this.asked >= this.workersAfter || this.askedFiles >= WORKERS_AFTER_FILES || this.askedChecks >= WORKERS_AFTER_CHECKS)) this._start()
    if (this.workers.some(s => s.ready)) this._dispatch()
    else if (this.workersAfter > 0 || this.threads === 0) this._runHere()
    // else: the workers are starting, and will take everything (_pump again on 'ready')
    this._refs()
  }

  // A worker keeps the process alive only while it holds work, or while work
  // waits for it to start; an idle pool never does, even if close() is forgotten.
  _refs () {
    const waiting = this._pending() > 0 || this.tasks.length > 0
    for (const s of this.workers) {
      const want = s.inflight > 0 || (waiting && !s.ready)
      if (want !== s.refd) { s.refd = want; if (want) s.w.ref(); else s.w.unref() }
    }
  }

  _batch () {
    const items = []; let bytes = 0
    while (this._pending() > 0 && items.length < BATCH_FILES && bytes < BATCH_BYTES) {
      const e = this._take(); items.push(e); bytes += e.size
    }
    const dirs = []; const index = new Map()
    const n = items.length
    const batch = { dirs, dir: new Int32Array(n), names: new Array(n), check: new Uint8Array(n), expect: new Float64Array(5 * n) }
    for (let i = 0; i < n; i++) {
      const e = items[i]
      let k = index.get(e.dir)
      if (k === undefined) { k = dirs.length; index.set(e.dir, k); dirs.push({ open: e.dir.open, rel: e.dir.rel }) }
      batch.dir[i] = k; batch.names[i] = e.name
      if (e.src) { batch.check[i] = 1; e.src.statInto(e.row, batch.expect, 5 * i) }
    }
    this.inFlight += n
    return { items, batch }
  }

  // on the main thread, in slices, until a worker is ready
  _runHere () {
    const t0 = performance.now()
    while (this._pending() > 0 && performance.now() - t0 < SLICE_MS) {
      const { items, batch } = this._batch()
      this.buf ??= readBuffer()
      const { data, errors } = runBatch(batch, this.store.writeSync, this.buf, () => this.closed, this.mainBigAt, encodeError, this.version, this.seal)
      this._results(items, data, errors, 'mainFiles')
    }
    if (this._pending() > 0) this._schedule()
  }

  _start () {
    const abort = new SharedArrayBuffer(4)
    this.abort = new Int32Array(abort)
    const n = Math.max(1, this.threads)
    for (let i = 0; i < n; i++) {
      const w = new Worker(new URL('./chunk-worker.js', import.meta.url), {
        workerData: { dir: this.store.dir, fsync: this.store.fsync, abort, bigAt: this.bigAt, version: this.version, secret: this.secret },
        stdout: false, stderr: false,
        // a worker holds one batch at a time: a small young generation keeps its memory small
        resourceLimits: { maxYoungGenerationSizeMb: 8 }
      })
      const slot = { w, ready: false, refd: true, inflight: 0, jobs: new Map(), drained: null, exited: false }
      w.on('message', m => m === 'ready' ? (slot.ready = true, this._pump()) : this._done(slot, m))
      w.on('error', err => this._fail(err))
      w.on('exit', code => {
        slot.exited = true; slot.drained?.()
        if (!this.closed) this._fail(new Error(`a chunk worker thread exited unexpectedly (code ${code})`))
      })
      this.workers.push(slot)
    }
    this.stats.threads = n
    this._refs()
  }

  _dispatch () {
    for (;;) {
      // the ready worker with the least work
      let s = null
      for (const x of this.workers) if (x.ready && x.inflight < IN_FLIGHT && (!s || x.inflight < s.inflight)) s = x
      if (!s || (this._pending() === 0 && this.tasks.length === 0)) return
      const id = this.nextId++
      s.inflight++
      if (this.tasks.length) {
        const t = this.tasks.shift()
        s.jobs.set(id, { task: t })
        s.w.postMessage({ id, task: t.msg })
      } else {
        const { items, batch } = this._batch()
        s.jobs.set(id, { items })
        this.stats.batches++
        s.w.postMessage({ id, batch })
      }
    }
  }

  _done (s, m) {
    const job = s.jobs.get(m.id)
    if (!job) return
    s.jobs.delete(m.id)
    if (--s.inflight === 0) s.drained?.()
    if (job.task) {
      if (m.aborted) job.task.reject(stopped())
      else if (m.error) job.task.reject(decodeError(m.error))
      else job.task.resolve(m.value)
    } else {
      this._results(job.items, m.data, m.errors, 'workerFiles')
    }
    this._pump()
  }

  _results (items, data, errs, who) {
    this.inFlight -= items.length
    walkResults(data, items.length, (i, status, buf, pos) => {
      const e = items[i]
      if (status === SAME) return e.cb(e.i, null, null, 0)
      if (status === FILE) {
        eachChunkAt(buf, pos, (stored, written) => this.store.count(written, stored))
        this.stats[who]++
        // a first build knows a file's size only once it is read: what the main thread has read counts
        if (who === 'mainFiles') this.asked += fileSizeAt(buf, pos)
        return e.cb(e.i, null, buf, pos)
      }
      if (status === BIG) return this._big(e, bigAt(buf, pos))
      if (status === ERROR) return e.cb(e.i, decodeError(errs[buf.readUInt32LE(pos)]))
      e.cb(e.i, stopped())
    })
    this._wake()
  }

  // a large file: its handle is open; several threads chunk it (big-file.js)
  _big (e, big) {
    this.stats.bigFiles++
    this.inFlight++
    chunkBig(this, big, e.dir.rel + e.name, this.segment, this.version).then(r => {
      for (let j = 0; j < r.chunks.length; j++) this.store.count(r.written[j], r.chunks[j].storedSize ?? r.chunks[j].size)
      const { buf, pos } = encodeFile(r)
      this.inFlight--; this._wake(); e.cb(e.i, null, buf, pos)
    }, err => { this.inFlight--; this._wake(); e.cb(e.i, err) })
  }

  // a worker died (not a file's error: those come back as results); the
  // others' work stays counted, so close() lets them finish their writes
  _fail (err) {
    if (this.failed || this.closed) return
    this.failed = err
    for (const s of this.workers) for (const job of s.jobs.values()) this._reject(job, err)
    while (this._pending() > 0) { const e = this._take(); e.cb(e.i, err) }
    for (const t of this.tasks.splice(0)) t.reject(err)
    this._wake()
    this.close().catch(() => {})
  }

  _reject (job, err) {
    if (job.task) job.task.reject(err)
    else { this.inFlight -= job.items.length; for (const e of job.items) e.cb(e.i, err) }
  }

  /**
   * Stop: files not yet started fail with ROTREE_ABORTED, workers stop at their
   * next read and are terminated. Safe to call more than once.
   */
  close () {
    if (this.closing) return this.closing
    this.closed = true
    if (this.abort) Atomics.store(this.abort, 0, 1)
    while (this._pending() > 0) { const e = this._take(); e.cb(e.i, stopped()) }
    for (const t of this.tasks.splice(0)) t.reject(stopped())
    this._wake()
    this.closing = (async () => {
      const busy = this.workers.filter(s => s.inflight > 0 && !s.exited)
      let forced = false
      if (busy.length) {
        let timer
        const drained = Promise.all(busy.map(s => new Promise(resolve => { s.drained = resolve })))
        const late = new Promise(resolve => { timer = setTimeout(() => { forced = true; resolve() }, DRAIN_MS) })
        await Promise.race([drained, late])
        clearTimeout(timer)
      }
      await Promise.all(this.workers.map(s => s.w.terminate()))
      for (const s of this.workers) { for (const job of s.jobs.values()) this._reject(job, stopped()); s.jobs.clear() }
      // a worker that died or was stopped in the middle of a blob write leaves its temporary file: remove ours
      if (forced || this.failed) sweepTemp(this.store.dir)
    })()
    return this.closing
  }
}

function stopped () { return new errors.AbortedError('the build stopped before this file was read') }

function sweepTemp (dir) {
  const mine = `-${process.pid}-`
  try {
    for (const n of readdirSync(dir)) if (n.startsWith(TMP_PREFIX) && n.includes(mine)) rmSync(path.join(dir, n), { force: true })
  } catch {}
}

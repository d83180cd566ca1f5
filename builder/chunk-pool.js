// The threads that read, chunk, hash and store a build's files.
//
// Reading, FastCDC's loop, SHA-256 and the blob writes are most of a full
// build's CPU time, and files are independent: a small pool of worker threads
// (chunk-worker.js) takes them in batches, while the main thread walks the
// tree, keeps the build index and encodes directories. A worker writes the
// chunks it cuts straight into h/ (temporary name, then rename, as
// lib/published/blob-store.js does), so only names, sizes and hashes cross between threads;
// the bytes of an inlined file (≤ INLINE_MAX) come back with its result.
//
// What a file becomes is decided by chunkFileSync alone, whichever thread
// runs it; directories are encoded on the main thread in name order from the
// results. So the tree, and every blob in h/, is the same for any number of
// threads and any scheduling (test/builder/chunk-pool.test.js).
//
// Starting a worker costs ~35 ms of CPU (a V8 isolate and its modules): a
// rebuild that reads a handful of files does them on the main thread and
// never starts one. Workers start once the files asked for pass
// `workersAfter` bytes or WORKERS_AFTER_FILES files; until they are ready the
// main thread keeps reading. With workersAfter 0 they start at once and read
// every file (the tests use this to know which thread read what).
//
// Errors: a file's error (BuildInputError, ENOSPC, ...) comes back from the
// worker as data and is rebuilt here as the same class with the same code,
// message and fields, so callers see what a read on the main thread throws.
// A worker that dies fails every file it held and the pool. close() stops the
// workers (an abort flag they check between reads, then terminate) and never
// leaves a thread keeping the process alive; idle workers are unref'd anyway.
import { Worker } from 'node:worker_threads'
import { availableParallelism } from 'node:os'
import { readdirSync, rmSync } from 'node:fs'
import path from 'node:path'
import * as errors from 'rotree-client/errors'
import { chunkFileSync, readBuffer } from './chunk-file.js'
import { TMP_PREFIX } from '../lib/published/blob-store.js'

/** More threads than this only contend for the disk and the h/ directory. */
export const MAX_THREADS = 4
export const WORKERS_AFTER = 16 << 20 // bytes
const WORKERS_AFTER_FILES = 256
const BATCH_BYTES = 4 << 20 // a batch: up to this many bytes of files or BATCH_FILES files
const BATCH_FILES = 128
const IN_FLIGHT = 2 // batches per worker: the next one waits in its port while it works
const SLICE_MS = 20 // main-thread reading yields to the event loop this often
const DRAIN_MS = 5000 // close(): how long in-flight batches get to stop before terminate()

/** The default pool size: one thread per core, at most MAX_THREADS; none on one core (nothing to win). */
export function defaultThreads () {
  const cores = availableParallelism()
  return cores < 2 ? 0 : Math.min(MAX_THREADS, cores)
}

export class ChunkPool {
  /**
   * @param {import('../lib/published/blob-store.js').BlobStore} store h/, and the account of what is in it
   * @param {{ threads?: number, workersAfter?: number }} [o]
   *   threads: worker threads (0: everything on the main thread);
   *   workersAfter: bytes asked for before they start (0: at the first file)
   */
  constructor (store, { threads = defaultThreads(), workersAfter = WORKERS_AFTER } = {}) {
    this.store = store
    this.threads = threads
    this.workersAfter = workersAfter
    this.queue = []; this.head = 0 // of { task, resolve, reject }
    this.asked = 0; this.askedFiles = 0
    this.workers = [] // of { w, ready, inflight, batches: Map<id, entries>, drained }
    this.nextId = 0
    this.scheduled = false
    this.buf = null // the main thread's read buffer, made on first use
    this.failed = null
    this.closed = false
    this.stats = { threads: 0, mainFiles: 0, workerFiles: 0, batches: 0 }
    if (threads > 0 && workersAfter === 0) this._start()
  }

  /**
   * Read, chunk and store one file.
   * @param {import('./chunk-file.js').FileTask} task its path, and its size and mtime as the scan saw them
   * @returns {Promise<import('./chunk-file.js').FileResult>} without `written`
   */
  chunk (task) {
    if (this.failed) return Promise.reject(this.failed)
    if (this.closed) return Promise.reject(stopped())
    return new Promise((resolve, reject) => {
      this.queue.push({ task, resolve, reject })
      this.asked += task.size; this.askedFiles++
      this._schedule()
    })
  }

  _schedule () {
    if (this.scheduled) return
    this.scheduled = true
    // setImmediate: every file asked for in this turn of the event loop goes out in one batch
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
        (this.asked >= this.workersAfter || this.askedFiles >= WORKERS_AFTER_FILES)) this._start()
    if (this.workers.some(s => s.ready)) this._dispatch()
    else if (this.workersAfter > 0 || this.threads === 0) this._runHere()
    // else: the workers are starting, and will take everything (_pump again on 'ready')
    this._refs()
  }

  // A worker keeps the process alive only while it holds work, or while work
  // waits for it to start; an idle pool never does, even if close() is forgotten.
  _refs () {
    const waiting = this._pending() > 0
    for (const s of this.workers) {
      const want = s.inflight > 0 || (waiting && !s.ready)
      if (want !== s.refd) { s.refd = want; if (want) s.w.ref(); else s.w.unref() }
    }
  }

  // on the main thread, in slices, until a worker is ready
  _runHere () {
    const t0 = performance.now()
    while (this._pending() > 0 && performance.now() - t0 < SLICE_MS) {
      const e = this._take()
      let r
      try {
        this.buf ??= readBuffer()
        r = chunkFileSync(e.task, (hash, bytes) => this.store.putHashedSync(hash, bytes), this.buf)
      } catch (err) { e.reject(err); continue }
      delete r.written // the store has counted them
      this.stats.mainFiles++
      e.resolve(r)
    }
    if (this._pending() > 0) this._schedule()
  }

  _start () {
    const abort = new SharedArrayBuffer(4)
    this.abort = new Int32Array(abort)
    for (let i = 0; i < this.threads; i++) {
      const w = new Worker(new URL('./chunk-worker.js', import.meta.url), {
        workerData: { dir: this.store.dir, fsync: this.store.fsync, abort },
        stdout: false, stderr: false
      })
      const slot = { w, ready: false, refd: true, inflight: 0, batches: new Map(), drained: null, exited: false }
      w.on('message', m => m === 'ready' ? (slot.ready = true, this._pump()) : this._done(slot, m))
      w.on('error', err => this._fail(err))
      w.on('exit', code => {
        slot.exited = true; slot.drained?.()
        if (!this.closed) this._fail(new Error(`a chunk worker thread exited unexpectedly (code ${code})`))
      })
      this.workers.push(slot)
    }
    this.stats.threads = this.threads
    this._refs()
  }

  _dispatch () {
    for (;;) {
      // the ready worker with the least work
      let s = null
      for (const x of this.workers) if (x.ready && x.inflight < IN_FLIGHT && (!s || x.inflight < s.inflight)) s = x
      if (!s || this._pending() === 0) return
      const entries = []; let bytes = 0
      while (this._pending() > 0 && entries.length < BATCH_FILES && bytes < BATCH_BYTES) {
        const e = this._take(); entries.push(e); bytes += e.task.size
      }
      const id = this.nextId++
      s.batches.set(id, entries)
      s.inflight++
      this.stats.batches++
      s.w.postMessage({ id, files: entries.map(e => e.task) })
    }
  }

  _done (s, { id, results }) {
    const entries = s.batches.get(id)
    if (!entries) return
    s.batches.delete(id)
    if (--s.inflight === 0) s.drained?.()
    for (let i = 0; i < entries.length; i++) {
      const r = results[i]; const e = entries[i]
      if (r.aborted) { e.reject(stopped()); continue }
      if (r.error) { e.reject(decodeError(r.error)); continue }
      if (r.chunks) for (let j = 0; j < r.chunks.length; j++) this.store.noteStored(r.chunks[j].hash, r.chunks[j].size, r.written[j])
      delete r.written
      this.stats.workerFiles++
      e.resolve(r)
    }
    this._pump()
  }

  // a worker died (not a file's error: those come back as results); the
  // others' batches stay counted, so close() lets them finish their writes
  _fail (err) {
    if (this.failed || this.closed) return
    this.failed = err
    for (const s of this.workers) for (const entries of s.batches.values()) for (const e of entries) e.reject(err)
    while (this._pending() > 0) this._take().reject(err)
    this.close().catch(() => {})
  }

  /**
   * Stop: files not yet started fail with ROTREE_ABORTED, workers stop at their
   * next read and are terminated. Safe to call more than once.
   */
  close () {
    if (this.closing) return this.closing
    this.closed = true
    if (this.abort) Atomics.store(this.abort, 0, 1)
    while (this._pending() > 0) this._take().reject(stopped())
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
      for (const s of this.workers) { for (const entries of s.batches.values()) for (const e of entries) e.reject(stopped()); s.batches.clear() }
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

// ---- errors across the thread boundary ------------------------------------
// Structured clone keeps an Error's message and stack but not its class or
// its fields (code, path, errno, syscall, details), which callers rely on:
// --skip-bad tests `code === 'ROTREE_BUILD_INPUT'`, the CLI prints
// ROTREE_SYSTEM_<code> for ENOSPC.

const CLASS_BY_CODE = new Map(errors.ERROR_TABLE.map(([code, name]) => [code, errors[name]]))

/** @param {unknown} err @returns {object} plain data */
export function encodeError (err, depth = 0) {
  if (!(err instanceof Error)) return { message: String(err), fields: {} }
  const fields = {}
  for (const [k, v] of Object.entries(err)) {
    if (k === 'name' || k === 'code' || k === 'message' || k === 'stack' || k === 'cause') continue
    if (v === null || ['string', 'number', 'boolean'].includes(typeof v)) fields[k] = v
  }
  const o = { name: err.name, message: err.message, stack: err.stack, code: err.code, fields }
  if (err.cause !== undefined && depth < 4) o.cause = encodeError(err.cause, depth + 1)
  return o
}

/** The error encodeError described, as the same class (a RotreeError by its code, else an Error). */
export function decodeError (o) {
  const cause = o.cause ? decodeError(o.cause) : undefined
  const Cls = typeof o.code === 'string' ? CLASS_BY_CODE.get(o.code) : undefined
  let err
  if (Cls) {
    err = new Cls(o.message, { cause, details: o.fields })
  } else {
    err = new Error(o.message, cause === undefined ? undefined : { cause })
    if (o.name && o.name !== 'Error') err.name = o.name
    if (o.code !== undefined) err.code = o.code
    Object.assign(err, o.fields) // errno, syscall, path of a system error
  }
  if (o.stack) err.stack = o.stack
  return err
}


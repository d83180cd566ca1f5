// A worker thread that does one kind of blocking work for the main thread
// (writing files), fed bytes through a ring of shared memory: the main
// thread copies a job's bytes into the ring (its own buffer is free again at
// once), sends the job with the slot's offsets, and the thread reads the
// bytes where they lie (lib/ring-worker-thread.js, its other half). Written
// once for `rotree get`'s file writer (cli/get-writer.js) and the gateway's
// disk cache (gateway/disk-cache-writer.js), docs/ARCHITECTURE.md.
//
// The contract, both sides:
//   main → thread  an array of { id, job, off, len } (the job's bytes are
//                  ring[off, off + len); off -1: none), the jobs of one turn
//                  of the event loop together
//   thread → main  an array of { id, value } or { id, error }, in the order
//                  sent; error is lib/thread-error.js's data, rebuilt here
//                  as the class the thread threw (a RotreeError by its code,
//                  a system error with its code, errno, syscall and path)
//
// A ring's slots are given back one of two ways, never both on one ring
// (giving back a slot gives back every slot before it, lib/byte-ring.js):
//   send()          waits for room, and the slot is given back when the
//                   thread answers (the get writer: every file waits its turn)
//   take() + post() take() refuses at once when there is no room, and the
//                   slot is the owner's until free() (the disk cache: a blob
//                   waiting to be written is read from the ring, and one that
//                   does not fit is not cached, never waited for)
//
// The thread keeps the process alive only while it owes answers. If it dies
// (an uncaught error, running out of memory, an answer out of order), every
// job it owed fails once with ThreadExitedError, and so does every later one
// (its death can overtake answers it had just sent: those jobs fail too);
// close() fails what is still owed with ROTREE_ABORTED and stops the thread.
import { Worker } from 'node:worker_threads'
import { AbortedError } from 'rotree-client/errors'
import { ByteRing } from './byte-ring.js'
import { decodeError } from './thread-error.js'

/**
 * A ring worker's thread is gone: it threw, ran out of memory, exited or
 * answered out of order. A bug, not the user's input: the CLI prints
 * ROTREE_INTERNAL (docs/ERRORS.md); `cause` is what the thread threw.
 */
export class ThreadExitedError extends Error {
  constructor (message, opts) {
    super(message, opts)
    this.name = 'ThreadExitedError'
    this.code = 'ROTREE_INTERNAL'
  }
}

/** @typedef {{ off: number, len: number, end: number }} Slot bytes [off, off + len) of the ring; end: what frees it */

export class RingWorker {
  /**
   * @param {URL} url the thread's module: it calls answerJobs() (lib/ring-worker-thread.js)
   * @param {{ ringBytes: number, name: string }} o
   *   ringBytes: the ring's size, the bound on bytes on their way to the thread;
   *   name: the thread as errors name it ("the file-writing thread")
   */
  constructor (url, { ringBytes, name }) {
    this.name = name
    this._ring = new ByteRing(ringBytes)
    this._sent = [] // { id, end, resolve, reject } in the order sent, which is the order answered
    this._batch = [] // messages of this turn of the event loop, not yet posted
    this._waiting = [] // send()s waiting for room
    this._ids = 0
    this._dead = null
    this._worker = new Worker(url, { workerData: { ring: this._ring.sab } })
    this._worker.on('message', m => this._answer(m))
    this._worker.on('error', err => this._fail(new ThreadExitedError(`${name} failed: ${err?.message ?? err}`, { cause: err })))
    this._worker.on('exit', code => this._fail(new ThreadExitedError(`${name} exited (code ${code})`)))
    this._worker.unref() // ref()'d only while it owes answers
  }

  /** Why this worker takes no more jobs (ThreadExitedError, or ROTREE_ABORTED after close()), or null. */
  get dead () { return this._dead }

  /**
   * Copy `bufs` (n bytes in all) into a slot of the ring, or null when there
   * is no room now (or the thread is gone). The slot is the caller's until
   * free(); send it with post().
   * @param {Uint8Array[]} bufs @param {number} n
   * @returns {Slot | null}
   */
  take (bufs, n) {
    let total = 0
    for (const b of bufs) total += b.length
    if (total !== n) throw new RangeError(`${total} bytes given for a slot of ${n}`)
    if (this._dead) return null
    const r = this._ring.take(n)
    if (r === null) return null
    let at = r.off
    for (const b of bufs) at += _bytes(b).copy(this._ring.buf, at)
    return { off: r.off, len: n, end: r.end }
  }

  /** A new buffer holding a slot's bytes (read while the slot is still the caller's). */
  read (slot) { return Buffer.from(this._ring.buf.subarray(slot.off, slot.off + slot.len)) }

  /** Give back `slot` and every slot taken before it. */
  free (slot) {
    this._ring.free(slot.end)
    this._wake()
  }

  /**
   * Send `job` to the thread, with the offsets of `slot` (from take()) if any.
   * Jobs are answered in the order posted.
   * @param {object} job structured-clone data @param {Slot | null} [slot]
   * @returns {Promise<any>} the thread's value; rejects with the error it threw, rebuilt
   */
  post (job, slot = null) { return this._post(job, slot, null) }

  /**
   * Copy `bufs` (n bytes) into the ring, waiting for room, and send `job`
   * with them; the slot is given back when the thread answers.
   * @param {object} job @param {Uint8Array[]} bufs @param {number} n
   * @returns {Promise<any>} as post()
   */
  send (job, bufs, n) {
    // a slot over half the ring might never fit, wherever the ring's head is (lib/byte-ring.js)
    if (n > this._ring.size / 2) return Promise.reject(new RangeError(`${n} bytes do not fit ${this.name}'s ring of ${this._ring.size}`))
    // taken and posted with nothing in between: the thread answers in the
    // order slots were taken, so giving back one never gives back a slot
    // whose job is still owed
    const slot = this.take(bufs, n)
    return slot !== null ? this._post(job, slot, slot.end) : this._sendLater(job, bufs, n)
  }

  async _sendLater (job, bufs, n) {
    for (;;) {
      if (this._dead) throw this._dead
      await new Promise(resolve => this._waiting.push(resolve))
      const slot = this.take(bufs, n)
      if (slot !== null) return this._post(job, slot, slot.end)
    }
  }

  _post (job, slot, end) {
    if (this._dead) return Promise.reject(this._dead)
    return new Promise((resolve, reject) => {
      const id = this._ids++
      this._sent.push({ id, end, resolve, reject })
      if (this._sent.length === 1) this._worker.ref()
      const m = slot ? { id, job, off: slot.off, len: slot.len } : { id, job, off: -1, len: 0 }
      if (this._batch.push(m) === 1) setImmediate(() => this._flush())
    })
  }

  _flush () {
    if (!this._dead) this._worker.postMessage(this._batch)
    this._batch = []
  }

  /** The thread's answers to one batch, in the order sent. */
  _answer (replies) {
    for (const m of replies) {
      const job = this._sent[0]
      if (job?.id !== m?.id) return this._fail(new ThreadExitedError(`${this.name} answered out of order`))
      this._sent.shift()
      if (job.end !== null) this._ring.free(job.end)
      if (m.error !== undefined) job.reject(decodeError(m.error))
      else job.resolve(m.value)
    }
    if (this._sent.length === 0) this._worker.unref()
    this._wake()
  }

  _wake () {
    if (this._waiting.length === 0) return
    for (const w of this._waiting.splice(0)) w()
  }

  // the first failure is the one every owed and later job gets; a thread
  // that failed is of no more use, and keeps nothing alive
  _fail (err) {
    if (this._dead) return
    this._dead = err
    this._batch = []
    for (const job of this._sent.splice(0)) job.reject(err)
    this._wake()
    this._worker.unref()
    this._worker.terminate().catch(() => {})
  }

  /** Stop the thread: every job still owed fails with ROTREE_ABORTED first. */
  async close () {
    this._fail(new AbortedError(`${this.name} was closed`))
    await this._worker.terminate()
  }
}

/** `b` as a Buffer over the same memory (Buffer#copy is a memcpy). */
function _bytes (b) {
  return Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.length)
}

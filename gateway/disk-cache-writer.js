// Writing the disk cache's blob files on a thread of their own
// (disk-cache-worker.js). The gateway's main thread receives, hashes and
// sends every byte of a download; written from it, each blob's file took
// four trips through libuv's pool (open, write, close, rename), and each
// waited its turn behind that work, so a download outran the cache and the
// cache dropped what it could not take (disk-cache.js). Here a blob is
// copied into a shared ring at once (its buffer is free again right away)
// and the thread writes it with plain system calls.
//
// The ring is the cache's bound on bytes waiting to be written: a blob that
// does not fit is not cached (take() says so), never waited for.
import { Worker } from 'node:worker_threads'
import { ByteRing } from '../lib/byte-ring.js'

export class BlobFileWriter {
  /** @param {number} ringBytes at most this many bytes wait to be written */
  constructor (ringBytes) {
    this.ring = new ByteRing(ringBytes) // given back by free(), once nobody reads a slot
    this.sent = [] // writes in the order sent, which is the order the thread answers them
    this.dead = null
    this.ids = 0
    this.worker = new Worker(new URL('./disk-cache-worker.js', import.meta.url), { workerData: { ring: this.ring.sab } })
    this.worker.on('message', m => this._answer(m))
    this.worker.on('error', err => this._fail(err))
    this.worker.on('exit', code => this._fail(new Error(`the disk cache's writing thread exited (${code})`)))
    this.worker.unref()
  }

  /**
   * A copy of `bytes` in the ring, or null when there is no room (or the
   * thread is gone). Slots are given back in the order taken (free()).
   * @returns {{ off: number, len: number, end: number } | null}
   */
  take (bytes) {
    const n = bytes.length
    const slot = this.dead ? null : this.ring.take(n)
    if (slot === null) return null
    ;(Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, n)).copy(this.ring.buf, slot.off)
    return { off: slot.off, len: n, end: slot.end }
  }

  /** A new buffer holding a slot's bytes (for a read while it waits to be written). */
  read (slot) { return Buffer.from(this.ring.buf.subarray(slot.off, slot.off + slot.len)) }

  /** Give back `slot` and every slot taken before it: nobody reads them any more. */
  free (slot) { this.ring.free(slot.end) }

  /**
   * Write each { file, slot } (taken in this order); resolves with one
   * entry per item: null when its file is complete, else the error. The
   * slots stay taken until free().
   */
  write (items) {
    if (items.length === 0) return Promise.resolve([])
    if (this.dead) return Promise.resolve(items.map(() => this.dead))
    return new Promise(resolve => {
      const results = new Array(items.length).fill(null)
      let left = items.length
      const msgs = items.map((it, i) => {
        const id = this.ids++
        this.sent.push({ id, done: err => { results[i] = err; if (--left === 0) resolve(results) } })
        return { id, file: it.file, off: it.slot.off, len: it.slot.len }
      })
      this.worker.ref()
      this.worker.postMessage(msgs)
    })
  }

  _answer (replies) {
    for (const m of replies) {
      const job = this.sent.shift()
      if (job?.id !== m.id) {
        const err = new Error('the disk cache\'s writing thread answered out of order')
        job?.done(err) // every write gets an answer: the cache's queue waits on them
        return this._fail(err)
      }
      job.done(m.error ? Object.assign(new Error(m.error.message), { code: m.error.code }) : null)
    }
    if (this.sent.length === 0) this.worker.unref()
  }

  _fail (err) {
    this.dead ??= err
    for (const job of this.sent.splice(0)) job.done(err)
  }

  async close () {
    this.dead ??= new Error('the disk cache\'s writing thread was closed')
    await this.worker.terminate()
  }
}

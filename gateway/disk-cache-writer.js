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

export class BlobFileWriter {
  /** @param {number} ringBytes at most this many bytes wait to be written */
  constructor (ringBytes) {
    this.size = ringBytes
    this.sab = new SharedArrayBuffer(ringBytes)
    this.ring = Buffer.from(this.sab) // Buffer#copy into it is a memcpy
    this.head = 0 // bytes of the ring ever taken (a blob never wraps: the end of the ring is skipped instead)
    this.tail = 0 // bytes of the ring ever given back
    this.sent = [] // writes in the order sent, which is the order the thread answers them
    this.dead = null
    this.ids = 0
    this.worker = new Worker(new URL('./disk-cache-worker.js', import.meta.url), { workerData: { ring: this.sab } })
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
    if (this.dead || n > this.size) return null
    const at = this.head % this.size
    const skip = at + n > this.size ? this.size - at : 0
    if (this.head + skip + n - this.tail > this.size) return null
    const off = skip ? 0 : at
    ;(Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, n)).copy(this.ring, off)
    this.head += skip + n
    return { off, len: n, end: this.head }
  }

  /** A new buffer holding a slot's bytes (for a read while it waits to be written). */
  read (slot) { return Buffer.from(this.ring.subarray(slot.off, slot.off + slot.len)) }

  /** Give back `slot` and every slot taken before it: nobody reads them any more. */
  free (slot) { if (slot.end > this.tail) this.tail = slot.end }

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

// Writing a download's files on a thread of their own. A `get` of thousands
// of small files spends as much of its main thread in the kernel (creating,
// writing, renaming each file) as in verifying them, and the main thread is
// what paces the download: it receives, hashes and decodes every blob. So in
// directories this run made, each small file's verified bytes are copied
// into a shared ring and written by get-writer-worker.js, and each large
// file's complete temporary file is renamed onto its name there too.
//
// Confinement is the same as on the main thread (cli/download.js): a
// temporary name opened O_CREAT|O_EXCL|O_NOFOLLOW, renamed onto a name only
// when nothing is there. Every placement in one directory is made by one
// thread, in order, so no other placement comes between a check and its
// rename: a directory is either written through this thread from the start
// or not at all (Download.makeDir).
import { Worker } from 'node:worker_threads'
import { ByteRing } from '../lib/byte-ring.js'

const RING = 4 << 20 // bytes of small files on their way to the thread; each is under 1 MiB (16 MiB went no faster)

export class FileWriter {
  constructor () {
    this.ring = new ByteRing(RING) // given back as the thread answers, in the order sent
    this.sent = [] // jobs in the order sent, which is the order the thread answers them
    this.waiting = [] // callers waiting for room in the ring
    this.dead = null
    this.ids = 0
    this.batch = [] // messages not yet posted: sent together once this turn of the event loop is done
    this.worker = new Worker(new URL('./get-writer-worker.js', import.meta.url), { workerData: { ring: this.ring.sab } })
    this.worker.on('message', m => this.answer(m))
    this.worker.on('error', err => this.fail(err))
    this.worker.on('exit', code => this.fail(new Error(`the file-writing thread exited (${code})`)))
    this.worker.unref()
  }

  /**
   * Write the small file made of `bufs` (n bytes in all) to `name` in the
   * directory `dir` (absolute), with `mode` and mtime `time` (seconds).
   * Resolves when it is in place; `{ collision: true }` when something
   * already was.
   */
  async small (dir, name, bufs, n, mode, time) {
    if (n > RING / 4) throw new RangeError(`a file of ${n} bytes is not small`) // it could wait for room forever
    for (;;) {
      if (this.dead) throw this.dead
      const slot = this.ring.take(n)
      if (slot !== null) {
        // taken, filled and sent with nothing in between: jobs are sent in the order they take the ring
        let o = slot.off
        for (const b of bufs) o += copy(b, this.ring.buf, o)
        return this.send({ op: 'small', dir, name, off: slot.off, len: n, mode, time }, slot.end)
      }
      await new Promise(resolve => this.waiting.push(resolve))
    }
  }

  /** Rename the complete temporary file `tmp` onto `dest` if nothing is there: `{ collision: true }` if something is. */
  async place (tmp, dest) {
    if (this.dead) throw this.dead
    return this.send({ op: 'place', tmp, dest }, this.ring.head)
  }

  send (m, end) {
    return new Promise((resolve, reject) => {
      m.id = this.ids++
      this.sent.push({ id: m.id, end, resolve, reject })
      if (this.sent.length === 1) this.worker.ref()
      if (this.batch.push(m) === 1) setImmediate(() => this.flush())
    })
  }

  flush () {
    if (!this.dead) this.worker.postMessage(this.batch)
    this.batch = []
  }

  /** The thread's answers to one batch, in the order sent. */
  answer (replies) {
    for (const m of replies) {
      const job = this.sent.shift()
      if (job?.id !== m.id) return this.fail(new Error('the file-writing thread answered out of order'))
      this.ring.free(job.end)
      if (m.error) job.reject(Object.assign(new Error(m.error.message), m.error))
      else job.resolve({ collision: !!m.collision })
    }
    if (!this.sent.length) this.worker.unref()
    for (const w of this.waiting.splice(0)) w()
  }

  fail (err) {
    this.dead ??= err
    for (const job of this.sent.splice(0)) job.reject(err)
    for (const w of this.waiting.splice(0)) w()
  }

  /** Stop the thread (every job answered or failed first). */
  async close () {
    this.dead ??= new Error('the file-writing thread was closed')
    await this.worker.terminate()
  }
}

/** Copy `b` (a Uint8Array) into the Buffer `to` at `at`: how many bytes. */
function copy (b, to, at) {
  return (Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.length)).copy(to, at)
}

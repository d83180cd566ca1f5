// The thread's half of lib/ring-worker.js: take the main thread's jobs one
// at a time, in the order sent, each with its bytes where they lie in the
// shared ring, and answer each batch with one message: every job's value, or
// the error it threw as lib/thread-error.js's data. A job's error is that
// job's alone; the thread goes on with the next.
//
// A thread module imports this and calls answerJobs() once with what one job
// does (cli/get-writer-worker.js, gateway/disk-cache-worker.js).
import fs from 'node:fs'
import { parentPort, workerData } from 'node:worker_threads'
import { encodeError } from './thread-error.js'

/**
 * Answer the main thread's jobs with `run`, for as long as the thread lives.
 * @param {(job: any, bytes: Uint8Array | null) => any} run synchronous: a job
 *   is answered before the next starts. `bytes`: the job's slot of the ring
 *   (a view, not a copy; null for a job sent without one). Its return value
 *   goes back by structured clone.
 */
export function answerJobs (run) {
  if (parentPort === null || !(workerData?.ring instanceof SharedArrayBuffer)) throw new Error('answerJobs() runs on a thread that lib/ring-worker.js started')
  const ring = new Uint8Array(workerData.ring)
  parentPort.on('message', batch => {
    const replies = []
    for (const { id, job, off, len } of batch) {
      try {
        const value = run(job, off >= 0 ? ring.subarray(off, off + len) : null)
        replies.push({ id, value })
      } catch (err) {
        replies.push({ id, error: encodeError(err) })
      }
    }
    try {
      parentPort.postMessage(replies)
    } catch (err) {
      // an answer that is not structured-clone data is a bug of the thread's
      // module: the thread dies of it (every job it owes fails), told as an
      // Error, which reaches the main thread whole where a DOMException does not
      throw new Error(`an answer could not be sent: ${err.message}`)
    }
  })
}

/** Every byte of `bytes` (a job's slot) as the start of the open file `fd`, or an error. */
export function writeSlotSync (fd, bytes) {
  for (let o = 0; o < bytes.length;) {
    const n = fs.writeSync(fd, bytes, o, bytes.length - o, o)
    if (n === 0) throw new Error('write wrote nothing')
    o += n
  }
}

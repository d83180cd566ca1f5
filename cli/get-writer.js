// Writing a download's files on a thread of their own. A `get` of thousands
// of small files spends as much of its main thread in the kernel (creating,
// writing, renaming each file) as in verifying them, and the main thread is
// what paces the download: it receives, hashes and decodes every blob. So in
// directories this run made, each small file's verified bytes are copied
// into a shared ring and written by get-writer-worker.js, and each large
// file's complete temporary file is renamed onto its name there too. The
// thread, its ring, its ordered answers and its failures are
// lib/ring-worker.js's; what a job does is get-writer-worker.js's.
//
// Confinement is the same as on the main thread (cli/download.js): a
// temporary name opened O_CREAT|O_EXCL|O_NOFOLLOW, renamed onto a name only
// when nothing is there. Every placement in one directory is made by one
// thread, in order, so no other placement comes between a check and its
// rename: a directory is either written through this thread from the start
// or not at all (Download.makeDir).
import { RingWorker } from '../lib/ring-worker.js'

const RING = 4 << 20 // bytes of small files on their way to the thread; each is under 1 MiB (16 MiB went no faster)

export class FileWriter {
  constructor () {
    // a file waits for room, and its slot is given back once it is written
    this.thread = new RingWorker(new URL('./get-writer-worker.js', import.meta.url), { ringBytes: RING, name: 'the file-writing thread' })
  }

  /**
   * Write the small file made of `bufs` (n bytes in all) to `name` in the
   * directory `dir` (absolute), with `mode` and mtime `time` (seconds).
   * Resolves when it is in place; `{ collision: true }` when something
   * already was. A system error comes back with its code, and with `tmp`
   * when it was about the temporary file.
   * @param {{ dir: string, name: string, mode: number, time: number }} to
   * @param {Uint8Array[]} bufs @param {number} n
   */
  small ({ dir, name, mode, time }, bufs, n) {
    if (n > RING / 4) return Promise.reject(new RangeError(`a file of ${n} bytes is not small`)) // it could wait long for room
    return this.thread.send({ op: 'small', dir, name, mode, time }, bufs, n)
  }

  /** Rename the complete temporary file `tmp` onto `dest` if nothing is there: `{ collision: true }` if something is. */
  place (tmp, dest) {
    return this.thread.post({ op: 'place', tmp, dest })
  }

  /** Stop the thread (every job still owed fails first). */
  close () { return this.thread.close() }
}

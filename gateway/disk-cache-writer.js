// Writing the disk cache's blob files on a thread of their own
// (disk-cache-worker.js, through lib/ring-worker.js). The gateway's main
// thread receives, hashes and sends every byte of a download; written from
// it, each blob's file took four trips through libuv's pool (open, write,
// close, rename), and each waited its turn behind that work, so a download
// outran the cache and the cache dropped what it could not take
// (disk-cache.js). Here a blob is copied into a shared ring at once (its
// buffer is free again right away) and the thread writes it with plain
// system calls.
//
// The ring is the cache's bound on bytes waiting to be written: a blob that
// does not fit is not cached (take() says so), never waited for. A slot is
// the cache's until free(): a blob waiting to be written is read from it.
import { RingWorker } from '../lib/ring-worker.js'

export class BlobFileWriter {
  /** @param {number} ringBytes at most this many bytes wait to be written */
  constructor (ringBytes) {
    this.thread = new RingWorker(new URL('./disk-cache-worker.js', import.meta.url), { ringBytes, name: 'the disk cache\'s writing thread' })
  }

  /**
   * A copy of `bytes` in the ring, or null when there is no room (or the
   * thread is gone). Slots are given back in the order taken (free()).
   * @returns {import('../lib/ring-worker.js').Slot | null}
   */
  take (bytes) { return this.thread.take([bytes], bytes.length) }

  /** A new buffer holding a slot's bytes (for a read while it waits to be written). */
  read (slot) { return this.thread.read(slot) }

  /** Give back `slot` and every slot taken before it: nobody reads them any more. */
  free (slot) { this.thread.free(slot) }

  /**
   * Write each { file, slot } (taken in this order); resolves with one
   * entry per item: null when its file is complete, else the error (never
   * rejects: the cache's queue waits on every write). The slots stay taken
   * until free().
   * @param {{ file: string, slot: import('../lib/ring-worker.js').Slot }[]} items
   * @returns {Promise<(Error | null)[]>}
   */
  write (items) {
    return Promise.all(items.map(({ file, slot }) => this.thread.post({ file }, slot).then(() => null, err => err)))
  }

  close () { return this.thread.close() }
}

// A ring of bytes in shared memory, for handing data to a writing thread
// without a copy per message (cli/get-writer.js, gateway/disk-cache-writer.js):
// the main thread copies bytes in, the thread reads them where they lie.
// Space is taken in order and given back in order: a slot never wraps (the
// end of the ring is skipped instead), and giving back a slot gives back
// every slot taken before it.
import fs from 'node:fs'

export class ByteRing {
  /** @param {number} size bytes */
  constructor (size) {
    this.size = size
    this.sab = new SharedArrayBuffer(size)
    this.buf = Buffer.from(this.sab) // Buffer#copy into it is a memcpy (TypedArray#set into shared memory is not)
    this.head = 0 // bytes ever taken
    this.tail = 0 // bytes ever given back
  }

  /**
   * Room for `n` contiguous bytes: { off, end } (end: what free() takes back),
   * or null when there is none now.
   */
  take (n) {
    const at = this.head % this.size
    const skip = at + n > this.size ? this.size - at : 0
    if (this.head + skip + n - this.tail > this.size) return null
    this.head += skip + n
    return { off: skip ? 0 : at, end: this.head }
  }

  /** Give back the slot that ended at `end`, and every slot before it. */
  free (end) { if (end > this.tail) this.tail = end }
}

/** On the writing thread: ring[off, off + len) as the start of the open file `fd` (every byte, or an error). */
export function writeSlotSync (fd, ring, off, len) {
  for (let o = 0; o < len;) {
    const n = fs.writeSync(fd, ring, off + o, len - o, o)
    if (n === 0) throw new Error('write wrote nothing')
    o += n
  }
}

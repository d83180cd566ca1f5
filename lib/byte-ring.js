// A ring of bytes in shared memory, and where in it the next bytes go: the
// allocator behind lib/ring-worker.js, which copies bytes in on the main
// thread and hands their offsets to a writing thread that reads them where
// they lie (no copy per message). Space is taken in order and given back in
// order: a slot never wraps (the end of the ring is skipped instead), and
// giving back a slot gives back every slot taken before it. No I/O here.

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
   * or null when there is none now. Any n up to size / 2 fits once the ring
   * is empty, wherever its head is.
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

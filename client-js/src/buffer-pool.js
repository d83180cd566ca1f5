// Chunk buffers that a reader gives back, so the next chunk is read into
// memory the process has already touched. A new ~256 KiB buffer per chunk is
// freed only at V8's next collection; in a fresh process nearly every byte
// then lands on a page the kernel must fault in first (a 100 MiB read: ~32k
// minor faults), and the array buffers waiting to be collected swing the
// process's memory by tens of MiB.
//
// Ownership, which is what keeps this safe (docs/TRUST.md rule 3: a reader
// is only ever handed bytes that were verified where they lie):
// - take(n) gives a buffer nobody else holds. The transport reads one
//   request's body into it; the blob is verified in it.
// - A verified chunk may reach several readers (blobs.js shares a fetch in
//   flight). Each reader counts: lend(bytes, k) records k holders, and the
//   buffer is taken again only after k gives.
// - Anyone who never gives (a reader that does not know about this pool, a
//   read abandoned half-way, a hedged request that lost) simply keeps its
//   buffer, which V8 collects as before. Forgetting to give is safe; giving
//   twice is the caller's bug, as a double free is.
// - Only the buffers it made are taken back: give() of anything else is a
//   no-op, so a reader may give every piece it was handed.

const MIN_CLASS = 16 // 64 KiB
const MAX_CLASS = 20 // 1 MiB: no blob is larger (MAX_BLOB, FORMAT.md)

export class BufferPool {
  /**
   * @param {{ maxBytes?: number, alloc?: (n: number) => Uint8Array }} [o]
   *   maxBytes: most bytes kept free for reuse; alloc: makes a buffer of n bytes
   */
  constructor ({ maxBytes = 16 * 2 ** 20, alloc = n => new Uint8Array(n) } = {}) {
    this.maxBytes = maxBytes
    this.alloc = alloc
    this.freeBytes = 0
    /** @type {Uint8Array[][]} free buffers by size class */
    this.free = []
    /** @type {WeakMap<ArrayBuffer, { buf: Uint8Array, holders: number }>} every buffer made here and not yet taken back */
    this.leases = new WeakMap()
    this.stats = { made: 0, reused: 0 }
  }

  /** A buffer of at least n bytes that nobody else holds; null when n is outside the pooled sizes. */
  take (n) {
    let cls = MIN_CLASS
    while ((1 << cls) < n) cls++
    if (cls > MAX_CLASS) return null
    const list = this.free[cls]
    if (list !== undefined && list.length > 0) {
      const buf = list.pop()
      this.freeBytes -= buf.length
      this.stats.reused++
      return buf
    }
    const buf = this.alloc(1 << cls)
    this.leases.set(buf.buffer, { buf, holders: 0 })
    this.stats.made++
    return buf
  }

  /** Whether `bytes` lies in a buffer this pool made and has out. */
  owns (bytes) { return bytes != null && this.leases.has(bytes.buffer) }

  /**
   * `bytes` (a view of a pooled buffer) now has `holders` holders, each of
   * which gives it back once; 0 gives the buffer back now.
   */
  lend (bytes, holders) {
    const l = this.leases.get(bytes.buffer)
    if (l === undefined) return
    l.holders = holders
    if (holders <= 0) this._back(l)
  }

  /** One holder is done with `bytes` (any view of the buffer); the last one returns it. */
  give (bytes) {
    const l = bytes == null ? undefined : this.leases.get(bytes.buffer)
    if (l === undefined || l.holders <= 0) return
    if (--l.holders === 0) this._back(l)
  }

  _back (l) {
    const buf = l.buf
    if (this.freeBytes + buf.length > this.maxBytes) { this.leases.delete(buf.buffer); return } // V8 collects it
    let cls = MIN_CLASS
    while ((1 << cls) < buf.length) cls++
    ;(this.free[cls] ??= []).push(buf)
    this.freeBytes += buf.length
  }
}

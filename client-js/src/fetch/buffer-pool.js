// Chunk buffers that a reader gives back, so the next chunk is read into
// memory the process has already touched. A new ~256 KiB buffer per chunk is
// freed only at V8's next collection; in a fresh process nearly every byte
// then lands on a page the kernel must fault in first (docs/BENCHMARKS.md P3w
// and P9 count them), and the array buffers waiting to be collected swing the
// process's memory by tens of MiB.
//
// Ownership, which is what keeps this safe (docs/TRUST.md rule 3: a reader
// is only ever handed bytes that were verified where they lie):
// - take(n) gives a buffer nobody else holds, with one claim: the request
//   that reads its body into it. The blob is verified in it.
// - A verified chunk may reach several readers (blobs.js shares a fetch in
//   flight): lend(bytes, k) hands the request's claim to k holders. A local
//   blob store that writes it later holds one more claim (hold, drop). The
//   buffer is taken again only when the last claim is gone.
// - Readers hold pieces: mark(piece) records each view handed to a reader,
//   and give(piece) counts only a marked view, once. Giving a piece twice,
//   or giving a buffer still being read into, does nothing.
// - Anyone who never gives (a reader that does not know about this pool, a
//   read abandoned half-way, a hedged request that lost) simply keeps its
//   buffer, which V8 collects as before. Forgetting to give is safe.

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
    /** @type {WeakMap<ArrayBuffer, { buf: Uint8Array, claims: number }>} every buffer made here and still its */
    this.leases = new WeakMap()
    /** @type {WeakSet<Uint8Array>} views handed to readers and not yet given back */
    this.pieces = new WeakSet()
    this.stats = { made: 0, reused: 0 }
  }

  /** A buffer of at least n bytes that nobody else holds, claimed once; null when n is outside the pooled sizes. */
  take (n) {
    let cls = MIN_CLASS
    while ((1 << cls) < n) cls++
    if (cls > MAX_CLASS) return null
    const list = this.free[cls]
    if (list !== undefined && list.length > 0) {
      const buf = list.pop()
      this.freeBytes -= buf.length
      this.leases.get(buf.buffer).claims = 1
      this.stats.reused++
      return buf
    }
    const buf = this.alloc(1 << cls)
    this.leases.set(buf.buffer, { buf, claims: 1 })
    this.stats.made++
    return buf
  }

  /** Whether `bytes` lies in a buffer this pool made. */
  owns (bytes) { return bytes != null && this.leases.has(bytes.buffer) }

  /** The claim of the request that filled `bytes` passes to `holders` holders; 0 gives the buffer back now. */
  lend (bytes, holders) { this._add(bytes, holders - 1) }

  /** One more claim on `bytes` (a store that writes it later), ended by drop(). */
  hold (bytes) { this._add(bytes, 1) }

  drop (bytes) { this._add(bytes, -1) }

  /** `piece`, a view of a pooled buffer, is handed to a reader, who gives it back once. */
  mark (piece) { if (this.owns(piece)) this.pieces.add(piece) }

  /** A reader is done with `piece` (the view it was handed); the last claim returns the buffer. */
  give (piece) { if (piece != null && this.pieces.delete(piece)) this.drop(piece) }

  _add (bytes, n) {
    const l = bytes == null ? undefined : this.leases.get(bytes.buffer)
    if (l === undefined || l.claims <= 0) return // not the pool's, or already free
    l.claims += n
    if (l.claims <= 0) this._back(l)
  }

  _back (l) {
    const buf = l.buf
    l.claims = 0
    if (this.freeBytes + buf.length > this.maxBytes) { this.leases.delete(buf.buffer); return } // V8 collects it
    let cls = MIN_CLASS
    while ((1 << cls) < buf.length) cls++
    ;(this.free[cls] ??= []).push(buf)
    this.freeBytes += buf.length
  }
}

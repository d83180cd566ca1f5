// How much a reader has in flight ahead of what it has used: the files of
// `rotree get`, the data blobs of `rotree pull`. At a distance a tree of
// thousands of small files is only as fast as the requests kept in flight;
// a count of 8 files is 8 requests per round trip, however fast the link
// (docs/BENCHMARKS.md P10). So work starts while what it charges fits under
// a byte limit read each time it is asked, with a count as a second bound
// (open files, promises). A reader's limit is what the fetch scheduler reads
// ahead for one reader (readAheadGate: it grows with the measured bandwidth
// × delay, within the tree's memory budget, fetch/sched.js), never less than
// GATE_FLOOR, the budget before the scheduler has measured anything.
// Admission is in the order asked; one piece of work is always let in when
// nothing is, whatever it charges, so a file larger than the limit streams
// alone rather than waiting forever.

/** Pieces of work in flight at most, whatever their size (the byte limit decides first). */
export const GATE_COUNT = 1024
/** Bytes allowed in flight before the scheduler has measured more. */
export const GATE_FLOOR = 32 << 20

export class ByteGate {
  /**
   * @param {object} o
   * @param {() => number} o.limit the byte limit now
   * @param {number} [o.count=GATE_COUNT] most pieces of work at once
   */
  constructor ({ limit, count = GATE_COUNT }) {
    this.limit = limit
    this.max = count
    this.bytes = 0; this.n = 0
    this.queue = []
    this.stopped = false
  }

  /**
   * What work of `size` bytes charges: all of it, or half the limit for
   * work that streams (a file larger than that is written as it arrives).
   */
  charge (size) { return Math.min(size, Math.max(1, Math.floor(this.limit() / 2))) }

  /** Resolves, in the order asked, once `n` more bytes fit (at once after stop()); they are then charged. */
  enter (n) {
    if (this.queue.length === 0 && this._fits(n)) { this.bytes += n; this.n++; return Promise.resolve() }
    return new Promise(resolve => this.queue.push({ n, resolve }))
  }

  /** Work that entered with `n` is done. */
  leave (n) {
    this.bytes -= n; this.n--
    this._admit()
  }

  /** A failure elsewhere: everything waiting, and everything asked from now on, is let in at once. */
  stop () { this.stopped = true; this._admit() }

  _fits (n) { return this.stopped || (this.n < this.max && (this.n === 0 || this.bytes + n <= this.limit())) }

  _admit () {
    while (this.queue.length > 0 && this._fits(this.queue[0].n)) {
      const { n, resolve } = this.queue.shift()
      this.bytes += n; this.n++
      resolve()
    }
  }
}

/**
 * The gate of a reader that fetches through `sched` (a Tree's Mirrors):
 * its read-ahead for one reader, within its memory budget, and at least `floor`.
 * @param {{ readAheadBytes(): number, readonly maxInflightBytes: number }} sched
 * @param {{ count?: number, floor?: number }} [o]
 */
export function readAheadGate (sched, { count = GATE_COUNT, floor = GATE_FLOOR } = {}) {
  return new ByteGate({ limit: () => Math.max(floor, Math.min(sched.maxInflightBytes, sched.readAheadBytes())), count })
}

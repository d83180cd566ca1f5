// How many files `rotree get` has in flight: bounded by the bytes they may
// still bring in, not by a count of files. At a distance a tree of thousands
// of small files is only as fast as the requests kept in flight; a count of 8
// files is 8 requests per round trip, however fast the link. So files start
// while what they charge (their size, or a share of the budget for a big file,
// which streams) fits under a limit the caller reads from the fetch scheduler
// each time (it grows with the measured bandwidth × delay, sched.js), with a
// count as a second bound (open files, promises).
export class Budget {
  /**
   * @param {object} o
   * @param {() => number} o.bytes the byte limit now
   * @param {number} o.count most files at once
   */
  constructor ({ bytes, count }) {
    this.limit = bytes
    this.max = count
    this.bytes = 0
    this.n = 0
    this.wake = null
  }

  /** What a file of `size` bytes charges: all of it, or half the limit for a file that streams. */
  charge (size) { return Math.min(size, Math.max(1, Math.floor(this.limit() / 2))) }

  fits (n) { return this.n < this.max && (this.n === 0 || this.bytes + n <= this.limit()) }

  /** Resolves once `n` bytes fit (or `stop()` was called); then take() them. */
  async room (n) {
    while (!this.fits(n) && !this.stopped) await new Promise(resolve => { this.wake = resolve })
  }

  take (n) { this.bytes += n; this.n++ }

  give (n) {
    this.bytes -= n; this.n--
    const w = this.wake; this.wake = null; w?.()
  }

  /** Stop waiting (a failure elsewhere): room() resolves at once from now on. */
  stop () {
    this.stopped = true
    const w = this.wake; this.wake = null; w?.()
  }
}

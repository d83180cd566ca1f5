// One mirror as the reader measures it from its own requests, and the bytes
// to keep in flight to it (its window). Nothing here decides what is valid;
// it only decides how much to ask for and how long an answer usually takes.
//
// The window is sized like BBR's (Cardwell et al., "BBR: Congestion-Based
// Congestion Control", ACM Queue 2016) rather than by loss, because a reader
// sees whole answers, not packets:
//   - start-up: begin at `initial` bytes (a few chunks) and double once per
//     round trip, but never past 4 × (delivery rate × shortest request
//     time), so growth stops where answers start to queue; three rounds in
//     which the delivery rate rose by less than a quarter end start-up;
//   - then: window = 2 × (highest delivery rate of the last 10 rounds) ×
//     (shortest request time seen while the mirror was not busy), which keeps
//     the path full with room to notice it got faster;
//   - a timeout or a dropped connection halves it (and ends start-up).
// A "round" ends when a request sent after it began completes; only rounds
// in which the reader wanted more than the window allowed count (a reader
// that consumes slowly must not look like a slow mirror). The window never
// goes below `min` nor above `max` (the reader's memory budget), and
// `minRequests` requests always fit whatever their size.

const RING = 16 // request times kept for the median
const RATE_ROUNDS = 10 // rounds the highest delivery rate is kept for
const GROWTH = 1.25 // start-up goes on while each round delivers this much more
const STARTUP_GAIN = 4 // start-up's window stays under this × the measured bandwidth × delay
const STALL_ROUNDS = 3
const LATE_WEIGHT = 0.2 // of each request in lateScore
const QUIET_MS = 60_000 // a shortest time older than this gives way to newer quiet samples
const MIN_RATE_SPAN_MS = 20 // the shortest span a delivery rate is measured over
const LOG_MS = 10_000 // answers kept for the rate (the span is at most a round or 2 medians)

export class MirrorWindow {
  /** @param {{ initial: number, min: number, max: number, minRequests?: number, now?: () => number }} o bytes */
  constructor ({ initial, min, max, minRequests = 1, now = () => performance.now() }) {
    this.now = now
    this.minRequests = Math.max(1, minRequests)
    this.min = min
    this.max = max
    this.bytes = Math.min(Math.max(initial, min), max) // the window
    this.inflight = 0 // requests
    this.inflightBytes = 0
    this.times = [] // recent request times, ms (ring)
    this.timesAt = 0
    this.p50Cache = null
    this.minRtt = Infinity // shortest request time while not busy
    this.minRttAt = 0
    this.lateScore = 0 // moving share of recent requests that were late (hedged), 0..1
    this.startup = true
    this.bestRate = 0
    this.stalls = 0
    this.rates = [] // delivery rate (bytes/ms) of recent full rounds
    this.round = 0
    this.roundStart = this.now()
    this.log = [] // [time, bytes, time, bytes, …] of recent answers, for the delivery rate
    this.roundFull = false
  }

  /** Room for one more request of `size` bytes under the window. */
  fits (size) { return this.inflight < this.minRequests || this.inflightBytes + size <= this.bytes }

  /** The reader wanted more than the window allowed: this round measures the path, not the reader. */
  full () { this.roundFull = true }

  /** A request leaves. @returns {object} a ticket for done()/dropped() */
  sent (size) {
    const now = this.now()
    const t = { size, at: now, round: this.round, quiet: this.inflightBytes < this.min }
    this.inflight++
    this.inflightBytes += size
    return t
  }

  /** The request was answered in full (whatever the bytes turn out to be: time is time). */
  done (t, bytes = t.size) {
    this._leave(t)
    const now = this.now()
    const ms = Math.max(now - t.at, 0.01)
    this.sample(ms, t.quiet)
    this.log.push(now, bytes)
    if (t.round === this.round) this._endRound(now)
  }

  /**
   * The request ended without an answer: cancelled (another mirror was
   * faster), or failed. Its time so far is a lower bound on what it would
   * have taken, kept as a sample when longer than usual. `fault`: it failed
   * on the way (a timeout, an error status, a dropped connection; not bytes
   * that fail verification): the window halves and start-up ends.
   */
  dropped (t, { fault = false } = {}) {
    this._leave(t)
    const ms = this.now() - t.at
    if (ms > (this.p50() ?? 0)) this.sample(ms, false)
    if (fault) {
      this.startup = false
      this.bytes = Math.max(this.min, Math.floor(this.bytes / 2))
    }
  }

  /** A request ended (answered or not) after being hedged as late, or on time. */
  lateness (late) { this.lateScore += LATE_WEIGHT * ((late ? 1 : 0) - this.lateScore) }

  /**
   * One request time: from done() and dropped(), or measured outside the
   * window (fsinfo.json). `quiet`: sent while the mirror was not busy, so it
   * may lower the shortest time.
   */
  sample (ms, quiet = true) {
    if (this.times.length < RING) this.times.push(ms)
    else { this.times[this.timesAt] = ms; this.timesAt = (this.timesAt + 1) % RING }
    this.p50Cache = null
    const now = this.now()
    if (quiet && (ms < this.minRtt || now - this.minRttAt > QUIET_MS)) { this.minRtt = ms; this.minRttAt = now }
  }

  /** Median of recent request times (ms), or null before the first. */
  p50 () {
    if (this.times.length === 0) return null
    if (this.p50Cache === null) {
      const s = [...this.times].sort((a, b) => a - b)
      this.p50Cache = s[(s.length - 1) >> 1]
    }
    return this.p50Cache
  }

  /** Bytes per ms at the best recent full round (0 before one). */
  rate () { return this.rates.length ? Math.max(...this.rates) : 0 }

  _leave (t) {
    this.inflight--
    this.inflightBytes -= t.size
  }

  _endRound (now) {
    const ms = now - this.roundStart
    const rate = this._rateOver(now, Math.max(ms, 2 * (this.p50() ?? 0), MIN_RATE_SPAN_MS))
    const full = this.roundFull
    this.round++
    this.roundStart = now
    this.roundFull = false
    if (!full) return // the reader, not the path, set this round's pace
    this.rates.push(rate)
    if (this.rates.length > RATE_ROUNDS) this.rates.shift()
    const bdp = this.rate() * (Number.isFinite(this.minRtt) ? this.minRtt : ms)
    if (this.startup) {
      if (rate >= this.bestRate * GROWTH) { this.bestRate = rate; this.stalls = 0 } else this.stalls++
      if (this.stalls < STALL_ROUNDS) {
        this._set(Math.max(this.bytes, Math.min(2 * this.bytes, STARTUP_GAIN * bdp)))
        return
      }
      this.startup = false
    }
    this._set(2 * bdp)
  }

  /**
   * Bytes answered in the last `span` ms, per ms. Answers are whole bodies
   * that were on the wire together and end close together, so a span of a
   * round or a few request times, not one answer, is what shows the path's rate.
   */
  _rateOver (now, span) {
    const log = this.log
    let i = 0
    while (i < log.length && log[i] < now - LOG_MS) i += 2
    if (i > 0) log.splice(0, i)
    let bytes = 0
    for (let j = log.length - 2; j >= 0 && log[j] > now - span; j -= 2) bytes += log[j + 1]
    return bytes / span
  }

  _set (bytes) { this.bytes = Math.min(this.max, Math.max(this.min, Math.round(bytes))) }
}

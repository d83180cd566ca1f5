// The fetch scheduler of one Tree: every blob request of every read of that
// tree waits here for room, so a stream, a `get` of thousands of small files
// and a gateway's listings share one budget. For each request it picks a
// mirror, keeps each mirror's bytes in flight within that mirror's window
// (window.js), and when one is late asks another (a hedge).
//
// Which mirror: healthy ones in the order given, each filled up to its window
// before the next is asked, so a second mirror takes what the first cannot
// carry and each carries what its own path delivers (shares follow measured
// throughput). A mirror whose requests take far longer than the best one's
// (`slowFactor`) gets only an occasional duplicate of a request (a probe),
// never a request a reader waits on alone, so an honest-but-slow mirror
// cannot stall a read however close to the timeout it answers. Mirrors in
// their penalty time (docs/TRUST.md rule 4) are asked only when no other is left.
//
// Trust is unchanged: every answer goes through the caller's `check`
// (verify.js) before it counts; a mirror whose answer fails is reported
// (`onFault`) and the request goes to one not yet asked; when every mirror
// has failed, the error names each one (errors.js allFailed).
//
// Hedging: a request still unanswered after 3 × its mirror's median request
// time (or what is queued ahead of it there, when longer) + `hedgeFloorMs` is
// also sent to the next mirror; the first answer that verifies wins and the
// other request is cancelled. A mirror that lost that way after being late is
// reported (`onLate`), not penalised: lateness is relative, and a busy honest
// mirror must not be benched for it.
//
// What the scheduler keeps of each mirror (its window, its counts, its last
// probe) is a record of its own; it reads the caller's mirror entries
// (`SchedMirror`) and never writes to them, and the caller asks it through
// methods (medianMs, sample, mirrorStats) for what it measured.
import { MIRROR_FAULT_CODES, AbortedError, allFailed } from '../errors.js'
import { MirrorWindow } from './window.js'
import { CHUNK_AVG } from '../format/limits.js'

const READ_AHEAD_GAIN = 3
const SLOW_SAMPLES = 8 // answers a mirror needs before its median counts it slow

export const DEFAULTS = Object.freeze({
  maxInflightBytes: 64 << 20, // every read of the tree together
  maxRequests: 16, // requests in flight to one mirror (its connections, over HTTP/1.1)
  initialWindow: 8 * CHUNK_AVG, // per mirror, before anything is measured
  minWindow: 4 * CHUNK_AVG,
  minRequests: 8, // always allowed in flight to a mirror, whatever their size (a Tree's readAhead)
  hedgeFloorMs: 200,
  hedgeFactor: 3,
  slowFactor: 4, // slower than the best mirror's median by this factor (and slowFloorMs): probes only
  slowFloorMs: 100,
  probeEveryMs: 2000
})

/**
 * A mirror as the caller (mirrors.js) keeps it; the scheduler only reads it.
 * @typedef {{ url: string, href: string, penaltyUntil: number }} SchedMirror
 *   url: as reported (no credentials); href: as requested; penaltyUntil:
 *   when its penalty ends (of mirrors all penalised, the one whose penalty
 *   ends first is asked first)
 */

/**
 * One mirror as the scheduler keeps it: the caller's entry, the window to
 * it, what was sent there, and when it was last sent a probe (ms).
 * @typedef {{ entry: SchedMirror, win: MirrorWindow, counts: object, lastProbe: number }} MirrorState
 */

export class FetchScheduler {
  /**
   * @param {SchedMirror[]} mirrors
   * @param {object} o
   * @param {{ get: Function }} o.transport
   * @param {number} o.timeoutMs per request
   * @param {(m: SchedMirror) => boolean} o.penalised asked last (docs/TRUST.md rule 4)
   * @param {(m: SchedMirror, err: Error) => void} o.onFault a mirror's answer failed (trust rule 4)
   * @param {(m: SchedMirror, path: string, winner: SchedMirror, hedgeMs: number) => void} o.onLate
   *   m lost a hedge to `winner` after no answer for `path` within hedgeMs
   * @param {(m: SchedMirror) => void} o.onOk an answer from m passed `check`
   * @param {(message: string) => string} [o.scrub] what an error message shows (no credentials)
   * @param {() => number} [o.now] the clock, in ms (default performance.now)
   * @param {{ setTimeout: Function, clearTimeout: Function }} [o.timers] for hedges (default the global ones)
   *   (the other options: DEFAULTS)
   */
  constructor (mirrors, o) {
    this.o = { ...DEFAULTS, ...Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) }
    this.timers = this.o.timers ?? globalThis
    this.transport = o.transport
    const maxWin = this.o.maxInflightBytes
    /** @type {MirrorState[]} in the caller's order */
    this.mirrors = mirrors.map(entry => ({
      entry,
      win: new MirrorWindow({ initial: this.o.initialWindow, min: Math.min(this.o.minWindow, maxWin), max: maxWin, minRequests: Math.min(this.o.minRequests, this.o.maxRequests), now: this.o.now }),
      // in the order Mirrors.health() shows them
      counts: { requests: 0, bytes: 0, hedges: 0, late: 0, probes: 0 },
      lastProbe: 0
    }))
    // waiting jobs, first in first out; urgent ones (pages that other requests
    // wait on) go first: a walk of many small files is a chain of pages, and a
    // page queued behind a window's worth of data stalls every fetch it would name
    this.urgent = []
    this.queue = []
    this.inflightBytes = 0
    this.held = 0 // bytes readers have asked for ahead and not yet consumed (read-pipeline.js)
    this.stats = { hedges: 0, probes: 0, peakInflight: 0, peakInflightBytes: 0 }
    this.jobs = new Set() // every job not finished, queued or in flight
    this.closed = false
  }

  get maxInflightBytes () { return this.o.maxInflightBytes }
  /** What a late request is given beyond 3 × its mirror's median time before it is hedged. */
  get hedgeFloorMs () { return this.o.hedgeFloorMs }

  /** The median of `entry`'s recent request times in ms, or null before the first. */
  medianMs (entry) { return this._state(entry).win.p50() }

  /** A request to `entry` made outside the scheduler (fsinfo.json) took `ms`: one more sample of its time. */
  sample (entry, ms) { this._state(entry).win.sample(ms) }

  /**
   * What the scheduler counted and measured of `entry` (Mirrors.health()).
   * @returns {{ requests: number, bytes: number, hedges: number, late: number, probes: number, inflight: number, windowBytes: number, medianMs: number|null }}
   */
  mirrorStats (entry) {
    const { counts, win } = this._state(entry)
    return { ...counts, inflight: win.inflight, windowBytes: win.bytes, medianMs: win.p50() }
  }

  /** @returns {MirrorState} */
  _state (entry) { return this.mirrors.find(m => m.entry === entry) }

  /**
   * How far ahead one reader should ask: three times what the usable mirrors
   * keep in flight together (each its window, or its minRequests chunks when
   * that is more), so chunks that arrived ahead of an earlier one still on its
   * way do not leave the windows idle; within the memory budget.
   */
  readAheadBytes () {
    let w = 0
    for (const m of this._usable()) w += Math.max(m.win.bytes, m.win.minRequests * CHUNK_AVG)
    return Math.min(this.o.maxInflightBytes, Math.max(READ_AHEAD_GAIN * w, this.o.minWindow))
  }

  /** Readers reserve what they ask for ahead, and release it once consumed. */
  reserve (n) { this.held += n }
  release (n) { this.held -= n }

  /**
   * Fetch `path` from the mirrors and return what `check` makes of the first
   * answer that passes it.
   * @template T
   * @param {string} path
   * @param {number} cap
   * @param {(bytes: Uint8Array, mirror: string) => Promise<T>|T} check
   * @param {AbortSignal} [signal]
   * @param {{ urgent?: boolean, pool?: import('./buffer-pool.js').BufferPool|null }} [o] urgent: ahead
   *   of every request not urgent (a directory page or chunk index: what it names cannot be asked
   *   for until it arrives); pool: each request reads its body into a buffer of its own from it
   * @returns {Promise<T>}
   */
  fetch (path, cap, check, signal, { urgent = false, pool = null } = {}) {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(new AbortedError('aborted'))
      if (this.closed) return reject(new AbortedError('tree closed'))
      const job = { path, cap, check, signal, pool, tried: new Set(), errors: [], attempts: new Set(), done: false, resolve, reject }
      this.jobs.add(job)
      if (signal) {
        job.onAbort = () => this._finish(job, new AbortedError('aborted'))
        signal.addEventListener('abort', job.onAbort, { once: true })
      }
      ;(urgent ? this.urgent : this.queue).push(job)
      this._pump()
    })
  }

  _healthy () { return this.mirrors.filter(m => !this.o.penalised(m.entry)) }

  /** Mirrors a reader may be sent to now: healthy and not slow, else healthy, else all. */
  _usable () {
    const healthy = this._healthy()
    if (healthy.length === 0) return this.mirrors
    const fast = healthy.filter(m => !this._slow(m, healthy))
    return fast.length ? fast : healthy
  }

  /**
   * Far slower than the best of `among` (by median request time) without
   * delivering as much, or late on most recent requests (a late request's
   * time is only known to be at least what it was when it lost, so medians
   * understate such a mirror).
   *
   * Request times alone would mislead: they grow with what this reader
   * queued at the mirror, so a mirror whose start-up window ran ahead of its
   * link looks slow while it delivers as fast as the best one (two equal
   * mirrors, BENCHMARKS.md P11: the second, benched to probes on its request
   * times alone, carried a small share of the bytes instead of half). A
   * mirror counts as slow only when it also delivers under half the best
   * rate seen among the others.
   */
  _slow (m, among) {
    if (m.win.lateScore > 0.5 && among.some(x => x !== m && x.win.lateScore <= 0.5)) return true
    // medians of a few requests compare unlike things (a small page against a
    // chunk on a new connection): only mirrors with a run of answers are compared
    const p = m.win.p50()
    if (p === null || m.win.times.length < SLOW_SAMPLES) return false
    let best = Infinity; let bestRate = 0
    for (const x of among) {
      const q = x.win.p50()
      if (q !== null && x.win.times.length >= SLOW_SAMPLES && q < best) best = q
      if (x !== m) bestRate = Math.max(bestRate, x.win.rate())
    }
    if (!(p > best * this.o.slowFactor + this.o.slowFloorMs)) return false
    return m.win.rate() < bestRate / 2 || bestRate === 0
  }

  /**
   * The reader closed the tree: every job still queued or in flight fails
   * with ROTREE_ABORTED, and so does every later fetch. Its requests are
   * cancelled, and what they meet from here on (the transport closing
   * under them) is no mirror's fault.
   */
  close () {
    this.closed = true
    for (const job of [...this.jobs]) this._finish(job, new AbortedError('tree closed'))
  }

  _pump () {
    if (this.closed) return
    for (;;) {
      const q = this.urgent.length ? this.urgent : this.queue
      if (q.length === 0) return
      const job = q[0]
      if (job.done) { q.shift(); continue }
      const pick = this._pick(job)
      if (pick === null) {
        // nobody untried is left: failed everywhere, unless a probe is still out (its answer decides)
        q.shift()
        if (job.attempts.size === 0) this._finish(job, allFailed(job.path, job.errors))
        continue
      }
      if (pick === undefined) return // every candidate's window is full: wait for an answer
      q.shift()
      this._attempt(job, pick)
      this._maybeProbe(job, pick)
    }
  }

  /**
   * The mirror for `job`: null when every mirror has been tried, undefined
   * when the right ones have no room now.
   */
  _pick (job) {
    const left = this.mirrors.filter(m => !job.tried.has(m))
    if (left.length === 0) return null
    const healthy = left.filter(m => !this.o.penalised(m.entry))
    // a penalised mirror only when no healthy one is left for this job (rule 4: asked last)
    let group = healthy.length ? healthy : [...left].sort((a, b) => a.entry.penaltyUntil - b.entry.penaltyUntil)
    const allHealthy = this._healthy()
    const fast = group.filter(m => !this._slow(m, allHealthy.length ? allHealthy : this.mirrors))
    if (fast.length) group = fast
    else group = [...group].sort((a, b) => (a.win.p50() ?? 0) - (b.win.p50() ?? 0))
    // the memory budget holds for every mirror, one with nothing in flight
    // too; only a request alone in flight may be larger than it. A round held
    // back here marks no window full (below).
    if (this.inflightBytes > 0 && this.inflightBytes + job.cap > this.o.maxInflightBytes) return undefined
    // a reader consumes in order: a chunk sent where it would arrive far later
    // than on another mirror holds the reader up, so such a mirror waits too
    let soonest = Infinity
    for (const m of group) soonest = Math.min(soonest, this._eta(m, job.cap))
    for (const m of group) {
      if (m.win.inflight === 0) return m
      // only the window being full makes a round measure the path: a round
      // held back by the request cap or the memory budget delivers what those
      // allow (many small files: 64 requests of ~20 KB per round trip), and a
      // rate measured there would shrink the window below the link's
      // bandwidth × delay for the large chunks that follow (BBR's
      // "application-limited" samples)
      if (m.win.inflight >= this.o.maxRequests) continue
      if (!m.win.fits(job.cap)) { m.win.full(); continue }
      const eta = this._eta(m, job.cap)
      if (eta !== Infinity && eta > 2 * soonest + this.o.hedgeFloorMs) continue
      return m
    }
    return undefined
  }

  /** When a request of `size` sent to `m` now would be answered, in ms from now (Infinity: not measured yet). */
  _eta (m, size) {
    const rate = m.win.rate()
    if (rate === 0 || !Number.isFinite(m.win.minRtt)) return Infinity
    return m.win.minRtt + (m.win.inflightBytes + size) / rate
  }

  /** Send a duplicate of `job` to a slow mirror now and then, so it can show it got faster. */
  _maybeProbe (job, primary) {
    for (const m of this.mirrors) {
      if (m === primary || job.tried.has(m) || this.o.penalised(m.entry) || m.win.inflight > 0) continue
      const now = m.win.now() // the scheduler's clock (o.now), which its windows keep
      if (now - m.lastProbe < this.o.probeEveryMs) continue
      if (!this._slow(m, this._healthy())) continue
      m.lastProbe = now
      m.counts.probes++
      this.stats.probes++
      this._attempt(job, m, { probe: true })
      return
    }
  }

  _attempt (job, m, { hedge = false, probe = false } = {}) {
    job.tried.add(m)
    const ctrl = new AbortController()
    const a = { m, ctrl, ticket: m.win.sent(job.cap), probe, cancelled: false, answered: false, late: false, hedgeTimer: null }
    job.attempts.add(a)
    m.counts.requests++
    this.inflightBytes += job.cap
    const n = this._inflightCount()
    if (n > this.stats.peakInflight) this.stats.peakInflight = n
    if (this.inflightBytes > this.stats.peakInflightBytes) this.stats.peakInflightBytes = this.inflightBytes
    if (!probe && !hedge) this._armHedge(job, a)
    // a buffer per attempt, never shared with a hedge; one whose attempt loses is left to V8
    const into = job.pool?.take(job.cap) ?? undefined
    this.transport.get(m.entry.href + job.path, { cap: job.cap, timeoutMs: this.o.timeoutMs, signal: ctrl.signal, into })
      .then(bytes => {
        if (a.cancelled) throw new AbortedError('cancelled')
        m.win.done(a.ticket, bytes.length)
        a.answered = true
        m.counts.bytes += bytes.length
        return job.check(bytes, m.entry.url)
      })
      .then(value => this._won(job, a, value), err => this._lost(job, a, err))
  }

  _inflightCount () { let n = 0; for (const m of this.mirrors) n += m.win.inflight; return n }

  /** After 3 × the mirror's median time, or what it has queued (+ a floor), ask the next mirror as well. */
  _armHedge (job, a) {
    let p = a.m.win.p50() ?? this._bestP50()
    if (p === null) return // nothing measured anywhere yet: the timeout decides
    // a mirror given more to do than usual (its window grew) answers later than
    // its median without being late: expect at least what is queued ahead of this
    const eta = this._eta(a.m, 0)
    if (eta !== Infinity && eta > p) p = eta
    const ms = this.o.hedgeFactor * p + this.o.hedgeFloorMs
    if (ms >= this.o.timeoutMs) return
    a.hedgeMs = ms
    a.hedgeTimer = this.timers.setTimeout(() => {
      a.hedgeTimer = null
      if (job.done || a.cancelled || a.answered) return
      const healthy = this._healthy()
      const next = healthy.find(m => !job.tried.has(m) && !this._slow(m, healthy) && m.win.inflight < this.o.maxRequests)
      if (!next) return
      a.late = true
      next.counts.hedges++
      this.stats.hedges++
      this._attempt(job, next, { hedge: true })
    }, ms)
  }

  _bestP50 () {
    let best = null
    for (const m of this.mirrors) { const p = m.win.p50(); if (p !== null && (best === null || p < best)) best = p }
    return best
  }

  _release (job, a) {
    if (!job.attempts.delete(a)) return false
    this.timers.clearTimeout(a.hedgeTimer)
    this.inflightBytes -= job.cap
    return true
  }

  _won (job, a, value) {
    const wasOpen = job.attempts.has(a)
    if (wasOpen) a.m.win.lateness(a.late)
    this._release(job, a)
    if (job.done || !wasOpen) { this._pump(); return }
    this.o.onOk(a.m.entry)
    // the others lose: cancelled, and reported when they had been late
    for (const other of [...job.attempts]) {
      other.cancelled = true
      this._release(job, other)
      if (!other.answered) other.m.win.dropped(other.ticket)
      other.ctrl.abort()
      if (other.late) {
        other.m.counts.late++
        other.m.win.lateness(true)
        this.o.onLate(other.m.entry, job.path, a.m.entry, other.hedgeMs)
      }
    }
    this._finish(job, null, value)
  }

  _lost (job, a, err) {
    if (!job.attempts.has(a)) {
      // cancelled: already accounted for, but bytes that arrived and failed the check were still a lie
      if (a.answered && MIRROR_FAULT_CODES.has(err?.code)) this.o.onFault(a.m.entry, err)
      this._pump()
      return
    }
    this._release(job, a)
    if (!a.answered) a.m.win.dropped(a.ticket, { fault: MIRROR_FAULT_CODES.has(err?.code) && err.code !== 'ROTREE_HASH_MISMATCH' })
    if (job.done) { this._pump(); return }
    if (err?.code === 'ROTREE_ABORTED' && job.signal?.aborted) { this._finish(job, new AbortedError('aborted')); return }
    if (!MIRROR_FAULT_CODES.has(err?.code)) { this._finish(job, err); return }
    this.o.onFault(a.m.entry, err)
    job.errors.push({ mirror: a.m.entry.url, code: err.code, message: this.o.scrub ? this.o.scrub(err.message) : err.message, err })
    // a hedge still out decides; a probe (a slow mirror) is not waited for
    if ([...job.attempts].some(x => !x.probe)) { this._pump(); return }
    this.urgent.unshift(job) // next mirror, ahead of new requests
    this._pump()
  }

  _finish (job, err, value) {
    if (job.done) return
    job.done = true
    this.jobs.delete(job)
    if (job.onAbort) job.signal.removeEventListener('abort', job.onAbort)
    for (const a of [...job.attempts]) {
      a.cancelled = true
      this._release(job, a)
      if (!a.answered) a.m.win.dropped(a.ticket)
      a.ctrl.abort()
    }
    if (err) job.reject(err); else job.resolve(value)
    this._pump()
  }
}

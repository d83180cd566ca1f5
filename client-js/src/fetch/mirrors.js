// Trust rule 4: a mirror that errors, stalls or serves bytes that fail
// verification is skipped for the next and reported; when all fail, the
// error names each mirror and what it did. Nothing here decides what is
// valid: the caller's `check` (from verify.js) does.
//
// Blob requests go through one fetch scheduler per Mirrors (sched.js): a
// window of bytes in flight sized to each mirror's measured bandwidth × delay,
// several mirrors at once when there are, hedged requests for late answers.
// fsinfo.json goes to every mirror at once (fetchAll). The entries of `list`
// are this module's (the scheduler reads them, SchedMirror); what the
// scheduler measures of each it keeps itself, and tells through its methods.
//
// A mirror URL may carry `user:pass@`: requests use it as given, and
// everything this module reports (health(), errors' `mirror`, messages)
// shows it without them.
import { MIRROR_FAULT_CODES, AbortedError } from '../errors.js'
import { FetchScheduler, DEFAULTS } from './sched.js'
import { redactUrl } from '../net/transport-url.js'

export const PENALTY_MS = 30_000
// what fetchAll adds to a mirror's measured round trips before it stops waiting for it
export const SETTLE_FLOOR_MS = 50
export { DEFAULTS as SCHED_DEFAULTS }

/** A message with any `scheme://user:pass@` in it shown without the userinfo. */
export function scrubMessage (text) { return String(text).replace(/\b([a-z][a-z0-9+.-]*:\/\/)[^/\s?#@]*@/gi, '$1') }

export class Mirrors {
  /**
   * @param {string[]} urls base URLs ending in '/'
   * @param {object} o
   * @param {{ get: Function }} o.transport
   * @param {number} o.timeoutMs per request
   * @param {number} [o.penaltyMs] how long a failed mirror is asked last
   * @param {number} [o.maxInflightBytes=64 MiB] bytes in flight and read ahead, all reads together
   * @param {number} [o.maxRequests=16] requests in flight to one mirror (keep it ≤ the transport's sockets per origin)
   * @param {number} [o.minRequests=8] requests always allowed in flight to a mirror, before and whatever the window
   * @param {number} [o.hedgeFloorMs=200] a request is hedged after 3 × its mirror's median time + this
   */
  constructor (urls, { transport, timeoutMs, penaltyMs = PENALTY_MS, maxInflightBytes, maxRequests, minRequests, hedgeFloorMs } = {}) {
    this.list = urls.map(href => ({ url: redactUrl(href), href, ok: 0, failed: 0, faults: 0, lastError: null, lastFault: null, penaltyUntil: 0 }))
    this.transport = transport
    this.timeoutMs = timeoutMs
    this.penaltyMs = penaltyMs
    this.closed = false
    this.sched = new FetchScheduler(this.list, {
      transport,
      timeoutMs,
      maxInflightBytes,
      maxRequests,
      minRequests,
      hedgeFloorMs,
      penalised: m => m.penaltyUntil > Date.now(),
      onOk: m => { m.ok++ },
      onFault: (m, err) => this.fault(m, err),
      scrub: scrubMessage,
      onLate: (m, path, winner, ms) => this._late(m, path, winner, ms)
    })
  }

  /**
   * Fetch `path` through the scheduler: the first answer that passes `check`.
   * @template T
   * @param {string} path relative to the mirror base ('h/<hex>')
   * @param {number} cap most bytes to accept
   * @param {(bytes: Uint8Array, mirror: string) => Promise<T>|T} check verifies, throws a typed error on bad data
   * @param {AbortSignal} [signal]
   * @param {{ urgent?: boolean, pool?: import('./buffer-pool.js').BufferPool|null }} [o] urgent: ahead of
   *   requests not urgent; pool: each request reads its body into a buffer of its own from it (sched.js)
   * @returns {Promise<T>}
   */
  fetch (path, cap, check, signal, o) { return this.sched.fetch(path, cap, check, signal, o) }

  /** Bytes one reader should keep requested ahead of what it consumes (read-pipeline.js). */
  readAheadBytes () { return this.sched.readAheadBytes() }
  get maxInflightBytes () { return this.sched.maxInflightBytes }
  get held () { return this.sched.held }
  reserve (n) { this.sched.reserve(n) }
  release (n) { this.sched.release(n) }

  /**
   * Fetch from every mirror at once (fsinfo.json: the caller picks the newest).
   * Resolves when all have answered, or, once one answer was good, when each
   * mirror still out has had the time its distance explains: 3 × its usual
   * request time + hedgeFloorMs when that is known, else 4 × the round trip
   * its first connection's handshake measured + SETTLE_FLOOR_MS
   * (transport.rtt, handshake-times.js), else `settleMs` after the first
   * good answer. So a far but honest mirror is waited for, and a fast stale
   * one does not win by speed alone; a near mirror that stays silent costs
   * a few of its round trips, not `settleMs`.
   * `onResult` is called with each mirror's result as it arrives, including
   * those that arrive after the promise resolved (a caller can adopt a newer
   * root late).
   * @param {string} path
   * @param {number} cap
   * @param {Function} check
   * @param {{ settleMs?: number, signal?: AbortSignal, onResult?: (r: object) => void,
   *   absentOk?: boolean, until?: (r: object) => boolean }} [o]
   *   absentOk: a 404 is `{ mirror, absent: true }`, not a fault (a file a mirror may
   *   rightly lack: the next trust document, trust-chain.js); until: resolve as soon as
   *   one result satisfies it
   * @returns {Promise<({ mirror: string, value: any } | { mirror: string, error: object } | { mirror: string, absent: true })[]>}
   */
  fetchAll (path, cap, check, { settleMs = Infinity, signal, onResult, absentOk = false, until } = {}) {
    const t0 = performance.now()
    return new Promise((resolve, reject) => {
      const results = []
      const pending = new Set(this.list)
      const rtts = new Map() // handshake round trips of the mirrors still out, as they are measured
      let timer = null
      let firstGood = null
      let settled = false
      const done = () => { if (settled) return; settled = true; clearTimeout(timer); resolve([...results]) }
      const arm = () => {
        if (firstGood === null || settleMs === Infinity) return
        let at = 0
        for (const m of pending) {
          const p = this.sched.medianMs(m)
          const expect = p !== null ? 3 * p + this.sched.hedgeFloorMs : rtts.has(m) ? 4 * rtts.get(m) + SETTLE_FLOOR_MS : null
          at = Math.max(at, expect === null ? firstGood + settleMs : t0 + Math.min(this.timeoutMs, expect))
        }
        clearTimeout(timer)
        timer = setTimeout(done, Math.max(0, at - performance.now()))
      }
      if (settleMs !== Infinity) {
        for (const m of this.list) {
          if (this.sched.medianMs(m) !== null) continue
          this.transport.rtt?.(m.href)?.then(ms => { if (ms !== null && !settled && pending.has(m)) { rtts.set(m, ms); arm() } })
        }
      }
      for (const m of this.list) {
        this._try(m, path, cap, check, signal, absentOk).then(r => {
          pending.delete(m)
          if (!settled) results.push(r)
          if (onResult) {
            try { onResult(r) } catch (err) { if (!settled) { settled = true; clearTimeout(timer); reject(err) } return }
          }
          if (settled) return
          if (pending.size === 0 || until?.(r)) return done()
          if (r.value !== undefined && firstGood === null) firstGood = performance.now()
          arm()
        }, err => { if (!settled) { settled = true; clearTimeout(timer); reject(err) } })
      }
    })
  }

  /**
   * One request to the mirror whose reported url is `mirror` (an answer's
   * `mirror`), checked: what that mirror serves beside the fsinfo.json it
   * gave (its log/, trust/witnessed.js). Throws what the transport or `check` throws.
   * @template T @param {string} mirror @param {string} path @param {number} cap
   * @param {(bytes: Uint8Array) => Promise<T>|T} check @returns {Promise<T>}
   */
  async fetchFrom (mirror, path, cap, check) {
    const m = this.list.find(x => x.url === mirror)
    if (this.closed || !m) throw new AbortedError(this.closed ? 'tree closed' : `no mirror ${mirror}`)
    return check(await this.transport.get(m.href + path, { cap, timeoutMs: this.timeoutMs }))
  }

  /**
   * The reader closed the tree: what is in flight, and every later fetch,
   * fails with ROTREE_ABORTED, and no mirror is blamed for the transport
   * closing under its requests.
   */
  close () {
    this.closed = true
    this.sched.close()
  }

  /** One request to one mirror outside the window; its time still counts as a sample. */
  async _try (m, path, cap, check, signal, absentOk = false) {
    const t0 = performance.now()
    try {
      if (this.closed) throw new AbortedError('tree closed')
      const bytes = await this.transport.get(m.href + path, { cap, timeoutMs: this.timeoutMs, signal })
      this.sched.sample(m, performance.now() - t0)
      const value = await check(bytes, m.url)
      m.ok++
      return { mirror: m.url, value }
    } catch (err) {
      if (this.closed && err.code !== 'ROTREE_ABORTED') throw new AbortedError('tree closed', { cause: err })
      if (absentOk && err.code === 'ROTREE_MIRROR_HTTP' && err.status === 404) return { mirror: m.url, absent: true }
      if (!MIRROR_FAULT_CODES.has(err.code)) throw err
      this.fault(m, err)
      return { mirror: m.url, error: { mirror: m.url, code: err.code, message: scrubMessage(err.message), err } }
    }
  }

  /**
   * A mirror that failed: reported, and asked last for penaltyMs. One that is
   * only behind (ROTREE_ROLLBACK: a validly signed but older fsinfo.json) is
   * reported, not benched: blobs are named by their hash, so it still serves
   * every blob the new root shares with the one it has, verified like any
   * other, and a blob it lacks answers 404, which is a fault.
   * @param {object|string} m an entry of `list`, or its (reported) url
   */
  fault (m, err) {
    if (typeof m === 'string') m = this.list.find(x => x.url === m || x.href === m)
    if (!m) return
    m.failed++
    m.faults++ // a fault, as against a late answer (_late): what a reader is warned about
    m.lastError = { code: err.code, message: scrubMessage(err.message), at: new Date().toISOString() }
    m.lastFault = m.lastError
    if (err.code !== 'ROTREE_ROLLBACK') m.penaltyUntil = Date.now() + this.penaltyMs
  }

  /**
   * A mirror that lost a hedge after being late: reported (it held a read up),
   * not benched (being slower than usual is not a lie); its measured times
   * now steer requests away from it (sched.js).
   */
  _late (m, path, winner, ms) {
    m.failed++
    m.lastError = {
      code: 'ROTREE_TIMEOUT',
      message: `no answer for ${path} within ${Math.round(ms)} ms, 3 × its usual time + ${this.sched.hedgeFloorMs} ms; ${winner.url} answered first`,
      at: new Date().toISOString()
    }
  }

  health () {
    const now = Date.now()
    return this.list.map(m => {
      // requests, bytes, hedges, late, probes, inflight, windowBytes, medianMs
      const s = this.sched.mirrorStats(m)
      return { url: m.url, ok: m.ok, failed: m.failed, faults: m.faults, lastError: m.lastError, lastFault: m.lastFault, healthy: m.penaltyUntil <= now, ...s, medianMs: s.medianMs === null ? null : Math.round(s.medianMs * 10) / 10 }
    })
  }

  /** The scheduler's totals (peak requests and bytes in flight, hedges, probes). */
  schedStats () { return { ...this.sched.stats, inflightBytes: this.sched.inflightBytes, held: this.sched.held } }
}

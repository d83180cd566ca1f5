// Trust rule 4: try mirrors in turn; a mirror that errors, stalls or serves
// bytes that fail verification is skipped for the next and reported. When all
// fail, the error names each mirror and what it did. Nothing here decides what
// is valid: the caller's `check` (from verify.js) does.
import { MIRROR_FAULT_CODES, allFailed } from './errors.js'

export const PENALTY_MS = 30_000

export class Mirrors {
  /**
   * @param {string[]} urls base URLs ending in '/'
   * @param {{ transport, timeoutMs: number, penaltyMs?: number }} o penaltyMs: how long a failed mirror is asked last
   */
  constructor (urls, { transport, timeoutMs, penaltyMs = PENALTY_MS }) {
    this.list = urls.map(url => ({ url, ok: 0, failed: 0, lastError: null, penaltyUntil: 0 }))
    this.transport = transport
    this.timeoutMs = timeoutMs
    this.penaltyMs = penaltyMs
  }

  /** Healthy mirrors first, in the order given; penalised ones after. */
  _order () {
    const now = Date.now()
    return [...this.list].sort((a, b) => (a.penaltyUntil > now) - (b.penaltyUntil > now))
  }

  /**
   * Fetch `path` from the first mirror whose answer passes `check`.
   * @template T
   * @param {string} path relative to the mirror base ('fsinfo.json', 'h/<hex>')
   * @param {number} cap most bytes to accept
   * @param {(bytes: Uint8Array, mirror: string) => Promise<T>|T} check verifies, throws a typed error on bad data
   * @param {AbortSignal} [signal]
   * @returns {Promise<T>}
   */
  async fetch (path, cap, check, signal) {
    const errors = []
    for (const m of this._order()) {
      try {
        const bytes = await this.transport.get(m.url + path, { cap, timeoutMs: this.timeoutMs, signal })
        const value = await check(bytes, m.url)
        m.ok++
        return value
      } catch (err) {
        if (!MIRROR_FAULT_CODES.has(err.code)) throw err
        this.fault(m, err)
        errors.push({ mirror: m.url, code: err.code, message: err.message, err })
      }
    }
    throw allFailed(path, errors)
  }

  /**
   * Fetch from every mirror at once (fsinfo.json: the caller picks the newest).
   * Resolves when all have answered, or `settleMs` after the first good answer,
   * so one stalled mirror does not hold every open() for the full timeout.
   * @returns {Promise<({ mirror: string, value: any } | { mirror: string, error: object })[]>}
   */
  fetchAll (path, cap, check, { settleMs = Infinity, signal } = {}) {
    return new Promise((resolve, reject) => {
      const results = []
      let pending = this.list.length
      let timer = null
      const done = () => { clearTimeout(timer); resolve([...results]) }
      for (const m of this.list) {
        this._try(m, path, cap, check, signal).then(r => {
          results.push(r)
          if (--pending === 0) return done()
          if (r.value !== undefined && timer === null && settleMs < Infinity) timer = setTimeout(done, settleMs)
        }, err => { clearTimeout(timer); reject(err) })
      }
    })
  }

  async _try (m, path, cap, check, signal) {
    try {
      const bytes = await this.transport.get(m.url + path, { cap, timeoutMs: this.timeoutMs, signal })
      const value = await check(bytes, m.url)
      m.ok++
      return { mirror: m.url, value }
    } catch (err) {
      if (!MIRROR_FAULT_CODES.has(err.code)) throw err
      this.fault(m, err)
      return { mirror: m.url, error: { mirror: m.url, code: err.code, message: err.message, err } }
    }
  }

  /**
   * A mirror that failed: reported, and asked last for penaltyMs. One that is
   * only behind (ROTREE_ROLLBACK: a validly signed but older fsinfo.json) is
   * reported, not benched: blobs are named by their hash, so it still serves
   * every blob the new root shares with the one it has, verified like any
   * other, and a blob it lacks answers 404, which is a fault.
   */
  fault (m, err) {
    m.failed++
    m.lastError = { code: err.code, message: err.message, at: new Date().toISOString() }
    if (err.code !== 'ROTREE_ROLLBACK') m.penaltyUntil = Date.now() + this.penaltyMs
  }

  health () {
    return this.list.map(({ url, ok, failed, lastError, penaltyUntil }) => ({ url, ok, failed, lastError, healthy: penaltyUntil <= Date.now() }))
  }
}

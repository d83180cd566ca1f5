// The root store: which signed root a tree reads, and nothing else. It asks
// every mirror for fsinfo.json, accepts answers only through verify.js
// (verifyFsinfo: docs/TRUST.md rules 1 and 2), picks the newest across
// mirrors and reports forks and stale mirrors (rankRoots, staleMirrors:
// docs/TRUST.md rules 2 and 4), checks the choice against the persisted
// rollback state (state.js: docs/TRUST.md rule 2), and says whether the
// accepted root is still fresh by the tree's own clock (isExpired: docs/TRUST.md rule 2).
//
// Late answers. refresh() returns once the settle window after the first good
// answer has passed, so one stalled mirror does not hold every open() for the
// full timeout; but a fast stale mirror then wins over a slower honest one.
// The store keeps listening: an answer that arrives later, until that
// mirror's own timeout, is verified and ranked like any other, and a newer
// root is adopted when it comes. Each read pins the record it started with,
// so adopting one never mixes roots within a read (docs/TRUST.md rule 6).
import { allFailed } from './errors.js'
import { verifyFsinfo, isExpired, rankRoots, hasFork, staleMirrors } from './verify.js'
import { MAX_FSINFO } from './format/limits.js'

export class RootStore {
  /**
   * @param {object} o
   * @param {string} o.publicKey from the address (docs/TRUST.md rule 1)
   * @param {import('./mirrors.js').Mirrors} o.mirrors
   * @param {import('./state.js').SeqStore} o.state
   * @param {() => number} o.now the tree's clock
   * @param {number} o.skewMs @param {number} o.graceMs @param {number} o.settleMs
   */
  constructor ({ publicKey, mirrors, state, now, skewMs, graceMs, settleMs }) {
    this.publicKey = publicKey
    this.mirrors = mirrors
    this.state = state
    this.now = now
    this.skewMs = skewMs
    this.graceMs = graceMs
    this.settleMs = settleMs
    /** The accepted fsinfo record (verifyFsinfo's value + the mirror it came from); a new object per adopted root. */
    this.record = null
    this.lateError = null // the last failure while adopting a late answer (a StateError), for stats
    this._adopting = Promise.resolve() // adoptions run one at a time: state check, then the swap
    this._refreshing = null
  }

  /** A root is accepted and not expired by the tree's clock (plus grace). */
  isFresh (record = this.record) {
    return record !== null && !isExpired(record, { now: this.now(), graceMs: this.graceMs })
  }

  /** The root for one operation; an absent or expired one is refreshed first. */
  async root () {
    if (this.isFresh()) return this.record
    await this.refresh()
    return this.record
  }

  /**
   * Fetch fsinfo.json from every mirror and adopt the newest that verifies and
   * passes the rollback state. Concurrent calls share one round.
   * @returns {Promise<boolean>} true when the accepted root changed
   */
  refresh () {
    this._refreshing ??= this._refresh().finally(() => { this._refreshing = null })
    return this._refreshing
  }

  async _refresh () {
    const now = this.now()
    const early = [] // verified while fetchAll was still collecting
    let settled = false
    // Every good answer goes through here, including those that arrive after
    // the settle window closed (Mirrors.fetchAll keeps the other requests
    // running until their own timeout and still calls `check` for them).
    const check = (bytes, mirror) => {
      const value = verifyFsinfo(bytes, { publicKey: this.publicKey, now, skewMs: this.skewMs, graceMs: this.graceMs })
      if (settled) queueMicrotask(() => this._late({ mirror, value }))
      else early.push({ mirror, value })
      return value
    }
    let results
    try {
      results = await this.mirrors.fetchAll('fsinfo.json', MAX_FSINFO, check, { settleMs: this.settleMs })
    } finally {
      settled = true
    }
    const errors = results.filter(r => r.error).map(r => r.error)
    const answers = results.filter(r => r.value)
    const adopted = this._adopt(answers, (mirror, err) => errors.push({ mirror, code: err.code, message: err.message, err }))
    // verified in the instant between fetchAll settling and this line: late too (after the adoption above)
    for (const a of early) if (!answers.some(r => r.value === a.value)) queueMicrotask(() => this._late(a))
    const chosen = await adopted
    if (chosen === null) throw allFailed('fsinfo.json', errors) // the accepted root, if any, stays
    return chosen.changed
  }

  /** An answer that arrived after refresh() returned: adopted when newer, reported when behind. */
  _late (answer) {
    const cur = this.record
    if (cur !== null && answer.value.seq <= cur.seq) {
      for (const s of staleMirrors([answer], { mirror: cur.mirror, value: cur })) this._fault(s.mirror, s.err)
      return
    }
    this._adopt([answer], () => {}).then(r => {
      // the mirror that gave the root just replaced is behind: reported (docs/TRUST.md rule 4)
      const now = this.record
      if (r === null || cur === null || now === cur || cur.mirror === answer.mirror) return
      for (const s of staleMirrors([{ mirror: cur.mirror, value: cur }], { mirror: now.mirror, value: now })) this._fault(s.mirror, s.err)
    }).catch(err => { this.lateError = { code: err.code, message: err.message } })
  }

  _fault (mirror, err) {
    const m = this.mirrors.list.find(x => x.url === mirror)
    if (m) this.mirrors.fault(m, err)
  }

  /**
   * Rank verified answers, check the best against the persisted state, and
   * make it the record. Faults (forks, rollbacks, stale mirrors) are reported
   * to the mirrors and to `onFault`.
   * @returns {Promise<{ changed: boolean } | null>} null: no answer could be accepted
   */
  _adopt (answers, onFault) {
    const run = async () => {
      const fault = (mirror, err) => { this._fault(mirror, err); onFault(mirror, err) }
      const seen = hasFork(answers) ? await this.state.get(this.publicKey) : null
      const { candidates, forks } = rankRoots(answers, seen)
      for (const f of forks) fault(f.mirror, f.err)
      for (const chosen of candidates) {
        const { mirror, value } = chosen
        try {
          await this.state.accept(this.publicKey, value) // rollback / fork against what this reader saw
        } catch (err) {
          if (err.code !== 'ROTREE_ROLLBACK' && err.code !== 'ROTREE_FORK') throw err
          fault(mirror, err) // behind what this reader saw: reported (Mirrors.fault); a fork: benched
          continue
        }
        for (const s of staleMirrors(candidates, chosen)) fault(s.mirror, s.err)
        const cur = this.record
        const changed = cur === null || cur.root.hash !== value.root.hash
        if (cur === null || value.seq > cur.seq || (value.seq === cur.seq && value.expiresMs > cur.expiresMs)) {
          this.record = { ...value, mirror }
        }
        return { changed }
      }
      return null
    }
    const p = this._adopting.then(run)
    this._adopting = p.catch(() => {})
    return p
  }
}

/** The public shape of an accepted record. */
export function infoOf (r) {
  return r && { key: r.key, seq: r.seq, issued: r.issued, expires: r.expires, root: r.root.hash, rootSize: r.root.size, rootMtime: r.rootMtime, mirror: r.mirror }
}

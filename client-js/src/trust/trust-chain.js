// The trust documents of a format-version-2 tree, as one reader knows them
// (docs/TRUST.md rule 10): the newest document it trusts, walked from the
// address's anchor one document at a time, each fetched from the mirrors
// (trust/<seq>.json, at most MAX_TRUST_DOC bytes) and accepted only through
// trust/roles.js. Each document accepted is persisted (state.js) at once,
// before the fsinfo.json that named it is judged: a rotation or a retirement
// a reader has seen sticks, even when that fsinfo.json then fails, and
// across restarts.
//
// Two ways forward: reach(n), to the document an fsinfo.json names, and
// probe(), TUF's "update the root first": trust/<known + 1>.json from every
// mirror, and on, until no mirror has the next one (FORMAT.md §12.9 step 4).
// The probe runs beside the fsinfo.json requests, so a reader learns of a
// rotation that an old fsinfo.json (one that names an older document)
// does not mention, without another round trip.
import { BadFormatError, ForkError, StateError } from '../errors.js'
import { decodeUtf8 } from '../format/bytes.js'
import { decodeTrustDoc, MAX_TRUST_DOC } from '../format/trust-doc.js'
import { acceptTrustStep, trustHash, MAX_TRUST_STEPS } from './roles.js'

/**
 * trust/<n>.json from the mirrors (the usual failover: a mirror whose
 * document is not accepted is a fault, and the next one is asked), accepted
 * after `prev` by acceptTrustStep (docs/TRUST.md rule 10). Returns the
 * decoded document with its JSON `text`.
 * @param {import('../fetch/mirrors.js').Mirrors} mirrors @param {number} n
 * @param {object|null} prev the document before it, already accepted (null: n is 1)
 * @param {{ kind: 'key', key: string } | { kind: 'trust', hash: string }} anchor
 */
export function fetchTrustStep (mirrors, n, prev, anchor) {
  return mirrors.fetch(`trust/${n}.json`, MAX_TRUST_DOC, bytes => decodeStep(bytes, n, prev, anchor))
}

/** trust/<n>.json's bytes as the document accepted after `prev` (rule 10), with its JSON `text`. */
function decodeStep (bytes, n, prev, anchor) {
  const doc = decodeTrustDoc(bytes)
  if (doc.seq !== n) throw new BadFormatError(`trust/${n}.json holds trust document ${doc.seq}`)
  acceptTrustStep(prev, doc, anchor)
  doc.text = typeof bytes === 'string' ? bytes : decodeUtf8(bytes)
  return doc
}

export class TrustChain {
  /**
   * @param {object} o
   * @param {{ kind: 'key', key: string } | { kind: 'trust', hash: string }} o.anchor from the address
   * @param {string} o.id the address id (anchor and name): where the state is kept
   * @param {import('../fetch/mirrors.js').Mirrors} o.mirrors
   * @param {import('./state.js').SeqStore} o.state
   */
  constructor ({ anchor, id, mirrors, state }) {
    this.anchor = anchor
    this.id = id
    this.mirrors = mirrors
    this.state = state
    /** The newest trusted document (decoded, with its JSON `text`), or null. */
    this.doc = null
    this._walking = Promise.resolve() // one walk at a time: each step builds on the last
    this._probing = null
  }

  /**
   * Take up the persisted newest document when it is newer than this one's
   * (another process may have walked further). Persisted state is trusted
   * as the sequence numbers are, but checked: a document that does not
   * decode, or not to the recorded hash, is damaged state (ROTREE_STATE).
   */
  async load () {
    const rec = await this.state.get(this.id)
    if (rec?.v !== 2 || !rec.trust || (this.doc && this.doc.seq >= rec.trust.seq)) return this.doc
    let doc
    try { doc = decodeTrustDoc(rec.trustDoc) } catch (err) {
      throw new StateError(`reader state for ${this.id} holds a trust document that does not decode: ${err.message}`, { cause: err })
    }
    if (doc.seq !== rec.trust.seq || trustHash(doc) !== rec.trust.hash) throw new StateError(`reader state for ${this.id} holds trust document ${doc.seq}, not the recorded ${rec.trust.seq} ${rec.trust.hash.slice(0, 16)}…`)
    doc.text = rec.trustDoc
    this.doc = doc
    return doc
  }

  /**
   * Walk on towards document `target`: at most MAX_TRUST_STEPS documents
   * per call; past that the walk stops where it got to (persisted) and
   * fails, so a later refresh continues from there.
   * @returns {Promise<object>} the newest trusted document, of seq `target`
   */
  reach (target) { return this._serial(() => this._walk(target)) }

  /**
   * Ask every mirror for the document after the newest trusted one, and on
   * while one of them serves the next (at most MAX_TRUST_STEPS). A 404 is
   * the honest "there is none yet", not a fault; a document that does not
   * follow is a fault of the mirror that served it. Concurrent calls share
   * one probe.
   * @returns {Promise<object|null>} the newest trusted document
   */
  probe () {
    this._probing ??= this._probe().finally(() => { this._probing = null })
    return this._probing
  }

  async _probe () {
    await this.load()
    for (let step = 0; step < MAX_TRUST_STEPS; step++) {
      const n = (this.doc?.seq ?? 0) + 1
      const prev = this.doc
      const results = await this.mirrors.fetchAll(`trust/${n}.json`, MAX_TRUST_DOC, bytes => decodeStep(bytes, n, prev, this.anchor), { absentOk: true, until: r => r.value !== undefined })
      const found = results.find(r => r.value !== undefined)
      if (!found) return this.doc
      // a walk (reach) may have got there meanwhile: each step follows the newest, once
      await this._serial(async () => { if (this.doc === prev) await this._persist(found.value) })
    }
    return this.doc
  }

  _serial (run) {
    const p = this._walking.then(run, run)
    this._walking = p.catch(() => {})
    return p
  }

  async _walk (target) {
    const from = this.doc?.seq ?? 0
    let cur = this.doc
    try {
      for (let n = from + 1; n <= Math.min(target, from + MAX_TRUST_STEPS); n++) cur = await fetchTrustStep(this.mirrors, n, cur, this.anchor)
    } finally {
      if (cur !== this.doc) await this._persist(cur)
    }
    if (cur === null || cur.seq < target) throw new BadFormatError(`fsinfo.json names trust document ${target}, more than ${MAX_TRUST_STEPS} documents past ${from}: the next refresh walks on`)
    return cur
  }

  async _persist (doc) {
    const hash = trustHash(doc)
    await this.state.update(this.id, seen => {
      // a version-1 record gives way: this tree now speaks version 2 (verify.js checkRollback)
      const base = seen?.v === 2 ? seen : { v: 2, trust: null, release: null, timestamp: null }
      if (base.trust && base.trust.seq >= doc.seq) {
        if (base.trust.seq === doc.seq && base.trust.hash !== hash) throw new ForkError(`two trust documents numbered ${doc.seq}, both signed by the root keys`)
        return null // another process walked as far or further
      }
      return { ...base, trust: { seq: doc.seq, hash }, trustDoc: doc.text }
    })
    this.doc = doc
  }
}

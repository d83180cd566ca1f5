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
import { BadFormatError, StateError } from '../errors.js'
import { decodeUtf8, utf8 } from '../format/bytes.js'
import { decodeTrustDoc, MAX_TRUST_DOC } from '../format/trust-doc.js'
import { acceptTrustStep, trustHash, sameTrustDocument, MAX_TRUST_STEPS } from './roles.js'

/**
 * Where trust documents come from: the mirrors, a published folder's own
 * trust/ (lib/published/signed-roots.js folderTrustSource), or one then the
 * other. get(n, accept) resolves to trust/<n>.json as `accept(bytes)` returns
 * it (accept throws a typed error for a document it refuses), or to null
 * when the source has no document n.
 * @typedef {{ get (n: number, accept: (bytes: Uint8Array|string) => object): Promise<object|null> }} TrustSource
 */

/**
 * The mirrors in turn (docs/TRUST.md rule 4: a mirror whose document is
 * refused is a fault and the next one is asked). For a document something
 * signed names, so having none is a fault too (ROTREE_ALL_MIRRORS_FAILED).
 * @param {import('../fetch/mirrors.js').Mirrors} mirrors @returns {TrustSource}
 */
export function mirrorTrustSource (mirrors) {
  return { get: (n, accept) => mirrors.fetch(`trust/${n}.json`, MAX_TRUST_DOC, accept) }
}

/**
 * Every mirror at once, for the document after the newest trusted one
 * (FORMAT.md §12.9 step 4): a 404 is the honest "there is none yet", not a
 * fault; the first answer accepted wins; none: null.
 * @param {import('../fetch/mirrors.js').Mirrors} mirrors @returns {TrustSource}
 */
export function probeTrustSource (mirrors) {
  return {
    async get (n, accept) {
      const results = await mirrors.fetchAll(`trust/${n}.json`, MAX_TRUST_DOC, accept, { absentOk: true, until: r => r.value !== undefined })
      return results.find(r => r.value !== undefined)?.value ?? null
    }
  }
}

/**
 * Each document from the first source that has one it accepts (a folder's
 * own copy, then the mirrors): a damaged or missing copy is fetched, one
 * after a repaired hole is kept. The document carries `source`, the index of
 * the source that gave it. The last source's refusal is the error.
 * @param {...TrustSource} sources @returns {TrustSource}
 */
export function firstTrustSource (...sources) {
  return {
    async get (n, accept) {
      for (let i = 0; i < sources.length; i++) {
        let doc
        try {
          doc = await sources[i].get(n, accept)
        } catch (err) {
          if (i === sources.length - 1 || !isRotreeError(err)) throw err
          continue
        }
        if (doc !== null) return Object.assign(doc, { source: i })
      }
      return null
    }
  }
}

const isRotreeError = err => typeof err?.code === 'string' && err.code.startsWith('ROTREE_')

/**
 * docs/TRUST.md rule 10, one document at a time: from `from` (the newest
 * trusted document, or null for the anchor) on, each trust/<n>.json from
 * `source` accepted after the one before (acceptTrustStep), up to document
 * `to` or while the source has a next one, at most `maxSteps`. `onStep(doc)`
 * runs for each before the next is asked for (persist it, write it to disk).
 * Every reader and tool that walks a chain walks it here: the reader's root
 * store (TrustChain), history, pull, fsck and the publisher's folder.
 * @param {TrustSource} source
 * @param {{ anchor: object, from?: object|null, to?: number, maxSteps?: number, onStep?: (doc: object) => unknown }} o
 * @returns {Promise<object|null>} the newest document reached (`from` when none was)
 */
export async function walkChain (source, { anchor, from = null, to = Infinity, maxSteps = Infinity, onStep }) {
  let cur = from
  const first = (from?.seq ?? 0) + 1
  for (let n = first; n <= to && n - first < maxSteps; n++) {
    const prev = cur
    const doc = await source.get(n, bytes => decodeStep(bytes, n, prev, anchor))
    if (doc === null) break
    if (onStep) await onStep(doc)
    cur = doc
  }
  return cur
}

/** trust/<n>.json's bytes as the document accepted after `prev` (rule 10), with its `bytes` and JSON `text`. */
function decodeStep (bytes, n, prev, anchor) {
  const doc = decodeTrustDoc(bytes)
  if (doc.seq !== n) throw new BadFormatError(`trust/${n}.json holds trust document ${doc.seq}`)
  acceptTrustStep(prev, doc, anchor)
  doc.text = typeof bytes === 'string' ? bytes : decodeUtf8(bytes)
  doc.bytes = typeof bytes === 'string' ? utf8.encode(bytes) : bytes
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
    await walkChain(probeTrustSource(this.mirrors), {
      anchor: this.anchor,
      from: this.doc,
      maxSteps: MAX_TRUST_STEPS,
      // a walk to a named document (reach) may have got there meanwhile: its documents stand
      onStep: doc => this._serial(async () => { if ((this.doc?.seq ?? 0) === doc.seq - 1) await this._persist(doc) })
    })
    return this.doc
  }

  _serial (run) {
    const p = this._walking.then(run, run)
    this._walking = p.catch(() => {})
    return p
  }

  async _walk (target) {
    const from = this.doc
    let last = from
    try {
      await walkChain(mirrorTrustSource(this.mirrors), { anchor: this.anchor, from, to: target, maxSteps: MAX_TRUST_STEPS, onStep: doc => { last = doc } })
    } finally {
      // one write for the whole walk, also when a later step failed: what was accepted sticks
      if (last !== from) await this._persist(last)
    }
    if (last === null || last.seq < target) throw new BadFormatError(`fsinfo.json names trust document ${target}, more than ${MAX_TRUST_STEPS} documents past ${from?.seq ?? 0}: the next refresh walks on`)
    return last
  }

  async _persist (doc) {
    const hash = trustHash(doc)
    await this.state.update(this.id, seen => {
      // a version-1 record gives way: this tree now speaks version 2 (verify.js checkRollback)
      const base = seen?.v === 2 ? seen : { v: 2, trust: null, release: null, timestamp: null }
      if (base.trust && base.trust.seq >= doc.seq) {
        sameTrustDocument(base.trust, { seq: doc.seq, hash })
        return null // another process walked as far or further
      }
      return { ...base, trust: { seq: doc.seq, hash }, trustDoc: doc.text }
    })
    this.doc = doc
  }
}

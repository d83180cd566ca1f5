// The root store: which signed root a tree reads, and nothing else. It asks
// every mirror for fsinfo.json, accepts answers only through verify.js
// (verifyFsinfo: docs/TRUST.md rules 1 and 2), picks the newest across
// mirrors and reports forks and stale mirrors (rankRoots, staleMirrors:
// docs/TRUST.md rules 2 and 4), checks the choice against the persisted
// rollback state (state.js: docs/TRUST.md rule 2), and says whether the
// accepted root is still fresh by the tree's own clock (isExpired: docs/TRUST.md rule 2).
//
// Late answers. refresh() returns once each mirror still out has had the
// time its distance explains (Mirrors.fetchAll: its usual request time, or
// its handshake's round trip), so one stalled mirror does not hold every
// open() for the full timeout, and a far honest mirror is waited for; a
// mirror slower than its distance explains can still lose to a fast stale
// one. The store keeps listening: an answer that arrives later, until that
// mirror's own timeout, is verified and ranked like any other, and a newer
// root is adopted when it comes. Each read pins the record it started with,
// so adopting one never mixes roots within a read (docs/TRUST.md rule 6).
//
// Format version 2 (FORMAT.md §12) is dispatched on fsinfo.json's version:
// the name is checked first (docs/TRUST.md rule 12), then the trust chain is
// walked to the document the answer names (trust-chain.js, rule 10), then
// the answer is judged by trust/roles.js (rules 11, 14 and 2) and its
// sequences by advanceState (rule 13), persisted per address id (anchor and
// name). Version 1 takes the path it always took.
import { unanimousOrAllFailed, ThresholdError, MIRROR_FAULT_CODES, NoAccessError, SplitViewError } from '../errors.js'
import { verifyFsinfo, checkFreshness, isExpired, rankRoots, hasFork, staleMirrors, compareRoots } from './verify.js'
import { fsinfoVersion, decodeFsinfoV2, MAX_FSINFO_V2 } from '../format/fsinfo-v2.js'
import { refOfReleaseRoot } from '../format/ref.js'
import { checkAddress, checkNotRetired, verifyFsinfoV2, advanceState, anchorText } from './roles.js'
import { TrustChain } from './trust-chain.js'

// how a mirror failed to deliver, as against what the bytes it delivered say
const TRANSPORT_CODES = new Set(['ROTREE_MIRROR_HTTP', 'ROTREE_MIRROR_NETWORK', 'ROTREE_TIMEOUT', 'ROTREE_TRUNCATED', 'ROTREE_TOO_LARGE', 'ROTREE_ABORTED'])

export class RootStore {
  /**
   * @param {object} o
   * @param {string|null} o.publicKey from the address (docs/TRUST.md rule 1); null for a trust-document anchor
   * @param {{ kind: 'key', key: string } | { kind: 'trust', hash: string }} [o.anchor] from the address (default: the key)
   * @param {string} [o.name=''] the tree's name, from the address (docs/TRUST.md rule 12)
   * @param {string} [o.id] anchor and name: the key of the persisted state (default: the key)
   * @param {import('../fetch/mirrors.js').Mirrors} o.mirrors
   * @param {import('./state.js').SeqStore} o.state
   * @param {() => number} o.now the tree's clock
   * @param {number} o.skewMs @param {number} o.graceMs @param {number} o.settleMs
   * @param {(rootRef: object) => void} [o.prefetch] told the root page's ref of each
   *   answer that verified and is newer than the accepted root, before the
   *   rollback state and the other mirrors are consulted (see _refresh)
   * @param {(info: object) => Promise<{ ref: object, mtime: number }>} [o.openPrivate] a private
   *   tree's root, opened with the reader's identity (access/open-root.js); without it a private
   *   tree is ROTREE_NO_ACCESS
   * @param {boolean} [o.keyless=false] a reader that copies blobs raw (pull): a private tree's root
   *   is not opened (its record's root stays null), and not being one of its readers is no error
   * @param {Function|null} [o.logProof=null] an offline reader's check of a log proof it holds, in
   *   place of fetching log/ when the trust document names witnesses: (record, trust, nowMs, skewMs) => checkpoint
   */
  constructor ({ publicKey, anchor = { kind: 'key', key: publicKey }, name = '', id = publicKey, mirrors, state, now, skewMs, graceMs, settleMs, prefetch, openPrivate, keyless = false, logProof = null }) {
    this.logProof = logProof
    this.publicKey = publicKey
    this.anchor = anchor
    this.name = name
    this.id = id
    this.trust = new TrustChain({ anchor, id, mirrors, state })
    this.mirrors = mirrors
    this.state = state
    this.now = now
    this.skewMs = skewMs
    this.graceMs = graceMs
    this.settleMs = settleMs
    this.prefetch = prefetch
    this.openPrivate = openPrivate
    this.keyless = keyless
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
    // the persisted trust document (version 2), read once per round and from
    // the start: the database opens while fsinfo.json is on its way, not
    // after it. Awaited only by a version-2 answer (_verifyV2), which fails
    // with its error (a damaged state). A tree whose accepted root is version
    // 1 reads it only if a version-2 answer comes.
    const round = { loaded: this.record?.version === 1 ? null : this.trust.load() }
    round.loaded?.catch(() => {})
    // TUF's "update the root first" (FORMAT.md §12.9 step 4), beside the
    // fsinfo.json requests: trust/<known + 1>.json from every mirror
    const t0 = performance.now()
    const probe = this.trust.probe()
    probe.catch(() => {})
    const prefetched = new Set() // root pages asked for this round
    // mirrors still answering once the window closed: if no answer in hand is
    // accepted, theirs are waited for (a fast stale mirror must not win by speed)
    let outstanding = this.mirrors.list.length
    let allIn
    const allInP = new Promise(resolve => { allIn = resolve })
    const lateErrors = []
    const lateFault = (mirror, err) => { lateErrors.push({ mirror, code: err.code, message: err.message, err }) }
    const onResult = r => {
      if (settled && r.error) lateErrors.push(r.error)
      if (--outstanding === 0) allIn()
    }
    // Every good answer goes through here, including those that arrive after
    // the settle window closed (Mirrors.fetchAll keeps the other requests
    // running until their own timeout and still calls `check` for them).
    const check = async (bytes, mirror) => {
      const value = fsinfoVersion(bytes) === 2
        ? await this._verifyV2(bytes, now, round, mirror)
        : verifyFsinfo(bytes, { publicKey: this.publicKey, name: this.name, now, skewMs: this.skewMs, graceMs: this.graceMs })
      // The root page is asked for as soon as a root verifies, while the
      // other mirrors' answers and the rollback state are still to come: its
      // round trip overlaps them and the caller's first lookup. Only a
      // request: a blob is checked against its own handle whatever named it
      // (docs/TRUST.md rule 3), and nothing reads the page but under a root
      // that was accepted. A root that loses costs one request.
      if (this.prefetch && value.root !== null && !prefetched.has(value.root.hash) && (this.record === null || compareRoots(value, this.record) > 0)) {
        prefetched.add(value.root.hash)
        this.prefetch(value.root)
      }
      if (settled) queueMicrotask(() => this._late({ mirror, value }, lateFault))
      else early.push({ mirror, value })
      return value
    }
    let results
    try {
      // the cap of the larger version: the version is known only once the bytes are in
      results = await this.mirrors.fetchAll('fsinfo.json', MAX_FSINFO_V2, check, { settleMs: this.settleMs, onResult })
    } catch (err) {
      // docs/TRUST.md rule 14: a retired tree is not read on, not even from the root accepted before
      if (err.code === 'ROTREE_RETIRED') this.record = null
      throw err
    } finally {
      settled = true
    }
    // Judge the answers under the newest document any mirror serves: wait for
    // the probe, but no longer again than the fsinfo.json round took (a mirror
    // that stalls on trust/ has stalled on fsinfo.json too, and the next
    // refresh asks again). A document it found is persisted, so the rollback
    // state refuses an answer under an older one (advanceState, rule 13).
    await this._probeDone(probe, performance.now() - t0)
    const errors = results.filter(r => r.error).map(r => r.error)
    const answers = results.filter(r => r.value)
    const adopted = this._adopt(answers, (mirror, err) => errors.push({ mirror, code: err.code, message: err.message, err }))
    // verified in the instant between fetchAll settling and this line: late too (after the adoption above)
    for (const a of early) if (!answers.some(r => r.value === a.value)) queueMicrotask(() => this._late(a, lateFault))
    let chosen = null
    let refused = null // the newest answer in hand is a root this reader may not open (a private tree)
    try { chosen = await adopted } catch (err) {
      if (err.code !== 'ROTREE_NO_ACCESS') throw err
      refused = err
    }
    if (chosen !== null) return chosen.changed
    // Nothing in hand was accepted (refused, behind what this reader saw, not
    // this reader's): a mirror still answering may hold the newer root. Its
    // answer goes through _late as any late one; each has its own deadline.
    if (outstanding > 0) {
      const before = this.record
      const lateBefore = this.lateError
      await allInP
      await this._adopting
      if (this.record !== null && this.record !== before) return true
      if (this.lateError !== lateBefore && this.lateError?.code === 'ROTREE_NO_ACCESS') refused ??= new NoAccessError(this.lateError.message)
    }
    if (refused) throw refused
    // the accepted root, if any, stays; a verdict every mirror agrees on (a wrong key, an expired tree) is reported as itself
    throw unanimousOrAllFailed('fsinfo.json', [...errors, ...lateErrors])
  }

  /** Wait for the trust probe, at most `ms` more; a newer document it found retires or outdates answers. */
  async _probeDone (probe, ms) {
    let timer
    try {
      await Promise.race([probe, new Promise(resolve => { timer = setTimeout(resolve, Math.max(50, ms)) })])
    } catch (err) {
      // the persisted state is damaged, or two documents share a number: not a mirror's fault alone
      if (!MIRROR_FAULT_CODES.has(err.code)) throw err
    } finally {
      clearTimeout(timer)
    }
    try {
      checkNotRetired(this.trust.doc) // docs/TRUST.md rule 14
    } catch (err) {
      this.record = null
      throw err
    }
  }

  /**
   * A version-2 fsinfo.json (FORMAT.md §12.4), verified in the order of
   * docs/TRUST.md: its name (rule 12), the trust chain up to the document it
   * names (rule 10), then signatures, retirement and times (rules 11, 14, 2).
   * @returns {Promise<object>} the root record's fields (rootRecordV2)
   */
  async _verifyV2 (bytes, now, round, mirror) {
    const info = decodeFsinfoV2(bytes)
    checkAddress(info, this.anchor, this.name)
    await (round.loaded ??= this.trust.load())
    if (info.trust !== null && info.trust.seq > (this.trust.doc?.seq ?? 0)) {
      try {
        await this.trust.reach(info.trust.seq)
      } catch (err) {
        if (err.code !== 'ROTREE_ALL_MIRRORS_FAILED') throw err
        // every mirror served the same document and it failed the same rule:
        // that verdict (another family's document, a bad key, too few
        // signatures) says more than "no chain"
        const codes = new Set(err.errors.map(e => e.code))
        if (codes.size === 1 && !TRANSPORT_CODES.has(err.cause?.code) && err.cause?.code === err.errors[0].code) throw err.cause
        // no mirror serves a chain from the address to the document this
        // answer names, so its signatures cannot be counted: a fault of this
        // answer (docs/TRUST.md rule 4), not a reason to stop reading the
        // other mirrors' answers
        throw new ThresholdError(`fsinfo.json names trust document ${info.trust.seq}, which no mirror serves as a chain this reader accepts: ${err.message}`, { cause: err })
      }
    }
    const trust = this.trust.doc
    const { roles, signers } = verifyFsinfoV2(info, { anchor: this.anchor, name: this.name, trust, now, skewMs: this.skewMs, graceMs: this.graceMs, checkFreshness })
    const record = rootRecordV2(info, { roles, signers, trust, key: this.publicKey, anchor: anchorText(this.anchor), raw: bytes })
    if (trust?.witnesses) record.log = await this._witnessed(record, trust, mirror, now, round)
    if (info.access === null || this.keyless) return record
    // a private tree (FORMAT.md §12.8): an answer this reader may not read is still a valid,
    // signed root, ranked like any other; if it is the newest, refresh() says so (_adopt)
    try {
      return await openPrivateRecord(record, this.openPrivate)
    } catch (err) {
      if (err.code !== 'ROTREE_NO_ACCESS') throw err
      return { ...record, noAccess: err }
    }
  }

  /**
   * docs/TRUST.md rule 21 (FORMAT.md §13.1): the trust document in force
   * names witnesses, so the answer must be in the log its mirror serves,
   * cosigned by enough of them, and that log must extend the checkpoint
   * this reader kept (persisted, or newer in memory). A failure is that
   * mirror's fault; every mirror failing alike is reported as itself. The
   * log code (trust/witnessed.js, tlog/) is loaded by the first such tree.
   * @returns {Promise<{ size: number, hash: string }>} the checkpoint to keep
   */
  async _witnessed (record, trust, mirror, now, round) {
    if (this.logProof !== null) return this.logProof(record, trust, now, this.skewMs)
    round.kept ??= this.state.get(this.id).then(r => r?.v === 2 ? r.log ?? null : null)
    const saved = await round.kept
    const mem = this.record?.log
    const kept = mem && (!saved || mem.size > saved.size) ? mem : saved
    const { checkWitnessed } = await import('./witnessed.js')
    const fetch = (path, cap, check) => this.mirrors.fetchFrom(mirror, path, cap, check)
    return checkWitnessed(fetch, { record, trust, anchor: anchorText(this.anchor), name: this.name, kept, nowMs: now, skewMs: this.skewMs })
  }

  /**
   * An answer that arrived after fetchAll's window closed: adopted when newer, reported when behind.
   * @param {(mirror: string, err: Error) => void} [onFault] told of a fault found here (a refresh still waiting collects them)
   */
  _late (answer, onFault = () => {}) {
    const cur = this.record
    if (cur !== null && compareRoots(answer.value, cur) <= 0) {
      for (const s of staleMirrors([answer], { mirror: cur.mirror, value: cur })) { this._fault(s.mirror, s.err); onFault(s.mirror, s.err) }
      return
    }
    this._adopt([answer], onFault).then(r => {
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
      const seen = hasFork(answers) ? await this.state.get(this.id) : null
      const { candidates, forks } = rankRoots(answers, seen)
      for (const f of forks) fault(f.mirror, f.err)
      for (const chosen of candidates) {
        const { mirror, value } = chosen
        try {
          // rollback / fork against what this reader saw
          if (value.version === 2) await this.state.update(this.id, seen => nextStateV2(seen, value))
          else await this.state.accept(this.id, value)
        } catch (err) {
          if (err.code !== 'ROTREE_ROLLBACK' && err.code !== 'ROTREE_FORK') throw err
          fault(mirror, err) // behind what this reader saw: reported (Mirrors.fault); a fork: benched
          continue
        }
        for (const s of staleMirrors(candidates, chosen)) fault(s.mirror, s.err)
        if (value.noAccess) {
          // the newest root is one this reader's identity does not open (a private tree it was
          // removed from, or never given): no older root is read on in its place
          this.record = null
          throw value.noAccess
        }
        const cur = this.record
        const changed = cur === null || rootKey(cur) !== rootKey(value)
        const order = cur === null ? 1 : compareRoots(value, cur)
        if (order > 0 || (order === 0 && value.expiresMs > cur.expiresMs)) {
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

/**
 * The root record of a verified version-2 fsinfo.json: the fields a version-1
 * record has (seq, issued, expires, root, rootMtime, raw; root is the tree's
 * root ref with its codec, format/ref.js), and what version 2 adds. It is
 * usable until the first of fsinfo.json, its release and its trust document
 * expires (untilMs, verify.js isExpired).
 */
export function rootRecordV2 (info, { roles, signers, trust, key, anchor, raw }) {
  return {
    version: 2,
    key,
    anchor,
    name: info.name,
    seq: info.seq,
    issued: info.issued,
    expires: info.expires,
    issuedMs: info.issuedMs,
    expiresMs: info.expiresMs,
    untilMs: Math.min(info.expiresMs, info.release.expiresMs, trust ? trust.expiresMs : Infinity),
    // a private release names its root by a commitment: filled in by openPrivateRecord
    root: info.access === null ? refOfReleaseRoot(info.release.root) : null,
    rootMtime: info.access === null ? info.release.root.mtime : null,
    private: info.access !== null,
    release: { seq: info.release.seq, expires: info.release.expires, expiresMs: info.release.expiresMs, hash: info.releaseHash },
    trust: info.trust, // { seq, hash } of the document it is signed under, or null (a single-key tree)
    trustText: trust ? trust.text : undefined,
    raw,
    info,
    roles,
    signers // the keys that counted, by role (advanceState keeps a sequence while one of them holds its role)
  }
}

// which root a record reads: its root page, or (a private root not opened, a keyless reader) its release
const rootKey = r => r.root?.hash ?? r.release.hash

/**
 * A private tree's root record with its root filled in (FORMAT.md §12.8): the
 * root ref and mtime the keyring gives this reader, checked against the
 * release's commitment (access/open-root.js). ROTREE_NO_ACCESS without an opener.
 * @param {object} record rootRecordV2 of an fsinfo.json with `access` @param {Function} [openPrivate]
 */
export async function openPrivateRecord (record, openPrivate) {
  if (!openPrivate) throw new NoAccessError('the tree is private and this reader was given no identity to read it with')
  const { ref, mtime } = await openPrivate(record.info)
  return { ...record, root: ref, rootMtime: mtime }
}

/** The persisted state after accepting `value` (docs/TRUST.md rule 13); null: nothing new to write. */
function nextStateV2 (seen, value) {
  const prev = seen?.v === 2 ? seen : null // a version-1 record gives way to version 2 (never the reverse: verify.js checkRollback)
  const { state, newer } = advanceState(prev, value.info, value.roles, value.signers)
  const log = newerLog(prev?.log, value.log)
  if (!newer && prev !== null && log === prev.log) return null
  const next = state.trust ? { ...state, trustDoc: value.trustText } : state
  return log ? { ...next, log } : next
}

/**
 * The log checkpoint to keep (FORMAT.md §13.1): the larger. The answer was
 * proved consistent with the one kept when it was verified; one of the same
 * size with another hash (kept meanwhile by another reader of this state) is a fork.
 */
function newerLog (kept, log) {
  if (!log) return kept
  if (!kept || log.size > kept.size) return log
  if (log.size === kept.size && log.hash !== kept.hash) throw new SplitViewError(`log/checkpoint of size ${log.size} has another root hash than the one of that size this reader accepted: a fork of the log`)
  return kept
}

/** The public shape of an accepted record. */
export function infoOf (r) {
  if (!r) return r
  const info = { key: r.key, seq: r.seq, issued: r.issued, expires: r.expires, root: r.root?.hash ?? null, rootSize: r.root ? r.root.storedSize ?? r.root.size : null, rootMtime: r.rootMtime, mirror: r.mirror }
  if (r.version !== 2) return info
  const v2 = { version: 2, anchor: r.anchor, name: r.name, ...info, releaseSeq: r.release.seq, releaseExpires: r.release.expires, trustSeq: r.trust?.seq ?? null }
  return r.private ? { ...v2, private: true, epoch: r.info.access.epoch } : v2
}

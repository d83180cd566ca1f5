// The trust rules of format version 2 (docs/TRUST.md rules 10–14): roles,
// thresholds, rotation, named trees. Pure functions over decoded documents
// (client-js/src/format/trust-doc.js, fsinfo-v2.js) and the persisted state;
// no I/O. The root store fetches, this module decides.
//
// The shape follows TUF's client workflow (root rotation, then timestamp,
// then the release it names), on a file system's one signed entry point.
import {
  BadAddressError, ThresholdError, WrongNameError, WrongKeyError, RetiredError, RollbackError, ForkError, ExpiredError, BadFormatError
} from '../errors.js'
import { verifySignature } from '#ed25519'
import { NAME_RE, HEX64 } from '../format/signed-doc.js'
import { weakKeyReason } from '../format/public-key.js'
import { sha256HexSync } from '#sha256'
import { isExpired } from './verify.js'

/** How many trust documents one refresh may walk (docs/TRUST.md rule 10). */
export const MAX_TRUST_STEPS = 64

/**
 * FORMAT.md §12.5: the fragment of an address, `<anchor>[:<name>]`, where the
 * anchor is an ed25519 public key (64 hex: the key signs alone, or signs the
 * family's first trust document) or `t` + the SHA-256 of trust document 1's
 * message (a k-of-n root certified from the start). The anchor and the name
 * come from the user, never from a mirror (docs/TRUST.md rules 1 and 12).
 * @param {string} fragment
 * @returns {{ anchor: { kind: 'key', key: string } | { kind: 'trust', hash: string }, name: string, id: string }}
 *   id: the anchor and name as one string, the key of the persisted state
 */
export function parseFragment (fragment) {
  const s = String(fragment).toLowerCase()
  const colon = s.indexOf(':')
  const a = colon < 0 ? s : s.slice(0, colon)
  const name = colon < 0 ? '' : s.slice(colon + 1)
  if (!NAME_RE.test(name) || (colon >= 0 && name === '')) throw new BadAddressError(`tree name ${JSON.stringify(name)} is not [a-z0-9][a-z0-9._-]* (at most 64 characters)`)
  let anchor
  if (HEX64.test(a)) {
    // FORMAT.md §1.4: a small-order key would let anyone publish at this address
    const weak = weakKeyReason(a)
    if (weak) throw new BadAddressError(`the key in the address ${weak}: it is not a key anyone should publish under`)
    anchor = { kind: 'key', key: a }
  } else if (a.length === 65 && a[0] === 't' && HEX64.test(a.slice(1))) anchor = { kind: 'trust', hash: a.slice(1) }
  else throw new BadAddressError(`tree address must end in #<64-hex key> or #t<64-hex trust hash>, optionally :<name>; got ${JSON.stringify(fragment)}`)
  return { anchor, name, id: colon < 0 ? a : `${a}:${name}` }
}

/** The anchor as an address spells it (FORMAT.md §12.5): the key, or 't' and the trust hash. */
export function anchorText (anchor) { return anchor.kind === 'key' ? anchor.key : 't' + anchor.hash }

/** The anchor of a family whose first trust document is `doc1`: 't' + SHA-256 of its message. */
export function trustAnchorOf (doc1) { return 't' + sha256HexSync(doc1.message) }

/** SHA-256 of a trust document's message: what fsinfo.json's `trust.hash` names. */
export function trustHash (doc) { return sha256HexSync(doc.message) }

/**
 * The distinct keys of `role` with a valid signature over `message`. Each key
 * counts once however many entries carry it; a bad signature beside good ones
 * does not void them (docs/TRUST.md rule 11).
 * @param {Uint8Array} message @param {{ key: string, sig: string }[]} sigs
 * @param {{ keys: string[] }} role
 */
export function validSigners (message, sigs, role) {
  const allowed = new Set(role.keys)
  const ok = new Set()
  for (const { key, sig } of sigs) {
    if (!allowed.has(key) || ok.has(key)) continue
    if (verifySignature(sig, message, key)) ok.add(key)
  }
  return ok
}

/**
 * Throw ThresholdError unless at least role.threshold distinct role keys
 * signed; returns those keys (validSigners).
 * @returns {Set<string>}
 */
export function requireThreshold (message, sigs, role, what) {
  const ok = validSigners(message, sigs, role)
  const n = ok.size
  if (n < role.threshold) {
    throw new ThresholdError(`${what}: ${n} valid signature${n === 1 ? '' : 's'} from distinct keys of its role, ${role.threshold} required`, { details: { valid: n, threshold: role.threshold } })
  }
  return ok
}

/**
 * docs/TRUST.md rule 10: accept trust document `next` after `prev` (null: `next`
 * must be document 1 and certified by the address's anchor).
 * @param {object|null} prev decoded, already trusted
 * @param {object} next decoded
 * @param {{ kind: 'key', key: string } | { kind: 'trust', hash: string }} anchor
 */
export function acceptTrustStep (prev, next, anchor) {
  if (prev === null) {
    if (next.seq !== 1) throw new BadFormatError(`the first trust document must have seq 1, not ${next.seq}`)
    if (anchor.kind === 'trust') {
      if (sha256HexSync(next.message) !== anchor.hash) throw new ThresholdError('trust document 1 is not the one the address certifies (its hash differs)')
    } else {
      // a single key adopting roles: its first trust document is signed by it
      requireThreshold(next.message, next.signatures, { threshold: 1, keys: [anchor.key] }, 'trust document 1 (the address key)')
    }
  } else {
    if (next.seq !== prev.seq + 1) throw new BadFormatError(`trust document ${next.seq} does not follow ${prev.seq}`)
    // FORMAT.md §12.2: each document names the one before it, so families
    // that share root keys cannot splice each other's documents in
    if (next.prev !== trustHash(prev)) throw new WrongKeyError(`trust document ${next.seq} belongs to another family: it does not name document ${prev.seq} of this one as its predecessor`)
    requireThreshold(next.message, next.signatures, prev.roles.root, `trust document ${next.seq} (root keys of ${prev.seq})`)
  }
  requireThreshold(next.message, next.signatures, next.roles.root, `trust document ${next.seq} (its own root keys)`)
  return next
}

/**
 * Walk from the trusted document (or the anchor) through `docs` (consecutive,
 * decoded, oldest first), each step accepted by acceptTrustStep. Returns the
 * newest trusted document (null when there is none and none was given).
 */
export function walkTrust (trusted, docs, anchor) {
  if (docs.length > MAX_TRUST_STEPS) throw new BadFormatError(`more than ${MAX_TRUST_STEPS} trust documents in one refresh`)
  let cur = trusted
  for (const d of docs) cur = acceptTrustStep(cur, d, anchor)
  return cur
}

/** The roles of a tree that never adopted a trust document: its key holds every role alone. */
export function singleKeyRoles (key) {
  const r = { threshold: 1, keys: [key] }
  return { root: r, release: r, timestamp: r }
}

/**
 * docs/TRUST.md rules 1 and 12: the family (its anchor) and the tree's name
 * come from the address. Both fsinfo.json and its release sign them
 * (FORMAT.md §12.3, §12.4), so a timestamp or release key two families
 * share cannot carry a release from one to the other. Checked before
 * anything is fetched for an fsinfo.json.
 * @param {object} info decodeFsinfoV2() @param {object} anchor parseFragment()'s @param {string} name
 */
export function checkAddress (info, anchor, name) {
  const a = anchorText(anchor)
  if (info.anchor !== a) throw new WrongKeyError(`fsinfo.json is for the tree family #${info.anchor}, not the address's #${a}`)
  if (info.release.anchor !== a) throw new WrongKeyError(`the release is for the tree family #${info.release.anchor}, not the address's #${a}`)
  if (info.name !== name) throw new WrongNameError(`fsinfo.json is for tree ${JSON.stringify(info.name)}, not ${JSON.stringify(name)}`)
  if (info.release.name !== name) throw new WrongNameError(`the release is for tree ${JSON.stringify(info.release.name)}, not ${JSON.stringify(name)}`)
}

/**
 * docs/TRUST.md rule 17: a root signed by the address key alone (a
 * version-1 fsinfo.json, or a version-2 one under no trust document) is
 * believed only while that key still holds a role in the newest trust
 * document this reader knows. A tree hands its roles on from its key,
 * and drops it, because the key was lost or stolen: from then on such an
 * entry could be the thief's.
 * @param {object} anchor @param {object|null} newest the newest trusted trust document
 */
export function checkLoneKey (anchor, newest, what) {
  if (newest === null || anchor.kind !== 'key') return
  if (ROLE_NAMES.some(r => newest.roles[r].keys.includes(anchor.key))) return
  throw new ThresholdError(`${what} is signed by the address key alone, which trust document ${newest.seq} no longer lists in any role: a key rotated away vouches for nothing`)
}

const ROLE_NAMES = ['root', 'release', 'timestamp']

/**
 * docs/TRUST.md rule 13: two trust documents with one number, each signed as
 * a step of the chain requires, mean the root keys signed both (a fork).
 * @param {{ seq: number, hash: string }|null} known what this reader or folder holds
 * @param {{ seq: number, hash: string }} other
 * @returns {boolean} whether `other` is the very document `known` is
 */
export function sameTrustDocument (known, other) {
  if (!known || known.seq !== other.seq) return false
  if (known.hash !== other.hash) throw new ForkError(`two trust documents numbered ${other.seq}, both signed by the root keys`)
  return true
}

/**
 * The trust document `named` ({ seq, hash }: what an fsinfo.json names) is
 * the one the chain reached (`trust`, decoded): the same number, and the
 * same document (sameTrustDocument: another one is a fork).
 */
export function checkNamedTrust (trust, named, what) {
  if (trust === null || trust.seq !== named.seq) throw new BadFormatError(`${what} names trust document ${named.seq}, which is not the one the chain verified`)
  sameTrustDocument({ seq: trust.seq, hash: trustHash(trust) }, named)
}

/** docs/TRUST.md rule 14: a family whose newest trust document has no release keys has retired its trees. */
export function checkNotRetired (trust) {
  if (trust != null && trust.roles.release.threshold === 0) throw new RetiredError(`trust document ${trust.seq} retires this tree (no release keys)`)
}

/**
 * Is a version-2 fsinfo.json, with its release, for this name (rule 12),
 * under the newest trust document this reader trusts, which does not retire
 * the tree (rule 14), signed as that document (or the single key) requires
 * (rule 11), and fresh (rule 2)? The sequence checks are advanceState()
 * (rule 13).
 *
 * Retirement is checked before anything the fsinfo.json says: a reader that
 * has seen a retiring trust document refuses the tree whatever a mirror
 * serves (an older fsinfo.json under an older document included).
 * @param {object} info decodeFsinfoV2()
 * @param {{ anchor: object, name: string, trust: object|null, now: number, skewMs: number, graceMs: number, checkFreshness: Function }} o
 *   trust: the newest trusted document (walkTrust), null for a single-key tree
 */
export function verifyFsinfoV2 (info, { anchor, name, trust, now, skewMs, graceMs, checkFreshness }) {
  checkAddress(info, anchor, name)
  checkNotRetired(trust)
  let roles
  if (info.trust === null) {
    // rule 13: once a tree adopted roles, the lone address key is no signer any more
    if (trust !== null) throw new RollbackError('fsinfo.json is signed by the single address key, but this tree adopted a trust document: the key is retired as a lone signer')
    if (anchor.kind !== 'key') throw new ThresholdError('fsinfo.json names no trust document, but the address certifies one')
    roles = singleKeyRoles(anchor.key)
  } else {
    // rule 13: an fsinfo.json under an older document than this reader trusts is behind
    if (trust !== null && info.trust.seq < trust.seq) throw new RollbackError(`fsinfo.json is under trust document ${info.trust.seq}, older than ${trust.seq} already accepted`)
    checkNamedTrust(trust, info.trust, 'fsinfo.json')
    roles = trust.roles
    if (isExpired(trust, { now, graceMs })) throw new ExpiredError(`trust document ${trust.seq} expired at ${trust.expires}`, { details: { expires: trust.expires, now } })
  }
  const signers = countSigners(info, roles)
  // rule 2: fsinfo.json's own times, then the release's
  checkFreshness(info, { now, skewMs, graceMs })
  if (isExpired(info.release, { now, graceMs })) throw new ExpiredError(`release ${info.release.seq} expired at ${info.release.expires}`, { details: { expires: info.release.expires, now } })
  return { roles, signers }
}

/** Rule 11 for both signed parts of an fsinfo.json: the keys that count, by role (ThresholdError below a threshold). */
export function countSigners (info, roles) {
  return {
    timestamp: requireThreshold(info.message, info.signatures, roles.timestamp, 'fsinfo.json (timestamp keys)'),
    release: requireThreshold(info.release.message, info.release.signatures, roles.release, `release ${info.release.seq} (release keys)`)
  }
}

/**
 * docs/TRUST.md rule 17, format version 2: an old fsinfo.json from the tree's
 * history/ (`rotree log`, ADDR@SEQ), checked as verifyFsinfoV2 checks a
 * current one but without the clock and the rollback state: the family and
 * name (rules 1 and 12), the trust document it names (walked from the
 * anchor by the caller, rule 10; a retiring one is refused, rule 14), and
 * the timestamp and release thresholds of that document or of the single
 * key, while that key still holds a role (rule 11, checkLoneKey).
 * @param {object} info decodeFsinfoV2()
 * @param {{ anchor: object, name: string, trust: object|null, newest?: object|null }} o
 *   trust: the document info.trust names; newest: the newest trust document known (default: trust)
 */
export function verifyHistoryEntryV2 (info, { anchor, name, trust, newest = trust }) {
  checkAddress(info, anchor, name)
  let roles
  if (info.trust === null) {
    if (anchor.kind !== 'key') throw new ThresholdError('this old fsinfo.json names no trust document, but the address certifies one')
    checkLoneKey(anchor, newest, `the old fsinfo.json of sequence ${info.seq}`)
    roles = singleKeyRoles(anchor.key)
  } else {
    checkNamedTrust(trust, info.trust, 'this old fsinfo.json')
    checkNotRetired(trust)
    roles = trust.roles
  }
  return { roles, signers: countSigners(info, roles) }
}

/**
 * docs/TRUST.md rule 13 (rule 2's rollback check, for version 2): the state
 * after accepting `info` (with `roles` and `signers` from verifyFsinfoV2),
 * or a typed error when it would go back.
 *
 * state := { v: 2, trust: { seq, hash } | null,
 *            release: { signers, seq, root }, timestamp: { signers, seq, release } }
 * where `signers` are the keys whose signatures counted for it. A role's
 * stored sequence holds while any key that signed it is still in the role
 * (so adding a key, or dropping another, changes nothing: a timestamp key
 * cannot then serve an older release), and is dropped once every one of
 * them was rotated away, so keys that signed a huge sequence number (a
 * fast-forward attack) and were removed for it cannot lock readers out
 * (TUF's recovery).
 * @param {object|null} seen the persisted version-2 state
 * @param {object} info decodeFsinfoV2() @param {object} roles
 * @param {{ release: Iterable<string>, timestamp: Iterable<string> }} [signers] verifyFsinfoV2's (default: counted here)
 * @returns {{ state: object, newer: boolean }}
 */
export function advanceState (seen, info, roles, signers = countSigners(info, roles)) {
  const trust = info.trust
  if (seen?.trust) {
    if (!trust || trust.seq < seen.trust.seq) throw new RollbackError(`fsinfo.json is under trust document ${trust ? trust.seq : '(none)'}, older than ${seen.trust.seq} already seen`)
    sameTrustDocument(seen.trust, trust)
  }
  const rel = { signers: [...signers.release].sort(), seq: info.release.seq, root: info.release.root.hash ?? info.release.root.private } // a private release: its commitment (FORMAT.md §12.8)
  const ts = { signers: [...signers.timestamp].sort(), seq: info.seq, release: info.releaseHash }
  const held = (prev, role) => prev && prev.signers.some(k => role.keys.includes(k)) ? prev : null
  const prevRel = held(seen?.release, roles.release)
  const prevTs = held(seen?.timestamp, roles.timestamp)
  if (prevRel) {
    if (rel.seq < prevRel.seq) throw new RollbackError(`release ${rel.seq} is below ${prevRel.seq}, already seen`, { details: { seq: rel.seq, seen: prevRel.seq } })
    if (rel.seq === prevRel.seq && rel.root !== prevRel.root) throw new ForkError(`release ${rel.seq} was already seen with a different root`)
  }
  if (prevTs) {
    if (ts.seq < prevTs.seq) throw new RollbackError(`fsinfo.json sequence ${ts.seq} is below ${prevTs.seq}, already seen`, { details: { seq: ts.seq, seen: prevTs.seq } })
    if (ts.seq === prevTs.seq && ts.release !== prevTs.release) throw new ForkError(`fsinfo.json sequence ${ts.seq} was already seen binding another release`)
  }
  const state = { v: 2, trust: trust ? { seq: trust.seq, hash: trust.hash } : null, release: rel, timestamp: ts }
  const newer = !seen || !prevTs || ts.seq > prevTs.seq || (trust?.seq ?? 0) > (seen.trust?.seq ?? 0)
  return { state, newer }
}

// The trust rules of rotree, all of them, in one module with no I/O. Each
// rule is numbered in docs/TRUST.md and cited here by that number. The Node
// client, the browser, the gateway, `rotree pull`, fsck, gc and the signing
// tools call these functions on bytes that a fetcher or a disk brought;
// nothing else in the code base decides whether bytes are trusted.
import {
  WrongKeyError, BadSignatureError, ExpiredError, NotYetValidError, RollbackError, ForkError,
  HashMismatchError, TooLargeError, TruncatedError, BadFormatError
} from './errors.js'
import { compareBytes } from './format/bytes.js'
import { decodeFsinfo } from './format/fsinfo.js'
import { decodeDirPage } from './format/dirpage.js'
import { decodeChunkIndex } from './format/chunkindex.js'
import { verifySignature } from './ed25519.js'
import { sha256Hex } from '#sha256'

export const DEFAULT_SKEW_MS = 5 * 60 * 1000

/**
 * docs/TRUST.md rule 2: accept fsinfo.json only if it is well-formed, names the
 * key the user gave, is signed by it, has not expired and is not from the
 * future. The rollback check needs the persisted state and is checkRollback().
 * @param {Uint8Array|string} bytes
 * @param {{ publicKey: string, now?: number, skewMs?: number, graceMs?: number }} opts
 */
export function verifyFsinfo (bytes, { publicKey, now = Date.now(), skewMs = DEFAULT_SKEW_MS, graceMs = 0 }) {
  const info = verifyFsinfoSignature(bytes, { publicKey })
  checkFreshness(info, { now, skewMs, graceMs })
  return info
}

/**
 * docs/TRUST.md rules 1 and 2 without the clock: well-formed, the user's key,
 * a good signature. For tools that check a published folder's history (pull,
 * fsck, gc, sign), where an old root's age is not a reason to doubt it.
 * Never use it to pick the root a reader serves: that is verifyFsinfo().
 * @param {Uint8Array|string} bytes @param {{ publicKey: string }} o
 */
export function verifyFsinfoSignature (bytes, { publicKey }) {
  const info = decodeFsinfo(bytes)
  // docs/TRUST.md rule 1: the key comes from the user; a mirror cannot substitute its own
  if (info.key !== publicKey) throw new WrongKeyError(`fsinfo.json is for key ${info.key.slice(0, 16)}…, not ${publicKey.slice(0, 16)}…`)
  if (!verifySignature(info.sig, info.message, publicKey)) throw new BadSignatureError('fsinfo.json signature does not verify')
  info.raw = bytes // the exact bytes that verified: what `pull` republishes
  return info
}

/**
 * docs/TRUST.md rule 2, time: not expired (with the optional grace period) and
 * not issued further ahead of the reader's clock than the skew allowance.
 * @param {{ issued: string, expires: string, issuedMs: number, expiresMs: number }} info
 * @param {{ now?: number, skewMs?: number, graceMs?: number }} [o]
 */
export function checkFreshness (info, { now = Date.now(), skewMs = DEFAULT_SKEW_MS, graceMs = 0 } = {}) {
  if (isExpired(info, { now, graceMs })) {
    throw new ExpiredError(`fsinfo.json expired at ${info.expires} (reader clock ${new Date(now).toISOString()})`, { details: { expires: info.expires, now } })
  }
  if (info.issuedMs > now + skewMs) {
    throw new NotYetValidError(`fsinfo.json issued at ${info.issued}, ahead of the reader clock ${new Date(now).toISOString()} by more than ${skewMs / 1000}s: check this machine's clock`, { details: { issued: info.issued, now } })
  }
}

/**
 * docs/TRUST.md rule 2: is an accepted root past its expiry (plus grace) by
 * this clock? A reader must refresh before using such a root again.
 * @param {{ expiresMs: number }} info @param {{ now?: number, graceMs?: number }} [o]
 */
export function isExpired (info, { now = Date.now(), graceMs = 0 } = {}) {
  return now > info.expiresMs + graceMs
}

/**
 * docs/TRUST.md rule 2, rollback: `seen` is the highest accepted { seq, root } for this key
 * (or null). Returns true when `info` is newer than seen (state must be updated).
 */
export function checkRollback (info, seen) {
  if (!seen) return true
  if (info.seq < seen.seq) throw new RollbackError(`fsinfo.json sequence ${info.seq} is below ${seen.seq}, already seen for this key`, { details: { seq: info.seq, seen: seen.seq } })
  if (info.seq === seen.seq && info.root.hash !== seen.root) {
    throw new ForkError(`fsinfo.json sequence ${info.seq} was already seen with a different root: the publisher's key signed two trees under one number`, { details: { seq: info.seq } })
  }
  return info.seq > seen.seq
}

/**
 * docs/TRUST.md rule 3: bytes fetched for `ref` are exactly ref.size long and hash to
 * ref.hash. Fetchers cap the body at ref.size; this is the final check.
 * @param {Uint8Array} bytes @param {{ hash: string, size: number }} ref
 */
export async function verifyBlob (bytes, ref) {
  if (bytes.length > ref.size) throw new TooLargeError(`blob ${ref.hash.slice(0, 16)}… is ${bytes.length} bytes, expected ${ref.size}`)
  if (bytes.length < ref.size) throw new TruncatedError(`blob ${ref.hash.slice(0, 16)}… is ${bytes.length} bytes, expected ${ref.size}`)
  const got = await sha256Hex(bytes)
  if (got !== ref.hash) throw new HashMismatchError(`blob ${ref.hash.slice(0, 16)}… hashes to ${got.slice(0, 16)}…`, { details: { expected: ref.hash, actual: got } })
  return bytes
}

/** docs/TRUST.md rule 3, then decode: a directory blob (leaf or index page). */
export async function verifyDirPage (bytes, ref) {
  return decodeDirPage(await verifyBlob(bytes, ref))
}

/** docs/TRUST.md rule 3, then decode: a chunk-index blob. */
export async function verifyChunkIndex (bytes, ref) {
  return decodeChunkIndex(await verifyBlob(bytes, ref))
}

/** FORMAT.md §4.3: an index holds the level and byte count its parent promised. */
export function checkChunkIndexPlacement (idx, { level, bytes }) {
  if (idx.level !== level) throw new BadFormatError(`chunk index level ${idx.level}, parent says ${level}`)
  if (idx.bytes !== bytes) throw new BadFormatError(`chunk index covers ${idx.bytes} bytes, parent says ${bytes}`)
}

// FORMAT.md §4.4: a child page must hold exactly the names its index promised,
// within [firstName, next firstName), at the right level, with the right count.
// Without this an index could hide an entry and "prove" a false absence.
export function checkPagePlacement (page, { level, firstNameBytes, nextNameBytes, entries } = {}) {
  if (level !== undefined) {
    const got = page.kind === 'leaf' ? 0 : page.level
    if (got !== level) throw new BadFormatError(`directory page at level ${got}, index says ${level}`)
  }
  const first = page.kind === 'leaf' ? page.entries[0]?.nameBytes : page.children[0].firstNameBytes
  const last = page.kind === 'leaf' ? page.entries.at(-1)?.nameBytes : page.children.at(-1).firstNameBytes
  if (firstNameBytes && (!first || compareBytes(first, firstNameBytes) !== 0)) throw new BadFormatError('directory page does not start where its index says')
  if (nextNameBytes && last && compareBytes(last, nextNameBytes) >= 0) throw new BadFormatError('directory page runs past the next page of its index')
  if (entries !== undefined) {
    const n = page.kind === 'leaf' ? page.entries.length : page.children.reduce((s, c) => s + c.entries, 0)
    if (n !== entries) throw new BadFormatError(`directory page holds ${n} entries, its parent says ${entries}`)
  }
}

/** The verifier for each kind of blob: raw bytes for 'data', decoded for the rest. */
export const VERIFIERS = Object.freeze({ data: verifyBlob, dir: verifyDirPage, cindex: verifyChunkIndex })

/**
 * docs/TRUST.md rule 5: what a directory's top page must hold, from the entry
 * that names it (the root has no parent entry: nothing is promised).
 * @param {{ size?: number }} [dirEntry]
 */
export function dirExpectation (dirEntry) {
  return dirEntry?.size === undefined ? {} : { entries: dirEntry.size }
}

/**
 * docs/TRUST.md rule 5: what child `i` of a verified index page must hold: the
 * level below, names from its first name up to (not including) the next
 * child's, the last child inheriting its parent's upper bound, and the entry
 * count the index promised. checkPagePlacement() enforces it.
 * @param {{ level: number, children: object[] }} page an index page
 * @param {number} i @param {{ nextNameBytes?: Uint8Array }} parentExpect
 */
export function childPageExpectation (page, i, parentExpect) {
  const c = page.children[i]
  return { level: page.level - 1, firstNameBytes: c.firstNameBytes, nextNameBytes: page.children[i + 1]?.firstNameBytes ?? parentExpect.nextNameBytes, entries: c.entries }
}

/**
 * docs/TRUST.md rule 3 for a blob already on this machine (a mirror's own h/):
 * a data chunk of exactly the expected size is taken as present without
 * hashing (fsck scrubs), anything else is damage.
 * @param {number} localSize @param {{ hash: string, size: number }} ref
 * @returns {null | Error} null when it is acceptable, else the typed error
 */
export function localChunkFault (localSize, ref) {
  if (localSize === ref.size) return null
  const E = localSize < ref.size ? TruncatedError : TooLargeError
  return new E(`blob ${ref.hash.slice(0, 16)}… is ${localSize} bytes on disk, expected ${ref.size}`, { details: { hash: ref.hash } })
}

/**
 * docs/TRUST.md rules 2 and 4, across mirrors: given each mirror's verified
 * fsinfo.json, the candidates newest first, and the mirrors caught in a fork
 * (one sequence number signed over two roots, unless this reader already
 * accepted one of them: then only the others are forks).
 * @param {{ mirror: string, value: object }[]} answers verified by verifyFsinfo()
 * @param {{ seq: number, root: string } | null} seen the persisted state
 * @returns {{ candidates: { mirror: string, value: object }[], forks: { mirror: string, err: Error }[] }}
 */
export function rankRoots (answers, seen) {
  const roots = new Map()
  for (const { value } of answers) roots.set(value.seq, (roots.get(value.seq) ?? new Set()).add(value.root.hash))
  const candidates = []
  const forks = []
  for (const a of answers) {
    const { seq, root } = a.value
    const n = roots.get(seq).size
    if (n > 1 && !(seen?.seq === seq && seen.root === root.hash)) {
      forks.push({ mirror: a.mirror, err: new ForkError(`fsinfo.json sequence ${seq} is signed over ${n} different roots on different mirrors`) })
    } else candidates.push(a)
  }
  candidates.sort((a, b) => b.value.seq - a.value.seq)
  return { candidates, forks }
}

/** Does a set of verified answers disagree about a root (so the persisted state must be read)? */
export function hasFork (answers) {
  const roots = new Map()
  for (const { value } of answers) {
    const r = roots.get(value.seq)
    if (r !== undefined && r !== value.root.hash) return true
    roots.set(value.seq, value.root.hash)
  }
  return false
}

/**
 * docs/TRUST.md rule 4: once `chosen` is accepted, every mirror that serves an
 * older root is stale, and is reported (not benched: see Mirrors.fault).
 */
export function staleMirrors (answers, chosen) {
  return answers.filter(a => a.value.seq < chosen.value.seq)
    .map(a => ({ mirror: a.mirror, err: new RollbackError(`${a.mirror} serves fsinfo.json sequence ${a.value.seq}, older than ${chosen.value.seq} from ${chosen.mirror}`) }))
}

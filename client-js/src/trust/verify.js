// The trust rules of rotree, all of them, in one module with no I/O. Each
// rule is numbered in docs/TRUST.md and cited here by that number. The Node
// client, the browser, the gateway, `rotree pull`, fsck, gc and the signing
// tools call these functions on bytes that a fetcher or a disk brought;
// nothing else in the code base decides whether bytes are trusted.
//
// Format version 2's role, threshold and rotation rules (docs/TRUST.md rules
// 10–14) are in trust/roles.js, also pure; the blob rules of version 2
// (stored bytes capped and hashed, then decoded within the recorded size,
// FORMAT.md §12.6) are here, beside version 1's.
import {
  WrongKeyError, WrongNameError, BadSignatureError, ExpiredError, NotYetValidError, RollbackError, ForkError,
  HashMismatchError, TooLargeError, TruncatedError, BadFormatError
} from '../errors.js'
import { compareBytes } from '../format/bytes.js'
import { decodeFsinfo } from '../format/fsinfo.js'
import { decodeDirPage } from '../format/dirpage.js'
import { decodeChunkIndex } from '../format/chunkindex.js'
import { verifySignature } from '#ed25519'
import { sha256Hex } from '#sha256'
import { decodeBlob } from '#codec'
import { openSealed } from '../format/seal.js'

export const DEFAULT_SKEW_MS = 5 * 60 * 1000

/**
 * docs/TRUST.md rule 2: accept fsinfo.json only if it is well-formed, names the
 * key the user gave, is signed by it, has not expired and is not from the
 * future. The rollback check needs the persisted state and is checkRollback().
 * @param {Uint8Array|string} bytes
 * @param {{ publicKey: string, now?: number, skewMs?: number, graceMs?: number }} opts
 */
export function verifyFsinfo (bytes, { publicKey, name = '', now = Date.now(), skewMs = DEFAULT_SKEW_MS, graceMs = 0 }) {
  const info = verifyFsinfoSignature(bytes, { publicKey, name })
  checkFreshness(info, { now, skewMs, graceMs })
  return info
}

/**
 * docs/TRUST.md rules 1 and 2 without the clock: well-formed, the user's key,
 * a good signature. For tools that check a published folder's history (pull,
 * fsck, gc, sign), where an old root's age is not a reason to doubt it.
 * Never use it to pick the root a reader serves: that is verifyFsinfo().
 * A version-1 fsinfo.json has one key and no name: an address that names a
 * tree (docs/TRUST.md rule 12) or certifies a trust document instead of a key
 * (publicKey null, FORMAT.md §12.5) never accepts one.
 * @param {Uint8Array|string} bytes @param {{ publicKey: string|null, name?: string }} o
 */
export function verifyFsinfoSignature (bytes, { publicKey, name = '' }) {
  const info = decodeFsinfo(bytes)
  if (name !== '') throw new WrongNameError(`fsinfo.json is a version-1 tree, which has no name; the address names ${JSON.stringify(name)}`)
  if (publicKey === null) throw new WrongKeyError(`fsinfo.json is for key ${info.key.slice(0, 16)}…, but the address certifies a trust document, not a key`)
  // docs/TRUST.md rule 1: the key comes from the user; a mirror cannot substitute its own
  if (info.key !== publicKey) throw new WrongKeyError(`fsinfo.json is for key ${info.key.slice(0, 16)}…, not ${publicKey.slice(0, 16)}…`)
  if (!verifySignature(info.sig, info.message, publicKey)) throw new BadSignatureError('fsinfo.json signature does not verify')
  info.raw = bytes // the exact bytes that verified: what `pull` republishes
  return info
}

/**
 * docs/TRUST.md rule 17: one entry of a tree's history (history/<seq>.json,
 * for `rotree log`): signed by the address key, as fsinfo.json is, and
 * carrying the sequence number it is filed under, so a mirror cannot show
 * one signed root as another. Old on purpose: no freshness check, and it is
 * never adopted as the tree's root (the rollback state is not touched).
 * @param {Uint8Array} bytes @param {{ publicKey: string, seq: number }} o
 */
export function verifyHistoryEntry (bytes, { publicKey, seq }) {
  const info = verifyFsinfoSignature(bytes, { publicKey })
  if (info.seq !== seq) throw new BadFormatError(`history/${seq}.json holds the root of sequence ${info.seq}`, { details: { seq, found: info.seq } })
  return info
}

/**
 * FORMAT.md §12.7: a whole version-2 file hashes to the SHA-256 its entry
 * signs (the second line of defence after the per-chunk hashes). Every chunk
 * verified, a mismatch means the publisher signed a wrong file hash.
 * @param {{ sha256: string }} entry @param {string} got the hex SHA-256 of the file's bytes @param {string} [what]
 */
export function checkFileHash (entry, got, what = 'file') {
  if (got !== entry.sha256) {
    throw new HashMismatchError(`${what}: the file's bytes hash to ${got.slice(0, 16)}…, its entry says ${entry.sha256.slice(0, 16)}… (every chunk verified: the publisher signed a wrong file hash)`, { details: { expected: entry.sha256, actual: got } })
  }
}

/**
 * FORMAT.md §12.7, once per file: the whole-file SHA-256 that already
 * matched for a file entry's exact chunk refs. The check is about the signed
 * entry, not about any mirror: each chunk is verified against its ref on
 * every read (rule 3), so the refs fix every byte of the file, and their
 * concatenation hashes the same every time. A long-running reader (the
 * gateway) that streams one file again need not hash it again; a mismatch is
 * never remembered, so a wrong signed hash fails every read.
 */
export class FileHashVerdicts {
  /** @param {number} [max] entries remembered, oldest forgotten first */
  constructor (max = 10_000) { this.max = max; this.ok = new Set() }

  /** Whether `entry`'s signed SHA-256 already matched its chunks, or its one chunk proves it (fileHashImplied). */
  has (entry) { return fileHashImplied(entry) || this.ok.has(fileKey(entry)) }

  /** checkFileHash, remembered when it passes (a failed check throws and is never remembered). */
  check (entry, got, what) {
    checkFileHash(entry, got, what)
    this.add(entry)
  }

  /** `entry`'s bytes hashed to its signed SHA-256 (checkFileHash passed). */
  add (entry) {
    const k = fileKey(entry)
    this.ok.delete(k)
    this.ok.add(k)
    if (this.ok.size > this.max) this.ok.delete(this.ok.values().next().value)
  }
}

/**
 * FORMAT.md §12.7 without a second pass: a file that is one chunk, stored
 * as it is (codec 'none'), whose handle is the SHA-256 its entry signs. The
 * chunk verifies against its handle on every read (rule 3) and its bytes are
 * the whole file, so they hash to the signed SHA-256 by that check alone.
 * (A compressed chunk's handle is the hash of its stored bytes, not the
 * file's: such a file is hashed as usual.)
 * @param {{ sha256?: string|null, size: number, chunks?: object[] }} entry
 */
export function fileHashImplied (entry) {
  const c = entry.chunks
  if (c === undefined || c.length !== 1 || typeof entry.sha256 !== 'string') return false
  const r = c[0]
  return r.codec === 'none' && r.hash === entry.sha256 && r.size === entry.size && storedSizeOf(r) === entry.size
}

/** The signed SHA-256 and size, and every ref that fixes the bytes (hash, sizes, codec; an index's levels). */
function fileKey (e) {
  const ref = r => r === undefined ? '' : `${r.hash}/${r.size}/${r.storedSize ?? ''}/${r.codec ?? ''}`
  const body = e.index !== undefined ? `i${e.index.levels}:${ref(e.index)}:${ref(e.lead)}` : `c${e.chunks.map(ref).join(',')}`
  return `${e.sha256}:${e.size}:${body}`
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
  return now > (info.untilMs ?? info.expiresMs) + graceMs
}

/**
 * docs/TRUST.md rule 3, FORMAT.md §5.1: a version-2 file under a chunk index
 * names its first chunk beside the index (the lead ref), so a read can ask for
 * it at once; its bytes go out only once the index's first leaf child is the
 * same blob stored the same way. A publisher who signed two first chunks
 * would otherwise show one content to a read inside the lead and another to
 * every read past it (one file, one content).
 * @param {object} lead the entry's lead ref @param {object|null} first the index's first leaf child (null: none at offset 0)
 */
export function checkLeadRef (lead, first) {
  const same = first !== null && first.hash === lead.hash && first.size === lead.size &&
    (first.storedSize ?? first.size) === (lead.storedSize ?? lead.size) && (first.codec ?? 'none') === (lead.codec ?? 'none') && first.key === lead.key
  if (!same) throw new BadFormatError('the chunk index\'s first chunk is not the first chunk its file entry names (FORMAT.md §5.1)')
}

/**
 * docs/TRUST.md rule 2, rollback: `seen` is the highest accepted { seq, root } for this key
 * (or null). Returns true when `info` is newer than seen (state must be updated).
 * A tree this reader saw in format version 2 never goes back to a version-1
 * fsinfo.json (docs/TRUST.md rule 13: a downgrade is a rollback).
 */
export function checkRollback (info, seen) {
  if (!seen) return true
  if (seen.v === 2) throw new RollbackError('a version-1 fsinfo.json for a tree this reader already accepted in format version 2')
  if (info.seq < seen.seq) throw new RollbackError(`fsinfo.json sequence ${info.seq} is below ${seen.seq}, already seen for this key`, { details: { seq: info.seq, seen: seen.seq } })
  if (info.seq === seen.seq && info.root.hash !== seen.root) {
    throw new ForkError(`fsinfo.json sequence ${info.seq} was already seen with a different root: the publisher's key signed two trees under one number`, { details: { seq: info.seq } })
  }
  return info.seq > seen.seq
}

/**
 * The bytes a blob takes on the wire and on disk: what every request for it
 * is capped at and every local copy is compared with. A version-2 ref's
 * `size` is its decoded length (FORMAT.md §12.6, format/ref.js); its stored
 * length is `storedSize`.
 * @param {{ size: number, storedSize?: number }} ref
 */
export function storedSizeOf (ref) { return ref.storedSize ?? ref.size }

/** The format version a ref was decoded under: version-2 refs carry their codec. */
const versionOfRef = ref => ref.codec === undefined ? V1 : V2
const V1 = { version: 1 }
const V2 = { version: 2 }

/**
 * docs/TRUST.md rule 3: bytes fetched for `ref` are exactly its stored size
 * (storedSizeOf) long and hash to ref.hash. Fetchers cap the body at that
 * size; this is the final check. Returns the stored bytes.
 * @param {Uint8Array} bytes @param {{ hash: string, size: number, storedSize?: number }} ref
 */
export async function verifyBlob (bytes, ref) {
  const size = storedSizeOf(ref)
  if (bytes.length > size) throw new TooLargeError(`blob ${ref.hash.slice(0, 16)}… is ${bytes.length} bytes, expected ${size}`)
  if (bytes.length < size) throw new TruncatedError(`blob ${ref.hash.slice(0, 16)}… is ${bytes.length} bytes, expected ${size}`)
  const got = await sha256Hex(bytes)
  if (got !== ref.hash) throw new HashMismatchError(`blob ${ref.hash.slice(0, 16)}… hashes to ${got.slice(0, 16)}…`, { details: { expected: ref.hash, actual: got } })
  return bytes
}

/**
 * docs/TRUST.md rule 3 for a version-2 blob as well: verifyBlob on the stored
 * bytes, then decoded by the ref's codec into exactly ref.size bytes (more,
 * fewer, a corrupt stream or bytes after it are ROTREE_BAD_FORMAT; a bomb
 * stops at the bound, FORMAT.md §12.6). A version-1 ref's bytes are the blob.
 */
export async function verifyDecoded (bytes, ref) {
  const stored = await verifyBlob(bytes, ref)
  if (ref.codec === undefined) return stored
  // FORMAT.md §12.8: a sealed blob is opened with the key its (verified) parent names
  const inner = ref.key === undefined ? stored : await openSealed(stored, ref.key)
  return decodeBlob(inner, ref.codec, ref.size)
}

/** docs/TRUST.md rule 3: a data chunk, exactly ref.size verified (and decoded) bytes. */
export async function verifyChunk (bytes, ref) { return verifyDecoded(bytes, ref) }

/** docs/TRUST.md rule 3, then decode: a directory blob (leaf or index page) of the ref's format version. */
export async function verifyDirPage (bytes, ref) {
  return decodeDirPage(await verifyDecoded(bytes, ref), versionOfRef(ref))
}

/** docs/TRUST.md rule 3, then decode: a chunk-index blob of the ref's format version. */
export async function verifyChunkIndex (bytes, ref) {
  return decodeChunkIndex(await verifyDecoded(bytes, ref), versionOfRef(ref))
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

/**
 * The verifier for each kind of blob: the chunk's bytes for 'data' (decoded,
 * for a compressed version-2 chunk), the decoded page or index for the rest.
 */
// manifest: a private release's manifest page (FORMAT.md §12.8), a plain blob checked by hash and size
export const VERIFIERS = Object.freeze({ data: verifyChunk, dir: verifyDirPage, cindex: verifyChunkIndex, manifest: verifyChunk })

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
  const size = storedSizeOf(ref)
  if (localSize === size) return null
  const E = localSize < size ? TruncatedError : TooLargeError
  return new E(`blob ${ref.hash.slice(0, 16)}… is ${localSize} bytes on disk, expected ${size}`, { details: { hash: ref.hash } })
}

/**
 * Which of two verified roots is newer (negative: `a` is older): by format
 * version, then (version 2) by the trust document each is signed under, then
 * by sequence number. A version-2 timestamp role whose keys changed may
 * start its numbers again (docs/TRUST.md rule 13), so the trust document
 * comes first.
 * @param {{ version?: number, trust?: { seq: number } | null, seq: number }} a @param {typeof a} b
 */
export function compareRoots (a, b) {
  return ((a.version ?? 1) - (b.version ?? 1)) || ((a.trust?.seq ?? 0) - (b.trust?.seq ?? 0)) || (a.seq - b.seq)
}

/** What a root binds at its sequence number: the root (version 1), the release (version 2). */
const boundOf = v => v.version === 2 ? v.release.hash : v.root.hash

/** Is verified root `v` the one persisted as `seen` (state.js record of either version)? */
function isSeen (seen, v) {
  if (!seen) return false
  if (v.version === 2) return seen.v === 2 && seen.timestamp?.seq === v.seq && seen.timestamp.release === v.release.hash && (seen.trust?.seq ?? 0) === (v.trust?.seq ?? 0)
  return seen.v === undefined && seen.seq === v.seq && seen.root === v.root.hash
}

const rankKey = v => `${v.version ?? 1} ${v.trust?.seq ?? 0} ${v.seq}`

/**
 * docs/TRUST.md rules 2 and 4, across mirrors: given each mirror's verified
 * fsinfo.json, the candidates newest first (compareRoots), and the mirrors
 * caught in a fork (one sequence number signed over two roots, or in version
 * 2 over two releases, unless this reader already accepted one of them: then
 * only the others are forks).
 * @param {{ mirror: string, value: object }[]} answers verified by verifyFsinfo() or the version-2 root store
 * @param {object | null} seen the persisted state
 * @returns {{ candidates: { mirror: string, value: object }[], forks: { mirror: string, err: Error }[] }}
 */
export function rankRoots (answers, seen) {
  const roots = new Map()
  for (const { value } of answers) roots.set(rankKey(value), (roots.get(rankKey(value)) ?? new Set()).add(boundOf(value)))
  const candidates = []
  const forks = []
  for (const a of answers) {
    const n = roots.get(rankKey(a.value)).size
    if (n > 1 && !isSeen(seen, a.value)) {
      forks.push({ mirror: a.mirror, err: new ForkError(`fsinfo.json sequence ${a.value.seq} is signed over ${n} different ${a.value.version === 2 ? 'releases' : 'roots'} on different mirrors`) })
    } else candidates.push(a)
  }
  candidates.sort((a, b) => compareRoots(b.value, a.value))
  return { candidates, forks }
}

/** Does a set of verified answers disagree about a root (so the persisted state must be read)? */
export function hasFork (answers) {
  const roots = new Map()
  for (const { value } of answers) {
    const k = rankKey(value)
    const r = roots.get(k)
    if (r !== undefined && r !== boundOf(value)) return true
    roots.set(k, boundOf(value))
  }
  return false
}

/**
 * docs/TRUST.md rule 4: once `chosen` is accepted, every mirror that serves an
 * older root is stale, and is reported (not benched: see Mirrors.fault).
 */
export function staleMirrors (answers, chosen) {
  return answers.filter(a => compareRoots(a.value, chosen.value) < 0)
    .map(a => ({ mirror: a.mirror, err: new RollbackError(`${a.mirror} serves fsinfo.json sequence ${a.value.seq}, older than ${chosen.value.seq} from ${chosen.mirror}`) }))
}

// The verification rules of rotree, all of them, in one module with no I/O
// (DESIGN.md "Trust rules"). The Node client, the browser, the gateway and
// `rotree pull` call these functions on bytes that a fetcher brought; nothing
// else in the code base decides whether bytes are trusted.
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
 * Trust rule 2: accept fsinfo.json only if it is well-formed, names the key the
 * user gave, is signed by it, has not expired and is not from the future.
 * The rollback check needs the persisted state and is checkRollback() below.
 * @param {Uint8Array|string} bytes
 * @param {{ publicKey: string, now?: number, skewMs?: number, graceMs?: number }} opts
 */
export function verifyFsinfo (bytes, { publicKey, now = Date.now(), skewMs = DEFAULT_SKEW_MS, graceMs = 0 }) {
  const info = decodeFsinfo(bytes)
  // rule 1: the key comes from the user; a mirror cannot substitute its own
  if (info.key !== publicKey) throw new WrongKeyError(`fsinfo.json is for key ${info.key.slice(0, 16)}…, not ${publicKey.slice(0, 16)}…`)
  if (!verifySignature(info.sig, info.message, publicKey)) throw new BadSignatureError('fsinfo.json signature does not verify')
  if (now > info.expiresMs + graceMs) {
    throw new ExpiredError(`fsinfo.json expired at ${info.expires} (reader clock ${new Date(now).toISOString()})`, { details: { expires: info.expires, now } })
  }
  if (info.issuedMs > now + skewMs) {
    throw new NotYetValidError(`fsinfo.json issued at ${info.issued}, ahead of the reader clock ${new Date(now).toISOString()} by more than ${skewMs / 1000}s: check this machine's clock`, { details: { issued: info.issued, now } })
  }
  info.raw = bytes // the exact bytes that verified: what `pull` republishes
  return info
}

/**
 * Trust rule 2, rollback: `seen` is the highest accepted { seq, root } for this key
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
 * Trust rule 3: bytes fetched for `ref` are exactly ref.size long and hash to
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

/** Trust rule 3, then decode: a directory blob (leaf or index page). */
export async function verifyDirPage (bytes, ref) {
  return decodeDirPage(await verifyBlob(bytes, ref))
}

/** Trust rule 3, then decode: a chunk-index blob. */
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

// What the gateway needs from a Tree, in one file, through its public API
// only: the accepted root (tree.rootRecord), whether it is still fresh by the
// tree's own clock and grace (tree.isFresh(), docs/TRUST.md rule 2), a pinned
// view (tree.snapshot()), and on that view: resolve a path once, then list
// (entriesOf), stream (readEntry) or read one chunk (readChunk) of the entry.
// Every byte passes verify.js inside the Tree.
import { createHash } from 'node:crypto'
import { toStat } from 'rotree-client'
import { checkFileHash, fileHashImplied } from 'rotree-client/verify'
import { BadFormatError } from 'rotree-client/errors'
import { contentType } from './mime.js'
import { treePath } from './paths.js'

// ---- the tree's root -------------------------------------------------------

/** The accepted fsinfo record (identity changes when a new root is adopted); null before the first. */
export function rootRecord (tree) { return tree.rootRecord ?? null }

/** Accepted, and not expired by the tree's own clock and grace (verify.js isExpired, inside the Tree). */
export function isFresh (tree) { return tree.isFresh() }

/**
 * The newest trust document the tree's reader trusts (trust-chain.js,
 * docs/TRUST.md rule 10), walked from the address's anchor; null for a
 * single-key or version-1 tree. Whose access role issues grants (FORMAT.md
 * §12.10), for a gated gateway (edge-gate.js).
 */
export function newestTrust (tree) { return tree.trustDocument }

/**
 * A file beside the tree's signed ones, from every mirror at once, each
 * answer checked by `check` (which throws for one it refuses: that mirror's
 * fault); a mirror without it is no fault. Each mirror's result, as
 * Mirrors.fetchAll gives them.
 */
export function fetchFromMirrors (tree, path, cap, check) {
  return tree.fetchFromEveryMirror(path, cap, check)
}

// ---- one pinned view -------------------------------------------------------

/**
 * @param {import('./mount.js').Pin} pin
 * @param {string[]} segments names below the tree root
 * @param {boolean} [follow=true] follow a final symlink
 * @returns {Promise<object>} the verified entry (a directory's carries `dir`, a file's its chunks)
 */
export function resolve (pin, segments, follow = true) {
  return pin.view.resolve(treePath(segments), { follow })
}

/**
 * Verified bytes of `entry` in [start, end), in order. Reads larger than an
 * eighth of the memory cache stream past it (the Tree decides), so one big
 * download does not flush every directory page. Its pieces are lent: the
 * caller gives each back with pin.view.release() once the socket has it.
 * @returns {AsyncGenerator<Uint8Array>}
 */
export function readEntry (pin, entry, start, end) {
  return pin.view.readEntry(entry, start, end, { lend: true })
}

/**
 * The fast path for the common small file: when [start, end) lies inside one
 * chunk listed in the entry, that chunk's verified bytes sliced to the range,
 * without an async generator per request. null when the range needs more
 * (several chunks, a chunk index).
 * @returns {Promise<Uint8Array>|null}
 */
export function readOneChunk (pin, entry, start, end) {
  const cs = entry.chunks
  if (cs === undefined) return null
  let off = 0
  for (let i = 0; i < cs.length; i++) {
    const c = cs[i]
    if (start < off + c.size) {
      if (end > off + c.size) return null
      const from = start - off
      const to = end - off
      // one chunk is at most MAX_BLOB (1 MiB): the small read the memory cache is for
      const whole = start === 0 && end === entry.size && typeof entry.sha256 === 'string'
      return pin.view.readChunk(c, { cache: true }).then(b => {
        // a chunk of another length than its ref's decoded size is a malformed
        // tree (or a view that lies), not a publisher's wrong file hash: say so
        // before the whole-file check (FORMAT.md §12.7) would blame the hash
        if (b.length !== c.size) throw new BadFormatError(`the tree gave ${b.length} bytes for a ${c.size}-byte chunk`)
        if (whole) checkWholeFile(entry, b)
        return from === 0 && to === b.length ? b : b.subarray(from, to)
      })
    }
    off += c.size
  }
  return null
}

const HASH_CHECKED = new WeakSet() // entries whose one chunk hashed to their signed SHA-256

/**
 * FORMAT.md §12.7: a whole version-2 file is checked against the SHA-256 its
 * entry signs, as the Tree checks every whole read it streams (readEntry);
 * this fast path reads the chunk itself, so it checks here, once per entry
 * (the chunk behind an entry never changes: its handle is verified). A
 * mismatch, every chunk verified, means the publisher signed a wrong hash:
 * 502, and never a complete body under a Repr-Digest it contradicts.
 */
function checkWholeFile (entry, bytes) {
  if (HASH_CHECKED.has(entry) || fileHashImplied(entry)) return
  checkFileHash(entry, sha(bytes))
  HASH_CHECKED.add(entry)
}

/**
 * A directory's entries (raw, verified) in name order, one page at a time;
 * admit(ref) is called before each page is read and may throw to end the walk.
 */
export function entriesOf (pin, dirEntry, { admit } = {}) { return pin.view.entriesOf(dirEntry, { admit }) }

export { toStat }

// ---- validators ------------------------------------------------------------

const META = new WeakMap() // file entry → its response metadata; entries live as long as their cached page

/**
 * A file's validators, type and signed digest. The ETag is the content's identity in the
 * signed tree, so it is strong (RFC 9110 §8.8.1) and the same on every
 * gateway: the chunk or index handle, a hash over the chunk list, or for an
 * inline file the SHA-256 of its bytes.
 */
export function fileMeta (entry) {
  let m = META.get(entry)
  if (m !== undefined) return m
  const sha256 = signedSha256(entry)
  let id
  if (entry.inline) id = sha256 ?? sha(entry.inline)
  else if (entry.index) id = entry.index.hash
  else if (entry.chunks.length === 1) id = entry.chunks[0].hash
  else id = sha(entry.chunks.map(c => `${c.hash} ${c.size}`).join('\n'))
  const d = new Date(entry.mtime)
  m = {
    etag: `"${id}"`,
    lastModified: Number.isNaN(d.getTime()) ? null : d.toUTCString(),
    mtimeS: Math.floor(entry.mtime / 1000),
    type: contentType(entry.name),
    size: entry.size,
    sha256, // hex, or null
    reprDigest: sha256 === null ? null : reprDigest(sha256)
  }
  META.set(entry, m)
  return m
}

/**
 * The SHA-256 of the whole file as the tree signed it (FORMAT.md §12.7), hex,
 * or null. toStat decides: in a version-2 tree it is the entry's signed
 * value (for an inline file, the hash of its signed bytes); in version 1 it
 * is the handle of a file stored as one chunk, whose blob is the file
 * (FORMAT.md §1.2), and null for every other file, whose hash no signed
 * document holds. Never computed from bytes read, only from the entry.
 */
export function signedSha256 (entry) { return toStat(entry).sha256 ?? null }

/**
 * The Repr-Digest field value for a SHA-256 in hex: a structured-field
 * dictionary whose member is a byte sequence (RFC 9530 §3, RFC 8941 §3.3.5):
 *   sha-256=:<base64 of the 32 bytes>:
 */
export function reprDigest (hex) { return `sha-256=:${Buffer.from(hex, 'hex').toString('base64')}:` }

/** A directory's ETag for one representation ('html', 'json', 'dav'): its top page's handle. */
export function dirEtag (dirEntry, kind) { return `"d-${dirEntry.dir.hash}-${kind}"` }

function sha (bytes) { return createHash('sha256').update(bytes).digest('hex') }

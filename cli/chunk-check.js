// A local file's bytes checked against a tree entry's verified chunk hashes,
// without fetching the chunks: each stretch of the local file that a chunk
// covers must hash to that chunk's handle (verify.js verifyBlob, docs/TRUST.md
// rule 3; the handles come from a verified directory page or chunk index).
// `rotree get` uses it to keep a verified prefix of an interrupted download
// and, with --checksum, to skip a file whose content is already right.
//
// A version-2 chunk stored compressed (FORMAT.md §12.6) has a handle over
// its stored bytes, which a local copy of the file bytes cannot be checked
// against: such a chunk ends a verified prefix, and a version-2 file is
// compared by the whole-file SHA-256 its entry carries (FORMAT.md §12.7).
import { verifyBlob } from 'rotree-client/verify'
import { equalBytes } from 'rotree-client/format'
import { createSha256 } from 'rotree-client/crypto'
import { DAMAGE_CODES } from 'rotree-client/errors'

const READ = 1 << 20 // bytes read at a time when hashing a whole local file

/**
 * The chunks of file entry `e` overlapping [start, end): { ref, offset }.
 * Through the Tree's chunk walk (chunk-index pages fetched and verified as
 * needed).
 */
export function chunkSpans (tree, e, start, end) {
  return typeof tree.chunkSpans === 'function' ? tree.chunkSpans(e, start, end) : tree._spans(e, start, end)
}

/**
 * How many leading bytes of the open file `fh` (`limit` of them at most) are
 * whole chunks of `e` that hash right: a chunk boundary, 0 when none.
 * @param {import('node:fs/promises').FileHandle} fh
 */
export async function verifiedPrefix (tree, e, fh, limit) {
  limit = Math.min(limit, e.size)
  if (limit <= 0 || e.inline) return 0
  let good = 0
  for await (const { ref, offset } of chunkSpans(tree, e, 0, limit)) {
    if (offset !== good || offset + ref.size > limit) break
    if (ref.codec !== undefined && ref.codec !== 'none') break // handle over compressed bytes
    if (!(await chunkMatches(fh, ref, offset))) break
    good = offset + ref.size
  }
  return good
}

/** The open file `fh` (of `size` bytes) holds exactly the content of `e`, by its chunk hashes. */
export async function sameContent (tree, e, fh, size) {
  if (size !== e.size) return false
  if (e.size === 0) return true
  if (e.inline) {
    const b = Buffer.alloc(e.size)
    return (await readFully(fh, b, 0)) === e.size && equalBytes(b, e.inline)
  }
  if (typeof e.sha256 === 'string') return (await fileSha256(fh, e.size)) === e.sha256
  return (await verifiedPrefix(tree, e, fh, e.size)) === e.size
}

/** SHA-256 (hex) of the first `size` bytes of `fh`, or null when it holds fewer. */
async function fileSha256 (fh, size) {
  const h = createSha256()
  const b = Buffer.alloc(Math.min(READ, size))
  for (let off = 0; off < size;) {
    const n = await readFully(fh, b.subarray(0, Math.min(b.length, size - off)), off)
    if (n === 0) return null
    h.update(b.subarray(0, n))
    off += n
  }
  return h.hex()
}

async function chunkMatches (fh, ref, offset) {
  const b = Buffer.alloc(ref.size)
  if ((await readFully(fh, b, offset)) !== ref.size) return false
  try {
    await verifyBlob(b, ref)
    return true
  } catch (err) {
    if (DAMAGE_CODES.has(err.code)) return false
    throw err
  }
}

async function readFully (fh, b, position) {
  let n = 0
  while (n < b.length) {
    const { bytesRead } = await fh.read(b, n, b.length - n, position + n)
    if (bytesRead === 0) break
    n += bytesRead
  }
  return n
}

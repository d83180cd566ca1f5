// FORMAT.md §4.3: the chunk-index tree of a large file. A file with more than
// MAX_DIRECT_CHUNKS chunks points at an index blob instead of listing its
// chunks, so a ranged read fetches O(log n) index blobs plus the chunks it covers.
//
//   cindex := "rtC" 0x01 uint(level ≥ 1) uint(count ≥ 1) children
//   level 1:  child := hash[32] uint(len)                    (a data chunk)
//   level n:  child := hash[32] uint(blobSize) uint(bytes)   (a level n-1 index)
import { BadFormatError } from '../errors.js'
import { Reader, Writer, toHex, fromHex } from './bytes.js'
import { groupByContent, hashCut } from './group.js'
import { HASH_LEN, MAX_BLOB, CHUNK_MAX, MAX_INDEX_FANOUT, MAX_INDEX_LEVELS, MAX_DIRECT_CHUNKS } from './limits.js'

export const CINDEX_MAGIC = Uint8Array.of(0x72, 0x74, 0x43, 0x01) // "rtC" v1

/**
 * Decode a chunk-index blob. verify.js checks it against what its parent promised.
 * @param {Uint8Array} bytes
 * @returns {{ level: number, bytes: number, children: { hash: string, size: number, bytes: number }[] }}
 */
export function decodeChunkIndex (bytes) {
  if (bytes.length < 4 || bytes[0] !== 0x72 || bytes[1] !== 0x74 || bytes[2] !== 0x43 || bytes[3] !== 0x01) {
    throw new BadFormatError('not a chunk-index blob (bad magic)')
  }
  const r = new Reader(bytes); r.pos = 4
  const level = r.uint(MAX_INDEX_LEVELS)
  if (level === 0) r.fail('chunk index level 0')
  const count = r.uint(MAX_INDEX_FANOUT)
  if (count === 0) r.fail('empty chunk index')
  const children = new Array(count)
  let sum = 0
  for (let i = 0; i < count; i++) {
    const hash = toHex(r.bytes(HASH_LEN))
    const size = r.uint(level === 1 ? CHUNK_MAX : MAX_BLOB)
    const covered = level === 1 ? size : r.uint()
    if (size === 0 || covered === 0) r.fail('empty chunk-index child')
    children[i] = { hash, size, bytes: covered }
    sum += covered
  }
  r.end()
  return { level, bytes: sum, children }
}

function encodeChunkIndex (level, children) {
  const w = new Writer(8 + children.length * (HASH_LEN + 8))
  w.bytes(CINDEX_MAGIC); w.uint(level); w.uint(children.length)
  for (const c of children) {
    w.bytes(fromHex(c.hash)); w.uint(c.size)
    if (level > 1) w.uint(c.bytes)
  }
  return w.result()
}

/**
 * The file-entry fields for a list of chunks: direct refs when few, else an index tree.
 * @param {{ hash: string, size: number }[]} chunks in file order
 * @param {(bytes: Uint8Array) => Promise<{hash: string, size: number}>} put
 */
export async function buildFileBody (chunks, put) {
  if (chunks.length <= MAX_DIRECT_CHUNKS) return { chunks }
  let level = chunks.map(c => ({ hash: c.hash, size: c.size, bytes: c.size }))
  let depth = 0
  while (level.length > 1 || depth === 0) {
    depth++
    if (depth > MAX_INDEX_LEVELS) throw new RangeError('file too large')
    const groups = groupByContent(level, {
      size: () => HASH_LEN + 16, cut: c => hashCut(c.hash, 8), min: 0, max: MAX_BLOB - 64, maxCount: MAX_INDEX_FANOUT
    })
    const d = depth
    level = await Promise.all(groups.map(async g => ({
      bytes: g.reduce((n, c) => n + c.bytes, 0),
      ...(await put(encodeChunkIndex(d, g)))
    })))
  }
  return { index: { hash: level[0].hash, size: level[0].size, levels: depth } }
}

// FORMAT.md §4.3 (§12.6 for version 2): the chunk-index tree of a large file.
// A file with more than MAX_DIRECT_CHUNKS chunks points at an index blob
// instead of listing its chunks, so a ranged read fetches O(log n) index
// blobs plus the chunks it covers.
//
//   cindex := "rtC" <version> uint(level ≥ 1) uint(count ≥ 1) children
//   level 1:  child := ref(data chunk)                 covers its (decoded) size
//   level n:  child := ref(level n-1 index) uint(bytes)
//   <version> is the byte 0x01 or 0x02; ref is that version's (ref.js).
import { BadFormatError } from '../errors.js'
import { Reader, Writer } from './bytes.js'
import { readRef, writeRef, refOf, versionOf } from './ref.js'
import { groupByContent, hashCut } from './group.js'
import { HASH_LEN, MAX_BLOB, CHUNK_MAX, MAX_INDEX_FANOUT, MAX_INDEX_LEVELS, MAX_DIRECT_CHUNKS } from './limits.js'

export const CINDEX_MAGIC = Uint8Array.of(0x72, 0x74, 0x43, 0x01) // "rtC" v1

/**
 * Decode a chunk-index blob (already hash-verified, and decoded by its
 * codec). verify.js checks it against what its parent promised.
 * @param {Uint8Array} bytes
 * @param {{ version?: 1|2 }} [o] the tree's format version
 * @returns {{ level: number, bytes: number, children: { hash: string, size: number, bytes: number, storedSize?: number, codec?: string }[] }}
 */
export function decodeChunkIndex (bytes, o) {
  const version = versionOf(o)
  if (bytes.length < 4 || bytes[0] !== 0x72 || bytes[1] !== 0x74 || bytes[2] !== 0x43) {
    throw new BadFormatError('not a chunk-index blob (bad magic)')
  }
  if (bytes[3] !== version) throw new BadFormatError(`a chunk-index blob of version ${bytes[3]} in a version-${version} tree`)
  const r = new Reader(bytes); r.pos = 4
  const level = r.uint(MAX_INDEX_LEVELS)
  if (level === 0) r.fail('chunk index level 0')
  const count = r.uint(MAX_INDEX_FANOUT)
  if (count === 0) r.fail('empty chunk index')
  const children = new Array(count)
  let sum = 0
  for (let i = 0; i < count; i++) {
    const c = readRef(r, version, level === 1 ? CHUNK_MAX : MAX_BLOB)
    const covered = level === 1 ? c.size : r.uint()
    if (covered === 0) r.fail('empty chunk-index child')
    children[i] = version === 1
      ? { hash: c.hash, size: c.size, bytes: covered }
      : { hash: c.hash, size: c.size, storedSize: c.storedSize, codec: c.codec, bytes: covered }
    if (c.key !== undefined) children[i].key = c.key // a private tree's sealed chunk or index (FORMAT.md §12.8)
    sum += covered
  }
  r.end()
  return { level, bytes: sum, children }
}

/**
 * Encode a chunk-index page, the inverse of decodeChunkIndex:
 * { level, children: [{ hash, size, bytes, storedSize?, codec? }] }.
 * @param {{ version?: 1|2 }} [o]
 */
export function encodeChunkIndex ({ level, children }, o) {
  const version = versionOf(o)
  const w = new Writer(8 + children.length * (HASH_LEN + 12))
  w.bytes(Uint8Array.of(0x72, 0x74, 0x43, version)); w.uint(level); w.uint(children.length)
  for (const c of children) {
    writeRef(w, c, version)
    if (level > 1) w.uint(c.bytes)
  }
  return w.result()
}

/**
 * The file-entry fields for a list of chunks: direct refs when few, else an index tree.
 * @param {{ hash: string, size: number, storedSize?: number, codec?: string }[]} chunks in file order
 *   (version 2: size is each chunk's decoded length)
 * @param {(bytes: Uint8Array) => Promise<{hash: string, size: number}>} put stores a blob, returns
 *   its ref (version 2: with storedSize and codec, FORMAT.md §12.6)
 * @param {{ version?: 1|2 }} [o]
 */
export async function buildFileBody (chunks, put, o) {
  const version = versionOf(o)
  if (chunks.length <= MAX_DIRECT_CHUNKS) return { chunks }
  let level = chunks.map(c => ({ ...refOf(c), bytes: c.size }))
  let depth = 0
  while (level.length > 1 || depth === 0) {
    depth++
    if (depth > MAX_INDEX_LEVELS) throw new RangeError('file too large')
    // FORMAT.md §4.3: 48 bytes bound a child's encoding in either version
    const groups = groupByContent(level, {
      size: () => HASH_LEN + 16, cut: c => hashCut(c.hash, 8), min: 0, max: MAX_BLOB - 64, maxCount: MAX_INDEX_FANOUT
    })
    const d = depth
    level = await Promise.all(groups.map(async g => ({
      bytes: g.reduce((n, c) => n + c.bytes, 0),
      ...(await put(encodeChunkIndex({ level: d, children: g }, { version })))
    })))
  }
  const index = { ...refOf(level[0]), levels: depth }
  // version 2: the first chunk's ref beside the index, so a reader can ask for both at once (FORMAT.md §12.6)
  return version === 2 ? { index, lead: refOf(chunks[0]) } : { index }
}

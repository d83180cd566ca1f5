// FORMAT.md §12.8: the manifest of a private tree's release. Every blob the
// release's root reaches, by handle and stored size, sorted by handle, in
// pages cut by content: what a mirror without keys needs to pull, fsck,
// repair and gc the tree. Pages are stored as they are (handles and sizes
// are what the blobs show anyway).
//
//   mleaf  := 72 74 4d 02  uint(count)  count × ( hash[32] uint(storedSize) )      strictly sorted
//   mindex := 72 74 4e 02  uint(level) uint(count)
//             count × ( firstHash[32] hash[32] uint(storedSize) uint(blobs) )      strictly sorted
//
// A child page must hold exactly the handles its index promised: from its
// firstHash to before the next one, `blobs` of them (checkManifestPlacement),
// so an index cannot hide a blob from the mirrors that trust it.
import { BadFormatError } from '../errors.js'
import { Reader, Writer, toHex, fromHex, compareBytes } from './bytes.js'
import { HASH_LEN, MAX_BLOB, MAX_INDEX_FANOUT, MAX_INDEX_LEVELS } from './limits.js'
import { groupByContent, hashCut } from './group.js'
import { MAX_SEALED } from './seal.js'

export const MLEAF_MAGIC = Uint8Array.of(0x72, 0x74, 0x4d, 0x02)
export const MINDEX_MAGIC = Uint8Array.of(0x72, 0x74, 0x4e, 0x02)
// leaves of ~32 KiB (about a thousand blobs): an edit rewrites one leaf and its index path
const LEAF_MIN = 16 * 1024
const LEAF_MAX = 128 * 1024
const LEAF_CUT_BITS = 10
const ENTRY_BOUND = HASH_LEN + 4 // a leaf entry: a handle and a stored size of at most 4 varint bytes
const CHILD_BOUND = 2 * HASH_LEN + 8 + 8

// The handles are sorted, so their top bits rise through the list and cannot
// cut it (hashCut looks at them): a leaf ends after a handle whose lowest
// LEAF_CUT_BITS bits are zero.
const lowBitsZero = b => (parseInt(b.hash.slice(-4), 16) & ((1 << LEAF_CUT_BITS) - 1)) === 0

/** A manifest page, decoded: { kind: 'leaf', blobs: [{ hash, size }] } or { kind: 'index', level, children: [{ firstHash, hash, size, blobs }] }. */
export function decodeManifestPage (bytes) {
  const kind = magic(bytes)
  const r = new Reader(bytes)
  r.pos = 4
  if (kind === 'leaf') {
    const count = r.uint(Math.floor(MAX_BLOB / (HASH_LEN + 1)))
    const blobs = new Array(count)
    let prev = null
    for (let i = 0; i < count; i++) {
      const h = r.bytes(HASH_LEN)
      if (prev && compareBytes(prev, h) >= 0) r.fail('manifest handles not strictly sorted')
      prev = h
      const size = r.uint(MAX_SEALED)
      if (size === 0) r.fail('empty blob in the manifest')
      blobs[i] = { hash: toHex(h), size }
    }
    r.end()
    return { kind, blobs }
  }
  const level = r.uint(MAX_INDEX_LEVELS)
  if (level === 0) r.fail('manifest index level 0')
  const count = r.uint(MAX_INDEX_FANOUT)
  if (count === 0) r.fail('empty manifest index')
  const children = new Array(count)
  let prev = null
  for (let i = 0; i < count; i++) {
    const first = r.bytes(HASH_LEN)
    if (prev && compareBytes(prev, first) >= 0) r.fail('manifest index not strictly sorted')
    prev = first
    const hash = toHex(r.bytes(HASH_LEN))
    const size = r.uint(MAX_BLOB)
    const blobs = r.uint()
    if (size === 0 || blobs === 0) r.fail('empty manifest index child')
    children[i] = { firstHash: toHex(first), hash, size, blobs }
  }
  r.end()
  return { kind, level, children }
}

function magic (b) {
  if (b.length >= 4 && b[0] === 0x72 && b[1] === 0x74 && b[3] === 0x02) {
    if (b[2] === 0x4d) return 'leaf'
    if (b[2] === 0x4e) return 'index'
  }
  throw new BadFormatError('not a manifest page (bad magic)')
}

export function encodeManifestLeaf (blobs) {
  const w = new Writer()
  w.bytes(MLEAF_MAGIC); w.uint(blobs.length)
  for (const b of blobs) { w.bytes(fromHex(b.hash)); w.uint(b.size) }
  return w.result()
}

export function encodeManifestIndex (level, children) {
  const w = new Writer()
  w.bytes(MINDEX_MAGIC); w.uint(level); w.uint(children.length)
  for (const c of children) { w.bytes(fromHex(c.firstHash)); w.bytes(fromHex(c.hash)); w.uint(c.size); w.uint(c.blobs) }
  return w.result()
}

/**
 * The pages of a manifest of `blobs` ({ hash, size } each, any order, no
 * two with one handle), stored through `put` (it returns the page's
 * { hash, size }); the top page's { hash, size, blobs }. Deterministic: the
 * same blobs give the same pages (FORMAT.md §1.6).
 * @param {{ hash: string, size: number }[]} blobs
 * @param {(bytes: Uint8Array) => Promise<{ hash: string, size: number }>} put
 */
export async function buildManifest (blobs, put) {
  const items = [...blobs].sort((a, b) => a.hash < b.hash ? -1 : a.hash > b.hash ? 1 : 0)
  for (let i = 1; i < items.length; i++) if (items[i - 1].hash === items[i].hash) throw new RangeError('a blob listed twice: ' + items[i].hash)
  if (items.length === 0) throw new RangeError('a manifest of no blobs: a tree has at least its root page')
  const leaves = groupByContent(items, { size: () => ENTRY_BOUND, cut: lowBitsZero, min: LEAF_MIN, max: LEAF_MAX, maxCount: Math.floor(LEAF_MAX / ENTRY_BOUND) })
  let level = await Promise.all(leaves.map(async page => ({
    firstHash: page[0].hash,
    blobs: page.length,
    ...(await put(encodeManifestLeaf(page)))
  })))
  for (let depth = 1; level.length > 1; depth++) {
    if (depth > MAX_INDEX_LEVELS) throw new RangeError('manifest too large')
    const groups = groupByContent(level, { size: () => CHILD_BOUND, cut: c => hashCut(c.hash, 6), min: 0, max: MAX_BLOB - 64, maxCount: MAX_INDEX_FANOUT })
    level = await Promise.all(groups.map(async g => ({
      firstHash: g[0].firstHash,
      blobs: g.reduce((n, c) => n + c.blobs, 0),
      ...(await put(encodeManifestIndex(depth, g)))
    })))
  }
  const top = level[0]
  return { hash: top.hash, size: top.size, blobs: top.blobs }
}

/**
 * A manifest page holds what its parent promised: the level below the
 * parent's, `blobs` handles (all of them, counted through an index), each at
 * least `firstHash` and below `nextHash` (the next child's firstHash, or none).
 * @param {object} page decodeManifestPage()
 * @param {{ level?: number, firstHash?: string, nextHash?: string|null, blobs?: number }} [expect]
 */
export function checkManifestPlacement (page, { level, firstHash, nextHash = null, blobs } = {}) {
  const got = page.kind === 'leaf' ? 0 : page.level
  if (level !== undefined && got !== level) throw new BadFormatError(`manifest page at level ${got}, its index says ${level}`)
  const first = page.kind === 'leaf' ? page.blobs[0]?.hash : page.children[0].firstHash
  const last = page.kind === 'leaf' ? page.blobs.at(-1)?.hash : page.children.at(-1).firstHash
  if (firstHash !== undefined && first !== firstHash) throw new BadFormatError('manifest page does not start where its index says')
  if (nextHash !== null && last !== undefined && !(last < nextHash)) throw new BadFormatError('manifest page runs past the next page its index names')
  const n = page.kind === 'leaf' ? page.blobs.length : page.children.reduce((s, c) => s + c.blobs, 0)
  if (blobs !== undefined && n !== blobs) throw new BadFormatError(`manifest page holds ${n} blobs, its index says ${blobs}`)
}

/**
 * What the child `i` of index page `page` must hold (checkManifestPlacement);
 * `expect`: what `page` itself had to hold (its last child ends where it does).
 */
export function manifestChildExpectation (page, i, expect = {}) {
  const c = page.children[i]
  return { level: page.level - 1, firstHash: c.firstHash, nextHash: page.children[i + 1]?.firstHash ?? expect.nextHash ?? null, blobs: c.blobs }
}

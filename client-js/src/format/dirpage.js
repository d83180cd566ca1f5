// FORMAT.md §4.4: directory blobs. A directory is one leaf page, or a tree of
// index pages over leaf pages when it is large. Names are strictly increasing
// bytewise, so a verified page proves both presence and absence (SFSRO §3.2.2
// sorts directories for the same reason).
//
//   leaf  := "rtD" 0x01 uint(count) count × entry
//   index := "rtX" 0x01 uint(level ≥ 1) uint(count ≥ 1)
//            count × (lbytes(firstName) hash[32] uint(blobSize) uint(entries))
//   A level-1 index points at leaves; a level-n index at level n-1 indexes.
import { BadFormatError } from '../errors.js'
import { Reader, Writer, toHex, fromHex, utf8, decodeUtf8, compareBytes, concat } from './bytes.js'
import { readEntry, writeEntry } from './entry.js'
import { groupByContent, hashCut } from './group.js'
import {
  HASH_LEN, MAX_NAME, MAX_BLOB, MAX_PAGE_ENTRIES, MAX_INDEX_FANOUT, MAX_INDEX_LEVELS,
  PAGE_MIN, PAGE_MAX, PAGE_CUT_BITS
} from './limits.js'

export const LEAF_MAGIC = Uint8Array.of(0x72, 0x74, 0x44, 0x01) // "rtD" v1
export const INDEX_MAGIC = Uint8Array.of(0x72, 0x74, 0x58, 0x01) // "rtX" v1

function magicOf (b) {
  if (b.length < 4 || b[0] !== 0x72 || b[1] !== 0x74 || b[3] !== 0x01) return null
  return b[2] === 0x44 ? 'leaf' : b[2] === 0x58 ? 'index' : null
}

/**
 * Decode a directory blob (already hash-verified). Every invariant a lookup relies on
 * is checked here: sorted names, bounded counts, exact length.
 * @param {Uint8Array} bytes
 */
export function decodeDirPage (bytes) {
  const kind = magicOf(bytes)
  if (!kind) throw new BadFormatError('not a directory blob (bad magic)')
  const r = new Reader(bytes); r.pos = 4
  if (kind === 'leaf') {
    const count = r.uint(MAX_PAGE_ENTRIES)
    const entries = new Array(count)
    let prev = null
    for (let i = 0; i < count; i++) {
      const e = readEntry(r)
      // FORMAT.md §4.4: strictly increasing, so binary search and absence proofs hold
      if (prev && compareBytes(prev, e.nameBytes) >= 0) r.fail('directory names not strictly sorted')
      prev = e.nameBytes
      entries[i] = e
    }
    r.end()
    return { kind, entries }
  }
  const level = r.uint(MAX_INDEX_LEVELS)
  if (level === 0) r.fail('index level 0')
  const count = r.uint(MAX_INDEX_FANOUT)
  if (count === 0) r.fail('empty index page')
  const children = new Array(count)
  let prev = null
  for (let i = 0; i < count; i++) {
    const firstNameBytes = r.lbytes(MAX_NAME)
    const firstName = decodeUtf8(firstNameBytes)
    if (prev && compareBytes(prev, firstNameBytes) >= 0) r.fail('index names not strictly sorted')
    prev = firstNameBytes
    const hash = toHex(r.bytes(HASH_LEN))
    const size = r.uint(MAX_BLOB)
    const entries = r.uint()
    if (size === 0 || entries === 0) r.fail('empty index child')
    children[i] = { firstName, firstNameBytes, hash, size, entries }
  }
  r.end()
  return { kind, level, children }
}

export function encodeLeaf (encodedEntries) {
  const w = new Writer(16 + encodedEntries.reduce((n, e) => n + e.length, 0))
  w.bytes(LEAF_MAGIC); w.uint(encodedEntries.length)
  for (const e of encodedEntries) w.bytes(e)
  return w.result()
}

export function encodeIndex (level, children) {
  const w = new Writer()
  w.bytes(INDEX_MAGIC); w.uint(level); w.uint(children.length)
  for (const c of children) {
    w.lbytes(utf8.encode(c.firstName)); w.bytes(fromHex(c.hash)); w.uint(c.size); w.uint(c.entries)
  }
  return w.result()
}

/** Encode one entry on its own (builders use the length to cut pages). */
export function encodeEntry (e) {
  const w = new Writer(64 + (e.inline ? e.inline.length : 0)); writeEntry(w, e); return w.result()
}

// FNV-1a over the name's bytes: the page-cut test needs only a stable spread,
// not a cryptographic hash (names are chosen by the trusted publisher).
function fnv1a (bytes) {
  let h = 0x811c9dc5
  for (let i = 0; i < bytes.length; i++) h = Math.imul(h ^ bytes[i], 0x01000193)
  return h >>> 0
}

/**
 * Build a directory from its entries (any order) and store its blobs.
 * @param {import('./entry.js').Entry[]} entries
 * @param {(bytes: Uint8Array) => Promise<{hash: string, size: number}>} put stores a blob, returns its ref
 * @returns {Promise<{ hash: string, size: number, entries: number }>} ref to the directory's top blob
 */
export async function buildDirectory (entries, put) {
  const items = entries.map(e => ({ e, nameBytes: utf8.encode(e.name), bytes: encodeEntry(e) }))
  items.sort((a, b) => compareBytes(a.nameBytes, b.nameBytes))
  for (let i = 1; i < items.length; i++) {
    if (compareBytes(items[i - 1].nameBytes, items[i].nameBytes) === 0) throw new RangeError('duplicate name ' + items[i].e.name)
  }
  if (items.length === 0) return { ...(await put(encodeLeaf([]))), entries: 0 }
  const leaves = groupByContent(items, {
    size: t => t.bytes.length,
    cut: t => fnv1a(t.nameBytes) >>> (32 - PAGE_CUT_BITS) === 0,
    min: PAGE_MIN,
    max: PAGE_MAX,
    maxCount: MAX_PAGE_ENTRIES
  })
  let level = await Promise.all(leaves.map(async page => ({
    firstName: page[0].e.name,
    entries: page.length,
    ...(await put(encodeLeaf(page.map(t => t.bytes))))
  })))
  for (let depth = 1; level.length > 1; depth++) {
    if (depth > MAX_INDEX_LEVELS) throw new RangeError('directory too large')
    const groups = groupByContent(level, {
      size: c => utf8.encode(c.firstName).length + HASH_LEN + 16,
      cut: c => hashCut(c.hash, 8),
      min: 0,
      max: MAX_BLOB - 64,
      maxCount: MAX_INDEX_FANOUT
    })
    level = await Promise.all(groups.map(async g => ({
      firstName: g[0].firstName,
      entries: g.reduce((n, c) => n + c.entries, 0),
      ...(await put(encodeIndex(depth, g)))
    })))
  }
  const top = level[0]
  return { hash: top.hash, size: top.size, entries: top.entries }
}

export { concat }

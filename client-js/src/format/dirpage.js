// FORMAT.md §4.4 (§12.6 for version 2): directory blobs. A directory is one
// leaf page, or a tree of index pages over leaf pages when it is large. Names
// are strictly increasing bytewise, so a verified page proves both presence
// and absence (SFSRO §3.2.2 sorts directories for the same reason).
//
//   leaf  := "rtD" <version> uint(count) count × entry
//   index := "rtX" <version> uint(level ≥ 1) uint(count ≥ 1)
//            count × (lbytes(firstName) ref(child page) uint(entries))
//   A level-1 index points at leaves; a level-n index at level n-1 indexes.
//   <version> is the byte 0x01 or 0x02; ref and entry are those of that
//   version (ref.js, entry.js). Every function takes the version explicitly
//   ({ version }, default 1): a page of the other version is ROTREE_BAD_FORMAT.
import { BadFormatError } from '../errors.js'
import { Reader, Writer, utf8, decodeUtf8, compareBytes, concat } from './bytes.js'
import { readEntry, writeEntry } from './entry.js'
import { readRef, writeRef, refOf, versionOf } from './ref.js'
import { groupByContent, hashCut } from './group.js'
import {
  HASH_LEN, MAX_NAME, MAX_BLOB, MAX_PAGE_ENTRIES, MAX_INDEX_FANOUT, MAX_INDEX_LEVELS,
  PAGE_MIN, PAGE_MAX, PAGE_CUT_BITS
} from './limits.js'

export const LEAF_MAGIC = Uint8Array.of(0x72, 0x74, 0x44, 0x01) // "rtD" v1
export const INDEX_MAGIC = Uint8Array.of(0x72, 0x74, 0x58, 0x01) // "rtX" v1
const LEAF = 0x44
const INDEX = 0x58
const OPTS = [null, { version: 1 }, { version: 2 }] // one options object per version, not one per entry

function magicOf (b, version) {
  if (b.length < 4 || b[0] !== 0x72 || b[1] !== 0x74) return null
  if (b[3] !== version) return (b[2] === LEAF || b[2] === INDEX) && b[3] >= 1 && b[3] <= 2 ? 'version' : null
  return b[2] === LEAF ? 'leaf' : b[2] === INDEX ? 'index' : null
}

function magic (type, version) { return Uint8Array.of(0x72, 0x74, type, version) }

/**
 * Decode a directory blob (already hash-verified, and decoded by its codec).
 * Every invariant a lookup relies on is checked here: sorted names, bounded
 * counts, exact length.
 * @param {Uint8Array} bytes
 * @param {{ version?: 1|2 }} [o] the tree's format version (its parent's: FORMAT.md §6.1)
 */
export function decodeDirPage (bytes, o) {
  const version = versionOf(o)
  const kind = magicOf(bytes, version)
  if (kind === 'version') throw new BadFormatError(`a version-${bytes[3]} directory blob in a version-${version} tree`)
  if (!kind) throw new BadFormatError('not a directory blob (bad magic)')
  const r = new Reader(bytes); r.pos = 4
  const eo = OPTS[version]
  if (kind === 'leaf') {
    const count = r.uint(MAX_PAGE_ENTRIES)
    const entries = new Array(count)
    let prev = null
    for (let i = 0; i < count; i++) {
      const e = readEntry(r, eo)
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
    const c = readRef(r, version, MAX_BLOB)
    const entries = r.uint()
    if (entries === 0) r.fail('empty index child')
    children[i] = version === 1
      ? { firstName, firstNameBytes, hash: c.hash, size: c.size, entries }
      : { firstName, firstNameBytes, hash: c.hash, size: c.size, storedSize: c.storedSize, codec: c.codec, entries }
    if (c.key !== undefined) children[i].key = c.key // a private tree's sealed page (FORMAT.md §12.8)
  }
  r.end()
  return { kind, level, children }
}

/**
 * Encode a directory page, the inverse of decodeDirPage: { kind: 'leaf',
 * entries } (entries as decodeDirPage gives them, or already encoded with
 * encodeEntry) or { kind: 'index', level, children: [{ firstName, hash,
 * size, entries, storedSize?, codec? }] }.
 * @param {{ version?: 1|2 }} [o]
 */
export function encodeDirPage (page, o) {
  if (page.kind === 'leaf') return encodeLeaf(page.entries.map(e => e instanceof Uint8Array ? e : encodeEntry(e, o)), o)
  if (page.kind === 'index') return encodeIndex(page.level, page.children, o)
  throw new RangeError('bad page kind: ' + page.kind)
}

/** A leaf page of entries already encoded with encodeEntry (of the same version). */
export function encodeLeaf (encodedEntries, o) {
  const w = new Writer(16 + encodedEntries.reduce((n, e) => n + e.length, 0))
  w.bytes(magic(LEAF, versionOf(o))); w.uint(encodedEntries.length)
  for (const e of encodedEntries) w.bytes(e)
  return w.result()
}

export function encodeIndex (level, children, o) {
  const version = versionOf(o)
  const w = new Writer()
  w.bytes(magic(INDEX, version)); w.uint(level); w.uint(children.length)
  for (const c of children) {
    w.lbytes(utf8.encode(c.firstName)); writeRef(w, c, version); w.uint(c.entries)
  }
  return w.result()
}

/** Encode one entry on its own (builders use the length to cut pages). */
export function encodeEntry (e, o) {
  const w = new Writer(64 + (e.inline ? e.inline.length : 0)); writeEntry(w, e, o); return w.result()
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
 *   (version 2: { hash, size, storedSize, codec }, size being bytes.length: put decides
 *   whether to store the page compressed, FORMAT.md §12.6)
 * @param {{ version?: 1|2 }} [o]
 * @returns {Promise<{ hash: string, size: number, entries: number }>} ref to the directory's top blob
 */
export async function buildDirectory (entries, put, o) {
  const version = versionOf(o)
  // FORMAT.md §4.5: an upper bound on an index child's encoding past its name;
  // a version-2 ref may take 4 bytes more (codec, decoded size)
  const childBound = version === 1 ? HASH_LEN + 16 : HASH_LEN + 20
  const items = entries.map(e => ({ e, nameBytes: utf8.encode(e.name), bytes: encodeEntry(e, o) }))
  items.sort((a, b) => compareBytes(a.nameBytes, b.nameBytes))
  for (let i = 1; i < items.length; i++) {
    if (compareBytes(items[i - 1].nameBytes, items[i].nameBytes) === 0) throw new RangeError('duplicate name ' + items[i].e.name)
  }
  if (items.length === 0) return { ...(await put(encodeLeaf([], o))), entries: 0 }
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
    ...(await put(encodeLeaf(page.map(t => t.bytes), o)))
  })))
  for (let depth = 1; level.length > 1; depth++) {
    if (depth > MAX_INDEX_LEVELS) throw new RangeError('directory too large')
    const groups = groupByContent(level, {
      size: c => utf8.encode(c.firstName).length + childBound,
      cut: c => hashCut(c.hash, 8),
      min: 0,
      max: MAX_BLOB - 64,
      maxCount: MAX_INDEX_FANOUT
    })
    level = await Promise.all(groups.map(async g => ({
      firstName: g[0].firstName,
      entries: g.reduce((n, c) => n + c.entries, 0),
      ...(await put(encodeIndex(depth, g, o)))
    })))
  }
  const top = level[0]
  return { ...refOf(top), entries: top.entries }
}

export { concat }

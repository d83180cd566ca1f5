// Tiles and entry bundles as C2SP tlog-tiles serves them: a tile is a run
// of consecutive hashes of one level of the tree, height 8 (256 hashes), at
//
//   tile/<L>/<N>[.p/<W>]        L the tile level, N its index, W the width of a partial tile
//   tile/entries/<N>[.p/<W>]    the entries whose leaf hashes level-0 tile N holds
//
// N in 3-digit path elements, all but the last prefixed with x (1234067 is
// x001/x234/067). Entry bundles are the entries, each after its length as 2
// big-endian bytes. The arithmetic takes the height as Go's tlog does (its
// tests use height 2), `level -1` is the entry bundle; paths are C2SP's,
// which leave the height out (always 8).
import { HASH_SIZE, TlogError, nodeHash, storedHashIndex, splitStoredHashIndex, storedHashCount, treeHash } from './hash.js'

export const TILE_HEIGHT = 8
export const ENTRIES_LEVEL = -1
/** An entry bundle holds entries of at most this many bytes (the 2-byte length). */
export const MAX_ENTRY = 0xffff

/**
 * @typedef {{ H: number, L: number, N: number, W: number }} Tile
 *   H height, L level (−1: entry bundle), N index in the level, W width (hashes; 2^H when full)
 */

/** The smallest tile holding stored hash `index`: { tile, start, end } (byte offsets in its data). */
export function tileForIndex (h, index) {
  const s = splitStoredHashIndex(index)
  let level = s.level; let n = s.n
  const L = Math.floor(level / h)
  level -= L * h // level within the tile
  const N = Math.floor(n * 2 ** level / 2 ** h)
  n -= N * 2 ** h / 2 ** level // n within the tile at that level
  const W = (n + 1) * 2 ** level
  return { tile: { H: h, L, N, W }, start: n * 2 ** level * HASH_SIZE, end: (n + 1) * 2 ** level * HASH_SIZE }
}

/** Stored hash `index` read from `data`, the bytes of tile `t` (Go's HashFromTile). */
export function hashFromTile (t, data, index) {
  if (t.H < 1 || t.H > 30 || t.L < 0 || t.L >= 64 || t.W < 1 || t.W > 2 ** t.H) throw new TlogError(`invalid tile ${tilePath(t)}`)
  if (data.length < t.W * HASH_SIZE) throw new TlogError(`${data.length} bytes are too short for tile ${tilePath(t)}`)
  const { tile: t1, start, end } = tileForIndex(t.H, index)
  if (t.L !== t1.L || t.N !== t1.N || t.W < t1.W) throw new TlogError(`stored hash ${index} is in ${tilePath(t1)}, not ${tilePath(t)}`)
  return tileHash(data.subarray(start, end))
}

function tileHash (data) {
  if (data.length === HASH_SIZE) return data.slice()
  const n = data.length / 2
  return nodeHash(tileHash(data.subarray(0, n)), tileHash(data.subarray(n)))
}

/** The tiles that change when the tree grows from oldSize to newSize leaves (Go's NewTiles), lowest level first. */
export function newTiles (h, oldSize, newSize) {
  const tiles = []
  const full = 2 ** h
  for (let level = 0; Math.floor(newSize / 2 ** (h * level)) > 0; level++) {
    const oldN = Math.floor(oldSize / 2 ** (h * level))
    const newN = Math.floor(newSize / 2 ** (h * level))
    if (oldN === newN) continue
    for (let n = Math.floor(oldN / full); n < Math.floor(newN / full); n++) tiles.push({ H: h, L: level, N: n, W: full })
    const n = Math.floor(newN / full)
    const w = newN - n * full
    if (w > 0) tiles.push({ H: h, L: level, N: n, W: w })
  }
  return tiles
}

/** Every tile a tree of `size` leaves is served as (newTiles from 0). */
export function tilesForSize (h, size) { return newTiles(h, 0, size) }

/** The bytes of tile t: its hashes, read from the stored hashes. */
export function readTileData (t, readHashes) {
  const size = t.W
  const start = t.N * 2 ** t.H
  const indexes = []
  for (let i = 0; i < size; i++) indexes.push(storedHashIndex(t.H * t.L, start + i))
  const hashes = readHashes(indexes)
  if (hashes.length !== indexes.length) throw new TlogError(`readHashes(${indexes.length} indexes) gave ${hashes.length} hashes`)
  const out = new Uint8Array(size * HASH_SIZE)
  hashes.forEach((hash, i) => out.set(hash, i * HASH_SIZE))
  return out
}

function indexPath (n) {
  let s = String(n % 1000).padStart(3, '0')
  for (n = Math.floor(n / 1000); n > 0; n = Math.floor(n / 1000)) s = `x${String(n % 1000).padStart(3, '0')}/${s}`
  return s
}

/** C2SP tlog-tiles path of tile t (level −1: its entry bundle). */
export function tilePath (t) {
  const p = t.W === 2 ** t.H ? '' : `.p/${t.W}`
  return `tile/${t.L === ENTRIES_LEVEL ? 'entries' : t.L}/${indexPath(t.N)}${p}`
}

/** The entry bundle beside level-0 tile t. */
export function bundleOf (t) { return { ...t, L: ENTRIES_LEVEL } }

/**
 * A C2SP tile path read back as a tile of height h, or a TlogError: only the
 * one spelling tilePath writes is accepted.
 * @param {string} path @param {number} [h]
 */
export function parseTilePath (path, h = TILE_HEIGHT) {
  const bad = () => new TlogError(`malformed tile path ${JSON.stringify(path)}`)
  let f = path.split('/')
  if (f.length < 3 || f[0] !== 'tile') throw bad()
  const L = f[1] === 'entries' ? ENTRIES_LEVEL : /^(0|[1-9][0-9]?)$/.test(f[1]) ? Number(f[1]) : NaN
  if (Number.isNaN(L) || L > 63) throw bad()
  let W = 2 ** h
  if (f.length >= 4 && f[f.length - 2].endsWith('.p')) {
    if (!/^[1-9][0-9]*$/.test(f[f.length - 1])) throw bad()
    W = Number(f[f.length - 1])
    if (W >= 2 ** h) throw bad()
    f = [...f.slice(0, -2), f[f.length - 2].slice(0, -2)]
  }
  let N = 0
  for (const s of f.slice(2)) {
    if (!/^x?[0-9]{3}$/.test(s)) throw bad()
    N = N * 1000 + Number(s.replace('x', ''))
  }
  if (!Number.isSafeInteger(N)) throw bad()
  const t = { H: h, L, N, W }
  if (tilePath(t) !== path) throw bad()
  return t
}

/** An entry bundle: each entry after its length as 2 big-endian bytes. */
export function encodeBundle (entries) {
  let size = 0
  for (const e of entries) {
    if (e.length > MAX_ENTRY) throw new TlogError(`an entry of ${e.length} bytes is over the ${MAX_ENTRY} an entry bundle holds`)
    size += 2 + e.length
  }
  const out = new Uint8Array(size)
  let at = 0
  for (const e of entries) {
    out[at] = e.length >> 8; out[at + 1] = e.length & 0xff
    out.set(e, at + 2)
    at += 2 + e.length
  }
  return out
}

/** The entries of a bundle; `count` when given must be exactly how many it holds. */
export function decodeBundle (bytes, count) {
  const entries = []
  let at = 0
  while (at < bytes.length) {
    if (at + 2 > bytes.length) throw new TlogError('entry bundle ends inside a length')
    const n = (bytes[at] << 8) | bytes[at + 1]
    if (at + 2 + n > bytes.length) throw new TlogError('entry bundle ends inside an entry')
    entries.push(bytes.subarray(at + 2, at + 2 + n))
    at += 2 + n
  }
  if (count !== undefined && entries.length !== count) throw new TlogError(`entry bundle holds ${entries.length} entries, not ${count}`)
  return entries
}

/**
 * A readHashes for the tree of `size` leaves over its tiles (`tiles`: path →
 * bytes, as tilesForSize names them), like Go's TileHashReader but without
 * fetching: the caller brings the tiles, and checks the tree hash it gets
 * against a signed checkpoint (treeHashFromTiles).
 */
export function tileHashReader (size, tiles, h = TILE_HEIGHT) {
  const count = storedHashCount(size)
  return indexes => indexes.map(index => {
    if (!(index >= 0 && index < count)) throw new TlogError(`stored hash ${index} is not in a tree of ${size}`)
    const { tile } = tileForIndex(h, index)
    // the tile at that place as a tree of this size serves it
    const width = Math.min(2 ** h, Math.floor(size / 2 ** (h * tile.L)) - tile.N * 2 ** h)
    const t = { ...tile, W: width }
    const data = tiles.get(tilePath(t))
    if (data === undefined) throw new TlogError(`tile ${tilePath(t)} is missing`)
    if (data.length !== width * HASH_SIZE) throw new TlogError(`tile ${tilePath(t)} is ${data.length} bytes, not ${width * HASH_SIZE}`)
    return hashFromTile(t, data, index)
  })
}

/** The root hash of the tree of `size` leaves, from its tiles (path → bytes). */
export function treeHashFromTiles (size, tiles, h = TILE_HEIGHT) { return treeHash(size, tileHashReader(size, tiles, h)) }

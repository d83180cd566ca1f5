// A tree's transparency log as a reader fetches it (docs/FORMAT.md §13):
// log/checkpoint, a C2SP checkpoint signed as a signed note by a key of the
// tree (version 1: its key; version 2: a timestamp key), and the tiles and
// entry bundles under log/tile/, every leaf one signed fsinfo.json. fetchLog
// takes all of it and checks it whole: the checkpoint's signature and
// origin, every entry against the tree hash it signs, every tile against
// the entries. auditLog then checks each leaf as `rotree log` checks a
// history entry, and that no sequence number names two roots (a split view).
import {
  openNote, parseCheckpoint, verifierOf, tilesForSize, tilePath, bundleOf, decodeBundle, leafHash,
  storedHashesForLeafHash, arrayHashReader, treeHash, readTileData, equalHash, encodeBase64, TILE_HEIGHT, HASH_SIZE,
  tileForIndex, tileHashReader, storedHashIndex, inclusionProof, formatTlogProof, parseTlogProof, verifyTlogProof,
  cosignatureVerifierOf, verifyCosignatures
} from '../tlog/index.js'
import { BadFormatError, BadSignatureError, WrongKeyError, HashMismatchError, TruncatedError, SplitViewError, ThresholdError } from '../errors.js'
import { MAX_COSIGNATURE_AGE_S } from '../trust/witnessed.js'
import { fsinfoVersion, decodeFsinfoV2, MAX_FSINFO_V2 } from '../format/fsinfo-v2.js'
import { decodeFsinfo } from '../format/fsinfo.js'
import { historyVerifier } from './history.js'

export const LOG_DIR = 'log'
export const CHECKPOINT_PATH = `${LOG_DIR}/checkpoint`
/** Bytes of log/checkpoint a reader takes: the text and a hundred signatures (C2SP signed-note's floor). */
export const MAX_CHECKPOINT = 16 * 1024
const HEIGHT = TILE_HEIGHT

/** The checkpoint origin of a tree: `rotree/<anchor>[:<name>]`, its address fragment (a version-1 tree: its key). */
export function logOrigin (anchor, name = '') { return `rotree/${anchor}${name ? ':' + name : ''}` }

/** The origin and the keys that may sign the checkpoint of the tree a root record (or decoded fsinfo.json) belongs to. */
export function logSignersOf (rec) {
  if (rec.version === 2) return { origin: logOrigin(rec.anchor, rec.name), keys: rec.roles.timestamp.keys }
  return { origin: logOrigin(rec.key), keys: [rec.key] }
}

/**
 * log/checkpoint's bytes read as a signed checkpoint of `origin` by one of
 * `keys` (64 hex): { origin, size, hash, extensions, signedBy, bytes }.
 */
export function readCheckpoint (bytes, { origin, keys }) {
  let note
  try { note = openNote(bytes, keys.map(k => verifierOf(origin, k))) } catch (err) {
    if (/signature/.test(err.message)) throw new BadSignatureError(`log/checkpoint: ${err.message} by a key of ${origin}`, { cause: err })
    throw new BadFormatError(`log/checkpoint: ${err.message}`, { cause: err })
  }
  let cp
  try { cp = parseCheckpoint(note.text) } catch (err) { throw new BadFormatError(`log/checkpoint: ${err.message}`, { cause: err }) }
  if (cp.origin !== origin) throw new WrongKeyError(`log/checkpoint is the log of ${JSON.stringify(cp.origin)}, not of ${origin}`)
  return { ...cp, signedBy: note.sigs, bytes }
}

/**
 * Fetch and check a tree's whole log through `fetch(path, cap, check)` (a
 * tree's mirrors: tree.mirrors.fetch). Throws the typed error of the first
 * thing that does not hold.
 * @param {{ origin: string, keys: string[], local?: (path: string) => Promise<Uint8Array|null>, unchanged?: (checkpoint: object) => boolean }} o
 *   local: a copy of a tile or bundle already held (a path under log/ never changes its bytes once a
 *   checkpoint covers it; what it gives is checked like the rest); unchanged: stop after the checkpoint
 * @returns {Promise<{ checkpoint: object, entries: Uint8Array[], tiles: Map<string, Uint8Array>, bundles: Map<string, Uint8Array>, unchanged?: true }>}
 *   tiles and bundles by their path under log/
 */
export async function fetchLog (fetch, { origin, keys, local = async () => null, unchanged = () => false }) {
  const checkpoint = await fetch(CHECKPOINT_PATH, MAX_CHECKPOINT, bytes => readCheckpoint(bytes, { origin, keys }))
  if (unchanged(checkpoint)) return { checkpoint, entries: [], tiles: new Map(), bundles: new Map(), unchanged: true }
  const get = async (p, cap, check) => {
    const held = await local(p)
    return held !== null && held.length <= cap ? check(held) : fetch(`${LOG_DIR}/${p}`, cap, check)
  }
  const all = tilesForSize(HEIGHT, checkpoint.size)
  const tiles = new Map(); const bundles = new Map()
  await Promise.all(all.map(async t => {
    const p = tilePath(t)
    tiles.set(p, await get(p, t.W * HASH_SIZE, bytes => {
      if (bytes.length !== t.W * HASH_SIZE) throw new TruncatedError(`log/${p} is ${bytes.length} bytes, not ${t.W * HASH_SIZE}`)
      return bytes
    }))
  }))
  const level0 = all.filter(t => t.L === 0)
  const parts = await Promise.all(level0.map(async t => {
    const p = tilePath(bundleOf(t))
    const tile = tiles.get(tilePath(t))
    const bytes = await get(p, t.W * (2 + MAX_FSINFO_V2), b => {
      let es
      try { es = decodeBundle(b, t.W) } catch (err) { throw new BadFormatError(`log/${p}: ${err.message}`, { cause: err }) }
      // each entry hashes to its leaf hash in the level-0 tile (checked against the checkpoint below)
      es.forEach((e, i) => {
        if (!equalHash(leafHash(e), tile.subarray(i * HASH_SIZE, (i + 1) * HASH_SIZE))) throw new HashMismatchError(`log/${p}: entry ${t.N * 256 + i} does not hash to its leaf in log/${tilePath(t)}`)
      })
      return b
    })
    bundles.set(p, bytes)
    return decodeBundle(bytes, t.W)
  }))
  const entries = parts.flat()
  const stored = []
  const read = arrayHashReader(stored)
  entries.forEach((e, i) => { stored.push(...storedHashesForLeafHash(i, leafHash(e), read)) })
  if (!equalHash(treeHash(checkpoint.size, read), checkpoint.hash)) throw new HashMismatchError(`the log's ${checkpoint.size} entries do not hash to the root its checkpoint signs`)
  for (const t of all) {
    if (!equalHash(readTileData(t, read), tiles.get(tilePath(t)))) throw new HashMismatchError(`log/${tilePath(t)} is not the tile of the log's entries`)
  }
  return { checkpoint, entries, tiles, bundles }
}

const decodeAny = bytes => fsinfoVersion(bytes) === 2 ? decodeFsinfoV2(bytes) : decodeFsinfo(bytes)
const sameBytes = (a, b) => a.length === b.length && a.every((x, i) => x === b[i])

/**
 * `rotree log-audit`: the tree's whole log fetched and checked (fetchLog),
 * then every leaf verified as a history entry of the tree (docs/TRUST.md
 * rule 17), in increasing sequence, each sequence once; a sequence number
 * (or, version 2, a release number) with two different roots, or a current
 * fsinfo.json other than the one the log holds for its sequence, is a split
 * view. Problems are reported, not thrown (but fetchLog's).
 * @param {import('./tree.js').Tree} tree an open tree
 * @returns {Promise<{ origin: string, size: number, root: string, signedBy: object[], leaves: object[],
 *   current: { seq: number, logged: boolean }, problems: { code: string, message: string, index?: number, seq?: number }[] }>}
 */
export async function auditLog (tree) {
  const rec = tree.rootRecord
  const signers = logSignersOf(rec)
  const log = await fetchLog((p, cap, check) => tree.mirrors.fetch(p, cap, check), signers)
  const verify = historyVerifier(tree)
  const leaves = []; const problems = []
  const bySeq = new Map(); const byRelease = new Map()
  const split = (message, index, seq) => problems.push({ code: new SplitViewError('').code, message, index, seq })
  for (const [index, bytes] of log.entries.entries()) {
    let info
    try { info = decodeAny(bytes) } catch (err) { problems.push({ code: err.code ?? 'ROTREE_BAD_FORMAT', message: `leaf ${index}: ${err.message}`, index }); continue }
    const leaf = { index, seq: info.seq, ok: true }
    try {
      const r = await verify(bytes, info.seq)
      if (r.version === 2) leaf.release = r.release.seq
      leaf.root = r.root?.hash ?? null
    } catch (err) {
      Object.assign(leaf, { ok: false, code: err.code, message: err.message })
      problems.push({ code: err.code ?? 'ROTREE_BAD_FORMAT', message: `leaf ${index} (seq ${info.seq}): ${err.message}`, index, seq: info.seq })
    }
    leaves.push(leaf)
    const prev = bySeq.get(info.seq)
    if (prev) {
      if (sameBytes(prev.bytes, bytes)) problems.push({ code: 'ROTREE_BAD_FORMAT', message: `leaf ${index} repeats leaf ${prev.index} (seq ${info.seq}): each fsinfo.json goes in the log once`, index, seq: info.seq })
      else split(`leaves ${prev.index} and ${index} are two different signed roots with sequence ${info.seq}`, index, info.seq)
    } else {
      const last = leaves.length > 1 ? leaves[leaves.length - 2].seq : -1
      if (info.seq < last) problems.push({ code: 'ROTREE_BAD_FORMAT', message: `leaf ${index} has sequence ${info.seq}, below the leaf before it (${last})`, index, seq: info.seq })
      bySeq.set(info.seq, { index, bytes })
    }
    if (info.version === 2) {
      const r = byRelease.get(info.release.seq)
      if (r && r.hash !== info.releaseHash) split(`leaves ${r.index} and ${index} carry two different releases with release sequence ${info.release.seq}`, index, info.seq)
      if (!r) byRelease.set(info.release.seq, { index, hash: info.releaseHash })
    }
  }
  const held = bySeq.get(rec.seq)
  const lastSeq = leaves.length ? Math.max(...leaves.map(l => l.seq)) : -1
  if (held && tree.fsinfoBytes && !sameBytes(log.entries[held.index], tree.fsinfoBytes)) {
    split(`the mirror's fsinfo.json (sequence ${rec.seq}) is not the one the log holds for that sequence (leaf ${held.index})`, held.index, rec.seq)
  } else if (!held && rec.seq < lastSeq) {
    split(`the mirror's fsinfo.json (sequence ${rec.seq}) is not in the log, which holds later ones`, undefined, rec.seq)
  }
  return {
    origin: signers.origin,
    size: log.checkpoint.size,
    root: encodeBase64(log.checkpoint.hash),
    signedBy: log.checkpoint.signedBy,
    leaves,
    current: { seq: rec.seq, logged: held !== undefined },
    problems
  }
}

// ---- the log part of a proof bundle (FORMAT.md §13.2): a C2SP tlog-proof ----

/** The tile that serves stored hash `index` in a tree of `size` leaves: [path, tile]. */
function tileAt (size, index) {
  const { tile } = tileForIndex(HEIGHT, index)
  const W = Math.min(2 ** HEIGHT, Math.floor(size / 2 ** (HEIGHT * tile.L)) - tile.N * 2 ** HEIGHT)
  const t = { ...tile, W }
  return [tilePath(t), t]
}

async function fetchTiles (fetch, need, tiles) {
  await Promise.all([...need].filter(([p]) => !tiles.has(p)).map(async ([p, t]) => {
    tiles.set(p, await fetch(`${LOG_DIR}/${p}`, t.W * HASH_SIZE, b => {
      if (b.length !== t.W * HASH_SIZE) throw new TruncatedError(`log/${p} is ${b.length} bytes, not ${t.W * HASH_SIZE}`)
      return b
    }))
  }))
}

/**
 * A C2SP tlog-proof that `fsinfoBytes` is a leaf of the tree's log, from
 * log/checkpoint (with its cosignatures, verbatim) and the few tiles the
 * inclusion proof needs: the leaf is looked for among the log's latest 256
 * leaves (a current fsinfo.json is the last). Throws SplitViewError when the
 * log does not hold it, or the typed error of a bad checkpoint or tile.
 * @param {(path: string, cap: number, check: (b: Uint8Array) => any) => Promise<any>} fetch
 * @returns {Promise<{ text: string, index: number, size: number }>}
 */
export async function proveLogged (fetch, { fsinfoBytes, origin, keys }) {
  const cp = await fetch(CHECKPOINT_PATH, MAX_CHECKPOINT, bytes => readCheckpoint(bytes, { origin, keys }))
  if (cp.size === 0) throw new SplitViewError(`the log of ${origin} is empty: it does not hold this fsinfo.json`)
  const tiles = new Map()
  await fetchTiles(fetch, new Map([tileAt(cp.size, storedHashIndex(0, cp.size - 1))]), tiles)
  const read = tileHashReader(cp.size, tiles)
  const leaf = leafHash(fsinfoBytes)
  const first = Math.floor((cp.size - 1) / 2 ** HEIGHT) * 2 ** HEIGHT
  let index = -1
  for (let i = cp.size - 1; i >= first && index < 0; i--) if (equalHash(read([storedHashIndex(0, i)])[0], leaf)) index = i
  if (index < 0) throw new SplitViewError(`this fsinfo.json is not among the latest ${cp.size - first} leaves of the log of ${origin} (size ${cp.size})`)
  const need = new Map()
  inclusionProof(cp.size, index, ix => { ix.forEach(i => { const [p, t] = tileAt(cp.size, i); need.set(p, t) }); return ix.map(() => new Uint8Array(HASH_SIZE)) })
  await fetchTiles(fetch, need, tiles)
  const proof = inclusionProof(cp.size, index, tileHashReader(cp.size, tiles))
  try { verifyTlogProof({ index, proof }, leaf, cp) } catch (err) {
    throw new SplitViewError(`the log's tiles do not hash to the root its checkpoint signs (size ${cp.size})`, { cause: err })
  }
  return { text: formatTlogProof({ index, proof, checkpoint: cp.bytes }), index, size: cp.size }
}

/**
 * Check a tlog-proof (proveLogged's text) offline, as a reader at `nowMs`
 * checks the log (FORMAT.md §13.1): the checkpoint signed by a log key of
 * `origin`; when `witnesses` is given, at least its threshold of fresh
 * cosignatures by distinct witnesses of the trust document
 * (ROTREE_THRESHOLD); and fsinfoBytes the leaf at the proof's index of the
 * checkpoint's tree (ROTREE_SPLIT_VIEW when not).
 * @returns {{ index: number, size: number, hash: string, cosigned: { name: string, time: number }[] }} hash: the checkpoint's root hash, hex
 */
export function checkLogProof (text, { fsinfoBytes, origin, keys, witnesses = null, nowMs, skewMs = 300_000 }) {
  let p
  try { p = parseTlogProof(text) } catch (err) { throw new BadFormatError(`tlog-proof: ${err.message}`, { cause: err }) }
  const cpBytes = new TextEncoder().encode(p.checkpoint)
  const cp = readCheckpoint(cpBytes, { origin, keys })
  let cosigned = []
  if (witnesses) {
    let sigs
    try { sigs = verifyCosignatures(cpBytes, witnesses.list.map(w => cosignatureVerifierOf(w.name, w.key))) } catch (err) {
      throw new BadSignatureError(`log/checkpoint: ${err.message}`, { cause: err })
    }
    const now = Math.floor(nowMs / 1000)
    cosigned = sigs.filter(s => s.time !== null && s.time <= now + skewMs / 1000 && now - s.time <= MAX_COSIGNATURE_AGE_S).map(s => ({ name: s.name, time: s.time }))
    if (cosigned.length < witnesses.threshold) {
      const stale = sigs.length - cosigned.length
      throw new ThresholdError(`log/checkpoint: ${cosigned.length} fresh cosignature${cosigned.length === 1 ? '' : 's'} from the trust document's witnesses, ${witnesses.threshold} required` +
        (stale ? ` (${stale} older than ${MAX_COSIGNATURE_AGE_S / 3600} hours or in the future)` : ''), { details: { valid: cosigned.length, threshold: witnesses.threshold } })
    }
  }
  try { verifyTlogProof(p, leafHash(fsinfoBytes), cp) } catch (err) {
    throw new SplitViewError(`fsinfo.json is not leaf ${p.index} of the log its checkpoint signs (size ${cp.size}): ${err.message}`, { cause: err })
  }
  return { index: p.index, size: cp.size, hash: toHexString(cp.hash), cosigned }
}

const toHexString = b => Array.from(b, x => x.toString(16).padStart(2, '0')).join('')

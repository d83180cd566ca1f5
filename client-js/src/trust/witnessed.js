// The reader's rule for a tree whose trust document names witnesses
// (docs/FORMAT.md §13.1): the fsinfo.json it accepts must be a leaf of a log
// checkpoint that the log's key signed and that at least the document's
// threshold of its witnesses cosigned, each cosignature at most a day old.
// Pure decisions over bytes the caller fetches through `fetch(path, cap,
// check)` (a tree's mirrors): first log/fsinfo.proof, the tlog-proof of the
// current fsinfo.json in its cosigned checkpoint that the publisher writes
// beside log/checkpoint (FORMAT.md §13): one request, and the tiles of the
// consistency proof from the checkpoint this reader accepted before when that
// one is smaller. When that file is absent, malformed, or not for this
// fsinfo.json (an older publisher, a publish in progress), the reader checks
// as it did before it existed: log/checkpoint, then the few tiles that bind
// the last level-0 tile to the checkpoint's root hash (one or two for a log
// under 65,536 leaves), and those of the consistency proof (mostly the same
// tiles); that check gives the verdict. A tree whose trust document names no
// witnesses is not asked for anything: the root store (root-store.js) calls
// checkWitnessed only when it names some.
import {
  openNote, parseCheckpoint, verifierOf, cosignatureVerifierOf, verifyCosignatures, treeHash, tileForIndex,
  tileHashReader, tilePath, leafHash, equalHash, storedHashIndex, consistencyProof, verifyConsistency, toHex, fromHex,
  parseTlogProof, verifyTlogProof, TILE_HEIGHT, HASH_SIZE
} from '../tlog/index.js'
import { ThresholdError, SplitViewError, BadSignatureError, BadFormatError, TruncatedError, RollbackError } from '../errors.js'

/** How old a witness's cosignature may be (seconds): FORMAT.md §13.1. */
export const MAX_COSIGNATURE_AGE_S = 86_400
const MAX_CHECKPOINT = 16 * 1024
const CHECKPOINT_PATH = 'log/checkpoint'
/** The tlog-proof of the current fsinfo.json (FORMAT.md §13): its checkpoint, and at most 63 proof lines of 45 bytes besides. */
export const PROOF_PATH = 'log/fsinfo.proof'
const MAX_PROOF = MAX_CHECKPOINT + 4 * 1024

/** The tile that serves stored hash `index` in a tree of `size` leaves: [path, tile]. */
function tileAt (size, index) {
  const { tile } = tileForIndex(TILE_HEIGHT, index)
  const W = Math.min(2 ** TILE_HEIGHT, Math.floor(size / 2 ** (TILE_HEIGHT * tile.L)) - tile.N * 2 ** TILE_HEIGHT)
  const t = { ...tile, W }
  return [tilePath(t), t]
}

/**
 * The tiles treeHash(size) reads, the level-0 tile of the last leaf, and
 * (from a kept checkpoint of `oldSize` leaves) those the consistency proof
 * from it reads: path → tile, each as the tree of `size` serves it.
 */
function tilesNeeded (size, oldSize = 0) {
  const need = new Map()
  const add = index => { const [path, t] = tileAt(size, index); need.set(path, t) }
  const dry = indexes => { indexes.forEach(add); return indexes.map(() => new Uint8Array(HASH_SIZE)) }
  treeHash(size, dry)
  if (oldSize >= 1 && oldSize < size) consistencyProof(size, oldSize, dry)
  add(storedHashIndex(0, size - 1))
  return need
}

/** The checkpoint origin of a tree (FORMAT.md §13): `rotree/<anchor>[:<name>]`. */
export const logOrigin = (anchor, name = '') => `rotree/${anchor}${name ? ':' + name : ''}`

/**
 * The root store's call (FORMAT.md §13.1; docs/TRUST.md rule 21): the
 * fsinfo.json `record` (rootRecordV2) whose trust document `trust` names
 * witnesses is required to be in the cosigned log its mirror serves
 * (`fetch`), and that log to extend `kept`, the checkpoint this reader
 * accepted before ({ size, hash } in hex, or null).
 * @returns {Promise<{ size: number, hash: string }>} the checkpoint to keep
 */
export async function checkWitnessed (fetch, { record, trust, anchor, name, kept, nowMs, skewMs }) {
  const r = await requireWitnessed(fetch, {
    fsinfoBytes: record.raw, origin: logOrigin(anchor, name), logKeys: record.roles.timestamp.keys, witnesses: trust.witnesses, nowMs, skewMs, kept
  })
  return { size: r.size, hash: r.hash }
}

/**
 * Check the log's cosigned checkpoint for the fsinfo.json a reader is about
 * to accept: through log/fsinfo.proof when it decides (one request, and the
 * consistency tiles from a smaller `kept`), else through log/checkpoint and
 * the tiles, which give the verdict. Throws ThresholdError (too few fresh cosignatures),
 * SplitViewError (the fsinfo.json is not among the log's latest 256 leaves,
 * or the log does not extend `kept`), RollbackError (a log smaller than
 * `kept`: a mirror behind), or the typed error of a malformed or badly
 * signed checkpoint or tile.
 * @param {(path: string, cap: number, check: (bytes: Uint8Array) => any) => Promise<any>} fetch
 * @param {{ fsinfoBytes: Uint8Array, origin: string, logKeys: string[],
 *   witnesses: { threshold: number, list: { name: string, key: string }[] }, nowMs: number, skewMs?: number,
 *   kept?: { size: number, hash: string } | null }} o kept: the checkpoint this reader accepted before (hash in hex)
 * @returns {Promise<{ size: number, hash: string, leaf: number, cosigned: { name: string, time: number }[] }>}
 */
export async function requireWitnessed (fetch, o) {
  return (await viaProof(fetch, o)) ?? viaCheckpoint(fetch, o)
}

/** A checkpoint note (`bytes`, served at `path`) opened: signed by a log key of `origin`, its cosignatures by `witnesses` read. */
function openCheckpoint (bytes, path, { origin, logKeys, witnesses }) {
  let note
  try { note = openNote(bytes, logKeys.map(k => verifierOf(origin, k))) } catch (err) {
    if (/signature/.test(err.message)) throw new BadSignatureError(`${path}: ${err.message} by a key of ${origin}`, { cause: err })
    throw new BadFormatError(`${path}: ${err.message}`, { cause: err })
  }
  let c
  try { c = parseCheckpoint(note.text) } catch (err) { throw new BadFormatError(`${path}: ${err.message}`, { cause: err }) }
  if (c.origin !== origin) throw new BadFormatError(`${path} is the log of ${JSON.stringify(c.origin)}, not of ${origin}`)
  let sigs
  try { sigs = verifyCosignatures(bytes, witnesses.list.map(w => cosignatureVerifierOf(w.name, w.key))) } catch (err) {
    throw new BadSignatureError(`${path}: ${err.message}`, { cause: err })
  }
  return { ...c, sigs }
}

/** The cosignatures of `cp` no older than a day and not in the future; ThresholdError when fewer than the threshold. */
function freshCosignatures (cp, path, { witnesses, nowMs, skewMs }) {
  const now = Math.floor(nowMs / 1000)
  const fresh = cp.sigs.filter(s => s.time !== null && s.time <= now + skewMs / 1000 && now - s.time <= MAX_COSIGNATURE_AGE_S)
  if (fresh.length < witnesses.threshold) {
    const stale = cp.sigs.length - fresh.length
    throw new ThresholdError(`${path}: ${fresh.length} fresh cosignature${fresh.length === 1 ? '' : 's'} from the trust document's witnesses, ${witnesses.threshold} required` +
      (stale ? ` (${stale} older than ${MAX_COSIGNATURE_AGE_S / 3600} hours or in the future)` : ''), { details: { valid: fresh.length, threshold: witnesses.threshold } })
  }
  return fresh
}

/** Fetch the tiles `need` (path → tile) into `tiles`, each exactly its width. */
async function fetchTiles (fetch, need, tiles) {
  await Promise.all([...need].filter(([p]) => !tiles.has(p)).map(async ([p, t]) => {
    tiles.set(p, await fetch(`log/${p}`, t.W * HASH_SIZE, b => {
      if (b.length !== t.W * HASH_SIZE) throw new TruncatedError(`log/${p} is ${b.length} bytes, not ${t.W * HASH_SIZE}`)
      return b
    }))
  }))
}

const forkError = (path, size, kept, cause) => new SplitViewError(`${path} (size ${size}) does not extend the checkpoint of size ${kept.size} this reader accepted before: a fork of the log, another view of the tree`, { cause })

/**
 * The check through log/fsinfo.proof: its checkpoint signed by a log key and
 * cosigned by the threshold of fresh witnesses, the fsinfo.json the leaf at
 * its index (among the latest 256 leaves, as the check through
 * log/checkpoint asks), and, from a smaller kept checkpoint, a consistency
 * proof from the tiles (SplitViewError when there is none: the cosigned
 * checkpoint forks from the one this reader accepted). Null when the proof
 * does not decide: absent, malformed, badly signed or cosigned, for another
 * fsinfo.json, or behind the kept checkpoint; the check through
 * log/checkpoint then gives the verdict, as it did before this file existed.
 */
async function viaProof (fetch, { fsinfoBytes, origin, logKeys, witnesses, nowMs, skewMs = 300_000, kept = null }) {
  let p, fresh
  try {
    p = await fetch(PROOF_PATH, MAX_PROOF, bytes => {
      const parsed = parseTlogProof(bytes) // a TlogError when malformed: set aside below, as any failure here
      return { ...parsed, cp: openCheckpoint(new TextEncoder().encode(parsed.checkpoint), PROOF_PATH, { origin, logKeys, witnesses }) }
    })
    fresh = freshCosignatures(p.cp, PROOF_PATH, { witnesses, nowMs, skewMs })
    const first = Math.floor((p.cp.size - 1) / 2 ** TILE_HEIGHT) * 2 ** TILE_HEIGHT
    if (p.cp.size === 0 || p.index < first) return null
    verifyTlogProof(p, leafHash(fsinfoBytes), p.cp)
  } catch (err) {
    if (err.code === 'ROTREE_ABORTED') throw err
    return null // another fsinfo.json's, or none: decided through log/checkpoint
  }
  const { cp } = p
  const done = { size: cp.size, hash: toHex(cp.hash), leaf: p.index, cosigned: fresh.map(s => ({ name: s.name, time: s.time })) }
  if (!kept) return done
  if (kept.size > cp.size) return null // behind what this reader accepted: log/checkpoint says whether the mirror is (RollbackError)
  if (kept.size === cp.size) {
    if (equalHash(cp.hash, fromHex(kept.hash))) return done
    throw forkError(PROOF_PATH, cp.size, kept)
  }
  // the log this reader saw before must be a prefix of this one (RFC 9162 §2.1.4); the tiles are bound by cp.hash
  const need = new Map()
  consistencyProof(cp.size, kept.size, indexes => { indexes.forEach(i => { const [path, t] = tileAt(cp.size, i); need.set(path, t) }); return indexes.map(() => new Uint8Array(HASH_SIZE)) })
  const tiles = new Map()
  await fetchTiles(fetch, need, tiles)
  try { verifyConsistency(consistencyProof(cp.size, kept.size, tileHashReader(cp.size, tiles)), cp.size, kept.size, cp.hash, fromHex(kept.hash)) } catch (err) {
    throw forkError(PROOF_PATH, cp.size, kept, err)
  }
  return done
}

/**
 * The check through log/checkpoint and the tiles (a mirror without
 * log/fsinfo.proof, or with one that does not decide).
 */
async function viaCheckpoint (fetch, { fsinfoBytes, origin, logKeys, witnesses, nowMs, skewMs = 300_000, kept = null }) {
  const cp = await fetch(CHECKPOINT_PATH, MAX_CHECKPOINT, bytes => openCheckpoint(bytes, CHECKPOINT_PATH, { origin, logKeys, witnesses }))
  const fresh = freshCosignatures(cp, CHECKPOINT_PATH, { witnesses, nowMs, skewMs })
  if (cp.size === 0) throw new SplitViewError(`the log of ${origin} is empty: it does not hold the fsinfo.json served`)
  if (kept && kept.size > cp.size) throw new RollbackError(`${CHECKPOINT_PATH} is of size ${cp.size}, behind the size ${kept.size} this reader accepted`, { details: { seq: cp.size, seen: kept.size } })
  const tiles = new Map()
  await fetchTiles(fetch, tilesNeeded(cp.size, kept?.size), tiles)
  // the tiles are bound to the cosigned root hash; then the fsinfo.json's leaf hash must be in them
  if (!equalHash(treeHash(cp.size, tileHashReader(cp.size, tiles)), cp.hash)) throw new SplitViewError(`the log's tiles do not hash to the root its cosigned checkpoint signs (size ${cp.size})`)
  const read = tileHashReader(cp.size, tiles)
  if (kept) {
    // the log this reader saw before must be a prefix of this one (RFC 9162 §2.1.4), else one of the two is a fork
    try { verifyConsistency(consistencyProof(cp.size, kept.size, read), cp.size, kept.size, cp.hash, fromHex(kept.hash)) } catch (err) {
      throw forkError(CHECKPOINT_PATH, cp.size, kept, err)
    }
  }
  const leaf = leafHash(fsinfoBytes)
  const first = Math.floor((cp.size - 1) / 2 ** TILE_HEIGHT) * 2 ** TILE_HEIGHT
  for (let i = cp.size - 1; i >= first; i--) {
    if (equalHash(read([storedHashIndex(0, i)])[0], leaf)) return { size: cp.size, hash: toHex(cp.hash), leaf: i, cosigned: fresh.map(s => ({ name: s.name, time: s.time })) }
  }
  throw new SplitViewError(`the fsinfo.json served is not in the log its witnesses cosigned (size ${cp.size}, its latest ${cp.size - first} leaves): another view of the tree`)
}

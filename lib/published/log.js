// DIR/log/: the tree's transparency log (docs/FORMAT.md §13), a C2SP
// tlog-tiles log beside h/ whose every leaf is one signed fsinfo.json, byte
// for byte, in increasing sequence. publish.js appends to it before the
// rename that makes a new fsinfo.json current:
//
//   log/tile/entries/<N>[.p/<W>]   entry bundles, then
//   log/tile/<L>/<N>[.p/<W>]       tiles, then
//   log/checkpoint                 the signed checkpoint of the new size,
//                                  with the witnesses' cosignatures (witness-client.js), then
//   log/fsinfo.proof               the C2SP tlog-proof of the new fsinfo.json in that
//                                  checkpoint (its cosignatures verbatim), last: what a
//                                  reader of a witnessed tree asks first (FORMAT.md §13)
//
// each file written under a temporary name and renamed into place. Only
// what the checkpoint covers is the log: a killed run's tiles beyond it are
// written again. The rule that makes a re-run safe: the log holds each
// history entry (history.js) once, in sequence order, so an append adds the
// history entries above the log's last sequence, then the new one; a
// sequence the log holds already is skipped when the bytes are the same and
// refused when they are not (a split view).
import fs from 'node:fs/promises'
import path from 'node:path'
import {
  leafHash, storedHashesForLeafHash, arrayHashReader, treeHash, newTiles, tilesForSize, readTileData, tilePath,
  bundleOf, encodeBundle, decodeBundle, formatCheckpoint, parseCheckpoint, signNote, signerOf, equalHash, inclusionProof,
  formatTlogProof, TILE_HEIGHT
} from 'rotree-client/tlog'
import { LOG_DIR, logOrigin } from 'rotree-client/log'
import { SplitViewError, BadFormatError } from 'rotree-client/errors'
import { listHistory, readHistory, decodeAny, writeDurable } from './history.js'
import { syncDir } from './blob-store.js'
import { pidAlive } from './lock.js'
import { collectCosignatures } from './witness-client.js'

const CHECKPOINT = 'checkpoint'
/** log/fsinfo.proof (FORMAT.md §13): the tlog-proof of the current fsinfo.json in log/checkpoint. */
export const PROOF = 'fsinfo.proof'
const TMP = /^\.tmp-(\d+)-/

/** The checkpoint origin of the tree a decoded fsinfo.json belongs to. */
export function originOf (info) { return info.version === 2 ? logOrigin(info.anchor, info.name) : logOrigin(info.key) }

async function readOptional (file) {
  try { return new Uint8Array(await fs.readFile(file)) } catch (err) {
    if (err.code === 'ENOENT') return null
    throw err
  }
}

/**
 * The log in dir as its checkpoint covers it: { size, origin, entries,
 * stored, note } (stored: every stored hash; note: the checkpoint's bytes), checked against the checkpoint's
 * tree hash; size 0 when there is no checkpoint yet. Its signature is not
 * checked: this is the publisher's own folder.
 */
export async function readLocalLog (dir) {
  const ldir = path.join(dir, LOG_DIR)
  const note = await readOptional(path.join(ldir, CHECKPOINT))
  const stored = []
  if (note === null) return { size: 0, origin: null, entries: [], stored, note }
  const text = Buffer.from(note).toString('utf8')
  let cp
  try { cp = parseCheckpoint(text.slice(0, text.lastIndexOf('\n\n') + 1)) } catch (err) {
    throw new BadFormatError(`${ldir}/checkpoint: ${err.message}; move log/ aside to start the log again`, { cause: err })
  }
  const entries = []
  for (const t of tilesForSize(TILE_HEIGHT, cp.size).filter(t => t.L === 0)) {
    const file = path.join(ldir, tilePath(bundleOf(t)))
    const bytes = await readOptional(file)
    if (bytes === null) throw new BadFormatError(`${file} is missing: the log in ${dir} is damaged`)
    entries.push(...decodeBundle(bytes, t.W))
  }
  const read = arrayHashReader(stored)
  entries.forEach((e, i) => { stored.push(...storedHashesForLeafHash(i, leafHash(e), read)) })
  if (!equalHash(treeHash(cp.size, read), cp.hash)) throw new BadFormatError(`the entries in ${ldir} do not hash to its checkpoint: the log is damaged`)
  return { size: cp.size, origin: cp.origin, entries, stored, note }
}

/** Write rel under dir/log/ under a temporary name, durable, then renamed into place; returns the file's folder. */
async function putLogFile (ldir, rel, bytes, fsync) {
  const file = path.join(ldir, rel)
  await fs.mkdir(path.dirname(file), { recursive: true })
  const tmp = path.join(path.dirname(file), `.tmp-${process.pid}-${path.basename(file)}`)
  await writeDurable(tmp, bytes, fsync)
  await fs.rename(tmp, file)
  return path.dirname(file)
}

/** The tlog-proof of leaf `index` of a log of `size` leaves (its stored hashes) in the checkpoint `note`. */
const proofOf = (size, index, stored, note) => formatTlogProof({ index, proof: inclusionProof(size, index, arrayHashReader(stored)), checkpoint: note })

/**
 * log/fsinfo.proof for `fsinfoBytes` from the log in dir (FORMAT.md §13),
 * written atomically, when the log's latest 256 leaves (those a reader looks
 * among) hold those bytes; else any proof there is removed (it is for
 * another fsinfo.json). `log`: readLocalLog(dir), when the caller has it.
 * @returns {Promise<boolean>} whether a proof was written
 */
export async function writeFsinfoProof (dir, fsinfoBytes, { fsync = true, log = null } = {}) {
  const ldir = path.join(dir, LOG_DIR)
  log ??= await readLocalLog(dir)
  const bytes = Buffer.from(fsinfoBytes)
  const first = Math.floor((log.size - 1) / 256) * 256
  let index = -1
  for (let i = log.size - 1; i >= Math.max(0, first) && index < 0; i--) if (bytes.equals(Buffer.from(log.entries[i]))) index = i
  if (index < 0) {
    await fs.rm(path.join(ldir, PROOF), { force: true })
    return false
  }
  await putLogFile(ldir, PROOF, proofOf(log.size, index, log.stored, log.note), fsync)
  if (fsync) await syncDir(ldir)
  return true
}

/**
 * The sequence number of the log's last leaf, or -1 (no log, or one that
 * does not read): from the checkpoint and the last entry bundle only. A
 * number the log holds is never used again (publish.js nextSeq), even when
 * fsinfo.json and history/ are lost.
 */
export async function lastLoggedSeq (dir) {
  try {
    const ldir = path.join(dir, LOG_DIR)
    const note = await readOptional(path.join(ldir, CHECKPOINT))
    if (note === null) return -1
    const text = Buffer.from(note).toString('utf8')
    const { size } = parseCheckpoint(text.slice(0, text.lastIndexOf('\n\n') + 1))
    const last = tilesForSize(TILE_HEIGHT, size).filter(t => t.L === 0).at(-1)
    if (last === undefined) return -1
    const bundle = await readOptional(path.join(ldir, tilePath(bundleOf(last))))
    return bundle === null ? -1 : decodeAny(decodeBundle(bundle, last.W).at(-1)).seq
  } catch { return -1 }
}

/**
 * Append `add` (entries) to the log in dir, as one new checkpoint signed by
 * `keys` ({ secretKey, publicKey } hex) under the key name `origin`.
 */
async function append (dir, log, add, { origin, keys, fsync, witnesses }) {
  const ldir = path.join(dir, LOG_DIR)
  const { stored, entries } = log
  const read = arrayHashReader(stored)
  for (const e of add) {
    stored.push(...storedHashesForLeafHash(entries.length, leafHash(e), read))
    entries.push(e)
  }
  const size = entries.length
  const dirs = new Set()
  const put = async (rel, bytes) => { dirs.add(await putLogFile(ldir, rel, bytes, fsync)) }
  for (const t of newTiles(TILE_HEIGHT, log.size, size)) {
    if (t.L === 0) await put(tilePath(bundleOf(t)), encodeBundle(entries.slice(t.N * 256, t.N * 256 + t.W)))
    await put(tilePath(t), readTileData(t, read))
  }
  if (fsync) for (const d of dirs) await syncDir(d)
  const text = formatCheckpoint({ origin, size, hash: treeHash(size, read) })
  let note = signNote(text, keys.map(k => signerOf(origin, k)))
  // FORMAT.md §13.1: the witnesses cosign before the checkpoint is written (too few: nothing is)
  if (witnesses) note += (await collectCosignatures(witnesses, { note, text, size, oldSize: log.size, read, origin })).lines.join('')
  await put(CHECKPOINT, note)
  // the proof of the new fsinfo.json (the last leaf) in that checkpoint, after it: a proof left from the
  // publish before is for the fsinfo.json still current until the rename, which a reader still checks with it
  await put(PROOF, proofOf(size, size - 1, stored, note))
  if (fsync) await syncDir(ldir)
  return size
}

/**
 * Log a fsinfo.json about to be published in dir (publish.js): every
 * history entry above the log's last sequence, then `text`, each once (the
 * rule above). `keys` sign the checkpoint: the keys that sign fsinfo.json
 * (version 1: the tree's key; version 2: the timestamp keys in hand);
 * `witnesses` (the trust document's, FORMAT.md §13.1) cosign it, at least
 * their threshold, or this throws ThresholdError and writes no checkpoint.
 * @param {string} dir @param {Uint8Array|string} text
 * @param {{ keys: { secretKey: string, publicKey: string }[], fsync?: boolean,
 *   witnesses?: { threshold: number, list: { name: string, url: string, key: string }[] } | null }} o
 * @returns {Promise<{ size: number, added: number }>}
 */
export async function logFsinfo (dir, text, { keys, fsync = true, witnesses = null }) {
  const bytes = typeof text === 'string' ? new TextEncoder().encode(text) : new Uint8Array(text)
  const info = decodeAny(bytes)
  const origin = originOf(info)
  const log = await readLocalLog(dir)
  if (log.origin !== null && log.origin !== origin) throw new BadFormatError(`${dir}/${LOG_DIR} is the log of ${log.origin}, not of ${origin}; move it aside`)
  const seqs = log.entries.map(e => decodeAny(e).seq)
  const at = seqs.lastIndexOf(info.seq)
  if (at >= 0) {
    if (Buffer.from(log.entries[at]).equals(Buffer.from(bytes))) {
      // a re-run of a publish that died after the checkpoint: its proof (again)
      await writeFsinfoProof(dir, bytes, { fsync, log })
      return { size: log.size, added: 0 }
    }
    throw new SplitViewError(`${dir}/${LOG_DIR} already holds another fsinfo.json with sequence ${info.seq} (leaf ${at}); refusing to log a second`, { details: { seq: info.seq, leaf: at } })
  }
  const last = seqs.length ? seqs[seqs.length - 1] : -1
  if (info.seq < last) throw new SplitViewError(`${dir}/${LOG_DIR} holds sequence ${last} already; fsinfo.json ${info.seq} comes too late to be logged`, { details: { seq: info.seq, last } })
  const add = []
  for (const h of (await listHistory(dir)).filter(h => h.seq > last && h.seq < info.seq).reverse()) {
    const b = await readHistory(dir, h.seq)
    let ok = false
    try { ok = b !== null && decodeAny(b).seq === h.seq } catch {}
    if (ok) add.push(new Uint8Array(b)) // else not a root: a damaged entry is fsck's, not the log's
  }
  add.push(bytes)
  const size = await append(dir, log, add, { origin, keys, fsync, witnesses })
  return { size, added: add.length }
}

/** Remove temporary files a killed writer left in log/. */
export async function cleanLogTemps (dir) {
  const walk = async d => {
    let ents
    try { ents = await fs.readdir(d, { withFileTypes: true }) } catch { return }
    for (const e of ents) {
      const m = TMP.exec(e.name)
      if (e.isDirectory()) await walk(path.join(d, e.name))
      else if (m && Number(m[1]) !== process.pid && !pidAlive(Number(m[1]))) await fs.rm(path.join(d, e.name), { force: true })
    }
  }
  await walk(path.join(dir, LOG_DIR))
}

/**
 * Write a log fetched from a mirror (rotree-client/log fetchLog) into dir:
 * tiles and bundles, the checkpoint last. The source's log/fsinfo.proof is
 * not copied: the puller makes its own from this log (writeFsinfoProof).
 */
export async function writeFetchedLog (dir, { checkpoint, tiles, bundles }, fsync = true) {
  const ldir = path.join(dir, LOG_DIR)
  const dirs = new Set()
  for (const [rel, bytes] of [...bundles, ...tiles, [CHECKPOINT, checkpoint.bytes]]) {
    const file = path.join(ldir, rel)
    await fs.mkdir(path.dirname(file), { recursive: true })
    const tmp = path.join(path.dirname(file), `.tmp-${process.pid}-${path.basename(file)}`)
    await writeDurable(tmp, bytes, fsync)
    if (fsync && rel === CHECKPOINT) for (const d of dirs) await syncDir(d)
    await fs.rename(tmp, file)
    dirs.add(path.dirname(file))
  }
  if (fsync) await syncDir(ldir)
}

// The publish step, shared by `build`, `sign --publish`, `resign` and `pull`:
// choosing a sequence number, recording every published fsinfo.json in
// history/, and the atomic rename that makes a new root current.
//
//   DIR/fsinfo.json           the current signed root (the only file readers ask for besides h/)
//   DIR/history/<seq>.json    every fsinfo.json ever published here (history.js)
//   DIR/unsigned.json         a root waiting for an offline signature (`build --unsigned`)
import fs from 'node:fs/promises'
import path from 'node:path'
import { decodeFsinfo, MAX_FSINFO_V2 } from 'rotree-client/format'
import { HISTORY_DIR, listHistory, writeHistory, writeDurable, decodeAny } from './history.js'
import { syncDir } from './blob-store.js'
import { logFsinfo, lastLoggedSeq } from './log.js'
import { readRegular } from '../open-regular.js'
import { UsageError } from 'rotree-client/errors'

export const UNSIGNED_FILE = 'unsigned.json'
const FSINFO = 'fsinfo.json'

/**
 * dir/fsinfo.json's bytes, or null when there is none: a regular file only, at
 * most MAX_FSINFO_V2 + 1 bytes (lib/open-regular.js), so a link or FIFO
 * planted there is neither followed nor waited on.
 */
export function readFsinfoFile (dir) { return readRegular(path.join(dir, FSINFO), MAX_FSINFO_V2) }

/** The fsinfo.json currently in dir, decoded (not verified), or null. A corrupt one does not block a rebuild. */
export async function readPublished (dir) {
  try {
    const bytes = await readFsinfoFile(dir)
    return bytes === null ? null : decodeFsinfo(bytes)
  } catch (err) {
    if (err.code === 'ROTREE_BAD_FORMAT' || err.code === 'ROTREE_UNSUPPORTED_VERSION') return null
    throw err
  }
}

/**
 * The fsinfo.json currently in dir decoded as its version says (not
 * verified): decodeFsinfo's shape for version 1, decodeFsinfoV2's for 2; null
 * when there is none or it does not decode.
 */
export async function readPublishedAny (dir) {
  const bytes = await readFsinfoFile(dir)
  if (bytes === null) return null
  try { return decodeAny(bytes) } catch (err) {
    if (err.code === 'ROTREE_BAD_FORMAT' || err.code === 'ROTREE_UNSUPPORTED_VERSION') return null
    throw err
  }
}

/**
 * FORMAT.md §6.2: the next sequence number, max(previous + 1, unix seconds).
 * "Previous" is the highest of the current fsinfo.json, every history entry
 * and the log's last leaf (log.js), so a number is never reused, even for a
 * root that was signed but whose rename never happened (a crash), or when
 * fsinfo.json or history/ was lost.
 */
export async function nextSeq (dir, now) {
  const [prev, hist, logged] = await Promise.all([readPublishedAny(dir), listHistory(dir), lastLoggedSeq(dir)])
  const last = Math.max(prev ? prev.seq : -1, hist.length ? hist[0].seq : -1, logged)
  return { seq: Math.max(last + 1, Math.floor(now / 1000)), last, prev }
}

/**
 * The sequence number a new root published in dir gets: `forced` when given
 * (refused unless it is above every number dir published), else nextSeq's.
 * @param {string} dir @param {number} now @param {number} [forced]
 */
export async function publishSeq (dir, now, forced) {
  const { seq: auto, last } = await nextSeq(dir, now)
  const seq = forced ?? auto
  if (seq <= last) throw new UsageError(`sequence ${seq} is not above ${last}, already published in ${dir}`)
  return seq
}

/** Highest sequence number published or recorded in dir, or -1. */
export async function lastSeq (dir) { return (await nextSeq(dir, 0)).last }

/**
 * Atomic publish: record the signed text in history/, append it to the log
 * (log.js, when `log` gives the keys to sign its checkpoint), then write a
 * temporary file, make it durable and rename it over fsinfo.json. The history
 * entry is written first, so nothing is ever current that history does not
 * hold, and the log before the rename, so nothing is current that the log
 * does not hold (a root published without keys, `sign --publish` of one
 * signed elsewhere or a pull, joins the log at the next publish with keys,
 * or is copied with the source's log: mirror/pull.js).
 * Callers make the blobs durable first (BlobStore.sync).
 * @param {string} dir @param {string|Uint8Array} text a signed fsinfo.json
 * @param {boolean} [fsync=true]
 * @param {{ keys: { secretKey: string, publicKey: string }[], witnesses?: object | null } | null} [log] the keys that sign
 *   fsinfo.json, and the witnesses that must cosign the log's checkpoint (log.js logFsinfo)
 */
export async function publishFsinfo (dir, text, fsync = true, log = null) {
  await backfillHistory(dir, fsync)
  await writeHistory(dir, text, fsync)
  if (log !== null) await logFsinfo(dir, text, { keys: log.keys, fsync, witnesses: log.witnesses ?? null })
  const tmp = path.join(dir, `.${FSINFO}.tmp-${process.pid}`)
  await writeDurable(tmp, text, fsync)
  await fs.rename(tmp, path.join(dir, FSINFO))
  if (fsync) await syncDir(dir)
}

// A folder published before history existed: record its current fsinfo.json
// before replacing it, so history holds every root from here on.
async function backfillHistory (dir, fsync) {
  let bytes, info
  try {
    bytes = await readFsinfoFile(dir)
    info = decodeAny(bytes)
  } catch { return }
  try { await fs.access(path.join(dir, HISTORY_DIR, `${info.seq}.json`)) } catch { await writeHistory(dir, bytes, fsync) }
}

/** Write dir/unsigned.json (atomically) for `rotree sign` on another machine. */
export async function writeUnsignedFile (dir, text, fsync = true) {
  const tmp = path.join(dir, `.${UNSIGNED_FILE}.tmp-${process.pid}`)
  await writeDurable(tmp, text, fsync)
  await fs.rename(tmp, path.join(dir, UNSIGNED_FILE))
  if (fsync) await syncDir(dir)
}

/** Remove dir/unsigned.json: a newer tree was published, so the pending one is superseded. */
export async function removeUnsigned (dir) {
  await fs.rm(path.join(dir, UNSIGNED_FILE), { force: true })
}

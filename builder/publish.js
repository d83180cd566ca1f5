// The publish step, shared by `build`, `sign --publish` and `resign`:
// choosing a sequence number, keeping every published fsinfo.json in
// OUT/history/, and the atomic rename that makes a new root current.
//
//   OUT/fsinfo.json           the current signed root (the only file readers ask for besides h/)
//   OUT/history/<seq>.json    every fsinfo.json ever published here, byte for byte (SFSRO §3:
//                             the publisher cannot later deny what a signed tree held)
//   OUT/unsigned.json         a root waiting for an offline signature (`build --unsigned`)
import fs from 'node:fs/promises'
import path from 'node:path'
import { decodeFsinfo } from 'rotree-client/src/format/fsinfo.js'

export const HISTORY_DIR = 'history'
export const UNSIGNED_FILE = 'unsigned.json'
const HISTORY_NAME = /^(0|[1-9][0-9]*)\.json$/

/** The fsinfo.json currently in OUT, decoded (not verified), or null. A corrupt one does not block a rebuild. */
export async function readPublished (out) {
  try {
    return decodeFsinfo(await fs.readFile(path.join(out, 'fsinfo.json')))
  } catch (err) {
    if (err.code === 'ENOENT') return null
    if (err.code === 'ROTREE_BAD_FORMAT' || err.code === 'ROTREE_UNSUPPORTED_VERSION') return null
    throw err
  }
}

/**
 * Every history entry of OUT, newest (highest seq) first.
 * @returns {Promise<{ seq: number, file: string }[]>}
 */
export async function listHistory (out) {
  let names
  try { names = await fs.readdir(path.join(out, HISTORY_DIR)) } catch (err) {
    if (err.code === 'ENOENT') return []
    throw err
  }
  return names.filter(n => HISTORY_NAME.test(n))
    .map(n => ({ seq: Number(n.slice(0, -5)), file: path.join(out, HISTORY_DIR, n) }))
    .filter(h => Number.isSafeInteger(h.seq))
    .sort((a, b) => b.seq - a.seq)
}

/**
 * FORMAT.md §6.2: the next sequence number, max(previous + 1, unix seconds).
 * "Previous" is the highest of the current fsinfo.json and every history entry,
 * so a number is never reused, even for a root that was signed but whose
 * rename never happened (a crash), or when fsinfo.json was lost.
 */
export async function nextSeq (out, now) {
  const [prev, hist] = await Promise.all([readPublished(out), listHistory(out)])
  const last = Math.max(prev ? prev.seq : -1, hist.length ? hist[0].seq : -1)
  return { seq: Math.max(last + 1, Math.floor(now / 1000)), last, prev }
}

/** Highest sequence number published or recorded in OUT, or -1. */
export async function lastSeq (out) { return (await nextSeq(out, 0)).last }

async function syncDir (dir) {
  const d = await fs.open(dir, 'r')
  try { await d.sync() } finally { await d.close() }
}

async function writeDurable (file, text, fsync) {
  const fh = await fs.open(file, 'w', 0o644)
  try {
    await fh.writeFile(text)
    if (fsync) await fh.sync()
  } finally { await fh.close() }
}

/**
 * Record `text` (a signed fsinfo.json) as history/<seq>.json. The entry is
 * linked into place, so it is complete or absent, and never overwritten: the
 * same bytes again are fine (a re-run), different bytes under a seq already
 * recorded are refused, since that would erase what the key once signed.
 */
export async function writeHistory (out, text, fsync = true) {
  const { seq } = decodeFsinfo(text)
  const dir = path.join(out, HISTORY_DIR)
  await fs.mkdir(dir, { recursive: true })
  const final = path.join(dir, `${seq}.json`)
  const tmp = path.join(dir, `.tmp-${seq}-${process.pid}`)
  await writeDurable(tmp, text, fsync)
  try {
    await fs.link(tmp, final)
  } catch (err) {
    if (err.code !== 'EEXIST') throw err
    const had = await fs.readFile(final)
    if (!had.equals(Buffer.from(text))) {
      throw Object.assign(new Error(`${final} already holds a different fsinfo.json with seq ${seq}; refusing to overwrite history`), { code: 'EEXIST' })
    }
  } finally {
    await fs.rm(tmp, { force: true })
  }
  if (fsync) await syncDir(dir)
  return final
}

/**
 * Atomic publish: record the signed text in history/, then write a temporary
 * file, make it durable and rename it over fsinfo.json. The history entry is
 * written first, so nothing is ever current that history does not hold.
 * @param {string} out @param {string|Uint8Array} text a signed fsinfo.json
 * @param {boolean} [fsync=true] @param {{ history?: boolean }} [o]
 */
export async function publishFsinfo (out, text, fsync = true, { history = true } = {}) {
  if (history) {
    await backfillHistory(out, fsync)
    await writeHistory(out, text, fsync)
  }
  const tmp = path.join(out, `.fsinfo.json.tmp-${process.pid}`)
  await writeDurable(tmp, text, fsync)
  await fs.rename(tmp, path.join(out, 'fsinfo.json'))
  if (fsync) await syncDir(out)
}

// A folder published before history existed: record its current fsinfo.json
// before replacing it, so history holds every root from here on.
async function backfillHistory (out, fsync) {
  let bytes, info
  try {
    bytes = await fs.readFile(path.join(out, 'fsinfo.json'))
    info = decodeFsinfo(bytes)
  } catch { return }
  try { await fs.access(path.join(out, HISTORY_DIR, `${info.seq}.json`)) } catch { await writeHistory(out, bytes, fsync) }
}

/** Write OUT/unsigned.json (atomically) for `rotree sign` on another machine. */
export async function writeUnsignedFile (out, text, fsync = true) {
  const tmp = path.join(out, `.${UNSIGNED_FILE}.tmp-${process.pid}`)
  await writeDurable(tmp, text, fsync)
  await fs.rename(tmp, path.join(out, UNSIGNED_FILE))
  if (fsync) await syncDir(out)
}

/** Remove OUT/unsigned.json: a newer tree was published, so the pending one is superseded. */
export async function removeUnsigned (out) {
  await fs.rm(path.join(out, UNSIGNED_FILE), { force: true })
}

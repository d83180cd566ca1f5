// DIR/history/<seq>.json: every signed fsinfo.json this folder has published
// or served, byte for byte (SFSRO §3: the key holder cannot later deny what a
// signed root held). A publisher's OUT and a mirror's DIR keep it the same
// way: publish.js records the new text here before renaming it in. History
// files are never deleted. history/index.json lists their sequence numbers,
// newest first, so a reader can list them over HTTP (`rotree log`); it is
// unsigned, as a listing of files is: the reader verifies each entry it
// fetches, and a mirror can only leave entries out.
import fs from 'node:fs/promises'
import path from 'node:path'
import { decodeFsinfo, fsinfoVersion, decodeFsinfoV2, MAX_FSINFO_V2 } from 'rotree-client/format'
import { readRegular } from '../open-regular.js'
import { ForkError } from 'rotree-client/errors'
import { pidAlive } from './lock.js'
import { syncDir } from './blob-store.js'

/** A signed fsinfo.json of either version, decoded (not verified) by its own decoder (FORMAT.md §6.1). */
export function decodeAny (bytes) { return fsinfoVersion(bytes) === 2 ? decodeFsinfoV2(bytes) : decodeFsinfo(bytes) }

export const HISTORY_DIR = 'history'
const HISTORY_NAME = /^(0|[1-9][0-9]*)\.json$/
export const HISTORY_INDEX = 'index.json'

/**
 * Every history entry of dir, newest (highest seq) first.
 * @returns {Promise<{ seq: number, file: string }[]>}
 */
export async function listHistory (dir) {
  let names
  try { names = await fs.readdir(path.join(dir, HISTORY_DIR)) } catch (err) {
    if (err.code === 'ENOENT') return []
    throw err
  }
  return names.filter(n => HISTORY_NAME.test(n))
    .map(n => ({ seq: Number(n.slice(0, -5)), file: path.join(dir, HISTORY_DIR, n) }))
    .filter(h => Number.isSafeInteger(h.seq))
    .sort((a, b) => b.seq - a.seq)
}

/** history/<seq>.json's bytes (a regular file only, lib/open-regular.js), or null. */
export async function readHistory (dir, seq) {
  return readRegular(path.join(dir, HISTORY_DIR, `${seq}.json`), MAX_FSINFO_V2)
}

/**
 * Record `text` (a signed fsinfo.json) as history/<seq>.json. The entry is
 * linked into place, so it is complete or absent, and never overwritten: the
 * same bytes again are fine (a re-run), different bytes under a seq already
 * recorded are refused (isHistoryConflict), since that would erase what the
 * key once signed.
 */
export async function writeHistory (dir, text, fsync = true) {
  const { seq } = decodeAny(text)
  const hdir = path.join(dir, HISTORY_DIR)
  await fs.mkdir(hdir, { recursive: true })
  const final = path.join(hdir, `${seq}.json`)
  const tmp = path.join(hdir, `.tmp-${seq}-${process.pid}`)
  await writeDurable(tmp, text, fsync)
  try {
    await fs.link(tmp, final)
  } catch (err) {
    if (err.code !== 'EEXIST') throw err
    const had = await readRegular(final, MAX_FSINFO_V2)
    // one seq, two signed texts: the closest code is a fork (one number, two signed roots)
    if (had === null || !Buffer.from(had).equals(Buffer.from(text))) {
      throw new ForkError(`${final} already holds a different fsinfo.json with seq ${seq}; refusing to overwrite history`, { details: { seq, historyConflict: true } })
    }
  } finally {
    await fs.rm(tmp, { force: true })
  }
  await writeHistoryIndex(dir, fsync)
  if (fsync) await syncDir(hdir)
  return final
}

/**
 * history/index.json: `{ "seqs": [newest, …, oldest] }` from the entries in
 * history/, written under a temporary name and renamed into place, so a
 * server never sends half of it.
 */
export async function writeHistoryIndex (dir, fsync = true) {
  const seqs = (await listHistory(dir)).map(h => h.seq)
  const hdir = path.join(dir, HISTORY_DIR)
  const tmp = path.join(hdir, `.tmp-index-${process.pid}`)
  await writeDurable(tmp, JSON.stringify({ seqs }) + '\n', fsync)
  await fs.rename(tmp, path.join(hdir, HISTORY_INDEX))
}

/** Did writeHistory refuse to overwrite a different text under the same seq? */
export function isHistoryConflict (err) { return err?.historyConflict === true }

/** Remove temp files (.tmp-<seq>-<pid>) that a killed writer left in history/. */
export async function cleanHistoryTemps (dir) {
  let names
  try { names = await fs.readdir(path.join(dir, HISTORY_DIR)) } catch { return }
  for (const n of names) {
    const m = /^\.tmp-.*-(\d+)$/.exec(n)
    if (m && Number(m[1]) !== process.pid && !pidAlive(Number(m[1]))) await fs.rm(path.join(dir, HISTORY_DIR, n), { force: true })
  }
}

/** Write a small file and (with fsync) make its bytes durable. */
export async function writeDurable (file, text, fsync, mode = 0o644) {
  const fh = await fs.open(file, 'w', mode)
  try {
    await fh.writeFile(text)
    if (fsync) await fh.sync()
  } finally { await fh.close() }
}

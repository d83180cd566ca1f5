// History entries read back and checked, for the tools that decide by them
// (gc's kept roots, fsck's orphans). Apart from history.js, which writes
// history and checks nothing.
//
// Lazily, newest first: each entry costs a signature check, and `pull --gc`
// usually needs only the newest entry or two of a history that grows by one
// entry per publish.
import { verifyFsinfoSignature } from 'rotree-client/verify'
import { BadFormatError, BadPathError } from 'rotree-client/errors'
import { openRegular } from '../open-regular.js'
import { HISTORY_DIR, listHistory } from './history.js'

/**
 * @typedef {{ seq: number, file: string, raw?: Uint8Array, publishedMs?: number, error?: Error }} HistoryEntry
 *   publishedMs: when it was recorded (the file's mtime); error: it could not be read
 * @param {string} dir
 * @returns {AsyncGenerator<HistoryEntry>} newest (highest seq) first, read but not checked
 */
export async function * historyEntries (dir) {
  for (const h of await listHistory(dir)) {
    // a regular file only: a link or FIFO planted in history/ is not followed or waited on
    let opened
    try { opened = await openRegular(h.file) } catch (error) { yield { ...h, error }; continue }
    if (opened === null) { yield { ...h, error: new BadPathError(`${h.file} is not a regular file`) }; continue }
    let raw
    try { raw = await opened.fh.readFile() } catch (error) { yield { ...h, error }; continue } finally { await opened.fh.close() }
    yield { ...h, raw: new Uint8Array(raw), publishedMs: opened.st.mtimeMs }
  }
}

/**
 * A history entry checked as a history tool must: the user's key and a good
 * signature (docs/TRUST.md rules 1 and 2 without the clock: an old root's age
 * is no reason to doubt it), and the seq its name says. Throws the typed error.
 * @param {HistoryEntry} h @param {string} publicKey
 */
export function verifyHistoryEntry (h, publicKey) {
  if (h.error) throw h.error
  const info = verifyFsinfoSignature(h.raw, { publicKey })
  if (info.seq !== h.seq) throw new BadFormatError(`${HISTORY_DIR}/${h.seq}.json holds seq ${info.seq}`)
  return info
}

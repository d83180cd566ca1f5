// DIR/history/<seq>.json: every signed fsinfo.json this folder has served,
// byte for byte. A mirror keeps the same history as the publisher's OUT (SFSRO
// §3: the key holder cannot later deny what a signed root held), with the same
// code: builder/publish.js writes it (publishFsinfo records the new text there
// before renaming it in). Here: reading it back, and sweeping a killed writer's temp files.
import fs from 'node:fs/promises'
import path from 'node:path'
import { listHistory as listEntries, writeHistory, HISTORY_DIR } from '../builder/publish.js'

export { writeHistory, HISTORY_DIR }

/** Sequence numbers with a history file, highest first. */
export async function listHistory (dir) { return (await listEntries(dir)).map(h => h.seq) }

export async function readHistory (dir, seq) {
  return new Uint8Array(await fs.readFile(path.join(dir, HISTORY_DIR, `${seq}.json`)))
}

/** Remove temp files (.tmp-<seq>-<pid>) that a killed writer left in history/. */
export async function cleanHistoryTemps (dir, alive) {
  let names
  try { names = await fs.readdir(path.join(dir, HISTORY_DIR)) } catch { return }
  for (const n of names) {
    const m = /^\.tmp-.*-(\d+)$/.exec(n)
    if (m && Number(m[1]) !== process.pid && !alive(Number(m[1]))) await fs.rm(path.join(dir, HISTORY_DIR, n), { force: true })
  }
}

// `pull --gc`: delete the blobs in DIR/h that none of the kept roots reach.
// Kept roots: the root DIR serves now, the one it served before this pull,
// then the newest roots in DIR/history, until `keep` distinct roots are
// counted (a re-signed root with a new seq is the same tree and does not use
// up a slot). Keeping the previous root is the grace period: a reader that
// opened it just before the update can finish. (History alone would not do:
// an entry is written just before its rename, so a pull killed in between
// leaves one for a root DIR never served.)
// Called only after the new fsinfo.json is in place, under the folder lock.
// When a kept root cannot be walked completely from local blobs (damage, or a
// history file that does not verify) nothing is deleted: gc never guesses.
import fs from 'node:fs/promises'
import path from 'node:path'
import { decodeFsinfo } from 'rotree-client/format'
import { verifyFsinfo } from 'rotree-client/verify'
import { limiter } from 'rotree-client/src/cache.js'
import { VERIFY, HEX64, readLocal } from './blobs.js'
import { listHistory, readHistory } from './history.js'
import { walkTree } from 'rotree-client'

/**
 * @param {string} dir
 * @param {object} o
 * @param {string} o.publicKey
 * @param {number} o.keep distinct roots to keep (≥ 1)
 * @param {{ seq: number, root: { hash: string, size: number } }} o.current the root DIR serves now
 * @param {{ seq: number, root: { hash: string, size: number } }|null} [o.previous] the one it served before
 * @param {Set<string>} [o.reachable] hashes already known reachable (from pull's walk of `current`)
 * @param {Set<string>} [o.walked] page keys whose subtrees are in `reachable` (see client-js/src/walk.js)
 * @returns {Promise<{ kept: { seq: number, root: string }[], deleted: number, deletedBytes: number, skipped?: string }>}
 */
export async function collect (dir, { publicKey, keep, current, previous = null, reachable = new Set(), walked = new Set(), warn = () => {}, jobs = 8 }) {
  const kept = [{ seq: current.seq, root: current.root }]
  const roots = new Set([current.root.hash])
  if (previous && keep > 1 && !roots.has(previous.root.hash)) {
    kept.push({ seq: previous.seq, root: previous.root }); roots.add(previous.root.hash)
  }
  for (const seq of await listHistory(dir)) {
    if (roots.size >= keep) break
    let info
    try {
      const raw = await readHistory(dir, seq)
      const d = decodeFsinfo(raw)
      info = verifyFsinfo(raw, { publicKey, now: d.issuedMs }) // signed by the key; its age does not matter
      if (info.seq !== seq) throw Object.assign(new Error(`holds seq ${info.seq}`), { code: 'ROTREE_BAD_FORMAT' })
    } catch (err) {
      return skip(`history/${seq}.json does not verify (${err.code ?? err.message}); not collecting`)
    }
    if (roots.has(info.root.hash)) continue
    roots.add(info.root.hash)
    kept.push({ seq, root: info.root })
  }

  const load = async (ref, kind) => {
    const bytes = await readLocal(dir, ref.hash, ref.size)
    if (!bytes) throw Object.assign(new Error(`blob ${ref.hash} is missing`), { code: 'ENOENT' })
    return VERIFY[kind](bytes, ref)
  }
  for (const k of kept) {
    try {
      await walkTree(k.root, load, ref => { reachable.add(ref.hash) }, { walked, concurrency: jobs })
    } catch (err) {
      return skip(`the root of seq ${k.seq} cannot be walked from DIR (${err.code}: ${err.message}); not collecting (run rotree fsck)`)
    }
  }

  let deleted = 0; let deletedBytes = 0
  const limit = limiter(jobs)
  const hdir = path.join(dir, 'h')
  await Promise.all((await fs.readdir(hdir)).map(name => limit(async () => {
    if (!HEX64.test(name) || reachable.has(name)) return
    const st = await fs.stat(path.join(hdir, name)).catch(() => null)
    if (!st?.isFile()) return
    await fs.rm(path.join(hdir, name), { force: true })
    deleted++; deletedBytes += st.size
  })))
  return { kept: kept.map(k => ({ seq: k.seq, root: k.root.hash })), deleted, deletedBytes }

  function skip (reason) {
    warn(`gc: ${reason}`)
    return { kept: kept.map(k => ({ seq: k.seq, root: k.root.hash })), deleted: 0, deletedBytes: 0, skipped: reason }
  }
}

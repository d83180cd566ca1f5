// `pull --gc`: delete the blobs in DIR/h that none of the kept roots reach.
// The collection itself is lib/published/gc.js, shared with `rotree gc`; this
// is the mirror's policy for which roots to keep: the root DIR serves now, the
// one it served before this pull, then the newest roots in DIR/history, until
// `keep` distinct roots are counted (a re-signed root with a new seq is the
// same tree and does not use up a slot). Keeping the previous root is the
// grace period: a reader that opened it just before the update can finish.
// (History alone would not do: an entry is written just before its rename, so
// a pull killed in between leaves one for a root DIR never served.)
// Called only after the new fsinfo.json is in place, under the folder lock.
// When a kept root cannot be walked completely from local blobs (damage, or a
// history file that does not verify) nothing is deleted: gc never guesses.
// History entries of either format version are checked as a reader would
// (lib/published/signed-roots.js: version 2 against the trust documents in
// DIR/trust); only h/ is swept, so trust/ and history/ are never touched.
import { historyEntries, collectGarbage } from '../lib/published/index.js'
import { rootContext, verifyHistoryRoot } from '../lib/published/signed-roots.js'
import { rootId } from '../lib/published/walk-root.js'

/**
 * @param {string} dir
 * @param {object} o
 * @param {{ anchor: object, name: string }} [o.context] the anchor and name of the address pulled
 * @param {string} [o.publicKey] a version-1 key: the same as context { anchor: { kind: 'key', key }, name: '' }
 * @param {number} o.keep distinct roots to keep (≥ 1)
 * @param {{ seq: number, root: { hash: string, size: number } }} o.current the root DIR serves now
 * @param {{ seq: number, root: { hash: string, size: number } }|null} [o.previous] the one it served before
 * @param {Set<string>} [o.reachable] hashes already known reachable (from pull's walk of `current`)
 * @param {Set<string>} [o.walked] page keys whose subtrees are in `reachable` (see client-js/src/tree/walk.js)
 * @param {boolean} [o.fsync=true]
 * @returns {Promise<{ kept: { seq: number, root: string }[], deleted: number, deletedBytes: number, skipped?: string }>}
 */
export async function collect (dir, { context, publicKey, keep, current, previous = null, reachable = new Set(), walked = new Set(), warn = () => {}, jobs = 8, fsync = true }) {
  const kept = [{ seq: current.seq, ref: current.root }]
  const roots = new Set([rootId(current.root)])
  const summary = () => kept.map(k => ({ seq: k.seq, root: k.ref.hash }))
  const skip = reason => {
    warn(`gc: ${reason}`)
    return { kept: summary(), deleted: 0, deletedBytes: 0, skipped: reason }
  }
  if (previous && keep > 1 && !roots.has(rootId(previous.root))) {
    kept.push({ seq: previous.seq, ref: previous.root }); roots.add(rootId(previous.root))
  }
  let ctx = null
  for await (const h of historyEntries(dir)) { // newest first; read and checked only as far as needed
    if (roots.size >= keep) break
    ctx ??= await rootContext(dir, { given: context ?? { anchor: { kind: 'key', key: publicKey }, name: '' } })
    let info
    try { info = verifyHistoryRoot(h, ctx) } catch (err) {
      return skip(`history/${h.seq}.json does not verify (${err.code ?? err.message}); not collecting`)
    }
    if (roots.has(rootId(info.root))) continue
    roots.add(rootId(info.root))
    kept.push({ seq: h.seq, ref: info.root })
  }
  const res = await collectGarbage(dir, { roots: kept, reached: reachable, walked, jobs, fsync, onIncomplete: () => 'stop' })
  if (res.stopped) {
    const { root, err } = res.stopped
    return skip(`the root of seq ${root.seq} cannot be walked from DIR (${err.code}: ${err.message}); not collecting (run rotree fsck)`)
  }
  return { kept: summary(), deleted: res.deleted.count, deletedBytes: res.deleted.bytes }
}

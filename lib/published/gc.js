// Garbage collection of a published folder: delete the blobs in h/ that none
// of the kept roots reaches. Which roots are kept is the caller's policy
// (builder/gc.js for a publisher's OUT, mirror/gc.js after a pull); this is
// the rest, the same for both: walk every kept root over the local blobs,
// decide what happens when one cannot be walked whole, and sweep h/.
// Callers hold the folder lock.
import fs from 'node:fs/promises'
import path from 'node:path'
import { walkRoot as walkAnyRoot } from './walk-root.js'
import { limiter } from 'rotree-client/fetch'
import { HEX64, TMP_PREFIX, syncDir } from './blob-store.js'
import { pageLoader } from './pages.js'

/**
 * @typedef {{ seq: number, ref: { hash: string, size: number }, why?: string[], complete?: boolean }} KeptRoot
 * @param {string} dir
 * @param {object} o
 * @param {KeptRoot[]} o.roots the kept roots, in the order they are walked (each gets `complete`)
 * @param {(root: KeptRoot, err: Error) => 'partial'|'stop'} o.onIncomplete a kept root whose pages
 *   cannot all be loaded from dir: 'partial' keeps what it still reaches and goes on, 'stop'
 *   deletes nothing (the result has `stopped`); or throw
 * @param {number} [o.graceMs=0] keep unreachable blobs (and stale temp files) younger than this
 * @param {number} [o.now] @param {boolean} [o.dryRun] @param {boolean} [o.fsync=true]
 * @param {boolean} [o.temps=false] also delete stale h/.tmp-* files (older than graceMs)
 * @param {Set<string>} [o.reached] hashes already known reachable; filled in
 * @param {Set<string>} [o.walked] page keys whose subtrees are in `reached` (client-js/src/tree/walk.js)
 * @param {number} [o.jobs=16]
 * @returns {Promise<{ roots: KeptRoot[], reached: Set<string>, blobs: number, stopped?: { root: KeptRoot, err: Error },
 *   deleted: { count: number, bytes: number }, young: { count: number, bytes: number }, temp: { count: number, bytes: number } }>}
 */
export async function collectGarbage (dir, o) {
  const { roots, onIncomplete, reached = new Set(), walked = new Set(), jobs = 16 } = o
  const load = pageLoader(dir, { cacheBytes: 64 << 20 })
  const res = { roots, reached, blobs: 0, deleted: { count: 0, bytes: 0 }, young: { count: 0, bytes: 0 }, temp: { count: 0, bytes: 0 } }
  for (const root of roots) {
    const err = await walkRoot(root, load, reached, walked, jobs)
    root.complete = !err
    if (err && onIncomplete(root, err) === 'stop') { res.stopped = { root, err }; return res }
  }
  await sweep(dir, res, o)
  return res
}

// Walk one root, adding what it reaches. A page that cannot be loaded is
// skipped with its subtree (onLoadError), so a partial root still protects
// everything around the hole; the first such error is returned.
async function walkRoot (root, load, reached, walked, jobs) {
  let first = null
  await walkAnyRoot(root.ref, load, ref => { reached.add(ref.hash) }, {
    walked,
    concurrency: jobs,
    onLoadError: (ref, kind, p, err) => { first ??= err }
  })
  return first
}

async function sweep (dir, res, { graceMs = 0, now = Date.now(), dryRun = false, fsync = true, temps = false, jobs = 16 }) {
  const hdir = path.join(dir, 'h')
  const limit = limiter(jobs)
  await Promise.all((await fs.readdir(hdir)).map(name => limit(async () => {
    const blob = HEX64.test(name)
    if (blob) res.blobs++
    if (blob ? res.reached.has(name) : !(temps && name.startsWith(TMP_PREFIX))) return
    let st
    try { st = await fs.lstat(path.join(hdir, name)) } catch (err) { if (err.code === 'ENOENT') return; throw err }
    if (!st.isFile()) return
    if (graceMs > 0 && now - st.mtimeMs < graceMs) { if (blob) { res.young.count++; res.young.bytes += st.size } return }
    const bucket = blob ? res.deleted : res.temp
    bucket.count++; bucket.bytes += st.size
    if (!dryRun) await fs.rm(path.join(hdir, name), { force: true })
  })))
  if (!dryRun && fsync && res.deleted.count + res.temp.count > 0) await syncDir(hdir)
}

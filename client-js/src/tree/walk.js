// Every blob reachable from a root: what `rotree pull` must copy, what `fsck`
// must find, what `gc` must keep. The caller supplies `load` (a verified,
// decoded directory page or chunk index, from wherever it likes); the walker
// applies the same placement checks as a reader, so a malformed tree is
// refused here too. Identical subtrees (deduplicated blobs) are walked once.
//  * `walked`: page keys ('d'/'c' + hash) whose whole subtree is already known;
//    share it between calls, so the older roots gc keeps cost only the pages
//    they do not share with the current one (a page names its subtree by hash);
//  * `onLoadError`: a page that cannot be loaded (missing or damaged on this
//    disk) is reported and its subtree skipped instead of ending the walk, so
//    fsck can go on and report everything else;
//  * `concurrency`: page loads at once. Each page names the next ones, so at a
//    distance (pull fetches the pages DIR lacks) the walk is as fast as the
//    loads it keeps going: 64 by default, a few round trips' worth of small
//    blobs, not a handful (a local load costs little either way). `onRef` may
//    return a promise to hold the walk back (pull does, while its data blobs
//    in flight fill their byte budget).
import { checkPagePlacement, checkChunkIndexPlacement, childPageExpectation, dirExpectation } from '../trust/verify.js'
import { limiter } from '../fetch/cache.js'
import { refOf } from '../format/ref.js'

/**
 * @param {{ hash: string, size: number, storedSize?: number, codec?: string }} root (a version-2 ref carries its codec: format/ref.js)
 * @param {(ref: object, kind: 'dir'|'cindex') => Promise<object>} load verified + decoded
 * @param {(ref: object, kind: 'dir'|'cindex'|'data', path: string) => (void|Promise<void>)} onRef
 *   called once per reference (a blob used by two paths is reported twice; it is loaded once)
 * @param {{ concurrency?: number, walked?: Set<string>, onLoadError?: (ref: object, kind: string, path: string, err: Error) => void }} [o]
 */
export async function walkTree (root, load, onRef, { concurrency = 64, walked = new Set(), onLoadError } = {}) {
  const limit = limiter(concurrency)

  async function page (key, ref, kind, path, fn) {
    if (walked.has(key)) return
    walked.add(key)
    let value
    try {
      value = await limit(() => load(ref, kind))
      await fn(value)
    } catch (err) {
      // typed failures (ROTREE_*, or an errno such as EIO from a dying disk) are reported; bugs are not
      if (!onLoadError || typeof err.code !== 'string') throw err
      walked.delete(key) // not walked after all: another root may reach it and try again
      onLoadError(ref, kind, path, err)
    }
  }

  async function dir (ref, expect, path) {
    await onRef(ref, 'dir', path || '/')
    let children = null
    await page('d' + ref.hash, ref, 'dir', path || '/', p => {
      checkPagePlacement(p, expect)
      children = p
    })
    if (!children) return
    if (children.kind === 'index') {
      const cs = children.children
      await Promise.all(cs.map((c, i) => dir(c, childPageExpectation(children, i, expect), path)))
      return
    }
    await Promise.all(children.entries.map(e => entry(e, path + '/' + e.name)))
  }

  async function entry (e, path) {
    if (e.type === 'dir') return dir(e.dir, dirExpectation(e), path)
    if (e.chunks) for (const c of e.chunks) await onRef(c, 'data', path)
    if (e.lead) await onRef(e.lead, 'data', path) // version 2: the first chunk, named beside the index
    if (e.index) return cindex(e.index, { level: e.index.levels, bytes: e.size }, path)
  }

  async function cindex (ref, expect, path) {
    await onRef(ref, 'cindex', path)
    let idx = null
    await page('c' + ref.hash, ref, 'cindex', path, v => { checkChunkIndexPlacement(v, expect); idx = v })
    if (!idx) return
    // refOf keeps a version-2 child's stored size and codec (format/ref.js)
    for (const c of idx.children) {
      if (expect.level === 1) await onRef(refOf(c), 'data', path)
      else await cindex(refOf(c), { level: expect.level - 1, bytes: c.bytes }, path)
    }
  }

  await dir(root, {}, '')
}

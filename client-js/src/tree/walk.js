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
// The pages are the nodes of the look-ahead walk (walk-ahead.js): visited
// depth first, each page's references reported together (onRef called for
// all of them, the walk waiting for every promise they return), while the
// next pages are loaded ahead, `concurrency` at a time and within the
// engine's bound on what the pages loaded and not yet visited hold. A page's
// own reference is reported just before it is loaded.
import { checkPagePlacement, checkChunkIndexPlacement, childPageExpectation, dirExpectation } from '../trust/verify.js'
import { refOf } from '../format/ref.js'
import { walkAhead } from './walk-ahead.js'

/**
 * @param {{ hash: string, size: number, storedSize?: number, codec?: string }} root (a version-2 ref carries its codec: format/ref.js)
 * @param {(ref: object, kind: 'dir'|'cindex') => Promise<object>} load verified + decoded
 * @param {(ref: object, kind: 'dir'|'cindex'|'data', path: string) => (void|Promise<void>)} onRef
 *   called once per reference (a blob used by two paths is reported twice; it is loaded once)
 * @param {{ concurrency?: number, walked?: Set<string>, onLoadError?: (ref: object, kind: string, path: string, err: Error) => void }} [o]
 */
export async function walkTree (root, load, onRef, { concurrency = 64, walked = new Set(), onLoadError } = {}) {
  // a reference to a page: its node, unless the page's subtree is walked already (then only reported)
  const item = (ref, kind, path, expect) => {
    const key = (kind === 'dir' ? 'd' : 'c') + ref.hash
    if (walked.has(key)) return { ref, kind, path, node: null }
    walked.add(key)
    return { ref, kind, path, node: { ref, kind, path, expect, key } }
  }
  const top = item(root, 'dir', '/', {})
  if (top.node === null) return onRef(root, 'dir', '/')

  const source = {
    async expand (node) {
      const r = onRef(node.ref, node.kind, node.path)
      if (r) await r
      let page
      try {
        page = await load(node.ref, node.kind)
        if (node.kind === 'dir') checkPagePlacement(page, node.expect); else checkChunkIndexPlacement(page, node.expect)
      } catch (err) {
        // typed failures (ROTREE_*, or an errno such as EIO from a dying disk) are reported; bugs are not
        if (!onLoadError || typeof err?.code !== 'string') throw err
        walked.delete(node.key) // not walked after all: another root may reach it and try again
        onLoadError(node.ref, node.kind, node.path, err)
        return { entries: [] }
      }
      return { entries: node.kind === 'dir' ? dirItems(page, node) : indexItems(page, node) }
    },
    child: (node, it) => it.node
  }

  // pages named in a directory page: its subdirectories' top pages, or an index page's children
  function dirItems (page, { path, expect }) {
    const out = []
    if (page.kind === 'index') {
      for (let i = 0; i < page.children.length; i++) out.push(item(page.children[i], 'dir', path, childPageExpectation(page, i, expect)))
      return out
    }
    const base = path === '/' ? '' : path
    for (const e of page.entries) {
      const p = base + '/' + e.name
      if (e.type === 'dir') { out.push(item(e.dir, 'dir', p, dirExpectation(e))); continue }
      if (e.chunks) for (const c of e.chunks) out.push({ ref: c, kind: 'data', path: p, node: null })
      if (e.lead) out.push({ ref: e.lead, kind: 'data', path: p, node: null }) // version 2: the first chunk, named beside the index
      if (e.index) out.push(item(e.index, 'cindex', p, { level: e.index.levels, bytes: e.size }))
    }
    return out
  }

  // refOf keeps a version-2 child's stored size and codec (format/ref.js)
  function indexItems (idx, { path, expect }) {
    if (expect.level === 1) return idx.children.map(c => ({ ref: refOf(c), kind: 'data', path, node: null }))
    return idx.children.map(c => item(refOf(c), 'cindex', path, { level: expect.level - 1, bytes: c.bytes }))
  }

  await walkAhead(top.node, source, {
    // every reference of the page at once; a page's own is reported when it is loaded (expand)
    enter (node, items) {
      let waits = null
      for (const it of items) {
        if (it.node !== null) continue
        const r = onRef(it.ref, it.kind, it.path)
        if (r) (waits ??= []).push(r)
      }
      return waits === null ? undefined : Promise.all(waits)
    }
  }, { breadth: concurrency })
}

// Every blob reachable from a root: what `rotree pull` must copy, what `fsck`
// must find, what `gc` must keep. The caller supplies `load` (a verified,
// decoded directory page or chunk index, from wherever it likes); the walker
// applies the same placement checks as a reader, so a malformed tree is
// refused here too. Identical subtrees (deduplicated blobs) are walked once.
import { checkPagePlacement, checkChunkIndexPlacement } from './verify.js'
import { limiter } from './cache.js'

/**
 * @param {{ hash: string, size: number }} root the root directory's top blob
 * @param {(ref: { hash: string, size: number }, kind: 'dir'|'cindex') => Promise<object>} load verified + decoded
 * @param {(ref: { hash: string, size: number }, kind: 'dir'|'cindex'|'data', path: string) => (void|Promise<void>)} onRef
 *   called once per reference (a blob used by two paths is reported twice; it is loaded once)
 * @param {{ concurrency?: number }} [o]
 */
export async function walkTree (root, load, onRef, { concurrency = 8 } = {}) {
  const limit = limiter(concurrency)
  const loaded = new Set()

  async function dir (ref, expect, path) {
    await onRef(ref, 'dir', path || '/')
    if (loaded.has('d' + ref.hash)) return
    loaded.add('d' + ref.hash)
    const page = await limit(() => load(ref, 'dir'))
    checkPagePlacement(page, expect)
    if (page.kind === 'index') {
      const cs = page.children
      await Promise.all(cs.map((c, i) => dir(c, { level: page.level - 1, firstNameBytes: c.firstNameBytes, nextNameBytes: cs[i + 1]?.firstNameBytes ?? expect.nextNameBytes, entries: c.entries }, path)))
      return
    }
    await Promise.all(page.entries.map(e => entry(e, path + '/' + e.name)))
  }

  async function entry (e, path) {
    if (e.type === 'dir') return dir(e.dir, { entries: e.size }, path)
    if (e.chunks) for (const c of e.chunks) await onRef(c, 'data', path)
    if (e.index) return cindex(e.index, { level: e.index.levels, bytes: e.size }, path)
  }

  async function cindex (ref, expect, path) {
    await onRef(ref, 'cindex', path)
    if (loaded.has('c' + ref.hash)) return
    loaded.add('c' + ref.hash)
    const idx = await limit(() => load(ref, 'cindex'))
    checkChunkIndexPlacement(idx, expect)
    for (const c of idx.children) {
      if (expect.level === 1) await onRef({ hash: c.hash, size: c.size }, 'data', path)
      else await cindex({ hash: c.hash, size: c.size }, { level: expect.level - 1, bytes: c.bytes }, path)
    }
  }

  await dir(root, {}, '')
}

// A published folder read from its own disk, with a reader's checks: what gc
// and `sign --publish` walk. Directory pages and chunk indexes are verified
// (hash, exact size) and decoded by client-js/src/verify.js before the walker
// (client-js/src/walk.js) applies the placement checks, so a damaged blob is
// found, never parsed.
import fs from 'node:fs/promises'
import path from 'node:path'
import { verifyDirPage, verifyChunkIndex } from 'rotree-client/src/verify.js'
import { walkTree } from 'rotree-client/src/walk.js'
import { TruncatedError, TooLargeError } from 'rotree-client/errors'

/**
 * A `load` for walkTree over OUT/h/, with a small cache of decoded pages so
 * several roots that share most of their directories (gc's kept roots) read
 * each page once.
 * @param {string} out @param {{ cacheBytes?: number }} [o]
 */
export function localLoader (out, { cacheBytes = 64 << 20 } = {}) {
  const cache = new Map()
  let cached = 0
  return async function load (ref, kind) {
    const k = kind + ref.hash
    const hit = cache.get(k)
    if (hit) return hit
    let bytes
    try {
      bytes = await fs.readFile(path.join(out, 'h', ref.hash))
    } catch (err) {
      if (err.code === 'ENOENT') throw Object.assign(new Error(`blob ${ref.hash} (${kind === 'dir' ? 'directory page' : 'chunk index'}) is missing from ${out}/h`), { code: 'ENOENT', hash: ref.hash })
      throw err
    }
    const v = kind === 'dir' ? await verifyDirPage(bytes, ref) : await verifyChunkIndex(bytes, ref)
    if (cached + ref.size <= cacheBytes) { cache.set(k, v); cached += ref.size }
    return v
  }
}

/**
 * Walk every blob reachable from root in OUT. Data chunks are checked only for
 * presence and size (a stat), unless `hashData` is set.
 * @param {string} out @param {{ hash: string, size: number }} root
 * @param {{ load?: Function, onRef?: (ref, kind, path) => void, checkData?: boolean }} [o]
 * @returns {Promise<Set<string>>} the handles reached
 */
export async function walkLocal (out, root, { load = localLoader(out), onRef = () => {}, checkData = true, reached = new Set() } = {}) {
  await walkTree(root, load, async (ref, kind, p) => {
    if (reached.has(ref.hash)) return onRef(ref, kind, p)
    reached.add(ref.hash)
    if (kind === 'data' && checkData) {
      let st
      try { st = await fs.stat(path.join(out, 'h', ref.hash)) } catch (err) {
        if (err.code === 'ENOENT') throw Object.assign(new Error(`blob ${ref.hash} (data of ${p}) is missing from ${out}/h`), { code: 'ENOENT', hash: ref.hash })
        throw err
      }
      if (st.size !== ref.size) {
        const E = st.size < ref.size ? TruncatedError : TooLargeError
        throw new E(`blob ${ref.hash} (data of ${p}) is ${st.size} bytes in ${out}/h, expected ${ref.size}`, { details: { hash: ref.hash } })
      }
    }
    return onRef(ref, kind, p)
  })
  return reached
}

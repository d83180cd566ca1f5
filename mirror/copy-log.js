// `rotree pull`, step 3c: DIR/log/, the tree's transparency log (docs/FORMAT.md
// §13), copied from the source as it is: fetched and checked whole
// (rotree-client/log fetchLog: the checkpoint signed by a key of the tree,
// every tile and entry bundle against it), then written tiles and bundles
// first, the checkpoint last (lib/published/log.js writeFetchedLog), before
// the new fsinfo.json is renamed in. A mirror never signs a checkpoint of its
// own: it serves the publisher's. Only the checkpoint is fetched when it is
// DIR's already, and only the tiles and bundles DIR lacks otherwise (a path
// under log/ never changes its bytes once a checkpoint covers it).
import fs from 'node:fs/promises'
import path from 'node:path'
import { fetchLog, logSignersOf, LOG_DIR } from 'rotree-client/log'
import { readLocalLog, writeFetchedLog, cleanLogTemps } from '../lib/published/log.js'
import { readRegular } from '../lib/open-regular.js'

const notFound = err => err.code === 'ROTREE_ALL_MIRRORS_FAILED' && err.errors?.length > 0 && err.errors.every(e => e.code === 'ROTREE_MIRROR_HTTP' && / 404 /.test(e.message))
const same = (a, b) => a !== null && Buffer.from(a).equals(Buffer.from(b))

/**
 * Copy the source's log into dir, unless the source has none (a tree
 * published before logs), or dir's own log is longer or is not a prefix of
 * it (kept as found, with a warning: the two logs disagree, which
 * `rotree log-audit` reports).
 * @returns {Promise<{ size: number, copied: boolean } | null>} null: the source has no log
 */
export async function copyLog (tree, dir, fsync, warn) {
  await cleanLogTemps(dir)
  const held = await readRegular(path.join(dir, LOG_DIR, 'checkpoint'), 1 << 20).catch(() => null)
  const fetch = (p, cap, check) => tree.mirrors.fetch(p, cap, check)
  const local = async rel => { try { return new Uint8Array(await fs.readFile(path.join(dir, LOG_DIR, rel))) } catch { return null } }
  const o = { ...logSignersOf(tree.rootRecord), unchanged: cp => same(held, cp.bytes) }
  let log
  try {
    // DIR's own files first; when they do not check (a killed copy, damage), everything from the source
    log = await fetchLog(fetch, { ...o, local }).catch(err => err.code === 'ROTREE_HASH_MISMATCH' || err.code === 'ROTREE_BAD_FORMAT' ? fetchLog(fetch, o) : Promise.reject(err))
  } catch (err) {
    if (notFound(err)) return null
    if (!err.code?.startsWith('ROTREE_')) throw err
    warn(`not copying log/: ${err.message}`)
    return null
  }
  if (log.unchanged) return { size: log.checkpoint.size, copied: false }
  let mine = null
  try { mine = await readLocalLog(dir) } catch (err) { warn(`DIR's log/ is damaged (${err.message}); replacing it with the source's`) }
  if (mine && mine.size > 0) {
    const prefix = mine.size <= log.entries.length && mine.entries.every((e, i) => Buffer.from(e).equals(Buffer.from(log.entries[i])))
    if (!prefix) {
      warn(`DIR's log/ (${mine.size} leaves) is not a prefix of the source's (${log.entries.length}); keeping DIR's`)
      return { size: mine.size, copied: false }
    }
  }
  await writeFetchedLog(dir, log, fsync)
  return { size: log.checkpoint.size, copied: true }
}

// `rotree pull`, step 3c: DIR/log/, the tree's transparency log (docs/FORMAT.md
// §13), copied from the source as it is: fetched and checked whole
// (rotree-client/log fetchLog: the checkpoint signed by a key of the tree,
// every tile and entry bundle against it), then written tiles and bundles
// first, the checkpoint last (lib/published/log.js writeFetchedLog), before
// the new fsinfo.json is renamed in. A mirror never signs a checkpoint of its
// own: it serves the publisher's. Only the checkpoint is fetched when it is
// DIR's already, and only the tiles and bundles DIR lacks otherwise (a path
// under log/ never changes its bytes once a checkpoint covers it).
// log/fsinfo.proof, the tlog-proof of the current fsinfo.json that readers
// of a witnessed tree ask first (FORMAT.md §13), is not copied: it is made
// again from the log in DIR once that log is written (or found to be the
// source's already), for the fsinfo.json being pulled, so DIR never serves
// proof bytes it did not check; none is left when DIR's log does not hold it.
import fs from 'node:fs/promises'
import path from 'node:path'
import { fetchLog, logSignersOf, LOG_DIR } from 'rotree-client/log'
import { parseTlogProof, verifyTlogProof, parseCheckpoint, leafHash } from 'rotree-client/tlog'
import { readLocalLog, writeFetchedLog, writeFsinfoProof, cleanLogTemps, PROOF } from '../lib/published/log.js'
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
  const fetch = (p, cap, check) => tree.fetchFile(p, cap, check)
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
  if (log.unchanged) return { size: log.checkpoint.size, copied: false, proof: proofHolds(await readRegular(path.join(dir, LOG_DIR, PROOF), 1 << 20).catch(() => null), tree.fsinfoBytes, held) || await proveLocal(tree, dir, fsync, warn) }
  let mine = null
  try { mine = await readLocalLog(dir) } catch (err) { warn(`DIR's log/ is damaged (${err.message}); replacing it with the source's`) }
  if (mine && mine.size > 0) {
    const prefix = mine.size <= log.entries.length && mine.entries.every((e, i) => Buffer.from(e).equals(Buffer.from(log.entries[i])))
    if (!prefix) {
      warn(`DIR's log/ (${mine.size} leaves) is not a prefix of the source's (${log.entries.length}); keeping DIR's`)
      return { size: mine.size, copied: false, proof: await proveLocal(tree, dir, fsync, warn) }
    }
  }
  await writeFetchedLog(dir, log, fsync)
  return { size: log.checkpoint.size, copied: true, proof: await proveLocal(tree, dir, fsync, warn) }
}

/**
 * DIR's log/fsinfo.proof already proves `fsinfoBytes` in DIR's checkpoint
 * (`held`, the source's checkpoint, checked by fetchLog): a pull that
 * changes nothing does not read DIR's whole log to write it again.
 */
function proofHolds (proof, fsinfoBytes, held) {
  try {
    const p = parseTlogProof(proof)
    if (p.checkpoint !== Buffer.from(held).toString('utf8')) return false
    verifyTlogProof(p, leafHash(fsinfoBytes), parseCheckpoint(p.checkpoint.slice(0, p.checkpoint.indexOf('\n\n') + 1)))
    return true
  } catch { return false }
}

/** DIR/log/fsinfo.proof for the fsinfo.json pulled, from DIR's log (lib/published/log.js writeFsinfoProof). */
async function proveLocal (tree, dir, fsync, warn) {
  try {
    return await writeFsinfoProof(dir, tree.fsinfoBytes, { fsync })
  } catch (err) {
    warn(`not writing log/${PROOF}: ${err.message}`)
    await fs.rm(path.join(dir, LOG_DIR, PROOF), { force: true }).catch(() => {})
    return false
  }
}

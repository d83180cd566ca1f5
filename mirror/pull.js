// `rotree pull ADDR DIR` (SFSRO's pulldb; FORMAT.md §8): make DIR a verified
// copy of the tree at ADDR, moving only the blobs DIR lacks.
//
//   1. lock DIR, sweep what a killed run left behind (temp files, a stale lock);
//   2. open the tree: fsinfo.json is verified by openTree (key from ADDR,
//      signature, expiry, skew, rollback against the persisted reader state);
//      DIR's own fsinfo.json must not be newer (DIR never goes backwards);
//   3. walk from the root; every blob DIR lacks is fetched, verified by hash
//      and size (and decoded, for pages), written to a temp name and renamed
//      (copy-tree.js);
//   4. make the blobs durable, record the new fsinfo.json in DIR/history/<seq>.json
//      and rename it in LAST (lib/published/publish.js, as a build does);
//   5. with --gc, delete blobs no kept root reaches (only now: the new
//      fsinfo.json is in place).
// Killed anywhere, DIR still serves a complete tree (the old one until step
// 4's rename, the new one after) and a rerun finishes the job: nothing before
// the rename is visible to readers, and nothing is deleted before it.
import fs from 'node:fs/promises'
import path from 'node:path'
import { openTree } from 'rotree-client'
import { decodeFsinfo } from 'rotree-client/format'
import { verifyFsinfoSignature, checkRollback } from 'rotree-client/verify'
import { BlobStore, publishFsinfo, writeHistory, isHistoryConflict, cleanHistoryTemps, withDirLock, pidAlive } from '../lib/published/index.js'
import { TreeCopy } from './copy-tree.js'
import { collect } from './gc.js'

const CONCURRENCY = 64 // openTree's concurrency, which sizes its connections per mirror

/**
 * @param {object} o
 * @param {string} o.address '<mirror-url>#<public key>'
 * @param {string} o.dir the mirror folder (created if missing)
 * @param {object} [o.reader] openTree options (mirrors, timeoutMs, stateDir, now, …)
 * @param {number} [o.jobs] most blobs fetched at once (default: as many as fit in the fetch
 *   scheduler's read-ahead bytes, copy-tree.js)
 * @param {boolean} [o.fsync=true]
 * @param {boolean} [o.rehash=false] re-hash data blobs already in DIR (default: a present blob of the right size is trusted; fsck scrubs)
 * @param {boolean} [o.gc=false] @param {number} [o.keep=2] distinct roots whose blobs gc keeps
 * @param {(p: { done: number, total: number, fetched: number, present: number }) => void} [o.onProgress] bytes
 * @param {(msg: string) => void} [o.warn]
 */
export async function pull (o) {
  const { address, dir, reader = {}, jobs, fsync = true, rehash = false, gc = false, keep = 2, onProgress = () => {}, warn = () => {} } = o
  const t0 = Date.now()
  await fs.mkdir(dir, { recursive: true })
  return withDirLock(dir, 'rotree pull', async () => {
    const store = await prepare(dir, fsync)
    // connections for the many requests a copy keeps in flight (copy-tree.js); the scheduler bounds them
    const tree = await openTree(address, { ...reader, concurrency: jobs ?? reader.concurrency ?? CONCURRENCY })
    try {
      const { info, local } = await checkSource(tree, dir, fsync, warn)
      const r = {
        seq: info.seq, root: info.root.hash, previousSeq: local?.seq ?? null,
        fetched: { blobs: 0, bytes: 0 }, present: { blobs: 0, bytes: 0 }, damaged: [], fetchedHashes: [],
        updated: false, gc: null
      }
      const copy = new TreeCopy({
        dir, store, mirrors: tree.mirrors, report: r, jobs, rehash, warn,
        progress: (done, total) => onProgress({ done, total, fetched: r.fetched.bytes, present: r.present.bytes })
      })
      const { reachable, walked } = await copy.run(info.root)
      r.updated = await publish(dir, store, tree.fsinfoBytes, info, local, fsync, warn)
      if (gc) r.gc = await collect(dir, { publicKey: tree.publicKey, keep, current: info, previous: local, reachable, walked, warn, jobs, fsync })
      r.requests = tree.stats.requests
      r.bytesMoved = tree.stats.bytes // every body byte received, fsinfo.json from each mirror included
      r.mirrors = tree.stats.mirrors
      r.ms = Date.now() - t0
      return r
    } finally {
      tree.close()
    }
  })
}

// Step 1: what a killed run left outside h/ (fsinfo.json temp files of dead
// processes, history temps; the lock sweeps its own), then h/ itself (its
// temp files go when the store opens).
async function prepare (dir, fsync) {
  for (const n of await fs.readdir(dir)) {
    const m = /^\.fsinfo\.json\.tmp-(\d+)$/.exec(n)
    if (m && Number(m[1]) !== process.pid && !pidAlive(Number(m[1]))) await fs.rm(path.join(dir, n), { force: true })
  }
  await cleanHistoryTemps(dir)
  return new BlobStore(dir, { fsync }).open()
}

// Step 2: the root to pull, against the one DIR serves now.
async function checkSource (tree, dir, fsync, warn) {
  const info = decodeFsinfo(tree.fsinfoBytes) // verified by openTree; decoded again for the fields
  const local = await readLocalFsinfo(dir, tree.publicKey, warn)
  // DIR never goes backwards, even for a reader state that has not seen DIR's root
  if (local) checkRollback(info, { seq: local.seq, root: local.root.hash })
  // the root DIR serves now is history too (gc keeps the previous root for readers mid-update)
  if (local) await recordHistory(dir, local.raw, fsync, warn)
  return { info, local }
}

// Step 4: every blob durable before fsinfo.json names them (FORMAT.md §8), then the rename.
async function publish (dir, store, bytes, info, local, fsync, warn) {
  await store.sync()
  if (local && sameBytes(local.raw, bytes)) return false
  if (local && local.seq === info.seq) {
    warn(`DIR holds a different signed text for seq ${info.seq} with the same root; keeping it`)
    return false
  }
  await publishFsinfo(dir, bytes, fsync) // history/<seq>.json first, then the rename
  return true
}

/**
 * DIR's current fsinfo.json if it is a signed root for `publicKey` (expired is
 * fine: it is what DIR serves now, so only key and signature are checked).
 * Another key's tree is refused: pulling one tree over another is a mistake,
 * not an update. A damaged or unsigned file is ignored with a warning and replaced.
 */
export async function readLocalFsinfo (dir, publicKey, warn = () => {}) {
  let raw
  try { raw = new Uint8Array(await fs.readFile(path.join(dir, 'fsinfo.json'))) } catch (err) { if (err.code === 'ENOENT') return null; throw err }
  try {
    return verifyFsinfoSignature(raw, { publicKey })
  } catch (err) {
    if (err.code === 'ROTREE_WRONG_KEY') throw err
    warn(`${path.join(dir, 'fsinfo.json')} is not a valid signed root (${err.code}); it will be replaced`)
    return null
  }
}

/** history/<seq>.json for a root DIR already serves; one seq with two signed texts is kept as found, with a warning. */
async function recordHistory (dir, bytes, fsync, warn) {
  try { await writeHistory(dir, bytes, fsync) } catch (err) {
    if (!isHistoryConflict(err)) throw err
    warn(err.message)
  }
}

function sameBytes (a, b) { return a.length === b.length && Buffer.compare(Buffer.from(a.buffer, a.byteOffset, a.length), Buffer.from(b.buffer, b.byteOffset, b.length)) === 0 }

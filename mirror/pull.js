// `rotree pull ADDR DIR` (SFSRO's pulldb; FORMAT.md §8): make DIR a verified
// copy of the tree at ADDR, moving only the blobs DIR lacks.
//
//   1. lock DIR, sweep what a killed run left behind (temp files, a stale lock);
//   2. open the tree: fsinfo.json is verified by openTree (key from ADDR,
//      signature, expiry, skew, rollback against the persisted reader state);
//      DIR's own fsinfo.json must not be newer (DIR never goes backwards);
//   3. walk from the root; every blob DIR lacks is fetched, verified by hash
//      and size (and decoded, for pages), written to a temp name and renamed;
//   4. make the blobs durable, record the new fsinfo.json in DIR/history/<seq>.json
//      and rename it in LAST (builder/publish.js publishFsinfo, as a build does);
//   5. with --gc, delete blobs no kept root reaches (only now: the new
//      fsinfo.json is in place).
// Killed anywhere, DIR still serves a complete tree (the old one until step
// 4's rename, the new one after) and a rerun finishes the job: nothing before
// the rename is visible to readers, and nothing is deleted before it.
import fs from 'node:fs/promises'
import path from 'node:path'
import { openTree } from 'rotree-client'
import { decodeFsinfo } from 'rotree-client/format'
import { verifyFsinfo, checkRollback } from 'rotree-client/verify'
import { limiter } from 'rotree-client/src/cache.js'
import { BlobStore } from '../builder/blobstore.js'
import { publishFsinfo } from '../builder/publish.js'
import { walkTree } from 'rotree-client'
import { VERIFY, DAMAGE_CODES, readLocal, blobPath, fetchVerified } from './blobs.js'
import { writeHistory, cleanHistoryTemps } from './history.js'
import { lockDir, pidAlive as alive } from '../lib/folder-lock.js'
import { collect } from './gc.js'

/**
 * @param {object} o
 * @param {string} o.address '<mirror-url>#<public key>'
 * @param {string} o.dir the mirror folder (created if missing)
 * @param {object} [o.reader] openTree options (mirrors, timeoutMs, stateDir, now, …)
 * @param {number} [o.jobs=8] blobs fetched at once
 * @param {boolean} [o.fsync=true]
 * @param {boolean} [o.rehash=false] re-hash data blobs already in DIR (default: a present blob of the right size is trusted; fsck scrubs)
 * @param {boolean} [o.gc=false] @param {number} [o.keep=2] distinct roots whose blobs gc keeps
 * @param {(p: { done: number, total: number, fetched: number, present: number }) => void} [o.onProgress] bytes
 * @param {(msg: string) => void} [o.warn]
 */
export async function pull (o) {
  const { address, dir, reader = {}, jobs = 8, fsync = true, rehash = false, gc = false, keep = 2, onProgress = () => {}, warn = () => {} } = o
  const t0 = Date.now()
  await fs.mkdir(dir, { recursive: true })
  const lock = await lockDir(dir, 'rotree pull')
  let tree = null
  try {
    await sweep(dir)
    const store = await new BlobStore(dir, { fsync }).open() // also removes h/.tmp-* a killed run left

    tree = await openTree(address, { ...reader, concurrency: jobs })
    const bytes = tree.fsinfoBytes
    const info = decodeFsinfo(bytes) // verified by openTree; decoded again for the fields
    const local = await readLocalFsinfo(dir, tree.publicKey, warn)
    // DIR never goes backwards, even for a reader state that has not seen DIR's root
    if (local) checkRollback(info, { seq: local.seq, root: local.root.hash })
    // the root DIR serves now is history too (gc keeps the previous root for readers mid-update)
    if (local) await recordHistory(dir, local.raw, fsync, warn)

    const r = {
      seq: info.seq, root: info.root.hash, previousSeq: local?.seq ?? null,
      fetched: { blobs: 0, bytes: 0 }, present: { blobs: 0, bytes: 0 }, damaged: [], fetchedHashes: [],
      updated: false, gc: null
    }
    let total = 0; let done = 0
    const progress = () => onProgress({ done, total, fetched: r.fetched.bytes, present: r.present.bytes })
    const seen = new Set() // hashes scheduled or handled in this walk
    const walked = new Set() // page keys, for gc (see client-js/src/walk.js)
    const reachable = new Set()

    let failed = null // the first error: stops work not yet started
    const have = (ref, value) => { r.present.blobs++; r.present.bytes += ref.size; done += ref.size; progress(); return value }
    const fetch = async (ref, kind) => {
      const { value, raw } = await fetchVerified(tree.mirrors, ref, kind)
      await store.putHashed(ref.hash, raw)
      r.fetched.blobs++; r.fetched.bytes += ref.size; r.fetchedHashes.push(ref.hash)
      done += ref.size; progress()
      return value
    }
    const damaged = (ref, err) => {
      // seed 004: disks corrupt silently; a damaged local copy is replaced, not trusted
      r.damaged.push({ hash: ref.hash, code: err.code })
      warn(`${blobPath(dir, ref.hash)} is damaged (${err.code}); fetching it again`)
      store.have.delete(ref.hash) // so putHashed renames a good copy over it
    }

    // pages: needed to walk on, so a local copy is read and verified either way
    const loads = new Set() // walkTree stops at the first error while sibling loads still run; wait for them
    const load = (ref, kind) => {
      const p = loadPage(ref, kind)
      loads.add(p); p.catch(() => {}).finally(() => loads.delete(p))
      return p
    }
    const loadPage = async (ref, kind) => {
      if (failed) throw failed
      walked.add((kind === 'dir' ? 'd' : 'c') + ref.hash)
      if (store.have.has(ref.hash)) {
        const bytesNow = await readLocal(dir, ref.hash, ref.size)
        if (bytesNow) {
          try { return have(ref, await VERIFY[kind](bytesNow, ref)) } catch (err) {
            if (!DAMAGE_CODES.has(err.code)) throw err // verified by hash, yet malformed: the publisher signed it
            damaged(ref, err)
          }
        } else store.have.delete(ref.hash)
      }
      return fetch(ref, kind)
    }

    // data chunks: a present blob of the right size is taken as good (it was
    // renamed into place only after it verified); --rehash checks its bytes too
    const limit = limiter(jobs)
    const tasks = []
    const data = async ref => {
      if (failed) return
      if (store.have.has(ref.hash)) {
        if (rehash) {
          const bytesNow = await readLocal(dir, ref.hash, ref.size)
          if (bytesNow) {
            try { await VERIFY.data(bytesNow, ref); return have(ref) } catch (err) { if (!DAMAGE_CODES.has(err.code)) throw err; damaged(ref, err) }
          }
        } else {
          const st = await fs.stat(blobPath(dir, ref.hash)).catch(() => null)
          if (st?.size === ref.size) return have(ref)
          if (st) damaged(ref, { code: st.size > ref.size ? 'ROTREE_TOO_LARGE' : 'ROTREE_TRUNCATED' })
        }
        store.have.delete(ref.hash)
      }
      await fetch(ref, 'data')
    }
    const onRef = (ref, kind) => {
      reachable.add(ref.hash)
      if (seen.has(ref.hash + kind)) return
      seen.add(ref.hash + kind)
      total += ref.size; progress()
      if (kind !== 'data') return // load() handles pages
      tasks.push(limit(() => data(ref)).catch(err => { failed ??= err }))
    }

    try {
      await walkTree(info.root, load, onRef, { concurrency: jobs })
    } catch (err) {
      failed ??= err
    }
    await Promise.all(tasks)
    while (loads.size) await Promise.allSettled([...loads])
    if (failed) throw failed

    // FORMAT.md §8: every blob durable before fsinfo.json names them
    await store.sync()
    if (!local || !sameBytes(local.raw, bytes)) {
      if (local && local.seq === info.seq) {
        warn(`DIR holds a different signed text for seq ${info.seq} with the same root; keeping it`)
      } else {
        await publishFsinfo(dir, bytes, fsync) // history/<seq>.json first, then the rename
        r.updated = true
      }
    }

    if (gc) r.gc = await collect(dir, { publicKey: tree.publicKey, keep, current: info, previous: local, reachable, walked, warn, jobs })
    r.requests = tree.stats.requests
    r.bytesMoved = tree.stats.bytes // every body byte received, fsinfo.json from each mirror included
    r.mirrors = tree.stats.mirrors
    r.ms = Date.now() - t0
    return r
  } finally {
    tree?.close()
    await lock.release()
  }
}

/**
 * DIR's current fsinfo.json if it is a signed root for `publicKey` (expired is
 * fine: it is what DIR serves now). Another key's tree is refused: pulling one
 * tree over another is a mistake, not an update. A damaged or unsigned file is
 * ignored with a warning and replaced.
 */
export async function readLocalFsinfo (dir, publicKey, warn = () => {}) {
  let raw
  try { raw = new Uint8Array(await fs.readFile(path.join(dir, 'fsinfo.json'))) } catch (err) { if (err.code === 'ENOENT') return null; throw err }
  let info
  try {
    info = decodeFsinfo(raw)
    if (info.key !== publicKey) return verifyFsinfo(raw, { publicKey }) // throws ROTREE_WRONG_KEY
    return verifyFsinfo(raw, { publicKey, now: info.issuedMs }) // key and signature; time does not matter here
  } catch (err) {
    if (err.code === 'ROTREE_WRONG_KEY') throw err
    warn(`${path.join(dir, 'fsinfo.json')} is not a valid signed root (${err.code}); it will be replaced`)
    return null
  }
}

/** Remove what a killed pull left outside h/: fsinfo.json temp files of dead processes, history temps (lockDir sweeps its own). */
async function sweep (dir) {
  for (const n of await fs.readdir(dir)) {
    const m = /^\.fsinfo\.json\.tmp-(\d+)$/.exec(n)
    if (m && Number(m[1]) !== process.pid && !alive(Number(m[1]))) await fs.rm(path.join(dir, n), { force: true })
  }
  await cleanHistoryTemps(dir, alive)
}

/** history/<seq>.json for a root DIR already serves; one seq with two signed texts is kept as found, with a warning. */
async function recordHistory (dir, bytes, fsync, warn) {
  try { await writeHistory(dir, bytes, fsync) } catch (err) {
    if (err.code !== 'EEXIST') throw err
    warn(err.message)
  }
}

function sameBytes (a, b) { return a.length === b.length && Buffer.compare(Buffer.from(a.buffer, a.byteOffset, a.length), Buffer.from(b.buffer, b.byteOffset, b.length)) === 0 }

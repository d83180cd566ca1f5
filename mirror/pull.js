// `rotree pull ADDR DIR` (SFSRO's pulldb; FORMAT.md §8): make DIR a verified
// copy of the tree at ADDR, moving only the blobs DIR lacks.
//
//   1. lock DIR, sweep what a killed run left behind (temp files, a stale lock);
//   2. open the tree: fsinfo.json is verified by openTree (anchor and name
//      from ADDR; version 1: key, signature; version 2: the trust chain, the
//      timestamp and release thresholds, FORMAT.md §12.9; then expiry, skew,
//      rollback against the persisted reader state); DIR's own fsinfo.json
//      must not be newer (DIR never goes backwards);
//   3. walk from the root (version 2: the release's root ref, with its
//      codec); every blob DIR lacks is fetched by its stored bytes, verified
//      by hash and stored size (and decoded, for pages, to walk on), written
//      to a temp name and renamed (copy-tree.js);
//   3b. version 2: trust/1.json … trust/<n>.json, the whole chain up to the
//      document fsinfo.json names, each accepted from the anchor on
//      (trust/roles.js acceptTrustStep), so a reader of DIR walks it from 1
//      (FORMAT.md §12.2: a mirror serves every document of the chain);
//   3c. log/, the tree's transparency log, copied whole once it checks
//      (copy-log.js; FORMAT.md §13);
//   3d. a gated tree's trust/revoked.json, once it verifies under the access
//      role of the trust document 3b accepted, and only when newer than
//      DIR's (copy-revoked.js; FORMAT.md §12.12);
//   4. make the blobs and trust documents durable, record the new
//      fsinfo.json in DIR/history/<seq>.json and rename it in LAST
//      (lib/published/publish.js, as a build does);
//   5. with --gc, delete blobs no kept root reaches (only now: the new
//      fsinfo.json is in place).
// Killed anywhere, DIR still serves a complete tree (the old one until step
// 4's rename, the new one after) and a rerun finishes the job: nothing before
// the rename is visible to readers, and nothing is deleted before it.
import fs from 'node:fs/promises'
import path from 'node:path'
import { openTree } from 'rotree-client'
import { checkRollback } from 'rotree-client/verify'
import { ForkError, WrongKeyError } from 'rotree-client/errors'
import { advanceState, walkChain, firstTrustSource, mirrorTrustSource, checkNamedTrust } from 'rotree-client/trust'
import { BlobStore, publishFsinfo, writeHistory, isHistoryConflict, cleanHistoryTemps, withDirLock, pidAlive, syncDir } from '../lib/published/index.js'
import { writeDurable } from '../lib/published/history.js'
import { copyLog } from './copy-log.js'
import { copyRevoked } from './copy-revoked.js'
import { readFsinfoFile } from '../lib/published/publish.js'
import { decodeRoot, readTrustChain, rootContext, verifyRoot, folderTrustSource, TRUST_DIR } from '../lib/published/signed-roots.js'
import { TreeCopy } from './copy-tree.js'
import { collect } from './gc.js'

const CONCURRENCY = 64 // openTree's concurrency, which sizes its connections per mirror

/**
 * @param {object} o
 * @param {string} o.address '<mirror-url>#<anchor>[:<name>]' (FORMAT.md §1.4, §12.5)
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
    // the root page is copied raw with the rest (copy-tree.js): no decoded copy asked for ahead of it
    const tree = await openTree(address, { ...reader, prefetchRoot: false, keyless: true, concurrency: jobs ?? reader.concurrency ?? CONCURRENCY })
    try {
      const { info, local, newer } = await checkSource(tree, dir, fsync, warn)
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
      let trust = null
      if (info.version === 2) ({ counts: r.trust, doc: trust } = await copyTrust(tree, dir, info, fsync, warn))
      r.log = await copyLog(tree, dir, fsync, warn)
      r.revoked = info.version === 2 ? await copyRevoked(tree, dir, trust, fsync, warn) : null
      r.updated = await publish(dir, store, tree.fsinfoBytes, info, local, newer, fsync, warn)
      if (gc) r.gc = await collect(dir, { context: given(tree), keep, current: info, previous: local, reachable, walked, warn, jobs, fsync })
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
// processes, history and trust temps; the lock sweeps its own), then h/ itself (its
// temp files go when the store opens).
async function prepare (dir, fsync) {
  for (const n of await fs.readdir(dir)) {
    const m = /^\.fsinfo\.json\.tmp-(\d+)$/.exec(n)
    if (m && Number(m[1]) !== process.pid && !pidAlive(Number(m[1]))) await fs.rm(path.join(dir, n), { force: true })
  }
  await cleanHistoryTemps(dir)
  let temps = []
  try { temps = await fs.readdir(path.join(dir, TRUST_DIR)) } catch {}
  for (const n of temps) {
    const m = /^\.tmp-(?:\d+|revoked)-(\d+)$/.exec(n)
    if (m && Number(m[1]) !== process.pid && !pidAlive(Number(m[1]))) await fs.rm(path.join(dir, TRUST_DIR, n), { force: true })
  }
  return new BlobStore(dir, { fsync }).open()
}

// Step 2: the root to pull, against the one DIR serves now.
async function checkSource (tree, dir, fsync, warn) {
  const info = decodeRoot(tree.fsinfoBytes) // verified by openTree; decoded again for the fields
  const local = await readLocalFsinfo(dir, given(tree), warn)
  // DIR never goes backwards, even for a reader state that has not seen DIR's root
  const newer = local ? notBehind(info, local, tree.rootRecord) : true
  // the root DIR serves now is history too (gc keeps the previous root for readers mid-update)
  if (local) await recordHistory(dir, local.raw, fsync, warn)
  return { info, local, newer }
}

// Step 4: every blob durable before fsinfo.json names them (FORMAT.md §8), then the rename.
async function publish (dir, store, bytes, info, local, newer, fsync, warn) {
  await store.sync()
  if (local && sameBytes(local.raw, bytes)) return false
  if (local && !newer) {
    warn(`DIR holds a different signed text for seq ${info.seq} with the same ${info.version === 2 ? 'release' : 'root'}; keeping it`)
    return false
  }
  await publishFsinfo(dir, bytes, fsync) // history/<seq>.json first, then the rename
  return true
}

/** The anchor and name the reader took from ADDR: what DIR's own roots are checked against. */
function given (tree) { return { anchor: tree.anchor, name: tree.name } }

/**
 * Is the root pulled (`info`, decodeRoot's; `rec`, the reader's record of
 * it) at least as new as DIR's (`local`)? The reader's own rules decide:
 * checkRollback for version 1 (a version-2 DIR never goes back to version
 * 1: docs/TRUST.md rule 13), advanceState for version 2 (rule 13: the trust
 * document, then the release and timestamp sequences of unchanged roles).
 * A version-1 DIR taking a version-2 root is an upgrade (FORMAT.md §12.9).
 * Throws the reader's ROTREE_ROLLBACK / ROTREE_FORK; returns true when the
 * pulled root is newer (DIR's fsinfo.json is replaced), false when it is the same.
 */
function notBehind (info, local, rec) {
  if (info.version === 1) return checkRollback(info, local.version === 2 ? { v: 2 } : { seq: local.seq, root: local.root.hash })
  if (local.version === 1) return true
  const { state } = advanceState(null, local.info, local.roles, local.signers)
  return advanceState(state, info.info, rec.roles, rec.signers).newer
}

/**
 * DIR's current fsinfo.json if it is a signed root for the anchor and name
 * of `ctx` ({ anchor, name }; a string: a version-1 key) — expired is fine:
 * it is what DIR serves now, so only signatures are checked (version 2:
 * against the trust documents in DIR/trust, signed-roots.js). Another key's
 * or another name's tree is refused: pulling one tree over another is a
 * mistake, not an update. A damaged or unsigned file is ignored with a
 * warning and replaced.
 */
export async function readLocalFsinfo (dir, ctx, warn = () => {}) {
  if (typeof ctx === 'string') ctx = { anchor: { kind: 'key', key: ctx }, name: '' }
  let raw
  raw = await readFsinfoFile(dir)
  if (raw === null) return null
  try {
    return verifyRoot(raw, await rootContext(dir, { given: ctx }))
  } catch (err) {
    if (err.code === 'ROTREE_WRONG_KEY' || err.code === 'ROTREE_WRONG_NAME') throw err
    // a version-2 fsinfo.json names no key (FORMAT.md §12.4, §12.5): another key's
    // or another family's tree fails the address's threshold like a forged file
    // would; one that verifies as its own tree is another tree, not damage
    const own = await ownTree(dir, raw)
    if (own) throw new WrongKeyError(`${path.join(dir, 'fsinfo.json')} is a signed root of another tree (${own}), not of the one at this address (${err.code}: ${err.message}): pulling one tree over another is refused`)
    warn(`${path.join(dir, 'fsinfo.json')} is not a valid signed root (${err.code}); it will be replaced`)
    return null
  }
}

/** The anchor a version-2 fsinfo.json verifies under as its folder's own tree (signed-roots.js, no address), or null. */
async function ownTree (dir, raw) {
  try {
    const current = decodeRoot(raw)
    if (current.version !== 2) return null
    const ctx = await rootContext(dir, { current })
    verifyRoot(raw, ctx)
    return ctx.anchor.kind === 'key' ? `key ${ctx.anchor.key}` : `trust document 1 t${ctx.anchor.hash}`
  } catch (err) {
    if (typeof err.code !== 'string' || !err.code.startsWith('ROTREE_')) throw err
    return null
  }
}

/**
 * Step 3b: DIR/trust/1.json … <n>.json for the document fsinfo.json names,
 * walked as a reader walks a chain (walkChain, docs/TRUST.md rule 10): each
 * document DIR holds that follows is kept, the rest are fetched, accepted
 * and written before the next is asked for; the last must be the one
 * fsinfo.json names (checkNamedTrust: another with its number is a fork).
 * @returns {Promise<{ counts: { fetched: number, present: number }, doc: object|null }>} doc: that last
 *   document (null for a single-key tree), whose access role verifies the revocation list (3d)
 */
async function copyTrust (tree, dir, info, fsync, warn) {
  const out = { fetched: 0, present: 0 }
  if (info.trust === null) return { counts: out, doc: null }
  const anchor = tree.anchor
  const local = await readTrustChain(dir, anchor)
  if (local.fault && local.fault.seq <= info.trust.seq && !local.fault.missing) warn(`${local.fault.message}; fetching it again`)
  const tdir = path.join(dir, TRUST_DIR)
  await fs.mkdir(tdir, { recursive: true })
  const last = await walkChain(firstTrustSource(folderTrustSource(dir), mirrorTrustSource(tree.mirrors)), {
    anchor,
    to: info.trust.seq,
    onStep: async doc => {
      if (doc.source === 0) { out.present++; return }
      // under a temporary name, then renamed: a reader of DIR never sees half a document
      const tmp = path.join(tdir, `.tmp-${doc.seq}-${process.pid}`)
      await writeDurable(tmp, doc.bytes, fsync)
      await fs.rename(tmp, path.join(tdir, `${doc.seq}.json`))
      out.fetched++
    }
  })
  try {
    checkNamedTrust(last, info.trust, 'the pulled fsinfo.json')
  } catch (err) {
    if (err.code !== 'ROTREE_FORK') throw err
    throw new ForkError(`DIR's ${TRUST_DIR}/${last.seq}.json is not the trust document fsinfo.json names (another document ${last.seq} signed by the root keys); move it aside to pull`, { cause: err })
  }
  if (fsync && out.fetched) await syncDir(tdir)
  return { counts: out, doc: last }
}

/** history/<seq>.json for a root DIR already serves; one seq with two signed texts is kept as found, with a warning. */
async function recordHistory (dir, bytes, fsync, warn) {
  try { await writeHistory(dir, bytes, fsync) } catch (err) {
    if (!isHistoryConflict(err)) throw err
    warn(err.message)
  }
}

function sameBytes (a, b) { return a.length === b.length && Buffer.compare(Buffer.from(a.buffer, a.byteOffset, a.length), Buffer.from(b.buffer, b.byteOffset, b.length)) === 0 }

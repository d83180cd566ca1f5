// `rotree gc OUT --keep N`: delete blobs that none of the kept roots reach.
//
// Kept roots:
//   - the N newest distinct roots in OUT/history/ (a resign gives a new seq
//     for the same root, so "the last 3 trees" is not "the last 3 signatures");
//   - the current fsinfo.json and a pending unsigned.json (its blobs are in h/
//     already, waiting for an offline signature);
//   - any root that stopped being current less than `grace` ago: a reader
//     that fetched it just before the switch may still be reading it.
// And only blobs whose mtime is older than `grace` are deleted, so a blob a
// build (or pull) has just written for a root not yet published survives.
// History files are never deleted (non-repudiation, publish.js).
import fs from 'node:fs/promises'
import path from 'node:path'
import { decodeFsinfo } from 'rotree-client/src/format/fsinfo.js'
import { limiter } from 'rotree-client/src/cache.js'
import { UsageError } from 'rotree-client/errors'
import { listHistory, readPublished } from './publish.js'
import { readUnsigned } from './sign.js'
import { withOutLock } from './build-index.js'
import { localLoader, walkLocal } from './local-tree.js'

const HEX64 = /^[0-9a-f]{64}$/

/**
 * @param {string} out
 * @param {{ keep: number, graceMs?: number, dryRun?: boolean, now?: number, fsync?: boolean, warn?: (m: string) => void }} o
 */
export async function gc (out, { keep, graceMs = 3600e3, dryRun = false, now = Date.now(), fsync = true, warn = () => {} }) {
  if (!Number.isInteger(keep) || keep < 1) throw new UsageError('--keep must be a positive integer')
  try { await fs.access(path.join(out, 'h')) } catch { throw new UsageError(`${out} is not a published folder (no h/)`) }
  return withOutLock(out, 'rotree gc', async () => {
    const roots = await keptRoots(out, { keep, graceMs, now, warn })
    if (!roots.some(r => r.why.includes('current') || r.why.includes('unsigned'))) {
      throw new UsageError(`${out} has no readable fsinfo.json or unsigned.json; refusing to collect garbage without knowing the current tree`)
    }

    // Everything the kept roots reach. The current and the pending root must be
    // complete: collecting around a hole could delete what a repair needs.
    // An older root that is already incomplete (an earlier gc with a smaller
    // --keep) protects what can still be reached from it.
    const reached = new Set()
    const load = localLoader(out)
    for (const r of roots) {
      try {
        await walkLocal(out, r.ref, { load, reached, checkData: false })
        r.complete = true
      } catch (err) {
        if (r.why.includes('current') || r.why.includes('unsigned')) {
          throw Object.assign(new Error(`the ${r.why.includes('current') ? 'current' : 'unsigned'} root (seq ${r.seq}) is incomplete: ${err.message}; run rotree fsck before gc`), { code: err.code, cause: err })
        }
        r.complete = false
        warn(`root seq ${r.seq} is incomplete (${err.message}); keeping what it still reaches`)
      }
    }

    const res = {
      dryRun, keep, graceMs,
      roots: roots.map(r => ({ seq: r.seq, root: r.ref.hash, why: r.why, complete: r.complete })),
      reachable: reached.size,
      blobs: 0,
      deleted: { count: 0, bytes: 0 },
      young: { count: 0, bytes: 0 }, // unreachable but newer than the grace period
      temp: { count: 0, bytes: 0 } // stale h/.tmp-* left by killed builds
    }
    const hdir = path.join(out, 'h')
    const limit = limiter(16)
    await Promise.all((await fs.readdir(hdir)).map(name => limit(async () => {
      const blob = HEX64.test(name)
      if (blob) res.blobs++
      if (blob ? reached.has(name) : !name.startsWith('.tmp-')) return
      let st
      try { st = await fs.lstat(path.join(hdir, name)) } catch (err) { if (err.code === 'ENOENT') return; throw err }
      if (now - st.mtimeMs < graceMs) { if (blob) { res.young.count++; res.young.bytes += st.size } return }
      const bucket = blob ? res.deleted : res.temp
      bucket.count++; bucket.bytes += st.size
      if (!dryRun) await fs.rm(path.join(hdir, name), { force: true })
    })))
    if (!dryRun && fsync && res.deleted.count + res.temp.count > 0) {
      const d = await fs.open(hdir, 'r')
      try { await d.sync() } finally { await d.close() }
    }
    return res
  })
}

/** The roots gc keeps, with why each one is kept. */
async function keptRoots (out, { keep, graceMs, now, warn }) {
  const byRoot = new Map() // root hash → { seq, ref, why: [] }
  const add = (info, why) => {
    const k = info.root.hash
    const r = byRoot.get(k) ?? { seq: info.seq, ref: info.root, why: [] }
    r.seq = Math.max(r.seq, info.seq)
    if (!r.why.includes(why)) r.why.push(why)
    byRoot.set(k, r)
  }

  const hist = []
  for (const h of await listHistory(out)) { // newest first
    try {
      const [bytes, st] = await Promise.all([fs.readFile(h.file), fs.stat(h.file)])
      hist.push({ info: decodeFsinfo(bytes), publishedMs: st.mtimeMs })
    } catch (err) { warn(`ignoring ${h.file}: ${err.message}`) }
  }
  const distinct = new Set()
  for (let i = 0; i < hist.length; i++) {
    const { info } = hist[i]
    if (distinct.size < keep || distinct.has(info.root.hash)) {
      distinct.add(info.root.hash)
      add(info, `last ${keep}`)
      continue
    }
    // retired when the next newer entry was published
    const retiredMs = hist[i - 1].publishedMs
    if (now - retiredMs < graceMs) add(info, 'grace')
  }
  const current = await readPublished(out)
  if (current) add(current, 'current')
  let pending = null
  try { pending = await readUnsigned(out) } catch (err) { warn(`ignoring unsigned.json: ${err.message}`) }
  if (pending) add({ seq: pending.seq, root: { hash: pending.root, size: pending.rootSize } }, 'unsigned')
  return [...byRoot.values()].sort((a, b) => b.seq - a.seq)
}

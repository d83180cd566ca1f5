// `rotree gc OUT --keep N`: delete blobs that none of the kept roots reach.
// The collection itself is lib/published/gc.js, shared with `pull --gc`; this
// is the publisher's policy for which roots to keep:
//   - the N newest distinct roots in OUT/history/ (a resign gives a new seq
//     for the same root, so "the last 3 trees" is not "the last 3 signatures");
//   - the current fsinfo.json and a pending unsigned.json (its blobs are in h/
//     already, waiting for an offline signature);
//   - any root that stopped being current less than `grace` ago: a reader
//     that fetched it just before the switch may still be reading it.
// And only blobs whose mtime is older than `grace` are deleted, so a blob a
// build (or pull) has just written for a root not yet published survives.
// The current and the pending root must be complete: collecting around a hole
// could delete what a repair needs. An older root that is already incomplete
// (an earlier gc with a smaller --keep) protects what can still be reached
// from it. History files and trust documents are never deleted (only h/ is
// swept). Roots of either format version: a version-2 history entry is
// checked against OUT's own trust documents (lib/published/signed-roots.js).
import fs from 'node:fs/promises'
import path from 'node:path'
import { RotreeError, UsageError } from 'rotree-client/errors'
import { historyEntries, collectGarbage } from '../lib/published/index.js'
import { decodeRoot, rootContext, verifyHistoryRoot } from '../lib/published/signed-roots.js'
import { decodeUnsigned, withOutLock } from './sign.js'
import { isUnsignedRelease, readUnsignedRelease } from './release.js'
import { keylessRoot } from 'rotree-client/format'
import { rootId } from '../lib/published/walk-root.js'
import { UNSIGNED_FILE } from '../lib/published/publish.js'

/**
 * @param {string} out
 * @param {{ keep: number, graceMs?: number, dryRun?: boolean, now?: number, fsync?: boolean, warn?: (m: string) => void }} o
 */
export async function gc (out, { keep, graceMs = 3600e3, dryRun = false, now = Date.now(), fsync = true, warn = () => {} }) {
  if (!Number.isInteger(keep) || keep < 1) throw new UsageError('--keep must be a positive integer')
  try { await fs.access(path.join(out, 'h')) } catch { throw new UsageError(`${out} is not a published folder (no h/)`) }
  return withOutLock(out, 'rotree gc', async () => {
    const roots = await keptRoots(out, { keep, graceMs, now, warn })
    const required = r => r.why.includes('current') || r.why.includes('unsigned')
    if (!roots.some(required)) {
      throw new UsageError(`${out} has no readable fsinfo.json or unsigned.json; refusing to collect garbage without knowing the current tree`)
    }
    const res = await collectGarbage(out, {
      roots, graceMs, now, dryRun, fsync, temps: true,
      onIncomplete: (r, err) => {
        if (required(r)) {
          if (!(err instanceof RotreeError)) throw err // a system error (EIO, …) as it is
          const E = err.constructor
          throw new E(`the ${r.why.includes('current') ? 'current' : 'unsigned'} root (seq ${r.seq}) is incomplete: ${err.message}; run rotree fsck before gc`, { cause: err, details: { hash: err.hash } })
        }
        warn(`root seq ${r.seq} is incomplete (${err.message}); keeping what it still reaches`)
        return 'partial'
      }
    })
    return {
      dryRun, keep, graceMs,
      roots: roots.map(r => ({ seq: r.seq, root: r.ref.hash, ...(r.ref.manifest ? { private: true } : {}), why: r.why, complete: r.complete })),
      reachable: res.reached.size,
      blobs: res.blobs,
      deleted: res.deleted,
      young: res.young, // unreachable but newer than the grace period
      temp: res.temp // stale h/.tmp-* left by killed builds
    }
  })
}

/** The roots gc keeps, newest first, with why each one is kept. */
async function keptRoots (out, { keep, graceMs, now, warn }) {
  const byRoot = new Map() // root hash → { seq, ref, why: [] }
  const add = (info, why) => {
    const k = rootId(info.root)
    const r = byRoot.get(k) ?? { seq: info.seq, ref: info.root, why: [] }
    r.seq = Math.max(r.seq, info.seq)
    if (!r.why.includes(why)) r.why.push(why)
    byRoot.set(k, r)
  }
  const current = await readCurrent(out)
  let pending = null
  try { pending = await readPending(out) } catch (err) { warn(`ignoring unsigned.json: ${err.message}`) }

  // A history entry is kept only once it verifies under OUT's own key (the
  // current root's, else the pending one's; version 2: OUT's own trust
  // documents, or the key that signed a single-key fsinfo.json); one that
  // does not is ignored. Only the entries that would be kept are checked: each
  // costs a signature check, and history grows by one entry per publish.
  // (a pending version-2 release: the single key its unsigned.json records, else trust/'s anchor)
  const ctx = !current && pending?.version === 2 && pending.key
    ? await rootContext(out, { given: { anchor: { kind: 'key', key: pending.key }, name: pending.name } })
    : await rootContext(out, { current: current ?? (pending?.version === 1 ? { version: 1, key: pending.key } : null) })
  const distinct = new Set()
  let newer = null // the next newer readable entry: this one was retired when it was published
  for await (const h of ctx.anchor ? historyEntries(out) : []) {
    let decoded
    try { decoded = h.error ? null : decodeRoot(h.raw) } catch {}
    if (!decoded) { warn(`ignoring history/${h.seq}.json: ${h.error?.message ?? 'not a fsinfo.json'}`); continue }
    const retiredMs = newer?.publishedMs
    newer = h
    const why = distinct.size < keep || distinct.has(rootId(decoded.root)) ? `last ${keep}` : now - retiredMs < graceMs ? 'grace' : null
    if (!why) continue
    let info
    try { info = verifyHistoryRoot(h, ctx) } catch (err) { warn(`ignoring history/${h.seq}.json: ${err.message}`); continue }
    if (why !== 'grace') distinct.add(rootId(info.root))
    add(info, why)
  }
  if (current) add(current, 'current')
  if (pending) add(pending, 'unsigned')
  return [...byRoot.values()].sort((a, b) => b.seq - a.seq)
}

/**
 * OUT/unsigned.json of either version as { version, seq, root (ref), key (version 2: a single-key
 * tree's, when recorded) }, or null:
 * version 1's unsigned root (builder/sign.js), or version 2's unsigned release
 * (builder/release.js; FORMAT.md §12.3), whose root ref carries its codec and
 * stored size (§12.6).
 */
async function readPending (out) {
  let bytes
  try { bytes = await fs.readFile(path.join(out, UNSIGNED_FILE)) } catch (err) { if (err.code === 'ENOENT') return null; throw err }
  if (isUnsignedRelease(bytes)) {
    const { release, key } = readUnsignedRelease(bytes)
    return { version: 2, seq: release.seq, root: keylessRoot(release), key, name: release.name }
  }
  const u = decodeUnsigned(bytes)
  return { version: 1, seq: u.seq, root: { hash: u.root, size: u.rootSize }, key: u.key }
}

/** OUT's fsinfo.json of either version, decoded (not verified), or null. A corrupt one does not block gc's refusal message. */
async function readCurrent (out) {
  let bytes
  try { bytes = await fs.readFile(path.join(out, 'fsinfo.json')) } catch (err) { if (err.code === 'ENOENT') return null; throw err }
  try { return decodeRoot(bytes) } catch (err) {
    if (err.code === 'ROTREE_BAD_FORMAT' || err.code === 'ROTREE_UNSUPPORTED_VERSION') return null
    throw err
  }
}

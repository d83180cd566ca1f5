// `rotree fsck DIR` (FORMAT.md §8 "Checking a mirror"; disks that fail
// silently: bit rot, torn or misdirected writes, lost files): is this
// published folder whole and true? check() runs these steps:
//   fsinfo    format, key, signature, expiry (fsck-fsinfo.js); format
//             version 2: the trust chain in DIR/trust, the thresholds of the
//             document fsinfo.json names, the release (FORMAT.md §12.2–§12.4);
//   scrub     every file in h/ re-hashed (scrub.js): a blob whose bytes no
//             longer hash to its name is corrupt;
//   current   the current root walked over the local blobs: every reference
//             is checked against the blob it names (present, hashing to its
//             name, and the size the reference says: the stored size, for a
//             version-2 ref; pages are decoded by their codec to be walked);
//             each problem blob is reported with the paths using it;
//   history   older roots (DIR/history) walked too: what they reach is not an
//             orphan;
//   classify  missing, corrupt, orphans (a warning: a mirror may keep old
//             blobs for readers on older roots);
//   repair    with a repair source, damaged and missing blobs are fetched
//             from it, verified against the refs of DIR's own verified root,
//             and missing or broken trust documents accepted from the anchor
//             on, written atomically (fsck-repair.js), and the whole check
//             runs again; its result is the one returned.
import fs from 'node:fs/promises'
import path from 'node:path'
import { localChunkFault, storedSizeOf } from 'rotree-client/verify'
import { walkRoot } from '../lib/published/walk-root.js'
import { lockDir, pageLoader, historyEntries } from '../lib/published/index.js'
import { verifyHistoryRoot } from '../lib/published/signed-roots.js'
import { scrub } from './scrub.js'
import { checkFsinfo } from './fsck-fsinfo.js'
import { Repairer } from './fsck-repair.js'

const MAX_PATHS = 10 // paths listed per problem blob; `refs` has the full count

/**
 * @param {string} dir
 * @param {object} [o]
 * @param {string|null} [o.publicKey] the key to check against; null: the key inside fsinfo.json (self-asserted)
 * @param {{ kind: 'key', key: string } | { kind: 'trust', hash: string } | null} [o.anchor] an address's anchor
 *   (FORMAT.md §12.5; wins over publicKey) @param {string} [o.name] and its tree name
 * @param {'given'|'address'} [o.keySource='given']
 * @param {ReturnType<import('./source.js').blobSource>|null} [o.repairFrom]
 * @param {number} [o.now] @param {number} [o.skewMs]
 * @param {number} [o.jobs] hashing threads
 * @param {boolean} [o.fsync=true]
 * @param {(phase: string, done: number, total: number) => void} [o.onProgress]
 */
export async function fsck (dir, o = {}) {
  await fs.access(path.join(dir, 'h')) // not a published folder: the system error says which part is missing
  let lock = null
  try {
    lock = await lockDir(dir, o.repairFrom ? 'rotree fsck --repair-from' : 'rotree fsck')
  } catch (err) {
    // a read-only mirror can still be checked; only repair needs to write
    if (o.repairFrom || !['EROFS', 'EACCES', 'EPERM'].includes(err.code)) throw err
  }
  try {
    const first = await check(dir, o, o.repairFrom ?? null)
    if (!o.repairFrom) return first
    const again = await check(dir, o, null)
    again.repair = first.repair
    again.before = { problems: first.problems, corrupt: first.corrupt.length, missing: first.missing.length }
    return again
  } finally {
    await lock?.release()
  }
}

async function check (dir, o, src) {
  const now = o.now ?? Date.now()
  const r = {
    dir, ok: false, problems: 0,
    key: null, fsinfo: null,
    blobs: { files: 0, bytes: 0, reachable: 0, reachableBytes: 0, hashMs: 0, threads: 1 },
    corrupt: [], missing: [], unchecked: [], orphans: [], stray: [],
    history: { roots: 0, bad: [] },
    warnings: []
  }
  const fi = await checkFsinfo(dir, o, now, m => r.warnings.push(m))
  const s = await scrubStep(dir, o, r)
  let repairer = src && new Repairer(dir, src, { fsync: o.fsync !== false })
  // trust documents first: fsinfo.json's signatures are counted by them (fsck-repair.js)
  const named = fi.report.trustSeq ?? 0
  if (repairer && fi.ctx?.anchor && named > 0 && (named > fi.ctx.chain.highest || fi.ctx.chain.fault?.seq <= named)) {
    await repairer.trust(fi.ctx, named)
    Object.assign(fi, await checkFsinfo(dir, o, now, () => {}))
  }
  if (repairer && !fi.trusted) {
    repairer.result.unrepaired.push({ hash: null, code: fi.problems[0]?.code ?? 'ROTREE_BAD_FORMAT', message: 'fsinfo.json does not verify, so its refs cannot be trusted: nothing repaired (pull the tree again instead)' })
    r.repair = repairer.report()
    repairer = null
  }
  const walked = new Set()
  const current = await walkCurrent(dir, fi.info, s, repairer, r, walked)
  const older = await walkHistory(dir, fi, s, r, walked)
  const unreferencedBad = classify(r, s, current, older, fi.info)
  if (repairer) {
    await repairer.unreferenced(unreferencedBad)
    await repairer.sync()
    r.repair = repairer.report()
  }
  return summarize(r, fi)
}

async function scrubStep (dir, o, r) {
  const onProgress = o.onProgress ?? (() => {})
  const s = await scrub(dir, { jobs: o.jobs, onProgress: (d, t) => onProgress('hash', d, t) })
  r.blobs.files = s.blobs.size; r.blobs.bytes = s.bytes; r.blobs.hashMs = s.ms; r.blobs.threads = s.threads
  r.stray = s.stray
  if (s.stray.length) r.warnings.push(`${s.stray.length} file(s) in h/ are not blobs (${s.stray.slice(0, 3).join(', ')}${s.stray.length > 3 ? ', …' : ''}): temp files of a killed writer, or foreign files`)
  return s
}

// The current root over local blobs. Every reference is checked against the
// scrubbed blob it names: one that is missing or corrupt, or whose size is
// not the size this reference says (localChunkFault: a tree that lists one
// hash under two sizes), is a problem, with the paths that use it.
async function walkCurrent (dir, info, s, repairer, r, walked) {
  const problems = new Map() // hash → { hash, kind, size, paths, refs, fault? } for referenced blobs that are not good here
  const reached = new Set()
  if (!info) return { problems, reached }
  const dataFixes = []
  const local = pageLoader(dir, repairer ? { onDamage: (ref, kind) => repairer.fix(ref, kind) } : {})
  // a page the scrub found bad (unreadable, too) goes straight to repair
  const load = repairer ? (ref, kind) => s.blobs.get(ref.hash)?.ok === false ? repairer.fix(ref, kind) : local(ref, kind) : local
  await walkRoot(info.root, load, (ref, kind, p) => {
    if (!reached.has(ref.hash)) { reached.add(ref.hash); r.blobs.reachable++; r.blobs.reachableBytes += storedSizeOf(ref) }
    const st = s.blobs.get(ref.hash)
    const fault = st?.ok ? localChunkFault(st.size, ref) : null
    if (st?.ok && !fault) return
    let e = problems.get(ref.hash)
    if (!e) {
      problems.set(ref.hash, e = { hash: ref.hash, kind, size: storedSizeOf(ref), paths: [], refs: 0 })
      if (repairer && kind === 'data') dataFixes.push(repairer.fix(ref, kind).catch(() => {}))
    }
    if (fault) e.fault = { code: fault.code, message: `${p}: ${fault.message}` }
    e.refs++
    if (e.paths.length < MAX_PATHS && !e.paths.includes(p)) e.paths.push(p)
  }, {
    walked,
    concurrency: 8,
    onLoadError: (ref, kind, p, err) => {
      const st = s.blobs.get(ref.hash)
      // a page that is itself corrupt or missing is already reported; say what could not be checked below it
      r.unchecked.push({ hash: ref.hash, kind, path: p, code: err.code, reason: !st ? 'missing' : !st.ok ? 'corrupt' : 'unreadable' })
    }
  })
  await Promise.all(dataFixes)
  return { problems, reached }
}

// Older roots (DIR/history): what they reach is not an orphan. Blobs of roots
// that gc has dropped are gone by design, so failures there are not problems.
async function walkHistory (dir, fi, s, r, walked) {
  const older = new Set()
  const load = pageLoader(dir)
  for await (const e of historyEntries(dir)) {
    let h
    try { h = verifyHistoryRoot(e, fi.ctx) } catch (err) {
      r.history.bad.push({ seq: e.seq, code: err.code ?? 'ROTREE_INTERNAL', message: err.message })
      continue
    }
    r.history.roots++
    if (fi.info && h.seq > fi.info.seq) fi.newerInHistory = Math.max(fi.newerInHistory ?? 0, h.seq)
    await walkRoot(h.root, load, ref => { older.add(ref.hash) }, { walked, onLoadError: () => {} })
  }
  if (r.history.bad.length) r.warnings.push(`${r.history.bad.length} history file(s) do not verify: ${r.history.bad.map(b => `${b.seq}.json (${b.code})`).join(', ')}`)
  // history/<seq>.json is written just before the rename of fsinfo.json (lib/published/publish.js),
  // so a newer entry means an update killed in between (the next pull finishes it) or
  // fsinfo.json put back from a backup (readers that saw the newer root refuse this one)
  if (fi.newerInHistory !== undefined) {
    r.warnings.push(`fsinfo.json has seq ${fi.info.seq}, but history/ holds seq ${fi.newerInHistory}: an interrupted update (pull again), or fsinfo.json was restored from an older copy (readers that saw seq ${fi.newerInHistory} would refuse it)`)
  }
  return older
}

// Missing, corrupt (a blob that is not itself, or not the size a reference
// says), orphans. Returns the corrupt blobs no current root uses.
function classify (r, s, { problems, reached }, older, info) {
  for (const e of problems.values()) {
    const st = s.blobs.get(e.hash)
    if (!st) r.missing.push(e)
    else r.corrupt.push({ ...e, onDisk: st.size, actual: st.actual ?? null, error: st.error })
  }
  const unreferencedBad = []
  for (const [hash, st] of s.blobs) {
    if (reached.has(hash)) continue
    if (!st.ok) {
      const e = { hash, kind: null, size: null, paths: [], refs: 0, onDisk: st.size, actual: st.actual ?? null, error: st.error }
      r.corrupt.push(e); unreferencedBad.push(e)
    } else if (!older.has(hash)) r.orphans.push({ hash, size: st.size })
  }
  if (!info && s.blobs.size) r.warnings.push('there is no valid current root: orphans are relative to DIR/history only')
  if (r.unchecked.length) r.warnings.push(`${r.unchecked.length} subtree(s) could not be walked (below a damaged or missing page); blobs only they use show up as orphans until it is repaired`)
  return unreferencedBad
}

function summarize (r, fi) {
  r.fsinfo = fi.report
  r.fsinfo.problems = fi.problems
  r.key = { value: fi.key, source: fi.keySource }
  const other = r.unchecked.filter(u => u.reason === 'unreadable').length
  r.problems = r.corrupt.length + r.missing.length + fi.problems.length + other
  r.ok = r.problems === 0
  for (const list of [r.corrupt, r.missing, r.orphans]) list.sort((a, b) => a.hash < b.hash ? -1 : 1)
  return r
}

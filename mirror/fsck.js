// `rotree fsck DIR` (seed 004's silent-corruption model; FORMAT.md §8 "Checking
// a mirror"): is this published folder whole and true?
//   * fsinfo.json: format, key, signature, expiry (and a warning if DIR's history is newer);
//   * every file in h/ re-hashed (scrub.js): a blob whose bytes no longer hash
//     to its name is corrupt (bit rot, truncation, a misdirected write that
//     put another blob's bytes here);
//   * the current root walked over the local blobs: a referenced blob that is
//     absent is missing; each problem blob is reported with the paths using it;
//   * blobs no root reaches (current, or any in DIR/history) are orphans: a
//     warning, since a mirror may keep old blobs for readers on older roots.
// With a repair source, damaged and missing blobs are fetched from it,
// verified against the refs of DIR's own verified root, written atomically,
// and the whole check runs again; its result is the one returned.
import fs from 'node:fs/promises'
import path from 'node:path'
import { decodeFsinfo } from 'rotree-client/format'
import { verifyFsinfo, DEFAULT_SKEW_MS } from 'rotree-client/verify'
import { limiter } from 'rotree-client/src/cache.js'
import { BlobStore } from '../builder/blobstore.js'
import { VERIFY, readLocal, blobPath } from './blobs.js'
import { scrub } from './scrub.js'
import { walkTree } from 'rotree-client'
import { listHistory, readHistory } from './history.js'
import { lockDir } from '../lib/folder-lock.js'

const MAX_PATHS = 10 // paths listed per problem blob; `refs` has the full count

/**
 * @param {string} dir
 * @param {object} [o]
 * @param {string|null} [o.publicKey] the key to check against; null: the key inside fsinfo.json (self-asserted)
 * @param {'given'|'address'} [o.keySource='given']
 * @param {ReturnType<import('./source.js').blobSource>|null} [o.repairFrom]
 * @param {number} [o.now] @param {number} [o.skewMs]
 * @param {number} [o.jobs] hashing threads
 * @param {boolean} [o.fsync=true]
 * @param {(phase: string, done: number, total: number) => void} [o.onProgress]
 */
export async function fsck (dir, o = {}) {
  await fs.access(path.join(dir, 'h')).catch(err => {
    throw Object.assign(new Error(`${dir} is not a published folder (${err.code} on h/)`), { code: err.code })
  })
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
  const onProgress = o.onProgress ?? (() => {})
  const r = {
    dir, ok: false, problems: 0,
    key: null, fsinfo: null,
    blobs: { files: 0, bytes: 0, reachable: 0, reachableBytes: 0, hashMs: 0, threads: 1 },
    corrupt: [], missing: [], unchecked: [], orphans: [], stray: [],
    history: { roots: 0, bad: [] },
    warnings: []
  }

  // ---- fsinfo.json (FORMAT.md §7 "Opening a tree", steps 3–6) ----
  const fi = await checkFsinfo(dir, o, now, r)
  const info = fi.info

  // ---- every file in h/ ----
  const s = await scrub(dir, { jobs: o.jobs, onProgress: (d, t) => onProgress('hash', d, t) })
  r.blobs.files = s.blobs.size; r.blobs.bytes = s.bytes; r.blobs.hashMs = s.ms; r.blobs.threads = s.threads
  r.stray = s.stray
  if (s.stray.length) r.warnings.push(`${s.stray.length} file(s) in h/ are not blobs (${s.stray.slice(0, 3).join(', ')}${s.stray.length > 3 ? ', …' : ''}): temp files of a killed writer, or foreign files`)

  // ---- repair plumbing ----
  const repair = src && { repaired: [], unrepaired: [], removed: [] }
  let store = null
  const repairs = new Map() // hash → promise of the decoded value
  // kind null: a blob no current ref names, so no size is known; it must still hash to its name
  const fix = (ref, kind, { record = true } = {}) => {
    let p = repairs.get(ref.hash + kind)
    if (!p) {
      p = (async () => {
        store ??= await new BlobStore(dir, { fsync: o.fsync !== false }).open()
        try {
          const { value, raw } = kind ? await src.fetch(ref, kind) : await src.fetchByHash(ref.hash)
          store.have.delete(ref.hash) // the damaged copy is renamed over, atomically
          await store.putHashed(ref.hash, raw)
          repair.repaired.push({ hash: ref.hash, kind, size: raw.length })
          return value
        } catch (err) {
          if (record) repair.unrepaired.push({ hash: ref.hash, kind, code: err.code, message: err.message })
          throw err
        }
      })()
      repairs.set(ref.hash + kind, p)
    }
    return p
  }
  if (src && !fi.trusted) {
    repair.unrepaired.push({ hash: null, code: fi.problems[0]?.code ?? 'ROTREE_BAD_FORMAT', message: 'fsinfo.json does not verify, so its refs cannot be trusted: nothing repaired (pull the tree again instead)' })
    src = null
  }

  // ---- the current root, over local blobs ----
  const problems = new Map() // hash → { hash, kind, size, paths, refs } for referenced blobs that are not good here
  const reached = new Set()
  const walked = new Set()
  const dataFixes = []
  const load = kindLoader(dir, s, src ? fix : null)
  if (info) {
    await walkTree(info.root, load, (ref, kind, p) => {
      if (!reached.has(ref.hash)) { reached.add(ref.hash); r.blobs.reachable++; r.blobs.reachableBytes += ref.size }
      if (s.blobs.get(ref.hash)?.ok) return
      let e = problems.get(ref.hash)
      if (!e) {
        problems.set(ref.hash, e = { hash: ref.hash, kind, size: ref.size, paths: [], refs: 0 })
        if (src && kind === 'data') dataFixes.push(fix(ref, kind).catch(() => {}))
      }
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
  }

  // ---- older roots (DIR/history): what they reach is not an orphan ----
  const older = new Set()
  for (const seq of await listHistory(dir)) {
    let h
    try {
      const raw = await readHistory(dir, seq)
      h = verifyFsinfo(raw, { publicKey: fi.key, now: decodeFsinfo(raw).issuedMs })
      if (h.seq !== seq) throw Object.assign(new Error(`history/${seq}.json holds seq ${h.seq}`), { code: 'ROTREE_BAD_FORMAT' })
    } catch (err) {
      r.history.bad.push({ seq, code: err.code ?? 'ROTREE_INTERNAL', message: err.message })
      continue
    }
    r.history.roots++
    if (info && h.seq > info.seq) fi.newerInHistory = Math.max(fi.newerInHistory ?? 0, h.seq)
    // blobs of roots that gc has dropped are gone by design: failures here are not problems
    await walkTree(h.root, kindLoader(dir, s, null), ref => { older.add(ref.hash) }, { walked, onLoadError: () => {} })
  }
  if (r.history.bad.length) r.warnings.push(`${r.history.bad.length} history file(s) do not verify: ${r.history.bad.map(b => `${b.seq}.json (${b.code})`).join(', ')}`)
  // history/<seq>.json is written just before the rename of fsinfo.json (builder/publish.js),
  // so a newer entry means an update killed in between (the next pull finishes it) or
  // fsinfo.json put back from a backup (readers that saw the newer root refuse this one)
  if (fi.newerInHistory !== undefined) {
    r.warnings.push(`fsinfo.json has seq ${info.seq}, but history/ holds seq ${fi.newerInHistory}: an interrupted update (pull again), or fsinfo.json was restored from an older copy (readers that saw seq ${fi.newerInHistory} would refuse it)`)
  }

  // ---- classify ----
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

  // corrupt blobs no current root needs: the source's copy if it has one, else the bad file goes
  if (src) {
    const limit = limiter(8)
    await Promise.all(unreferencedBad.map(e => limit(async () => {
      try {
        await fix({ hash: e.hash }, null, { record: false })
      } catch {
        // not fetchable, but nothing needs it: removing it is the repair
        await fs.rm(blobPath(dir, e.hash), { force: true })
        repair.removed.push({ hash: e.hash })
      }
    })))
    await store?.sync()
  }
  if (repair) r.repair = { ...repair, requests: 0, bytes: 0, ...src?.stats() }

  r.fsinfo = fi.report
  r.fsinfo.problems = fi.problems
  r.key = { value: fi.key, source: fi.keySource }
  const other = r.unchecked.filter(u => u.reason === 'unreadable').length
  r.problems = r.corrupt.length + r.missing.length + fi.problems.length + other
  r.ok = r.problems === 0
  for (const list of [r.corrupt, r.missing, r.orphans]) list.sort((a, b) => a.hash < b.hash ? -1 : 1)
  return r
}

/** Local pages for walkTree(): good (by the scrub) and verified again as they are decoded; otherwise repaired or refused. */
function kindLoader (dir, s, fix) {
  return async (ref, kind) => {
    const st = s.blobs.get(ref.hash)
    if (st?.ok) {
      const bytes = await readLocal(dir, ref.hash, ref.size)
      if (bytes) return VERIFY[kind](bytes, ref)
    }
    if (fix) return fix(ref, kind)
    throw Object.assign(new Error(`${kind} blob ${ref.hash} is ${st ? 'corrupt' : 'missing'}`), { code: st ? 'ROTREE_HASH_MISMATCH' : 'ENOENT' })
  }
}

/** Check fsinfo.json; never throws for what is wrong with it (that is the report). */
async function checkFsinfo (dir, o, now, r) {
  const out = { info: null, key: o.publicKey ?? null, keySource: o.publicKey ? (o.keySource ?? 'given') : 'fsinfo', problems: [], trusted: false, report: { present: false } }
  let raw
  try { raw = new Uint8Array(await fs.readFile(path.join(dir, 'fsinfo.json'))) } catch (err) {
    if (err.code !== 'ENOENT') throw err
    out.problems.push({ code: 'ROTREE_NOT_FOUND', message: `${dir} has no fsinfo.json` })
    return out
  }
  let d
  try { d = decodeFsinfo(raw) } catch (err) {
    out.problems.push({ code: err.code, message: err.message })
    out.report = { present: true }
    return out
  }
  out.report = { present: true, seq: d.seq, root: d.root.hash, rootSize: d.root.size, issued: d.issued, expires: d.expires, key: d.key }
  if (!out.key) {
    out.key = d.key
    r.warnings.push(`no --key given: checked against the key inside fsinfo.json (${d.key}), which is self-asserted; a forger would put their own key there. Pass --key PUBKEY to check who signed it`)
  }
  out.info = d
  try {
    verifyFsinfo(raw, { publicKey: out.key, now, skewMs: o.skewMs ?? DEFAULT_SKEW_MS })
    out.trusted = true
  } catch (err) {
    out.problems.push({ code: err.code, message: err.message })
    // key and signature are checked before time (verify.js), so an expired or
    // future-dated root is still authentic: its refs can be used for repair
    out.trusted = err.code === 'ROTREE_EXPIRED' || err.code === 'ROTREE_NOT_YET_VALID'
  }
  return out
}


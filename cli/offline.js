// `rotree verify --offline`: what the online reader would have said at a
// given time, from bytes on this machine only (docs/FORMAT.md §13.2). The
// reader itself runs, over a transport that answers from a pulled folder or
// a proof bundle and never opens a socket: the trust chain from the anchor,
// the signatures and thresholds, freshness at TIME. Then the log
// (checkLogProof: the checkpoint's signature, the witnesses' fresh
// cosignatures when the trust document names witnesses, the inclusion of the
// fsinfo.json), then the bytes: every blob of a folder (fsck's scrub), or
// every downloaded file against the entries of the bundle's verified pages.
import fs from 'node:fs/promises'
import path from 'node:path'
import crypto from 'node:crypto'
import { Tree } from 'rotree-client'
import { MirrorHttpError, TooLargeError, HashMismatchError, ThresholdError, NotFoundError, MirrorNetworkError, SplitViewError } from 'rotree-client/errors'
import { checkLogProof, proveLogged, fetchLog, logSignersOf } from 'rotree-client/log'
import { parseFragment } from 'rotree-client/trust'
import { fsck } from '../mirror/fsck.js'

const BASE = 'http://offline.invalid/'

/**
 * A transport that answers from `read(path)` (bytes, or null: a 404) and
 * counts what it was asked: the reader's one mirror, on this machine.
 */
export function localTransport (read) {
  const stats = { requests: 0, served: 0 }
  return {
    stats,
    close () {},
    async get (url, { cap } = {}) {
      stats.requests++
      if (!url.startsWith(BASE)) throw new MirrorNetworkError(`offline: no request leaves this machine (${url})`)
      const rel = decodeURIComponent(new URL(url).pathname.slice(1))
      const bytes = await read(rel)
      if (bytes === null) throw new MirrorHttpError(`the offline copy has no ${rel} (answered 404 for /${rel})`, { details: { status: 404 } })
      if (cap !== undefined && bytes.length > cap) throw new TooLargeError(`the offline copy's ${rel} is ${bytes.length} bytes, more than the ${cap} expected`)
      stats.served++
      return bytes
    }
  }
}

/** A folder's file under it (no path leaves it), or null. */
function folderReader (dir) {
  return async rel => {
    if (rel.split('/').some(p => p === '..' || p === '' || p === '.')) return null
    try { return new Uint8Array(await fs.readFile(path.join(dir, rel))) } catch (err) {
      if (err.code === 'ENOENT' || err.code === 'ENOTDIR' || err.code === 'EISDIR') return null
      throw err
    }
  }
}

/** The one source's own error, not ALL_MIRRORS_FAILED around it: offline there is one copy. */
function unwrap (err) {
  if (err.code === 'ROTREE_ALL_MIRRORS_FAILED' && err.errors?.length === 1 && err.errors[0].err) return err.errors[0].err
  if (err.code === 'ROTREE_ALL_MIRRORS_FAILED' && err.cause?.code) return err.cause
  return err
}

/**
 * Open the tree as the reader does, at atMs, over `read`. Returns the tree
 * (its fsinfo.json, trust chain and pages verified), or throws the reader's typed error.
 */
async function openOffline (fragment, read, atMs, logProof = null) {
  const transport = localTransport(read)
  // A reader that checks witnesses as it opens reads them from log/checkpoint
  // and its tiles; a bundle carries the tlog-proof instead, checked in their
  // place by the same rule (FORMAT.md §13.2).
  const checkProof = logProof === null
    ? undefined
    : (record, trust, nowMs, skewMs) => {
        const r = checkLogProof(logProof, { fsinfoBytes: record.raw, ...logSignersOf(record), witnesses: trust.witnesses, nowMs, skewMs })
        return { size: r.size, hash: r.hash }
      }
  const tree = new Tree(`${BASE}#${fragment}`, { transport, stateDir: null, now: () => atMs, fsinfoSettleMs: 0, timeoutMs: 60_000, logProof: checkProof })
  try {
    await tree.refresh()
    return { tree, transport }
  } catch (err) { tree.close(); throw unwrap(err) }
}

/** The log check of FORMAT.md §13.1 at atMs, from a tlog-proof text (or none). */
function checkLog (tree, text, atMs) {
  const r = tree.rootRecord
  const witnesses = tree.trustDocument?.witnesses ?? null
  if (text === null) {
    if (witnesses) throw new ThresholdError(`the trust document names ${witnesses.list.length} witness(es), ${witnesses.threshold} required, and there is no log to show their cosignatures`)
    return null
  }
  return checkLogProof(text, { fsinfoBytes: tree.fsinfoBytes, ...logSignersOf(r), witnesses, nowMs: atMs })
}

/**
 * A pulled or published folder: OUT with fsinfo.json, trust/, h/, log/.
 * @returns {Promise<object>} the report (throws the first verdict that fails)
 */
export async function verifyFolder (dir, { fragment, atMs, jobs, onProgress }) {
  const read = folderReader(dir)
  const { tree, transport } = await openOffline(fragment, read, atMs)
  try {
    const r = tree.rootRecord
    // the whole log, checked as `rotree pull` checks it, then the proof a bundle would carry
    let log = null
    if (await read('log/checkpoint') !== null) {
      const fetch = async (p, cap, check) => {
        const bytes = await read(p)
        if (bytes === null) throw new MirrorHttpError(`the folder has no ${p}`, { details: { status: 404 } })
        if (bytes.length > cap) throw new TooLargeError(`${p} is ${bytes.length} bytes, more than ${cap}`)
        return check(bytes)
      }
      const signers = logSignersOf(r)
      const whole = await fetchLog(fetch, signers)
      await checkHistory(dir, whole.entries)
      let proof = null
      try { proof = await proveLogged(fetch, { fsinfoBytes: tree.fsinfoBytes, ...signers }) } catch (err) {
        // not logged yet (signed elsewhere, published without the log's keys: FORMAT.md §13):
        // a reader asks the log only for a trust document with witnesses
        if (err.code !== 'ROTREE_SPLIT_VIEW' || tree.trustDocument?.witnesses) throw err
      }
      log = proof ? checkLog(tree, proof.text, atMs) : null
    } else checkLog(tree, null, atMs)
    const { anchor } = parseFragment(fragment)
    const scrub = await fsck(dir, { anchor, publicKey: anchor.kind === 'key' ? anchor.key : null, name: r.name ?? '', keySource: 'given', now: atMs, jobs, onProgress })
    const bad = scrub.corrupt[0]
    if (bad) {
      const what = bad.error ? `unreadable (${bad.error})` : bad.actual ? `hashes to ${bad.actual}` : 'larger than any blob'
      throw new HashMismatchError(`h/${bad.hash} is ${what}${scrub.corrupt.length > 1 ? ` (and ${scrub.corrupt.length - 1} more corrupt blob(s))` : ''}`)
    }
    if (scrub.missing[0]) throw new MirrorHttpError(`h/${scrub.missing[0].hash} (${scrub.missing[0].kind}) is missing${scrub.missing.length > 1 ? ` (and ${scrub.missing.length - 1} more)` : ''}`, { details: { status: 404 } })
    if (scrub.unchecked[0]) throw new HashMismatchError(`below ${scrub.unchecked[0].path}: a page is ${scrub.unchecked[0].reason}`)
    return { kind: 'folder', record: r, log, blobs: scrub.blobs.files, bytes: scrub.blobs.bytes, requests: transport.stats.requests }
  } finally { tree.close() }
}

/**
 * Every history/<seq>.json at or below the log's last sequence number is the
 * leaf the log holds for it, byte for byte (FORMAT.md §13: a publish logs its
 * whole history in order); those above are not logged yet.
 */
async function checkHistory (dir, entries) {
  const bySeq = new Map()
  for (const e of entries) {
    try { bySeq.set(JSON.parse(Buffer.from(e).toString('utf8')).seq, e) } catch {}
  }
  const top = Math.max(-1, ...bySeq.keys())
  let names = []
  try { names = await fs.readdir(path.join(dir, 'history')) } catch (err) { if (err.code !== 'ENOENT') throw err }
  for (const n of names) {
    const m = /^([0-9]{1,16})\.json$/.exec(n)
    if (!m || Number(m[1]) > top) continue
    const held = bySeq.get(Number(m[1]))
    const bytes = await fs.readFile(path.join(dir, 'history', n))
    if (!held || !Buffer.from(held).equals(bytes)) throw new SplitViewError(`history/${n} is not the root the log holds for sequence ${m[1]}${held ? '' : ' (it holds none)'}`)
  }
}

/** sha256 hex of a local file, streamed. */
async function hashFile (file) {
  const h = crypto.createHash('sha256')
  const fh = await fs.open(file, 'r')
  try { for await (const b of fh.createReadStream()) h.update(b) } finally { await fh.close() }
  return h.digest('hex')
}

/**
 * A get's output (DEST, a file or a directory) and its bundle (readProofBundle's value).
 * @returns {Promise<object>} the report (throws the first verdict that fails)
 */
export async function verifyDownload (dest, bundle, { fragment, atMs, local = true }) {
  const read = async rel => bundle.files.get(rel) ?? null
  const { tree, transport } = await openOffline(fragment, read, atMs, bundle.log)
  try {
    const log = checkLog(tree, bundle.log, atMs)
    const counts = { files: 0, dirs: 0, links: 0, bytes: 0, linksAbsent: 0 }
    const check = async (treePath, local) => {
      let s
      try { s = await tree.lstat(treePath) } catch (err) { throw unwrap(err) }
      if (!local) { // the bundle alone: every page it needs is there (get --proof checks what it writes)
        if (s.type === 'dir') for await (const e of tree.list(treePath)) await check(treePath.replace(/\/$/, '') + '/' + e.name, null)
        return
      }
      let st
      try { st = await fs.lstat(local) } catch (err) {
        if (s.type === 'symlink' && err.code === 'ENOENT') { counts.linksAbsent++; return } // skipped by get (its target leaves DEST)
        throw new HashMismatchError(`${local}: ${err.code === 'ENOENT' ? 'missing' : err.code}; the tree has a ${s.type} at ${treePath}`)
      }
      const kind = st.isDirectory() ? 'dir' : st.isSymbolicLink() ? 'symlink' : st.isFile() ? 'file' : 'other'
      if (kind !== s.type) throw new HashMismatchError(`${local} is a ${kind}, the tree has a ${s.type} at ${treePath}`)
      if (s.type === 'symlink') { counts.links++; return }
      if (s.type === 'file') {
        if (st.size !== s.size) throw new HashMismatchError(`${local} is ${st.size} bytes, the tree's file is ${s.size}`)
        const h = await hashFile(local)
        if (h !== s.sha256) throw new HashMismatchError(`${local} hashes to ${h}, the tree's file to ${s.sha256}`)
        if (!!(st.mode & 0o100) !== s.exec) throw new HashMismatchError(`${local} is ${s.exec ? 'not ' : ''}executable, the tree's file is${s.exec ? '' : ' not'}`)
        counts.files++; counts.bytes += st.size
        return
      }
      counts.dirs++
      const names = new Set()
      try {
        for await (const e of tree.list(treePath)) {
          names.add(e.name)
          await check(treePath.replace(/\/$/, '') + '/' + e.name, path.join(local, e.name))
        }
      } catch (err) { throw unwrap(err) }
      const extra = (await fs.readdir(local)).filter(n => !names.has(n))
      if (extra.length) throw new NotFoundError(`${path.join(local, extra[0])} is not in the tree at ${treePath}${extra.length > 1 ? ` (and ${extra.length - 1} more)` : ''}`)
    }
    await check(bundle.path, dest)
    return { kind: 'download', record: tree.rootRecord, log, ...counts, requests: transport.stats.requests }
  } finally { tree.close() }
}

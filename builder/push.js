// `rotree push OUT DEST`: upload a published folder to any rclone remote (S3,
// GCS, Azure, B2, WebDAV, SFTP, a local path, …) in the only order that
// keeps every reader safe (docs/DEPLOY.md "Pushing to a remote"):
//
//   1. check OUT: its fsinfo.json verifies for its own key (format version 2:
//      every trust document in OUT/trust accepted as a chain, and the release
//      and timestamp thresholds of the one fsinfo.json names met, or the
//      single key's signatures for `trust: null`; the reader's trust module
//      decides, lib/published/signed-roots.js), and every blob its root
//      reaches is present with its stored size (a broken tree is never pushed);
//   2. blobs first (h/), with immutable caching headers where the backend
//      keeps headers; a blob already on DEST with the same size is skipped,
//      so a rerun after an interruption moves only what is missing;
//   3. trust/ and history/ (immutable, named by sequence number): the trust
//      documents before the fsinfo.json that names one, so a reader that
//      fetches the new fsinfo.json finds the chain (FORMAT.md §12.9 step 4);
//      then a gated tree's trust/revoked.json (FORMAT.md §12.12), which,
//      unlike them, is replaced at every revocation: always sent again, over
//      the old one, cached as fsinfo.json is;
//   4. the log (FORMAT.md §13), before the fsinfo.json it holds: its tiles
//      and entry bundles, then log/checkpoint, then log/fsinfo.proof (the
//      tlog-proof of the new fsinfo.json), so a reader of a witnessed
//      tree (docs/TRUST.md rule 21) finds the new fsinfo.json in the
//      cosigned log; the old one is still among its latest leaves meanwhile
//      (a proof for the other fsinfo.json is set aside by readers);
//   5. fsinfo.json last and short-lived: uploaded under a temporary name
//      (the exact bytes read in step 1), then moved over fsinfo.json on the
//      remote, so a reader never sees a half-written one, nor one whose blobs
//      are not all there yet.
//
// The mirror itself does no cryptography; readers verify what it serves.
//
// Every rclone call is `rclone <command> <options>… -- <paths>…`: the `--`
// ends the options, so nothing given as a path is ever read as one (a DEST
// of `--log-file=/any/path:` read as an option has rclone write wherever it
// names). DEST is also refused when it starts with '-': no rclone path does,
// and a user who typed one meant something else. OUT is made absolute, so
// rclone sees the local folder step 1 checked, never a remote's name.
import fs from 'node:fs/promises'
import path from 'node:path'
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { BuildInputError, PushError, UsageError } from 'rotree-client/errors'
import { walkLocal } from '../lib/published/pages.js'
import { decodeRoot, rootContext, verifyRoot } from '../lib/published/signed-roots.js'

export const BLOB_HEADERS = ['Cache-Control: public, max-age=31536000, immutable', 'Content-Type: application/octet-stream']
export const FSINFO_HEADERS = ['Cache-Control: public, max-age=60', 'Content-Type: application/json']
// a partial tile or bundle past the checkpoint can be rewritten by the next publish: tiles are not held immutable
export const TILE_HEADERS = ['Cache-Control: public, max-age=60', 'Content-Type: application/octet-stream']
// a gated tree's revocation list (FORMAT.md §12.12): replaced whenever a grant is revoked
export const REVOKED_HEADERS = FSINFO_HEADERS
export const CHECKPOINT_HEADERS = ['Cache-Control: public, max-age=60', 'Content-Type: text/plain; charset=utf-8']

/**
 * @param {string} out a published folder
 * @param {string} dest an rclone remote path: '/srv/mirror', 's3:bucket/pub', ':webdav,url=…:path'
 * @param {{ rclone?: string, rcloneArgs?: string[], onProgress?: (p: { phase: string, bytes: number, totalBytes: number, transfers: number }) => void, env?: object }} [o]
 * @returns {Promise<{ seq: number, root: string, key: string, version: 1|2, name: string, blobs: { transferred: number, bytes: number } }>}
 *   key: the address anchor (version 1: the key; version 2: the key, or 't' + trust document 1's hash)
 */
export async function push (out, dest, { rclone = 'rclone', rcloneArgs = [], onProgress = () => {}, env = process.env } = {}) {
  checkDest(dest)
  const bytes = await readFsinfo(out)
  const info = await verifyOut(out, bytes)
  await walkLocal(out, info.root) // step 1: complete, or a typed error naming the missing blob
  const run = (command, paths, options, phase, input) =>
    runRclone(rclone, command, paths, [...options, ...rcloneArgs], { env, input, onStats: s => onProgress({ phase, ...s }) })
  const local = path.resolve(out)
  const base = dest.endsWith('/') || dest.endsWith(':') ? dest : dest + '/'
  // step 2: blobs. --size-only: a blob's name is its hash, so same name and size
  // means done; a blob cut short by an interrupted upload has another size and is sent again
  const blobs = await run('copy', [path.join(local, 'h'), base + 'h'], ['--size-only', '--exclude', '.*', ...headers(BLOB_HEADERS)], 'blobs')
  // step 3: the documents that never change once written (trust/revoked.json does: not by size, below)
  for (const dir of ['trust', 'history']) {
    if (await exists(path.join(local, dir))) await run('copy', [path.join(local, dir), base + dir], ['--size-only', '--exclude', '.*', ...(dir === 'trust' ? ['--exclude', '/revoked.json'] : []), ...headers(FSINFO_HEADERS)], dir)
    // the revocation list with the trust documents, before fsinfo.json: a new list of the old one's size is a new list
    if (dir === 'trust' && await exists(path.join(local, 'trust', 'revoked.json'))) await run('copyto', [path.join(local, 'trust', 'revoked.json'), base + 'trust/revoked.json'], ['--ignore-times', ...headers(REVOKED_HEADERS)], 'trust')
  }
  // step 4: the log, tiles before the checkpoint that covers them. No --size-only: a
  // tile a killed publish wrote past its checkpoint is rewritten with other bytes of the same size
  if (await exists(path.join(local, 'log', 'tile'))) await run('copy', [path.join(local, 'log', 'tile'), base + 'log/tile'], ['--checksum', '--exclude', '.*', ...headers(TILE_HEADERS)], 'log')
  for (const f of ['checkpoint', 'fsinfo.proof']) {
    if (await exists(path.join(local, 'log', f))) await run('copyto', [path.join(local, 'log', f), base + 'log/' + f], ['--ignore-times', ...headers(CHECKPOINT_HEADERS)], 'log')
  }
  // step 5: the new root, last, by a rename
  await publishFsinfo(base, bytes, run)
  return { seq: info.seq, root: info.root.hash, key: info.anchor, version: info.version, name: info.name, blobs: { transferred: blobs.transfers, bytes: blobs.bytes } }
}

/**
 * Step 1's signatures: OUT's fsinfo.json against OUT's own claims (its key;
 * version 2: its trust documents, which must all verify as a chain since
 * all are pushed, and its name). The clock is not asked: pushing an expired
 * root is the publisher's call (readers refuse it).
 */
async function verifyOut (out, bytes) {
  const ctx = await rootContext(out, { current: decodeRoot(bytes) })
  if (ctx.chain.fault) {
    if (ctx.chain.fault.err) throw ctx.chain.fault.err
    throw new BuildInputError(`${out}: ${ctx.chain.fault.message}; a mirror serves every trust document of the chain (FORMAT.md §12.2)`, { details: { path: out } })
  }
  const v = verifyRoot(bytes, ctx)
  const anchor = ctx.anchor.kind === 'key' ? ctx.anchor.key : 't' + ctx.anchor.hash
  return { ...v, anchor }
}

const headers = list => list.flatMap(h => ['--header-upload', h])

/** DEST is an rclone path (local, `remote:path`, `:backend,opt=…:path`); none of those starts with '-'. */
function checkDest (dest) {
  if (typeof dest !== 'string' || dest === '') throw new UsageError('DEST is empty')
  if (dest.startsWith('-')) throw new UsageError(`DEST ${JSON.stringify(dest)} starts with '-', which rclone would take for an option; for a local folder of that name write ./${dest}`)
}

/**
 * fsinfo.json under a temporary name, then renamed over the old one. On a
 * local path that is rename(2), atomic. On a remote it is rclone's moveto:
 * atomic where the backend replaces in one step (S3 and other object stores:
 * a server-side copy; SFTP with posix-rename), else the old file is removed
 * just before the rename and a reader that asks in between gets a 404 and
 * retries (never a mixed tree). --ignore-times: rclone would otherwise skip
 * the move when the new file has the old one's size and time.
 */
async function publishFsinfo (base, bytes, run) {
  const tmp = `.fsinfo.json.${randomBytes(6).toString('hex')}.rotree-tmp`
  if (isLocalPath(base)) {
    await fs.mkdir(base, { recursive: true })
    const fh = await fs.open(path.join(base, tmp), 'wx', 0o644)
    try { await fh.writeFile(bytes); await fh.sync() } finally { await fh.close() }
    await fs.rename(path.join(base, tmp), path.join(base, 'fsinfo.json'))
    return
  }
  await run('rcat', [base + tmp], headers(FSINFO_HEADERS), 'fsinfo', bytes)
  await run('moveto', [base + tmp, base + 'fsinfo.json'], ['--ignore-times'], 'fsinfo')
}

/** rclone's rule: a path is remote when a name with a colon comes before any slash. */
function isLocalPath (p) {
  const colon = p.indexOf(':')
  const slash = p.indexOf('/')
  return colon < 0 || (slash >= 0 && slash < colon)
}

async function readFsinfo (out) {
  try {
    return await fs.readFile(path.join(out, 'fsinfo.json'))
  } catch (err) {
    if (err.code === 'ENOENT') throw new BuildInputError(`${out} has no fsinfo.json: build (and sign) it before pushing`, { details: { path: out } })
    throw err
  }
}

async function exists (p) { try { await fs.access(p); return true } catch { return false } }

/**
 * Run `rclone <command> <options>… -- <paths>…` with JSON logs and one-second
 * stats; resolves with the last stats seen ({ bytes, totalBytes, transfers }),
 * rejects with PushError and rclone's last error lines.
 */
function runRclone (cmd, command, paths, options, { env, input, onStats }) {
  return new Promise((resolve, reject) => {
    const args = [command, ...options, '--use-json-log', '--stats', '1s', '--stats-log-level', 'NOTICE', '--', ...paths]
    const child = spawn(cmd, args, { env, stdio: [input ? 'pipe' : 'ignore', 'ignore', 'pipe'] })
    let last = { bytes: 0, totalBytes: 0, transfers: 0 }
    const errors = []
    let buf = ''
    child.stderr.setEncoding('utf8')
    child.stderr.on('data', d => {
      buf += d
      let i
      while ((i = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, i); buf = buf.slice(i + 1)
        let j = null
        try { j = JSON.parse(line) } catch { if (line.trim()) errors.push(line.trim()); continue }
        if (j.stats) { last = { bytes: j.stats.bytes ?? 0, totalBytes: j.stats.totalBytes ?? 0, transfers: j.stats.transfers ?? 0 }; onStats(last) }
        if (j.level === 'error' || j.level === 'critical') errors.push(j.msg)
      }
      if (errors.length > 20) errors.splice(0, errors.length - 20)
    })
    child.on('error', err => reject(err.code === 'ENOENT'
      ? new PushError(`${cmd} not found: install rclone (Debian package rclone)`, { cause: err })
      : new PushError(`${cmd}: ${err.message}`, { cause: err })))
    child.on('close', code => {
      if (code === 0) resolve(last)
      else reject(new PushError(`rclone ${command} failed (exit ${code}): ${errors.slice(-3).join('; ') || 'no message'}`, { details: { exitCode: code } }))
    })
    if (input) child.stdin.end(input)
  })
}

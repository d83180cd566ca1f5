// rotree get
import path from 'node:path'
import fs from 'node:fs/promises'
import { UsageError } from 'rotree-client/errors'
import { getPath, DEFAULT_MAX_ENTRIES } from '../download.js'
import { progressBar, fmtBytes } from '../progress.js'
import { READER_OPTIONS, MANY_REQUESTS, withTree, treeTarget, positiveInt, stateDirOf, writeFile } from '../common.js'
import { escapeText } from '../escape.js'
import { printJson, treeFields } from '../json.js'
import { unsafeWhy } from '../get-names.js'
import { extraPaths } from '../get-dry-run.js'
import { proofRecorder, makeProofBundle, readProofBundle, PROOF_SUFFIX } from '../proof-bundle.js'
import { verifyDownload } from '../offline.js'

const SHOWN = 10 // skipped symlinks and deletions named one per line; the rest are counted

export default {
  usage: 'get ADDR PATH [-o DEST|-] [--delete [--dry-run]] [--checksum] [--strict-links] [--proof FILE] [--json]',
  summary: 'verified download of a file, or of a directory recursively; a rerun syncs and resumes',
  positionals: [1, 2],
  options: {
    ...READER_OPTIONS,
    output: { type: 'string', short: 'o', arg: 'DEST', help: 'where to write (default: the last path component); - writes a file to stdout' },
    jobs: { type: 'string', arg: 'N', help: 'most files in flight (default: as many as the fetch window and a 32 MiB-or-more byte budget allow, up to 1,024)' },
    checksum: { type: 'boolean', help: 'keep an existing file only if its content hashes to the verified chunks (default: same size and mtime)' },
    delete: { type: 'boolean', help: 'remove what DEST holds that the tree does not (never DEST itself; links not followed); each path is named on stderr (the first 10), then counted' },
    'dry-run': { type: 'boolean', help: 'with --delete: list on stdout every path --delete would remove, and write, fetch or remove nothing (files to fetch are not listed)' },
    'max-entries': { type: 'string', arg: 'N', help: `refuse a tree with more entries than this below PATH (default ${DEFAULT_MAX_ENTRIES})` },
    'max-bytes': { type: 'string', arg: 'SIZE', help: 'refuse a tree whose files hold more than SIZE bytes (e.g. 500M, 20G; default: the free space)' },
    'rewrite-links': { type: 'boolean', help: 'write an absolute symlink target (the tree root) that names a path inside the download as a relative one' },
    'strict-links': { type: 'boolean', help: 'refuse the download (ROTREE_BAD_PATH) if a symlink\'s target would leave DEST; by default such a link is skipped, named on stderr, and the rest written (links inside DEST are kept)' },
    'skip-unsafe-links': { type: 'boolean', help: 'the default: skip symlinks whose target would leave DEST (kept for older scripts)' },
    proof: { type: 'string', arg: 'FILE', help: `also write a proof bundle (docs/FORMAT.md §13.2) that rotree verify --offline checks DEST with; by convention DEST${PROOF_SUFFIX}, where verify looks for it` },
    json: { type: 'boolean', help: 'at the end, print one JSON object: what was written, skipped and deleted, and the tree (docs/JSON.md)' }
  },
  async run ([addr, arg], v, io) {
    const target = await treeTarget(addr, arg, v, { path: 'required' })
    const p = target.path
    if (v.json && (v.output === '-' || v['dry-run'])) throw new UsageError(`--json goes with a download to DEST, not with ${v.output === '-' ? '-o -' : '--dry-run'}`)
    if (v.output === '-') {
      if (v.delete || v.checksum || v['dry-run']) throw new UsageError('-o - writes one file to stdout: --delete, --dry-run and --checksum do not apply')
      return withTree(target, v, tree => writeFile(tree, p, io.stdout))
    }
    if (v['dry-run'] && !v.delete) throw new UsageError('--dry-run lists what --delete would remove: give --delete too')
    if (v['strict-links'] && v['skip-unsafe-links']) throw new UsageError('--strict-links and --skip-unsafe-links contradict each other')
    const dest = v.output ?? path.posix.basename(path.posix.normalize('/' + p))
    if (!dest) throw new UsageError('-o DEST is required for the tree root')
    if (v['dry-run']) return dryRun(target, p, dest, v, io)
    const opts = {
      jobs: v.jobs ? positiveInt(v.jobs, 'jobs') : undefined,
      maxEntries: v['max-entries'] !== undefined ? positiveInt(v['max-entries'], 'max-entries') : undefined,
      maxBytes: v['max-bytes'] !== undefined ? parseSize(v['max-bytes'], 'max-bytes') : undefined,
      rewriteLinks: !!v['rewrite-links'],
      skipUnsafeLinks: !v['strict-links'],
      checksum: !!v.checksum,
      deleteExtra: !!v.delete,
      resumeDir: path.join(stateDirOf(v), 'get')
    }
    // Ctrl-C (or SIGTERM) stops the download cleanly: large partial files are
    // kept for the rerun, nothing left looks complete; a second one quits at once
    const ac = new AbortController()
    const stop = () => {
      if (ac.signal.aborted) process.exit(130)
      ac.abort()
    }
    process.on('SIGINT', stop); process.on('SIGTERM', stop)
    target.reader = { ...MANY_REQUESTS, ...target.reader }
    if (v.proof !== undefined && (v.proof === '' || v.proof === '-')) throw new UsageError('--proof FILE: a file name (e.g. DEST' + PROOF_SUFFIX + ')')
    if (v.proof !== undefined && target.atSeq !== undefined) throw new UsageError('--proof: a proof bundle is of the current root, not of ADDR@SEQ (an old root has expired for the reader)')
    const recorder = v.proof !== undefined ? proofRecorder() : null
    if (recorder) {
      const outer = target.reader.wrapTransport
      target.reader = { ...target.reader, wrapTransport: t => recorder.wrap(outer ? outer(t) : t) }
    }
    const faults = []
    try {
      const out = await withTree(target, v, async tree => {
        recorder?.watch(tree)
        const bar = progressBar({ label: 'get', stream: io.stderr })
        const clear = io.stderr.isTTY ? '\r\x1b[K' : ''
        let skipped = 0; let deleted = 0
        const r = await getPath(tree, p, dest, {
          ...opts,
          signal: ac.signal,
          onProgress: (d, t) => bar.update(d, t), // t grows as directories are counted
          onSkippedLink: (where, to) => {
            if (++skipped <= SHOWN) io.stderr.write(`${clear}rotree get: skipped symlink ${escapeText(where)} -> ${escapeText(to)}: it ${unsafeWhy(to)}\n`)
          },
          onDeleted: (where, isDir) => {
            if (++deleted <= SHOWN) io.stderr.write(`${clear}rotree get: deleting ${escapeText(where)}${isDir ? '/' : ''}\n`)
          }
        }).finally(() => bar.done())
        const st = tree.stats
        if (r.skippedLinks) io.stderr.write(`rotree get: skipped ${r.skippedLinks === 1 ? '1 symlink that points' : `${r.skippedLinks} symlinks that point`} outside DEST${r.skippedLinks > SHOWN ? ` (the first ${SHOWN} named above)` : ''}; --strict-links refuses them instead\n`)
        if (r.deleted) io.stderr.write(`rotree get: deleted ${r.deleted === 1 ? '1 path' : `${r.deleted} paths`} the tree does not have${r.deleted > SHOWN ? ` (the first ${SHOWN} named above)` : ''}\n`)
        const extra = [
          r.unchanged ? `${r.unchanged} unchanged` : '',
          r.resumedBytes ? `${fmtBytes(r.resumedBytes)} resumed` : '',
          r.deleted ? `${r.deleted} deleted` : ''
        ].filter(Boolean).map(s => ', ' + s).join('')
        io.stderr.write(`got ${escapeText(dest)}: ${r.files} files, ${r.dirs} dirs, ${r.symlinks} symlinks${extra}, ${fmtBytes(r.bytes)} verified; ${st.requests} requests, seq ${tree.info.seq}\n`)
        if (recorder) {
          const text = await makeProofBundle(tree, recorder, p)
          // what verify --offline will check, but the files: a bundle that does not verify now is not written
          await verifyDownload(dest, readProofBundle(Buffer.from(text)), { fragment: target.address.slice(target.address.lastIndexOf('#') + 1), atMs: Date.now(), local: false })
          await writeAtomic(v.proof, text)
          io.stderr.write(`rotree get: proof bundle ${escapeText(v.proof)}: ${fmtBytes(Buffer.byteLength(text))}\n`)
        }
        return { path: p, dest, ...r, requests: st.requests, ...treeFields(tree.info, target.address) }
      }, { faults })
      if (v.json) printJson(io, { ...out, mirrors: faults })
    } finally {
      process.off('SIGINT', stop); process.off('SIGTERM', stop)
    }
  }
}

/** --delete --dry-run: every path --delete would remove on stdout, the count on stderr; nothing written. */
async function dryRun (target, p, dest, v, io) {
  target.reader = { ...MANY_REQUESTS, ...target.reader } // listings asked for ahead (get-dry-run.js)
  await withTree(target, v, async tree => {
    const n = await extraPaths(tree, p, dest, (where, isDir) => io.stdout.write(`would delete ${escapeText(where)}${isDir ? '/' : ''}\n`))
    io.stderr.write(`rotree get: --dry-run: --delete would remove ${n === 1 ? '1 path' : `${n} paths`} from ${escapeText(dest)}; nothing was written or removed (seq ${tree.info.seq})\n`)
  })
}

async function writeAtomic (file, text) {
  const tmp = `${file}.${process.pid}.tmp`
  await fs.writeFile(tmp, text)
  await fs.rename(tmp, file)
}

/** SIZE: bytes, or with K, M, G, T, P (powers of 1024; KiB, MB… spelled any way). */
function parseSize (s, name) {
  const m = /^(\d+(?:\.\d+)?)\s*([kmgtp]?)(?:i?b)?$/i.exec(String(s).trim())
  const n = m && Math.floor(Number(m[1]) * 1024 ** ' kmgtp'.indexOf((m[2] || ' ').toLowerCase()))
  if (!m || !Number.isSafeInteger(n) || n <= 0) throw new UsageError(`--${name} must be a size such as 1048576, 500M or 20G`)
  return n
}

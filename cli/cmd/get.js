// rotree get
import path from 'node:path'
import { UsageError } from 'rotree-client/errors'
import { getPath, DEFAULT_MAX_ENTRIES } from '../download.js'
import { progressBar, fmtBytes } from '../progress.js'
import { READER_OPTIONS, withTree, positiveInt } from '../common.js'
import { escapeText } from '../escape.js'

const SHOWN_SKIPS = 20 // skipped symlinks named one per line; the rest are counted

export default {
  usage: 'get ADDR PATH -o DEST',
  summary: 'verified download of a file, or of a directory recursively',
  positionals: [2, 2],
  options: {
    ...READER_OPTIONS,
    output: { type: 'string', short: 'o', arg: 'DEST', help: 'where to write (default: the last path component)' },
    jobs: { type: 'string', arg: 'N', help: 'files fetched in parallel (default 8)' },
    'max-entries': { type: 'string', arg: 'N', help: `refuse a tree with more entries than this below PATH (default ${DEFAULT_MAX_ENTRIES})` },
    'max-bytes': { type: 'string', arg: 'SIZE', help: 'refuse a tree whose files hold more than SIZE bytes (e.g. 500M, 20G; default: the free space)' },
    'rewrite-links': { type: 'boolean', help: 'write an absolute symlink target (the tree root) that names a path inside the download as a relative one' },
    'skip-unsafe-links': { type: 'boolean', help: 'skip symlinks whose target would leave DEST, instead of refusing the tree' }
  },
  async run ([addr, p], v, io) {
    const dest = v.output ?? path.posix.basename(path.posix.normalize('/' + p))
    if (!dest) throw new UsageError('-o DEST is required for the tree root')
    const opts = {
      jobs: v.jobs ? positiveInt(v.jobs, 'jobs') : undefined,
      maxEntries: v['max-entries'] !== undefined ? positiveInt(v['max-entries'], 'max-entries') : undefined,
      maxBytes: v['max-bytes'] !== undefined ? parseSize(v['max-bytes'], 'max-bytes') : undefined,
      rewriteLinks: !!v['rewrite-links'],
      skipUnsafeLinks: !!v['skip-unsafe-links']
    }
    await withTree(addr, v, async tree => {
      const bar = progressBar({ label: 'get', stream: io.stderr })
      let skipped = 0
      const r = await getPath(tree, p, dest, {
        ...opts,
        onProgress: (d, t) => bar.update(d, t), // t grows as directories are counted
        onSkippedLink: (where, target) => {
          if (++skipped <= SHOWN_SKIPS) io.stderr.write(`${io.stderr.isTTY ? '\r\x1b[K' : ''}rotree get: skipped symlink ${escapeText(where)} -> ${escapeText(target)}: it could lead out of DEST\n`)
        }
      })
      bar.done()
      const st = tree.stats
      const skips = r.skippedLinks ? `, ${r.skippedLinks} unsafe symlinks skipped` : ''
      io.stderr.write(`got ${escapeText(dest)}: ${r.files} files, ${r.dirs} dirs, ${r.symlinks} symlinks${skips}, ${fmtBytes(r.bytes)} verified; ${st.requests} requests, seq ${tree.info.seq}\n`)
    })
  }
}

/** SIZE: bytes, or with K, M, G, T, P (powers of 1024; KiB, MB… spelled any way). */
function parseSize (s, name) {
  const m = /^(\d+(?:\.\d+)?)\s*([kmgtp]?)(?:i?b)?$/i.exec(String(s).trim())
  const n = m && Math.floor(Number(m[1]) * 1024 ** ' kmgtp'.indexOf((m[2] || ' ').toLowerCase()))
  if (!m || !Number.isSafeInteger(n) || n <= 0) throw new UsageError(`--${name} must be a size such as 1048576, 500M or 20G`)
  return n
}

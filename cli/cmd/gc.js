// rotree gc
import { UsageError } from 'rotree-client/errors'
import { gc } from '../../builder/gc.js'
import { parseDuration } from '../../builder/duration.js'
import { fmtBytes } from '../progress.js'
import { positiveInt } from '../common.js'

export default {
  usage: 'gc OUT --keep N [--grace 1h] [--dry-run]',
  summary: 'delete blobs that none of the last N published roots reaches',
  positionals: [1, 1],
  options: {
    keep: { type: 'string', arg: 'N', help: 'distinct roots to keep, newest first (the current one always counts); required' },
    grace: { type: 'string', arg: 'DURATION', help: 'keep blobs written, and roots replaced, less than this long ago (default 1h; 0 for none)' },
    'dry-run': { type: 'boolean', help: 'report what would be deleted; delete nothing' },
    json: { type: 'boolean', help: 'print the result as JSON' }
  },
  async run ([out], v, io) {
    if (v.keep === undefined) throw new UsageError('--keep N is required')
    const keep = positiveInt(v.keep, 'keep')
    const graceMs = v.grace === undefined ? 3600e3 : v.grace === '0' ? 0 : parseDuration(v.grace)
    if (graceMs === null) throw new UsageError(`--grace ${v.grace}: expected a duration such as 30m, 1h, 2d, or 0`)
    const r = await gc(out, { keep, graceMs, dryRun: v['dry-run'], warn: m => io.stderr.write(`rotree: warning: ${m}\n`) })
    if (v.json) { io.stdout.write(JSON.stringify(r, null, 2) + '\n'); return }
    const verb = r.dryRun ? 'would delete' : 'deleted'
    io.stdout.write(`gc ${out}${r.dryRun ? ' (dry run)' : ''}: ${r.roots.length} roots kept, ${r.reachable} blobs reachable of ${r.blobs}\n` +
      r.roots.map(x => `  seq ${x.seq} root ${x.root.slice(0, 16)}… (${x.why.join(', ')})${x.complete ? '' : ' INCOMPLETE'}\n`).join('') +
      `  ${verb} ${r.deleted.count} blobs (${fmtBytes(r.deleted.bytes)})` +
      (r.temp.count ? ` and ${r.temp.count} stale temporary files (${fmtBytes(r.temp.bytes)})` : '') + '\n' +
      (r.young.count ? `  kept ${r.young.count} unreachable blobs younger than the grace period (${fmtBytes(r.young.bytes)})\n` : ''))
  }
}

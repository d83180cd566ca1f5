// rotree pull
import { UsageError } from 'rotree-client/errors'
import { pull } from '../../mirror/pull.js'
import { progressBar, fmtBytes } from '../progress.js'
import { READER_OPTIONS, positiveInt, treeAddress } from '../common.js'
import { keyAndName } from '../json.js'

export default {
  usage: 'pull ADDR DIR [--gc] [--keep N]',
  summary: 'verified, incremental, resumable mirror of a tree into DIR',
  positionals: [2, 2],
  options: {
    ...READER_OPTIONS,
    gc: { type: 'boolean', help: 'then delete blobs that none of the kept roots reach' },
    keep: { type: 'string', arg: 'N', help: 'with --gc: distinct roots kept, newest first, the new one included (default 2)' },
    jobs: { type: 'string', arg: 'N', help: 'most requests in flight to one mirror (default 64; the fetch window decides how many are used)' },
    rehash: { type: 'boolean', help: 're-hash blobs already in DIR (default: a present blob of the right size is trusted; fsck scrubs)' },
    'no-fsync': { type: 'boolean', help: 'do not fsync blobs and fsinfo.json (faster; not crash-safe)' },
    json: { type: 'boolean', help: 'print the result as JSON' }
  },
  async run ([addr, dir], v, io) {
    if (v.keep !== undefined && !v.gc) throw new UsageError('--keep needs --gc')
    const keep = v.keep === undefined ? 2 : positiveInt(v.keep, 'keep')
    const bar = progressBar({ label: 'pull', stream: io.stderr })
    const target = await treeAddress(addr, v)
    const r = await pull({
      ...target, dir, gc: !!v.gc, keep, rehash: !!v.rehash, fsync: !v['no-fsync'],
      jobs: v.jobs ? positiveInt(v.jobs, 'jobs') : undefined,
      onProgress: p => bar.update(p.done, p.total, `fetched ${fmtBytes(p.fetched)}`),
      warn: m => io.stderr.write(`${io.stderr.isTTY ? '\r\x1b[K' : ''}rotree: warning: ${m}\n`)
    })
    bar.done()
    if (v.json) {
      // mirrors: those that failed, as every reading command lists them (docs/JSON.md)
      const { fetchedHashes, mirrors, ...rest } = r
      const faults = mirrors.filter(m => m.failed).map(m => ({ url: m.url, faults: m.failed, code: m.lastError?.code ?? 'ROTREE_INTERNAL', message: m.lastError?.message ?? '' }))
      io.stdout.write(JSON.stringify({ address: target.address, ...keyAndName(target.address), ...rest, log: rest.log ?? null, mirrors: faults }, null, 2) + '\n')
      return
    }
    const from = r.previousSeq === null ? 'empty' : r.previousSeq === r.seq ? `seq ${r.seq} (already current)` : `seq ${r.previousSeq}`
    io.stdout.write(`pulled ${dir}: seq ${r.seq}, root ${r.root} (was ${from})\n` +
      `  fetched ${r.fetched.blobs} blobs (${fmtBytes(r.fetched.bytes)}), already present ${r.present.blobs} (${fmtBytes(r.present.bytes)})` +
      (r.damaged.length ? `, replaced ${r.damaged.length} damaged` : '') + '\n' +
      (r.trust ? `  trust documents: fetched ${r.trust.fetched}, already present ${r.trust.present}\n` : '') +
      `  ${r.requests} requests, ${fmtBytes(r.bytesMoved)} received in ${(r.ms / 1000).toFixed(1)} s\n` +
      (r.gc ? r.gc.skipped ? `  gc skipped: ${r.gc.skipped}\n` : `  gc: deleted ${r.gc.deleted} blobs (${fmtBytes(r.gc.deletedBytes)}), kept roots of seq ${r.gc.kept.map(k => k.seq).join(', ')}\n` : ''))
    for (const m of r.mirrors) if (m.failed) io.stderr.write(`rotree: warning: mirror ${m.url} failed ${m.failed} time(s), last: ${m.lastError.code} (${m.lastError.message})\n`)
  }
}

// P3: the Node client's verified read of a 100 MB file against a plain HTTP
// download of the same bytes from the same nginx.
import fs from 'node:fs/promises'
import { createHash } from 'node:crypto'
import path from 'node:path'
import { median } from './lib/proc.js'
import { startNginx } from './lib/servers.js'
import { makeTree, timed } from './lib/trees.js'
import { getBytes } from './lib/http.js'

export const id = 'P3'

export async function run ({ quick = false } = {}) {
  const size = (quick ? 32 : 100) * 1024 * 1024
  const t = await makeTree({ 'big.bin': size }, { label: 'p3' })
  // the plain copy lives beside the blobs, so one nginx serves both
  await fs.copyFile(path.join(t.src, 'big.bin'), path.join(t.out, 'plain.bin'))
  const nginx = await startNginx(t.out, { plain: true })
  const reps = quick ? 2 : 5
  const plain = []; const verified = []; const lent = []
  const cpu = { plain: [], verified: [], lent: [] } // this process's CPU (user + system, every thread) per read, ms
  const withCpu = async (k, fn) => { const c0 = process.cpuUsage(); const r = await fn(); const c = process.cpuUsage(c0); cpu[k].push((c.user + c.system) / 1000); return r }
  try {
    for (let i = 0; i < reps; i++) {
      plain.push((await withCpu('plain', () => timed(() => getBytes(nginx.url + 'plain.bin')))).ms)
      const tree = await t.open(nginx.url)
      verified.push((await withCpu('verified', () => timed(async () => { let n = 0; for await (const b of tree.createReadStream('/big.bin')) n += b.length; return n }))).ms)
      tree.close()
      // the same read lending its buffers back (client-js/README.md, lent reads), on a new tree
      const tree2 = await t.open(nginx.url)
      lent.push((await withCpu('lent', () => timed(async () => { let n = 0; for await (const b of tree2.readRange('/big.bin', { lend: true })) { n += b.length; tree2.release(b) } return n }))).ms)
      tree2.close()
    }
  } finally { await nginx.stop(); await t.cleanup() }
  const mb = size / 1e6
  // SHA-256 as fast as node:crypto goes in this process: what one pass over the file costs at least
  const probe = Buffer.alloc(64 << 20, 7)
  const h0 = performance.now(); createHash('sha256').update(probe).digest(); const shaRate = probe.length / 1e6 / ((performance.now() - h0) / 1000)
  const med = xs => median(xs).toFixed(0)
  const v = mb / (median(verified) / 1000); const p = mb / (median(plain) / 1000); const l = mb / (median(lent) / 1000)
  return {
    id, title: `Node client, verified read of ${size >> 20} MiB`,
    command: `npm run bench${quick ? ':quick' : ''} -- P3`,
    target: '≥ 70% of a plain HTTP download of the same bytes',
    met: v / p >= 0.7,
    rows: [{ label: `createReadStream, ${size >> 20} MiB`, value: v, baseline: p, baselineLabel: 'plain GET from nginx', unit: 'MB/s' },
      { label: `readRange with lend (buffers given back), ${size >> 20} MiB`, value: l, baseline: p, baselineLabel: 'plain GET from nginx', unit: 'MB/s' }],
    notes: [`CPU of this process (user + system, every thread) per read, median: createReadStream ${med(cpu.verified)} ms, lent ${med(cpu.lent)} ms, the plain download ${med(cpu.plain)} ms; node:crypto's SHA-256 here: ${shaRate.toFixed(0)} MB/s.`, `Median of ${reps} runs each, alternated, all in the bench's process (its pages already faulted in by earlier runs: a new process's first read is slower, see P9 and client-js/README.md). The client fetches ~256 KiB chunks, as many in flight as the fetch scheduler's window allows (at least 8), over keep-alive HTTP/1.1 connections, and hashes each with node:crypto before passing it on.`],
    gap: `The reader is CPU-bound here and the plain download is not: in this run a verified read used ${med(cpu.verified)} ms of CPU for ${size >> 20} MiB (createReadStream; ${med(cpu.lent)} ms lent), against ${med(cpu.plain)} ms for the plain download, whose bytes node:http hands over unread. Every verified byte goes through SHA-256 twice, each chunk against its ref and then the whole file against its signed SHA-256 (FORMAT.md §12.7, the second line of defence): at the ${shaRate.toFixed(0)} MB/s node:crypto's SHA-256 runs in this process (one 64 MiB buffer, this run), ${(2 * size / 1e6 / shaRate * 1000).toFixed(0)} ms of the read, where the target allows ${(size / 1e6 / (0.7 * p) * 1000).toFixed(0)} ms for all of it; the rest is ~${Math.round(size / 262144)} requests of ~256 KiB and their copies. The render of 2026-11-27 met the target against a plain download of 369 MB/s on a busier day; the read itself has not slowed (324 and 443 MB/s then). What would close it: the whole-file hash off the reader's thread (a worker, after copying each piece, P14 says why), which gains only where a core is idle, or a file hash that the chunk hashes imply (a hash tree, a format change), which users could no longer compare with a published SHA-256.`
  }
}

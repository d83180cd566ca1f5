#!/usr/bin/env node
// P2 and P9: `rotree gateway` (its own process, in front of an nginx mirror of
// the published folder) against nginx serving the same bytes as plain files,
// measured in the same run:
//   P2a  a verified 100 MB file, MB/s, 1 and 4 parallel downloads, the gateway
//        warm (blobs in its disk cache: each chunk is read back from level and
//        hashed again) and cold (first download: fetched from the mirror,
//        verified, stored);
//   P2b  warm small files, req/s by autocannon (16 KiB: one chunk held in the
//        memory cache; 1 KiB: inline in its directory page), with server CPU
//        per request, because autocannon saturates near 12-15k req/s here;
//   P9   RSS of the gateway process while 1 GiB streams through it (cold, from
//        the mirror), with and without the disk cache.
//
//   node bench/gateway.js [--quick] [--save]
// --save writes bench/results/P2.json and P9.json for docs/BENCHMARKS.md.
import fs from 'node:fs/promises'
import { createWriteStream } from 'node:fs'
import path from 'node:path'
import http from 'node:http'
import { once } from 'node:events'
import { startNginx, startGateway } from './lib/servers.js'
import { load } from './lib/load.js'
import { cpuOf, median } from './lib/proc.js'
import { getBytes } from './lib/http.js'
import { libraryRead } from './lib/clients.js'
import { tmpdir, makeKey, buildTree, prng } from '../test/helpers/fixtures.js'

const MB = 1e6
const MAX_FILLS = 12 // downloads to fill the gateway's disk cache before the warm rows

/** Memory of a process from /proc: VmRSS, RssAnon, RssFile in bytes. */
async function memOf (pid) {
  const s = await fs.readFile(`/proc/${pid}/status`, 'utf8')
  const kb = k => Number(new RegExp(`${k}:\\s+(\\d+) kB`).exec(s)?.[1] ?? NaN) * 1024
  return { rss: kb('VmRSS'), anon: kb('RssAnon'), file: kb('RssFile') }
}

/** Download url with `parallel` clients for `seconds`; MB/s and the server's CPU seconds per GB. */
async function throughput (url, { parallel, seconds, pids, size }) {
  const c0 = cpuOf(pids); const t0 = performance.now()
  let bytes = 0
  const until = t0 + seconds * 1000
  await Promise.all(Array.from({ length: parallel }, async () => {
    while (performance.now() < until) {
      const n = await getBytes(url)
      if (n !== size) throw new Error(`${url}: ${n} bytes, expected ${size}`)
      bytes += n
    }
  }))
  const wall = (performance.now() - t0) / 1000
  return { mbps: bytes / MB / wall, cpuPerGB: (cpuOf(pids) - c0) / (bytes / 1e9) }
}

async function writePrng (file, size, seed) {
  const w = createWriteStream(file)
  for (let off = 0, i = 0; off < size; off += 16 << 20, i++) {
    if (!w.write(prng(Math.min(16 << 20, size - off), `${seed}-${i}`))) await once(w, 'drain')
  }
  w.end(); await once(w, 'finish')
}

export async function runP2 ({ quick = false } = {}) {
  const dir = await tmpdir('rotree-bench-gw-')
  const src = path.join(dir, 'src')
  await fs.mkdir(src)
  const size = 100 * 1024 * 1024
  await writePrng(path.join(src, 'big.bin'), size, 'p2')
  await fs.writeFile(path.join(src, 'small16k.bin'), prng(16 * 1024, 'small16k'))
  await fs.writeFile(path.join(src, 'small1k.txt'), prng(1024, 'small1k'))
  const key = makeKey()
  const { out } = await buildTree(src, { key, out: path.join(dir, 'out') })
  const plain = await startNginx(src, { plain: true }) // the baseline: the same bytes as files
  const mirror = await startNginx(out, { plain: true }) // the gateway's upstream: the published folder
  const gw = await startGateway(`${mirror.url}#${key.publicKey}`, dir, ['--cache-dir', path.join(dir, 'cache')])
  const seconds = 3 // 3 runs of 3 s per server in the full suite (which must fit in 10 minutes)
  const reps = quick ? 1 : 3
  const rows = []; const raw = []
  let fills = 0 // downloads it took to fill the disk cache (the warm rows)
  let filled = false // the last of them missed the cache nowhere
  try {
    // cold: every chunk goes to the mirror; a fresh gateway with an empty cache per run
    const timedGet = async url => {
      const t = performance.now(); const n = await getBytes(url)
      if (n !== size) throw new Error(`${url}: ${n} bytes`)
      return size / MB / ((performance.now() - t) / 1000)
    }
    const coldGw = []; const coldNginx = []
    for (let i = 0; i < reps; i++) {
      const fresh = await startGateway(`${mirror.url}#${key.publicKey}`, dir, ['--cache-dir', path.join(dir, `cold-cache-${i}`)])
      try { coldGw.push(await timedGet(fresh.url + 'big.bin')) } finally { await fresh.stop() }
      coldNginx.push(await timedGet(plain.url + 'big.bin'))
    }
    // the main gateway's downloads fill its cache for the warm rows: as many
    // as it takes, since the cache drops what its write queue cannot take
    // while a download outruns the disk (gateway/disk-cache.js); warm is a
    // download that missed the cache nowhere
    const misses = async () => (await (await fetch(gw.url + '.well-known/rotree/status')).json()).diskCache.misses
    for (let before = -1, now = await misses(); now !== before && fills < MAX_FILLS; fills++) {
      await timedGet(gw.url + 'big.bin')
      before = now; now = await misses()
      filled = now === before
    }
    rows.push({ label: '100 MB, cold (fetch + verify + store), 1 download', value: median(coldGw), baseline: median(coldNginx), baselineLabel: 'nginx, same file', unit: 'MB/s' })
    raw.push({ case: 'cold', gateway: coldGw, nginx: coldNginx }, { case: 'fill', downloads: fills, filled })

    for (const parallel of [1, 4]) {
      const g = []; const x = []
      for (let i = 0; i < reps; i++) {
        g.push(await throughput(gw.url + 'big.bin', { parallel, seconds, pids: [gw.pid], size }))
        x.push(await throughput(plain.url + 'big.bin', { parallel, seconds, pids: plain.pids, size }))
      }
      const gm = median(g.map(r => r.mbps)); const xm = median(x.map(r => r.mbps))
      rows.push({ label: `100 MB, warm (disk cache, re-hashed), ${parallel} parallel`, value: gm, baseline: xm, baselineLabel: 'nginx, same file', unit: 'MB/s' })
      raw.push({ case: `warm-${parallel}`, gateway: g, nginx: x })
    }

    for (const [file, what] of [['small16k.bin', '16 KiB file (one chunk, memory cache)'], ['small1k.txt', '1 KiB file (inline)']]) {
      const conns = 16
      await load({ url: gw.url + file, connections: conns, durationS: 2, pids: [gw.pid] }) // warm (and let V8 optimise the hot path)
      await load({ url: plain.url + file, connections: conns, durationS: 1, pids: plain.pids })
      const g = []; const x = []
      for (let i = 0; i < reps; i++) {
        g.push(await load({ url: gw.url + file, connections: conns, durationS: seconds, pids: [gw.pid] }))
        x.push(await load({ url: plain.url + file, connections: conns, durationS: seconds, pids: plain.pids }))
      }
      for (const r of [...g, ...x]) if (r.errors || r.non2xx) throw new Error(`${file}: ${r.errors} errors, ${r.non2xx} non-2xx`)
      const gb = g.every(r => r.generatorBound) && x.every(r => r.generatorBound)
      rows.push({ label: `${what}, ${conns} conn: req/s`, value: median(g.map(r => r.rps)), baseline: median(x.map(r => r.rps)), baselineLabel: 'nginx', unit: 'req/s', note: gb ? '(load generator bound)' : '' })
      rows.push({ label: `${what}: CPU/request`, value: median(g.map(r => r.cpuPerReqUs)), baseline: median(x.map(r => r.cpuPerReqUs)), baselineLabel: 'nginx', unit: 'µs', higherIsBetter: false })
      raw.push({ case: file, gateway: g, nginx: x })
    }
  } finally {
    await gw.stop(); await plain.stop(); await mirror.stop()
    await fs.rm(dir, { recursive: true, force: true })
  }
  const warm = rows.filter(r => r.label.startsWith('100 MB, warm'))
  const small = rows.filter(r => r.unit === 'req/s')
  const smallCpu = rows.filter(r => r.label.endsWith('CPU/request'))
  const mbOk = Math.min(...warm.map(r => r.value / r.baseline)) >= 0.6
  // when autocannon is the limit, req/s says nothing about the servers: judge by CPU per request (≤ 1/0.3 of nginx's)
  const rpsOk = small.every((r, i) => r.value / r.baseline >= 0.3 || (r.note && smallCpu[i].value / smallCpu[i].baseline <= 1 / 0.3))
  return {
    id: 'P2',
    title: 'gateway: verified 100 MB file and warm small files, against nginx',
    command: `node bench/gateway.js${quick ? ' --quick' : ''}`,
    target: '≥ 60% of nginx MB/s (100 MB, warm) / ≥ 30% of nginx req/s (warm small files)',
    met: mbOk && rpsOk,
    rows,
    raw,
    notes: [`Both servers are their own processes on loopback; downloads use one keep-alive node:http client per parallel stream in the bench process. nginx (1 worker, sendfile) serves the source files; the gateway serves the tree from an nginx mirror of the published folder, with its disk cache (a file per blob). Warm means every chunk is in the disk cache: it is read back and hashed again before it is sent (docs/GATEWAY.md, the disk cache: whatever the cache gives back is verified again), so the figure includes a SHA-256 of every byte. Before the warm rows the gateway downloaded the file ${fills} time${fills === 1 ? '' : 's'}, ${filled ? 'until a download missed its disk cache nowhere' : 'and the last download still missed its disk cache: the warm rows include fetches from the mirror'}: while a download outruns the disk the cache does not store what its write queue cannot take (docs/GATEWAY.md, the disk cache).`,
      `The MB/s half of the target is judged on the warm rows, a gateway's steady state; the cold row (median of ${reps}, a fresh gateway with an empty cache each time) also fetches every chunk from the mirror (as many at once as the fetch window allows, at least 8) and stores it, against nginx reading one local file.`],
    gap: 'One core does all of a verified byte\'s work, where nginx sends the file with sendfile and no hash. A CPU profile of the gateway over one cold and four warm 100 MB downloads (2026-11-24, 1.77 s busy for 524 MB, ~3.4 ms per MB): SHA-256 342 ms (1.5 GB/s with SHA-NI, 0.65 ms per MB), socket writes to the client 361 ms (the kernel\'s loopback copy runs inside the write call, 0.7 ms per MB), garbage collection of one buffer per chunk 236 ms, LevelDB reads and writes of the disk cache 274 ms. Hashing and sending alone are 1.35 ms per MB, ~740 MB/s on one core, against nginx\'s sendfile with no hash; every other cost comes on top. Several parallel downloads use the second core and come closest (the 4-parallel row). Since then (2026-11-27) a streamed download reads each chunk from the mirror into a pooled buffer that goes back once the socket and the disk cache are done with it (client-js/src/fetch/buffer-pool.js): in two alternated runs of this figure against the gateway before it, the cold download went from 78-83 to 106-111 MB/s, on a day when the machine ran every row slower than the one rendered before (the warm rows, which then read LevelDB values, unchanged: 193-217 against 203-227 MB/s). Then the disk cache stored each blob as a file, read with one open and one pread into a pooled buffer, where a LevelDB value was read into LevelDB\'s block buffer and copied into a new one for V8 to collect: in four alternated 3 s runs of one warm download against the gateway before (scratch A/B, same machine), 344-502 against 207-339 MB/s, with 2.0-2.8 s of the gateway\'s CPU against 3.0-3.7 s per run; a cold download, which now creates a file per blob, did not slow (103-119 against 75-109 MB/s, five alternated runs, each a fresh gateway and cache). On 2026-11-27 the single warm download sat at the target\'s edge (0.495×, nginx itself moving between 706 and 761 MB/s across its three runs, and between 250 and 760 MB/s across the day\'s runs on this shared machine). Part of that was the figure\'s own: its warm runs began after one filling download, and the disk cache, whose write queue a download outran, held only part of the file, so the first warm runs still fetched, verified and stored the rest (runs of 290, 339 and 430 MB/s in one render). Since 2026-11-28 the figure downloads until one download misses the cache nowhere, and the queue writes four blobs at a time: 0.600× and 0.616× in the two runs of that day. A profile of the gateway over warm downloads (2026-11-27) has the main thread busy ~40% of the wall time: SHA-256 ~37% of its busy samples, socket writes ~17%, and ~20% inside fs.open and fs.close, which only hand work to libuv\'s threads: the main thread is descheduled there as it wakes them, on 2 cores shared with the downloading client. Tried, within the noise: synchronous reads of the cache file (no thread hand-off; 270-524 against 265-460 MB/s, alternated) and writing up to 1 MiB ahead of the socket before waiting for drain (207-494 against 329-500); neither adopted. Tried (2026-11-27): hashing each chunk on a worker thread, in the shared memory it was read into (hashed where it lies, before it is sent): the gateway\'s main thread went from 1.4-1.8 to 0.65-0.85 ms of CPU per MB, its CPU per MB in all about the same (1.8-2.2 against 1.8-2.3 ms), and the warm single download moved within the noise (in 3 s runs alternated on one machine, with the thread against without: 466-535 against 374-467 MB/s in a quiet hour, 237-541 against 183-510 MB/s in a loaded one), for the downloading client, the main thread and the hashing thread share these 2 cores; the Node client\'s lent read of 256 MiB from nginx with no link went 318-340 against 312-351 MB/s with ~20% more user CPU, and createReadStream, whose pieces are not in shared memory and had to be copied to the thread for the whole-file hash, slowed (137-151 against 146-183 MB/s). Not adopted. What would close it for one download is a core to spare: a main thread at 0.65-0.85 ms per MB would send ~1.2-1.5 GB/s.'
  }
}

export async function runP9 ({ quick = false } = {}) {
  const dir = await tmpdir('rotree-bench-p9-')
  const src = path.join(dir, 'src')
  await fs.mkdir(src)
  const size = (quick ? 256 : 1024) * 1024 * 1024
  await writePrng(path.join(src, 'huge.bin'), size, 'p9')
  const key = makeKey()
  const { out } = await buildTree(src, { key, out: path.join(dir, 'out') })
  await fs.rm(src, { recursive: true, force: true })
  const mirror = await startNginx(out, { plain: true })
  const rows = []; const raw = []
  try {
    const cacheOff = ['--cache-size', '0']; const cacheOn = ['--cache-dir', path.join(dir, 'cache'), '--cache-size', '2G']
    // glibc's malloc raises its mmap threshold after the first large free, so
    // later chunk-sized buffers come from the heap and are kept: a fixed
    // threshold returns them at once (docs/GATEWAY.md, Memory)
    const GLIBC = { MALLOC_MMAP_THRESHOLD_: '131072', MALLOC_ARENA_MAX: '2' }
    // the client library itself: one streaming read in its own process, from the same mirror
    const lib = await libraryRead({ addr: `${mirror.url}#${key.publicKey}`, file: '/huge.bin', mem: true, limitS: 120 })
    if (lib.bytes !== size) throw new Error(`P9: the library read ${lib.bytes} bytes, expected ${size}`)
    rows.push({ label: 'client library, createReadStream: RSS growth (peak − before)', value: (lib.mem.peak.rss - lib.mem.before.rss) / 2 ** 20, baseline: 64, baselineLabel: 'P9 limit', unit: 'MiB', higherIsBetter: false })
    rows.push({ label: 'client library, createReadStream: anonymous RSS growth', value: (lib.mem.peak.anon - lib.mem.before.anon) / 2 ** 20, baseline: 64, baselineLabel: 'P9 limit', unit: 'MiB', higherIsBetter: false })
    raw.push({ label: 'client library', before: lib.mem.before, peak: lib.mem.peak, seconds: lib.totalMs / 1000, mbps: size / MB / (lib.totalMs / 1000) })
    // the same read lending its buffers (readRange({ lend: true }), each piece given back once
    // used: what rotree cat and the gateway without a disk cache do)
    const lent = await libraryRead({ addr: `${mirror.url}#${key.publicKey}`, file: '/huge.bin', mem: true, lend: true, limitS: 120 })
    if (lent.bytes !== size) throw new Error(`P9: the lent read read ${lent.bytes} bytes, expected ${size}`)
    rows.push({ label: 'client library, lent read (readRange, lend): RSS growth (peak − before)', value: (lent.mem.peak.rss - lent.mem.before.rss) / 2 ** 20, baseline: 64, baselineLabel: 'P9 limit', unit: 'MiB', higherIsBetter: false })
    rows.push({ label: 'client library, lent read (readRange, lend): anonymous RSS growth', value: (lent.mem.peak.anon - lent.mem.before.anon) / 2 ** 20, baseline: 64, baselineLabel: 'P9 limit', unit: 'MiB', higherIsBetter: false })
    raw.push({ label: 'client library, lent read', before: lent.mem.before, peak: lent.mem.peak, seconds: lent.totalMs / 1000, mbps: size / MB / (lent.totalMs / 1000) })
    for (const [label, extra, env] of [['disk cache off', cacheOff], ['disk cache on (2 GiB)', cacheOn], ['disk cache off, glibc tuned', cacheOff, GLIBC], ['disk cache on (2 GiB), glibc tuned', cacheOn, GLIBC]]) {
      await fs.rm(path.join(dir, 'cache'), { recursive: true, force: true })
      const gw = await startGateway(`${mirror.url}#${key.publicKey}`, dir, extra, { env })
      try {
        await getBytes(gw.url + '.well-known/rotree/status')
        const before = await memOf(gw.pid)
        let peak = { ...before }
        const sampler = setInterval(async () => {
          const m = await memOf(gw.pid).catch(() => null)
          if (m) for (const k of Object.keys(peak)) peak[k] = Math.max(peak[k], m[k])
        }, 50)
        const t = performance.now()
        const n = await getBytes(gw.url + 'huge.bin')
        const secs = (performance.now() - t) / 1000
        clearInterval(sampler)
        if (n !== size) throw new Error(`P9: ${n} bytes, expected ${size}`)
        const after = await memOf(gw.pid)
        peak = { rss: Math.max(peak.rss, after.rss), anon: Math.max(peak.anon, after.anon), file: Math.max(peak.file, after.file) }
        rows.push({ label: `${label}: RSS growth (peak − before)`, value: (peak.rss - before.rss) / 2 ** 20, baseline: 64, baselineLabel: 'P9 limit', unit: 'MiB', higherIsBetter: false })
        rows.push({ label: `${label}: anonymous RSS growth`, value: (peak.anon - before.anon) / 2 ** 20, baseline: 64, baselineLabel: 'P9 limit', unit: 'MiB', higherIsBetter: false })
        raw.push({ label, before, peak, after, seconds: secs, mbps: size / MB / secs })
      } finally { await gw.stop() }
    }
  } finally {
    await mirror.stop()
    await fs.rm(dir, { recursive: true, force: true })
  }
  return {
    id: 'P9',
    title: `client and gateway memory while ${size >> 20} MiB stream through them`,
    command: `node bench/gateway.js${quick ? ' --quick' : ''}`,
    target: 'RSS growth < 64 MB',
    met: rows.every(r => r.value < 64),
    rows,
    raw,
    notes: ['The client rows: bench/lib/reader.js (openTree() and createReadStream() in their own process) reads the file from the nginx mirror, its VmRSS and RssAnon sampled every 50 ms from the start of the read; the lent read is the same with readRange({ lend: true }), giving each piece back (release()) once counted. A Readable cannot lend: nothing tells it when its consumer is done with a chunk. The gateway rows: one download of a file never seen before (cold: every chunk fetched from an nginx mirror, verified, sent; with the disk cache also stored). RSS sampled every 50 ms from /proc/<pid>/status; "anonymous" excludes file-backed pages (the gateway\'s own code and mapped files, which count in VmRSS but belong to the page cache). The disk cache writes each blob as a file and keeps only small records in its level database (docs/GATEWAY.md, the disk cache).',
      '"glibc tuned" runs the same gateway with MALLOC_MMAP_THRESHOLD_=131072 MALLOC_ARENA_MAX=2 in its environment (docs/GATEWAY.md, Memory), which returns freed chunk-sized buffers to the system at once; it mattered while the disk cache held blobs as LevelDB values (2026-11-27, before: 70 MiB anonymous growth without it, 55 MiB with it).'],
    gap: 'Where the rows stand (2026-11-27). The client library through createReadStream() still grows ~90 MiB: every chunk reaches its caller in a new ~256 KiB buffer, freed only at V8\'s next collection, which V8 schedules by the growth of such external memory (it lets external memory grow by ~64 MiB between collections), and a Readable cannot know when its consumer is done with a chunk. The lent read (readRange({ lend: true }) with release(), client-js/README.md) takes its buffers back once used: 38-39 MiB, against 91-92 MiB for createReadStream in the same runs, and it is also faster, since later chunks land on pages already faulted in (100 MiB in a new process: 180-249 MB/s against 71-83 MB/s). rotree cat, rotree get and the gateway read this way, and every gateway row is under the limit. The disk-cache rows were not, while the cache held blobs as LevelDB values: 127 MiB of VmRSS (LevelDB\'s mapped tables) and 70 MiB anonymous (its buffers and memtable) in the run before this one; with a file per blob, 52 MiB and 52 MiB, without any malloc setting. On 2026-11-28 the disk-cache rows ran over the limit on this machine before any change that day (65.1 and 62.4 MiB, the gateway of 2026-11-27), and 68.0 and 65.2 MiB once blobs waiting to be written were written four at a time (more blobs kept, each holding its pooled buffer until written); since the cache copies each blob into the 4 MiB ring of a thread that writes the files (gateway/disk-cache-writer.js), its buffer is free at once: 55.7-55.9 and 53.8-54.9 MiB in two runs, the thread\'s own ~9 MB counted before the read starts. What would close the rest: nothing inside a Readable; a caller who wants bounded memory reads with lend.'
  }
}

/** For bench/run.js (which calls run()): P2; P9 is runP9(). */
export const id = 'P2'
export const run = runP2

function table (fig) {
  const fmt = v => !Number.isFinite(v) ? '—' : Math.abs(v) >= 100 ? Math.round(v).toLocaleString('en-US') : v.toFixed(1)
  const lines = [`${fig.id}: ${fig.title}`, `target: ${fig.target} → ${fig.met ? 'met' : 'NOT met'}`]
  for (const r of fig.rows) lines.push(`  ${r.label.padEnd(58)} ${fmt(r.value).padStart(9)} ${r.unit.padEnd(6)} vs ${fmt(r.baseline).padStart(9)} (${r.baselineLabel})  ${(r.value / r.baseline).toFixed(2)}× ${r.note ?? ''}`)
  return lines.join('\n')
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const quick = process.argv.includes('--quick')
  const figs = [await runP2({ quick }), await runP9({ quick })]
  for (const f of figs) console.log(table(f) + '\n')
  if (process.argv.includes('--save')) {
    const { saveFigure } = await import('./lib/report.js')
    for (const f of figs) await saveFigure(f)
  }
  for (const f of figs) for (const r of f.raw) if (r.label) console.log(JSON.stringify(r))
  http.globalAgent.destroy()
  process.exit(0)
}


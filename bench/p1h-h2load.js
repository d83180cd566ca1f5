// P1h: P1 with the load generator out of the servers' way. rotree serve,
// nginx (one worker, the config `rotree nginx-config` generates) and the bare
// node:http floor each pinned with taskset to CPU 0; the load from
// `h2load --h1` (C, keep-alive, one request at a time per connection) pinned
// to CPU 1. A 16 KiB blob, 1, 16 and 256 connections. Server CPU per request
// from /proc/<pid>/stat over the measured run; P1 (autocannon in the bench
// process) stays beside it.
import fs from 'node:fs/promises'
import path from 'node:path'
import { spawn } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { missing, skipped } from './lib/need.js'
import { cpuOf, median } from './lib/proc.js'
import { startRotreeServe, startBareNode } from './lib/servers.js'
import { startNginxTree } from './lib/nginx.js'
import os from 'node:os'
import { blobFolder } from './lib/trees.js'

export const id = 'P1h'
const SERVER_CPU = '0'; const LOAD_CPU = '1'

/** One h2load run; resolves { rps, ok, failed, seconds }. */
function h2load (url, { connections, seconds }) {
  return new Promise((resolve, reject) => {
    const args = ['-c', LOAD_CPU, 'h2load', '--h1', '-c', String(connections), '-t', '1', '-D', String(seconds), url]
    const p = spawn('taskset', args, { stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    p.stdout.on('data', b => { out += b }); p.stderr.on('data', b => { out += b })
    const timer = setTimeout(() => p.kill('SIGKILL'), (seconds + 20) * 1000)
    p.on('error', reject)
    p.on('close', code => {
      clearTimeout(timer)
      const fin = /finished in ([\d.]+)s, ([\d.]+) req\/s/.exec(out)
      const req = /requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, (\d+) failed, (\d+) errored, (\d+) timeout/.exec(out)
      if (code !== 0 || !fin || !req) return reject(new Error(`h2load exited with ${code}: ${out.slice(-400)}`))
      resolve({ seconds: Number(fin[1]), rps: Number(fin[2]), ok: Number(req[4]), failed: Number(req[5]) + Number(req[6]) + Number(req[7]) })
    })
  })
}

async function measure (srv, url, { connections, seconds }) {
  await h2load(url, { connections, seconds: 1 }) // warm caches and connections
  const c0 = cpuOf(srv.pids)
  const r = await h2load(url, { connections, seconds })
  const cpu = cpuOf(srv.pids) - c0
  return { rps: r.rps, cpuPerReqUs: cpu / r.ok * 1e6, share: cpu / r.seconds, failed: r.failed }
}

export async function run ({ quick = false } = {}) {
  const miss = missing('h2load', 'nginx', 'taskset')
  if (miss) return skipped(id, miss)
  const folder = await blobFolder('p1h')
  const dir = folder.out
  const blob = randomBytes(16 * 1024); const hex = createHash('sha256').update(blob).digest('hex')
  await fs.writeFile(path.join(dir, 'h', hex), blob)
  const conns = quick ? [16] : [1, 16, 256]
  const seconds = quick ? 2 : 3
  const reps = 1 // the suite's time: 3 connection counts × 3 servers × (1 s warm-up + run)
  const servers = [
    await startRotreeServe(dir, { cpu: SERVER_CPU }),
    // h2load does not reconnect: a connection must carry a whole run
    await startNginxTree(dir, { workers: 1, log: false, cpu: SERVER_CPU, keepaliveRequests: 10_000_000 }),
    await startBareNode(dir, hex, { cpu: SERVER_CPU })
  ]
  const rows = []; const raw = []
  try {
    for (const c of conns) {
      const res = {}
      for (const srv of servers) {
        const runs = []
        for (let i = 0; i < reps; i++) runs.push(await measure(srv, srv.url + 'h/' + hex, { connections: c, seconds }))
        res[srv.name] = { rps: median(runs.map(r => r.rps)), cpuPerReqUs: median(runs.map(r => r.cpuPerReqUs)), share: median(runs.map(r => r.share)), failed: runs.reduce((n, r) => n + r.failed, 0) }
        raw.push({ connections: c, server: srv.name, ...res[srv.name] })
      }
      const r = res['rotree serve']; const n = res.nginx; const b = res['bare node:http']
      const label = `16 KiB, ${c} conn`
      rows.push({ label: `${label}: CPU/request`, value: r.cpuPerReqUs, baseline: n.cpuPerReqUs, baselineLabel: 'nginx, 1 worker', unit: 'µs', higherIsBetter: false })
      rows.push({ label: `${label}: req/s`, value: r.rps, baseline: n.rps, baselineLabel: 'nginx, 1 worker', unit: 'req/s', note: r.share < 0.85 && n.share < 0.85 ? '(load generator bound)' : '' })
      rows.push({ label: `${label}: CPU/request vs bare node:http`, value: r.cpuPerReqUs, baseline: b.cpuPerReqUs, baselineLabel: 'bare node:http, one constant buffer', unit: 'µs', higherIsBetter: false })
    }
  } finally {
    for (const s of servers) await s.stop()
    await folder.cleanup()
  }
  const cpuRows = rows.filter(r => r.label.endsWith(': CPU/request'))
  const worst = Math.max(...cpuRows.map(r => r.value / r.baseline))
  const floor = median(conns.map(c => raw.find(x => x.connections === c && x.server === 'bare node:http').cpuPerReqUs / raw.find(x => x.connections === c && x.server === 'nginx').cpuPerReqUs))
  const shares = raw.map(x => `${x.server} ${x.connections}: ${(100 * x.share).toFixed(0)}%`).join(', ')
  return {
    id,
    title: 'embedded server vs nginx, load from h2load on the other core',
    command: `npm run bench${quick ? ':quick' : ''} -- P1h`,
    target: 'server CPU per 16 KiB request ≤ 1.5× nginx',
    met: worst <= 1.5,
    rows,
    raw,
    notes: [
      `Each server pinned to CPU ${SERVER_CPU} (taskset), h2load --h1 (one thread, keep-alive, one request in flight per connection) pinned to CPU ${LOAD_CPU}; ${seconds} s runs after a 1 s warm-up, ${reps === 1 ? 'one run each' : `median of ${reps}`}. CPU per request is the server's user + system time from /proc over the run, divided by the requests h2load completed. Ratios: rotree ÷ baseline, lower is better. Worst CPU ratio: ${worst.toFixed(2)}×; the floor (bare node:http ÷ nginx, median over connection counts): ${floor.toFixed(2)}×. Rows marked "load generator bound" had both servers below 85% of their core.`,
      `Server CPU use during the runs (100% = its core): ${shares}. Below ~85% the load generator, not the server, set the pace; CPU per request then includes more wake-ups per request than at full load, for every server alike. Load average at the end: ${os.loadavg().map(x => x.toFixed(1)).join(' ')} (other processes on the same 2 cores take time from both).`
    ],
    gap: `Bare node:http answering one constant buffer costs ${floor.toFixed(2)}× nginx's CPU per request: its per-request JavaScript, against nginx's C event loop and sendfile. rotree serve costs ${raw.filter(x => x.server === 'rotree serve').map(x => `${(x.cpuPerReqUs / raw.find(y => y.connections === x.connections && y.server === 'bare node:http').cpuPerReqUs).toFixed(2)}×`).join(', ')} of that at ${conns.join(', ')} connections: since 2026-12-07 a plain GET of a cached blob never reaches node:http (server/fast-front.js: a precomputed head, a shared Date line and the cached body in one writev; any other request hands its connection to node:http for good). Before that, serve cost 1.80× and 2.16× nginx's CPU per request at 16 and 256 connections (the render of 2026-12-07 12:48 UTC), above that floor. The 1-connection rows are dominated by the wake-up per request (one request in flight), which costs every server alike.`
  }
}

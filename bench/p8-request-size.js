#!/usr/bin/env node
// P8's question, measured by itself: how does headless Chromium's speed of
// reading N MiB depend on the size of each request? (docs/BENCHMARKS.md P8,
// standing notes, hold what it found.) Not a figure: it prints a table.
//
// The same N MiB of random bytes, from nginx on loopback (bench/lib/nginx.js),
// over HTTP/1.1 and over HTTPS + HTTP/2, read in the page as
//   - one plain fetch() of the whole file (P8's baseline), drained;
//   - fetch()es of separate files of 64 KiB, 256 KiB, 1 MiB, 4 MiB;
//   - Range requests of those sizes into the one file;
// each piece read as the browser transport reads a blob (transport-web.js
// readCapped: the body's stream copied into a buffer of its Content-Length),
// 8 in flight (the reader's readAhead, the requests it always keeps asked for
// ahead: tree.js, fetch/window.js), without and with crypto.subtle.digest
// ('SHA-256') of each piece before its worker asks for the next (as the
// reader verifies a blob before it is handed out). After a warm-up pass (not
// counted), every case once per round, the order rotated each round; medians
// of the rounds (a bounded number, within --minutes). Beside each rate the
// CPU the browser's processes used (user + system from /proc, every process
// descended from this one that is not nginx) per request and per MiB.
//
//   node bench/p8-request-size.js [--mib 64] [--rounds 7] [--inflight 8] [--minutes 13] [--proto h1,h2] [--json]
// (about 5 minutes with the defaults on this project's 2-core machine)
import fs from 'node:fs'
import fsp from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import crypto from 'node:crypto'
import { median } from './lib/proc.js'
import { missing } from './lib/need.js'
import { makeCert, startNginxTree } from './lib/nginx.js'
import { launchChromium } from '../test/browser/helpers.js'

const arg = (name, dflt) => { const i = process.argv.indexOf('--' + name); return i > 0 ? process.argv[i + 1] : dflt }
const MIB = Number(arg('mib', 64))
const ROUNDS = Number(arg('rounds', 7))
const INFLIGHT = Number(arg('inflight', 8))
const MINUTES = Number(arg('minutes', 13))
const PROTOS = arg('proto', 'h1,h2').split(',')
const SIZES = [64 << 10, 256 << 10, 1 << 20, 4 << 20]
const CLK_TCK = 100

const miss = missing('chromium', 'nginx', 'openssl')
if (miss) { console.log(`skipped: ${miss}`); process.exit(0) }

/** CPU seconds of this process's descendants, split into nginx's and the rest (Chromium's). */
function cpuTree (nginxPids) {
  const kids = new Map()
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue
    let s
    try { s = fs.readFileSync(`/proc/${d}/stat`, 'utf8') } catch { continue }
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ')
    kids.set(Number(d), { ppid: Number(f[1]), cpu: (Number(f[11]) + Number(f[12])) / CLK_TCK })
  }
  const nginx = new Set(nginxPids)
  let browser = 0; let server = 0
  const walk = (pid, inNginx) => {
    for (const [p, k] of kids) {
      if (k.ppid !== pid) continue
      const n = inNginx || nginx.has(p)
      if (n) server += k.cpu; else browser += k.cpu
      walk(p, n)
    }
  }
  walk(process.pid, false)
  return { browser, server }
}

const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'rotree-p8size-'))
const plainDir = path.join(dir, 'plain'); const webDir = path.join(dir, 'web'); const outDir = path.join(dir, 'out')
await fsp.mkdir(plainDir); await fsp.mkdir(webDir); await fsp.mkdir(outDir)
await fsp.writeFile(path.join(webDir, 'index.html'), '<!doctype html><meta charset="utf-8"><title>P8 sizes</title>\n')
const whole = crypto.randomBytes(MIB << 20)
await fsp.writeFile(path.join(plainDir, 'whole.bin'), whole)
for (const s of SIZES) {
  await fsp.mkdir(path.join(plainDir, `s${s}`))
  for (let i = 0; i * s < whole.length; i++) await fsp.writeFile(path.join(plainDir, `s${s}`, String(i)), whole.subarray(i * s, (i + 1) * s))
}
// nginx needs a published folder for its generated config; an empty tree's folder will do
await fsp.mkdir(path.join(outDir, 'h'))
await fsp.writeFile(path.join(outDir, 'fsinfo.json'), '{}')

const nginx = await startNginxTree(outDir, { tls: await makeCert(path.join(dir, 'tls')), plain: { '/plain/': plainDir }, web: { url: '/web/', dir: webDir }, log: true, keepaliveRequests: 10_000_000 })
// (keepalive_requests raised: an HTTP/2 connection's GOAWAY after the generated 10,000 fails a fetch() in flight)
const browser = await launchChromium()
console.log(`Chromium ${browser.version()}, ${MIB} MiB, ${INFLIGHT} in flight, load average ${os.loadavg().map(x => x.toFixed(2)).join(' ')}, ${new Date().toISOString()}`)
const deadline = Date.now() + MINUTES * 60_000
const cases = [{ kind: 'whole', hash: false }, { kind: 'whole', hash: true }]
for (const s of SIZES) for (const kind of ['files', 'range']) for (const hash of [false, true]) cases.push({ kind, size: s, hash })
const name = c => c.kind === 'whole' ? `one fetch of ${MIB} MiB${c.hash ? ' + digest' : ''}` : `${c.kind === 'files' ? 'files' : 'ranges'} of ${c.size >> 10} KiB${c.hash ? ' + digest' : ''}`

const results = {}
try {
  for (const proto of PROTOS) {
    const context = await browser.newContext({ ignoreHTTPSErrors: true })
    const page = await context.newPage()
    const base = proto === 'h2' ? nginx.tlsUrl : nginx.url
    await page.goto(base + 'web/')
    // warm-up, not counted: the connections, the page's code, the server's page cache
    for (const c of [cases[0], cases[2], cases[cases.length - 4]]) await page.evaluate(readAll, { base: base + 'plain/', total: MIB << 20, inflight: INFLIGHT, ...c })
    const mark = await nginx.logMark()
    const res = results[proto] = Object.fromEntries(cases.map(c => [name(c), { ms: [], cpu: [], srv: [], requests: 0 }]))
    for (let round = 0; round < ROUNDS && Date.now() < deadline; round++) {
      const order = cases.map((_, i) => cases[(i + round * 3) % cases.length])
      for (const c of order) {
        if (Date.now() > deadline) break
        const before = cpuTree(nginx.pids)
        const r = await page.evaluate(readAll, { base: base + 'plain/', total: MIB << 20, inflight: INFLIGHT, ...c })
        const after = cpuTree(nginx.pids)
        const e = res[name(c)]
        e.ms.push(r.ms); e.cpu.push(after.browser - before.browser); e.srv.push(after.server - before.server); e.requests = r.requests
      }
    }
    const wire = await nginx.logSince(mark)
    results[proto + ':wire'] = wire
    await context.close()
    print(proto)
  }
} finally {
  await browser.close().catch(() => {})
  await nginx.stop()
  await fsp.rm(dir, { recursive: true, force: true })
}

/** In the page: read the whole `total` bytes one way; ms and requests. */
async function readAll ({ base, total, inflight, kind, size, hash }) {
  const readBody = async (res, want) => {
    const len = Number(res.headers.get('content-length'))
    const buf = new Uint8Array(Number.isFinite(len) ? len : want)
    const reader = res.body.getReader()
    let n = 0
    for (;;) { const { done, value } = await reader.read(); if (done) break; buf.set(value, n); n += value.length }
    if (n !== want) throw new Error(`got ${n} bytes, wanted ${want}`)
    return buf
  }
  const t = performance.now()
  if (kind === 'whole') {
    const res = await fetch(base + 'whole.bin', { cache: 'no-store' })
    if (hash) {
      await crypto.subtle.digest('SHA-256', await readBody(res, total))
    } else {
      const reader = res.body.getReader()
      let n = 0
      for (;;) { const { done, value } = await reader.read(); if (done) break; n += value.length }
      if (n !== total) throw new Error(`got ${n} bytes`)
    }
    return { ms: performance.now() - t, requests: 1 }
  }
  const count = Math.ceil(total / size)
  let next = 0
  await Promise.all(Array.from({ length: inflight }, async () => {
    while (next < count) {
      const i = next++
      const want = Math.min(size, total - i * size)
      const res = kind === 'files'
        ? await fetch(`${base}s${size}/${i}`, { cache: 'no-store' })
        : await fetch(base + 'whole.bin', { cache: 'no-store', headers: { range: `bytes=${i * size}-${i * size + want - 1}` } })
      if (res.status !== (kind === 'files' ? 200 : 206)) throw new Error(`status ${res.status}`)
      const buf = await readBody(res, want)
      if (hash) await crypto.subtle.digest('SHA-256', buf)
    }
  }))
  return { ms: performance.now() - t, requests: count }
}

function print (proto) {
  const res = results[proto]
  const w = results[proto + ':wire']
  console.log(`\n${proto === 'h2' ? 'HTTPS + HTTP/2' : 'HTTP/1.1'} (nginx: ${w.requests} requests on ${w.connections} connections, ${Object.entries(w.protocols).map(([p, n]) => `${p} ×${n}`).join(', ')})`)
  const baseMs = median(res[name(cases[0])].ms)
  console.log('| case | runs | MB/s (median) | × one fetch | Chromium CPU ms / request | Chromium CPU s / 64 MiB | nginx CPU s |')
  console.log('|---|---:|---:|---:|---:|---:|---:|')
  for (const c of cases) {
    const e = res[name(c)]
    if (!e.ms.length) continue
    const ms = median(e.ms); const cpu = median(e.cpu)
    console.log(`| ${name(c)} | ${e.ms.length} | ${((MIB << 20) / 1e6 / (ms / 1000)).toFixed(1)} | ${(baseMs / ms).toFixed(2)} | ${(1000 * cpu / e.requests).toFixed(2)} | ${(cpu * 64 / MIB).toFixed(2)} | ${median(e.srv).toFixed(2)} |`)
  }
  console.log(`load average ${os.loadavg().map(x => x.toFixed(2)).join(' ')}, ${new Date().toISOString()}`)
}
if (process.argv.includes('--json')) console.log(JSON.stringify(results))

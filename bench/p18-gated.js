#!/usr/bin/env node
// P18: what gating a tree (docs/FORMAT.md §12.10 grants, §12.11 edge tokens)
// costs its readers and its edge. One published folder, read two ways:
//   1. 256 MiB in one file (pseudo-random) from nginx: `rotree nginx-config
//      --gated SECRET --token-upstream` with `rotree token-server` behind it,
//      against plain `rotree nginx-config` of the same folder, read by `rotree
//      cat --grant --grant-key` and by the library (bench/lib/reader.js
//      --grant: openTree's wrapTransport with gatedTransport) against the same
//      readers without a grant, alternated; on loopback and through an emulated
//      link (RTT 50 ms, 1 Gbit/s, as P15 and P3w; target ≥ 0.95×).
//   2. `rotree serve --grants` against `rotree serve` of a folder of many small
//      blobs: the server's CPU per request under autocannon, every request
//      carrying a valid token in its query, as readers send it (target ≤ 1.1×).
//   3. POSTs to /.rotree/token while `rotree get --grant` reads a tree of
//      100,000 small blobs (counted by the edge, `rotree serve`'s gate in this
//      process): one per token lifetime (target: 1 with the default 10 min,
//      and reads/lifetime + 1 with a short lifetime).
//
//   node bench/p18-gated.js [--quick]    prints the figure (or: npm run bench -- P18)
import './lib/env.js' // first: the environment the timed readers inherit
import fs from 'node:fs/promises'
import path from 'node:path'
import os from 'node:os'
import { spawn, execFileSync } from 'node:child_process'
import { openSync, closeSync, readFileSync, rmSync, existsSync } from 'node:fs'
import { pathToFileURL } from 'node:url'
import autocannon from 'autocannon'
import { build } from '../builder/build.js'
import { writeKeyFile } from '../builder/keys.js'
import { unsignedGrant, signGrant, encodeGrant } from 'rotree-client/grant'
import { RENEW_BEFORE_MS, RENEW_FRACTION } from 'rotree-client/net'
import { missing, skipped } from './lib/need.js'
import { makeCert, startNginxTree } from './lib/nginx.js'
import { freePort, waitPort } from './lib/servers.js'
import { linkTo, runContext, relayNote, PROTOCOLS } from './lib/netfix.js'
import { clientDir, cpuAccounting, cpuNote } from './lib/clients.js'
import { median, cpuOf } from './lib/proc.js'
import { mintToken, readSecret } from '../server/edge-token.js'
import { gatedTree } from '../server/gate.js'
import { createRotreeServer } from '../server/index.js'
import { tmpdir, makeKey, prng } from '../test/helpers/fixtures.js'

export const id = 'P18'
const READ_TARGET = 0.95
const CPU_TARGET = 1.1
const LINK = { rttMs: 50, mbit: 1000 }
const BIN = path.join(clientDir(), 'bin/rotree.js')
const READER = new URL('./lib/reader.js', import.meta.url).pathname
const mbps = (bytes, ms) => bytes / 1e6 / (ms / 1000)
const DAY = 86400e3

/** A child under GNU time with a hard limit: { ms, cpuS, stdout, truncated }. */
function timed (cmd, args, { limitS, devNull = false, env = process.env }) {
  return new Promise((resolve, reject) => {
    const cpuFile = cpuAccounting() ? path.join(os.tmpdir(), `rotree-bench-p18-${process.pid}-${Math.random().toString(36).slice(2)}`) : null
    const nul = devNull ? openSync('/dev/null', 'w') : null
    const t0 = performance.now()
    const p = spawn(cpuFile ? '/usr/bin/time' : cmd, cpuFile ? ['-f', '%U %S', '-o', cpuFile, cmd, ...args] : args, { env, stdio: ['ignore', devNull ? nul : 'pipe', 'pipe'] })
    if (nul !== null) closeSync(nul)
    let out = ''; let err = ''; let truncated = false
    p.stdout?.on('data', b => { out += b })
    p.stderr.on('data', b => { err += b })
    const timer = setTimeout(() => {
      truncated = true
      try { for (const c of readFileSync(`/proc/${p.pid}/task/${p.pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean)) process.kill(Number(c), 'SIGKILL') } catch {}
      setTimeout(() => { if (p.exitCode === null) p.kill('SIGKILL') }, 3000).unref()
    }, limitS * 1000)
    p.on('error', reject)
    p.on('close', code => {
      clearTimeout(timer)
      const ms = performance.now() - t0
      let cpuS = NaN
      if (cpuFile) {
        try { const m = /(\d+\.\d+) (\d+\.\d+)\s*$/.exec(readFileSync(cpuFile, 'utf8')); if (m) cpuS = Number(m[1]) + Number(m[2]) } catch {}
        rmSync(cpuFile, { force: true })
      }
      if (code !== 0 && !truncated) return reject(new Error(`${path.basename(args[0] ?? cmd)} ${args.slice(1, 3).join(' ')} … exited with ${code}: ${err.trim().slice(-500)}`))
      resolve({ ms, cpuS, stdout: out, truncated })
    })
  })
}

const grantArgs = g => g ? ['--grant', g.file, '--grant-key', g.keyFile] : []

/** The two readers of part 1, each one run: MB/s and the process's CPU. g: the grant files, or null. */
const READERS = [
  {
    name: 'library, createReadStream',
    run: async ({ addr, g, ca, limitS, size }) => {
      const r = await timed(process.execPath, [READER, addr, '/big.bin', '--limit-s', String(limitS), '--client', clientDir(), ...grantArgs(g)], { limitS: limitS + 30, env: envWith(ca) })
      const j = JSON.parse(r.stdout.trim().split('\n').pop())
      if (!j.truncated && j.bytes !== size) throw new Error(`library read ${j.bytes} of ${size} bytes`)
      return { rate: j.truncated ? NaN : mbps(j.bytes, j.totalMs), cpuS: r.cpuS, tokens: j.tokens ?? 0 }
    }
  },
  {
    name: 'rotree cat',
    run: async ({ addr, g, ca, limitS, size, stateDir }) => {
      const r = await timed(process.execPath, [BIN, 'cat', addr, '/big.bin', '--state-dir', stateDir, ...grantArgs(g)], { limitS, devNull: true, env: envWith(ca) })
      return { rate: r.truncated ? NaN : mbps(size, r.ms), cpuS: r.cpuS }
    }
  }
]
const envWith = ca => ca ? { ...process.env, NODE_EXTRA_CA_CERTS: ca } : process.env

/** A folder, a key, a holder with a grant for 1 day, the edge secret. */
async function gatedSetup (label, writeSrc) {
  const dir = await tmpdir(`rotree-bench-${label}-`)
  const src = path.join(dir, 'src'); const out = path.join(dir, 'out')
  await writeSrc(src)
  const key = makeKey()
  await build({ src, out, key, ttlMs: 30 * DAY, fsync: false })
  const keyFile = path.join(dir, 'holder.key')
  const { publicKey } = await writeKeyFile(keyFile)
  const now = Date.now()
  const grant = signGrant(unsignedGrant({ anchor: key.publicKey, holder: publicKey, issued: new Date(now - 60e3).toISOString(), expires: new Date(now + DAY).toISOString() }), [key.secretKey])
  const file = path.join(dir, 'grant.json')
  await fs.writeFile(file, encodeGrant(grant))
  const secretFile = path.join(dir, 'edge.secret')
  execFileSync(process.execPath, [BIN, 'grant', 'secret', secretFile], { stdio: 'ignore' })
  return { dir, out, key, g: { file, keyFile }, secretFile, secret: await readSecret(secretFile), cleanup: () => fs.rm(dir, { recursive: true, force: true }) }
}

/** A `rotree` subcommand as a server of its own: { port, pid, stop }. */
async function startChild (args) {
  const port = await freePort()
  const proc = spawn(process.execPath, [BIN, ...args, '--port', String(port), '--host', '127.0.0.1'], { stdio: 'ignore' })
  await waitPort(port, proc)
  return {
    port,
    url: `http://127.0.0.1:${port}/`,
    pid: proc.pid,
    stop: () => new Promise(resolve => {
      if (proc.exitCode !== null) return resolve()
      proc.once('exit', resolve); proc.kill('SIGTERM')
      setTimeout(() => proc.kill('SIGKILL'), 3000).unref()
    })
  }
}

/** reps rounds of each reader on both edges, the order swapped each round. */
async function alternate ({ reps, addrs, ...o }) {
  const out = Object.fromEntries(READERS.map(r => [r.name, { plain: [], gated: [] }]))
  for (let i = 0; i < reps; i++) {
    for (const r of READERS) {
      for (const w of i % 2 ? ['gated', 'plain'] : ['plain', 'gated']) {
        out[r.name][w].push(await r.run({ ...o, addr: addrs[w], g: w === 'gated' ? o.g : null, stateDir: path.join(o.stateDir, w) }))
      }
    }
  }
  return out
}

/** Part 1: 256 MiB from nginx, gated against plain, loopback and through the link. */
async function readRows ({ quick, add, raw, relay }) {
  const size = (quick ? 32 : 256) * 2 ** 20
  const t = await gatedSetup('p18-read', async src => { await fs.mkdir(src, { recursive: true }); await fs.writeFile(path.join(src, 'big.bin'), prng(size, 'p18')) })
  const stops = []
  try {
    const tokens = await startChild(['token-server', '--grants', t.secretFile, '--tree', t.out])
    stops.push(tokens.stop)
    const cert = await makeCert(path.join(t.dir, 'tls'))
    const servers = {
      plain: await startNginxTree(t.out, { tls: cert }),
      gated: await startNginxTree(t.out, { tls: cert, gated: { secretFile: t.secretFile, tokenUpstream: `127.0.0.1:${tokens.port}` } })
    }
    for (const s of Object.values(servers)) stops.push(s.stop)
    const common = { g: t.g, limitS: 90, size, stateDir: path.join(t.dir, 'state') }
    const addr = origin => `${origin}#${t.key.publicKey}`
    raw.size = size
    raw.loopback = await alternate({ ...common, reps: quick ? 1 : 3, addrs: { plain: addr(servers.plain.url), gated: addr(servers.gated.url) }, ca: null })
    for (const r of READERS) add(`loopback, HTTP/1.1: ${r.name}`, raw.loopback[r.name], null)
    raw.link = {}
    for (const p of PROTOCOLS) {
      const links = {}
      try {
        for (const w of ['plain', 'gated']) links[w] = await linkTo({ nginx: servers[w], tls: p.tls, ...LINK })
        raw.link[p.name] = await alternate({ ...common, reps: quick ? 1 : 5, addrs: { plain: addr(links.plain.origin), gated: addr(links.gated.origin) }, ca: p.tls ? cert.cert : null })
        for (const r of READERS) add(`${p.name}, RTT ${LINK.rttMs} ms, 1 Gbit/s: ${r.name}`, raw.link[p.name][r.name], READ_TARGET)
        for (const w of ['plain', 'gated']) relay.push(await links[w].stats())
      } finally { for (const l of Object.values(links)) await l.stop() }
    }
  } finally {
    for (const s of stops.reverse()) await s()
    await t.cleanup()
  }
}

/** A source of n files of 17,000 bytes (above INLINE_MAX_V2: each one blob), compressible but each different. */
async function manySmall (src, n) {
  const per = 500
  for (let d = 0; d < Math.ceil(n / per); d++) {
    const dir = path.join(src, `d${String(d).padStart(4, '0')}`)
    await fs.mkdir(dir, { recursive: true })
    const jobs = []
    for (let i = d * per; i < Math.min(n, (d + 1) * per); i++) {
      const head = Buffer.from(`file ${i}\n`)
      jobs.push(fs.writeFile(path.join(dir, `f${i}.txt`), Buffer.concat([head, Buffer.alloc(17000 - head.length, 0x61)])))
    }
    await Promise.all(jobs)
  }
}

/** Part 2: rotree serve's CPU per request, gated against not, alternated rounds of autocannon. */
async function serveCpu ({ t, quick, raw }) {
  const hashes = (await fs.readdir(path.join(t.out, 'h'))).filter(h => /^[0-9a-f]{64}$/.test(h)).slice(0, 2000)
  const token = mintToken({ secret: t.secret, tree: (await gatedTree(t.out)).id, expires: Math.floor(Date.now() / 1000) + 3600 })
  // as readers ask (client-js/src/net/gated-transport.js): the token in the query, none to an ungated edge
  const requests = { plain: hashes.map(h => ({ method: 'GET', path: `/h/${h}` })), gated: hashes.map(h => ({ method: 'GET', path: `/h/${h}?rotree_token=${token}` })) }
  const runs = { plain: [], gated: [] }
  const durationS = quick ? 2 : 6
  for (let i = 0; i < (quick ? 1 : 6); i++) {
    for (const w of i % 2 ? ['gated', 'plain'] : ['plain', 'gated']) {
      const srv = await startChild(['serve', t.out, ...(w === 'gated' ? ['--grants', t.secretFile, '--access-log', 'off'] : [])])
      try {
        // a warm-up second, then the measured window
        await autocannon({ url: srv.url, connections: 8, duration: 1, requests: requests[w] })
        const c0 = cpuOf([srv.pid]); const t0 = performance.now()
        const r = await autocannon({ url: srv.url, connections: 8, duration: durationS, requests: requests[w] })
        const cpu = cpuOf([srv.pid]) - c0; const wall = (performance.now() - t0) / 1000
        if (r.non2xx || r.errors) throw new Error(`serve ${w}: ${r.non2xx} non-2xx, ${r.errors} errors under load`)
        runs[w].push({ cpuPerReqUs: cpu / r.requests.total * 1e6, rps: r.requests.total / wall, share: cpu / wall })
      } finally { await srv.stop() }
    }
  }
  raw.serve = { blobs: hashes.length, durationS, runs }
  return runs
}

/** Part 3: one `rotree get --grant` of the whole tree; the POSTs the edge answered and the blobs it served. */
async function tokenCount ({ t, ttlS, limitS }) {
  let posts = 0; let blobs = 0
  const srv = await createRotreeServer({
    dir: t.out,
    gate: { secret: t.secret, ttlS, accessLog: l => { if (/ GET \/h\/[0-9a-f]{64} 200 /.test(l)) blobs++ } },
    log: { info: l => { if (l.startsWith('rotree: token for')) posts++ }, error: () => {} }
  })
  const { url } = await srv.listen({ port: 0, host: '127.0.0.1' })
  const dest = await fs.mkdtemp(path.join(existsSync('/dev/shm') ? '/dev/shm' : t.dir, 'rotree-bench-p18-'))
  try {
    const r = await timed(process.execPath, [BIN, 'get', `${url}#${t.key.publicKey}`, '/', '-o', path.join(dest, 'got'), '--state-dir', path.join(t.dir, `state-${ttlS}`), ...grantArgs(t.g)], { limitS })
    return { ttlS, posts, blobs, s: r.ms / 1000, truncated: r.truncated }
  } finally {
    await srv.close({ timeoutMs: 1000 })
    await fs.rm(dest, { recursive: true, force: true })
  }
}

export async function run ({ quick = false } = {}) {
  const miss = missing('nginx', 'openssl')
  if (miss) return skipped(id, miss)
  const rows = []; const raw = {}; const relay = []; const judged = []
  const add = (label, runs, target) => {
    const value = median(runs.gated.map(r => r.rate)); const baseline = median(runs.plain.map(r => r.rate))
    rows.push({ label, value, baseline, baselineLabel: 'the same read, plain nginx-config, no grant', unit: 'MB/s' })
    if (target) judged.push({ label, ratio: value / baseline, target, higher: true })
  }
  await readRows({ quick, add, raw, relay })
  // the many-small-blobs tree: parts 2 and 3
  const n = quick ? 5000 : 100_000
  const b0 = performance.now()
  const t = await gatedSetup('p18-many', src => manySmall(src, n))
  raw.many = { files: n, blobs: (await fs.readdir(path.join(t.out, 'h'))).length, buildS: (performance.now() - b0) / 1000 }
  try {
    const s = await serveCpu({ t, quick, raw })
    const v = median(s.gated.map(r => r.cpuPerReqUs)); const b = median(s.plain.map(r => r.cpuPerReqUs))
    rows.push({ label: `rotree serve, CPU per request (${raw.serve.blobs.toLocaleString('en-US')} blobs of ~100 bytes, autocannon, 8 connections)`, value: v, baseline: b, baselineLabel: 'rotree serve without --grants', unit: 'µs' })
    judged.push({ label: 'rotree serve CPU per request', ratio: v / b, target: CPU_TARGET, higher: false })
    // part 3: the default lifetime (10 min), then a short one (80 s: renewed 10 s before expiry, every ~70 s), then 20 s (renewed every 17.5 s)
    const counts = raw.tokens = []
    counts.push(await tokenCount({ t, ttlS: 600, limitS: quick ? 120 : 300 }))
    counts.push(await tokenCount({ t, ttlS: 80, limitS: quick ? 120 : 300 }))
    counts.push(await tokenCount({ t, ttlS: 20, limitS: quick ? 15 : 30 }))
    for (const c of counts) {
      // gatedTransport renews min(RENEW_BEFORE_MS, RENEW_FRACTION of the lifetime) before expiry
      const every = c.ttlS - Math.min(RENEW_BEFORE_MS / 1000, c.ttlS * RENEW_FRACTION)
      const want = Math.floor(c.s / every) + 1
      const expect = c.ttlS >= 600 ? 1 : Math.floor(c.s / c.ttlS) + 1
      // the label is the same in the idle and the loaded run (the report pairs rows by it); what the read was, in the note
      rows.push({ label: `POSTs to /.rotree/token, rotree get, token lifetime ${c.ttlS} s`, value: c.posts, baseline: expect, baselineLabel: c.ttlS >= 600 ? 'one per reader' : 'read time / lifetime + 1', unit: 'POSTs', note: `(a get of ${c.blobs.toLocaleString('en-US')} blobs in ${c.s.toFixed(1)} s${c.truncated ? ', stopped at the limit' : ''})` })
      c.renewModel = want
      judged.push({ label: `token POSTs, lifetime ${c.ttlS} s`, ratio: c.posts / expect, target: 1, higher: false })
    }
  } finally { await t.cleanup() }
  const short = judged.filter(j => j.higher ? !(j.ratio >= j.target) : !(j.ratio <= j.target))
  return {
    id,
    title: `gated tree (grants, edge tokens) against the same tree ungated: read of ${raw.size >> 20} MiB, the edge's CPU, token requests`,
    command: `npm run bench${quick ? ':quick' : ''} -- P18`,
    target: `a gated read ≥ ${READ_TARGET}× the same read ungated at RTT 50 ms, 1 Gbit/s; rotree serve's CPU per request gated ≤ ${CPU_TARGET}× ungated; one token request per reader per token lifetime (reads/lifetime + 1)`,
    met: short.length === 0,
    // what missed, with the spread behind it (kept for the loaded run too: bench/lib/report.js)
    short: short.map(j => `${j.label} (${j.ratio.toFixed(3)}×, target ${j.higher ? '≥' : '≤'} ${j.target}×${spreadOf(j, raw)})`).join('; ') || undefined,
    rows,
    raw,
    cpu: cpuRows(raw),
    notes: notes({ raw, quick, relay }),
    gap: short.length ? `Short of the target in this run: ${short.map(j => `${j.label} (${j.ratio.toFixed(3)}×, target ${j.higher ? '≥' : '≤'} ${j.target}×)`).join('; ')}. ${whyShort(short, raw)}` : undefined
  }
}

/** The readers' CPU beside the table: the HTTP/1.1 link rows, gated and plain. */
function cpuRows (raw) {
  const rows = []
  const l = raw.link?.['HTTP/1.1']
  if (!l) return null
  const mib = raw.size / 2 ** 20
  for (const r of READERS) {
    for (const w of ['plain', 'gated']) rows.push({ label: `${r.name}, ${w}, HTTP/1.1 link`, files: 1, requests: null, mib, cpuS: median(l[r.name][w].map(x => x.cpuS)) })
  }
  return { note: `each reader's whole process (GNU time), start-up included, median of the link rounds. ${cpuNote() ?? ''}`.trim(), rows }
}

function notes ({ raw, quick, relay }) {
  const s = raw.serve; const m = raw.many
  const med = (w, k) => median(s.runs[w].map(r => r[k]))
  return [
    `The read rows: ${raw.size >> 20} MiB of pseudo-random bytes in one file, one published folder (builder/build.js, format 2, a single-key tree) served by two nginx (1 worker each): \`rotree nginx-config OUT --full\` and \`rotree nginx-config OUT --full --gated SECRETFILE --token-upstream\` with \`rotree token-server --grants SECRETFILE --tree OUT\` behind it (secure_link checks each h/ request's token; the first POST /.rotree/token goes through nginx to the token-server). Each read is its own process: \`rotree cat ADDR /big.bin [--grant GRANT --grant-key KEYFILE] > /dev/null\`, and bench/lib/reader.js (openTree(), createReadStream(); with --grant it wraps the transport with gatedTransport as the CLI does); times include Node's start-up for the CLI and openTree() for both, and for the gated reads the token exchange. Median of ${quick ? 1 : 3} rounds on loopback and ${quick ? 1 : 5} through the link, each reading both edges with each reader, the order swapped each round; loopback rows are shown, not judged. The library's gated reads asked for ${[...new Set(Object.values(raw.link ?? {}).flatMap(p => p['library, createReadStream'].gated.map(r => r.tokens)))].join(' or ')} token(s) each.`,
    `The link rows: bench/lib/link.js in front of each nginx (${LINK.mbit} Mbit/s, RTT ${LINK.rttMs} ms, TCP windows as in P3w and P15), over HTTP/1.1 and HTTPS (TLS 1.3, a certificate made at bench time; nginx offers h2, the reader takes HTTP/1.1 over TLS, its default since 2026-12-07). ${relayNote(relay)}`,
    `The CPU row: a folder of ${m.files.toLocaleString('en-US')} files of 17,000 bytes (each above INLINE_MAX_V2, so one blob, deflated to ~100 bytes; ${m.blobs.toLocaleString('en-US')} blobs with the directory pages, built in ${m.buildS.toFixed(0)} s) served by \`rotree serve OUT\` and by \`rotree serve OUT --grants SECRETFILE --access-log off\`, each started fresh per round; autocannon (in the bench process) with 8 connections cycles GET /h/<hash> over ${s.blobs.toLocaleString('en-US')} blobs, to the gated server every request with the same valid token in its query (?rotree_token=, as readers send it: client-js/src/net/gated-transport.js), to the ungated one none; once a blob is in the memory cache both servers answer it from serve's lean front (server/fast-front.js; until 2026-12-07 every request went through node:http, with the token in an X-Rotree-Token header); a 1 s warm-up and then ${s.durationS} s measured; the server's CPU from /proc/<pid>/stat over that window, over the requests answered (all 200). Median of ${s.runs.gated.length} rounds of each, alternated: ${med('plain', 'rps').toFixed(0)} req/s ungated, ${med('gated', 'rps').toFixed(0)} gated, the server using ${med('plain', 'share').toFixed(2)} and ${med('gated', 'share').toFixed(2)} of a core (below ~0.85 autocannon, sharing 2 cores with it, was the limit, not the server).`,
    `The token rows: \`rotree get ADDR / -o DEST --grant GRANT --grant-key KEYFILE\` of the whole ${m.files.toLocaleString('en-US')}-file tree into /dev/shm, from \`rotree serve\`'s gate (createRotreeServer with gate: { secret, ttlS }) in the bench process, which counts its POST /.rotree/token answers (its log line per token minted) and its 200s to GET /h/…. Lifetimes: the default 10 min (${quick ? '' : 'the whole read inside one token: '}target 1), 80 s and 20 s (target: read time / lifetime + 1). The client renews a token min(60 s, an eighth of its lifetime) before it expires, one exchange per mirror however many requests wait (client-js/src/net/gated-transport.js): with an 80 s lifetime every ~70 s, with 20 s every ~17.5 s; until 2026-12-07 a quarter, every ~60 s and ~15 s (${raw.tokens.map(c => c.ttlS < 600 ? `${c.ttlS} s: that model says ${c.renewModel} for this read` : '').filter(Boolean).join(', ')}); the 20 s read is stopped at ${quick ? 15 : 30} s. The first exchange starts as the tree is opened, beside fsinfo.json (gatedTransport's preconnect); until 2026-12-07 it waited for the first blob request.`,
    runContext()
  ]
}

/** A judged row's rounds, where they say more than its median: serve's CPU per request. */
function spreadOf (j, raw) {
  if (!j.label.startsWith('rotree serve') || !raw.serve) return ''
  const share = median(raw.serve.runs.gated.map(x => x.share))
  return `; per round ${serveSpan(raw, 'plain', 1)} µs ungated, ${serveSpan(raw, 'gated', 1)} µs gated, the server on ${share.toFixed(2)} of a core`
}

/** serve's CPU per request over one side's rounds ('plain' or 'gated'): "min-max", µs. */
function serveSpan (raw, side, digits) {
  const xs = raw.serve.runs[side].map(x => x.cpuPerReqUs)
  return `${Math.min(...xs).toFixed(digits)}-${Math.max(...xs).toFixed(digits)}`
}

function whyShort (short, raw) {
  const out = []
  const t20 = raw.tokens?.find(c => c.ttlS === 20)
  if (short.some(j => j.label.includes('lifetime 20 s')) && t20) {
    out.push(`With a 20 s token the reader asked for ${t20.posts.toLocaleString('en-US')} tokens in ${t20.s.toFixed(1)} s (${t20.blobs.toLocaleString('en-US')} blobs): the model of a renewal every 17.5 s says ${t20.renewModel}; ` +
      (t20.posts <= t20.renewModel
        ? `the read outlasted a renewal, an eighth of the token's life before it expires, and ended before a renewal at expiry would have been due: the reader renews early so that no request in flight meets an expired token (an edge whose clock runs ahead of the reader's would otherwise refuse them), and pays one exchange more in a read that ends in a token's last eighth.`
        : 'the excess is exchanges that a renewal\'s round trip leaves outstanding when a read of many requests in flight crosses it.'))
  }
  const t80 = raw.tokens?.find(c => c.ttlS === 80)
  if (short.some(j => j.label.includes('lifetime 80 s')) && t80) out.push(`With an 80 s token the reader asked ${t80.posts} times in ${t80.s.toFixed(0)} s, where a renewal every lifetime would be ${Math.floor(t80.s / 80) + 1}: it renews an eighth of a short token's life early (every ~70 s, ${t80.renewModel} by that model), so a read that ends just past a renewal asks once more than read time / lifetime + 1.`)
  const spread = runs => { const xs = runs.map(r => r.rate).filter(Number.isFinite); return `${Math.min(...xs).toFixed(0)}-${Math.max(...xs).toFixed(0)}` }
  const reads = short.filter(j => j.label.includes('RTT'))
  if (reads.length) {
    const parts = []
    for (const [p, rows] of Object.entries(raw.link ?? {})) for (const [name, runs] of Object.entries(rows)) parts.push(`${p} ${name}: plain ${spread(runs.plain)}, gated ${spread(runs.gated)} MB/s`)
    out.push(`Single link runs on this shared machine: ${parts.join('; ')}. The gated reader's fixed costs, measured apart (2026-12-07, load average ~11): importing gatedTransport, the grant modules and builder/keys.js and loading undici for the first fetch, 40-50 ms of CPU, then the exchange itself (its own connection and the token-server's check of the grant; since 2026-12-07 it runs while fsinfo.json is read, where before the first blob waited two round trips for it, three over TLS); each blob URL then carries ?rotree_token= (a longer request line). On loopback (128 MiB from nginx, 3 alternated reads of each, same day) the gated library read used 554-750 ms of reader CPU against 446-564 ms, and read at 133-258 MB/s against 272-276 MB/s; a --cpu-prof of one of each was too perturbed by the machine's load to place the rest (SHA-256 of the same 128 MiB took 165 ms of samples in one and 289 ms in the other).`)
  }
  if (short.some(j => j.label.includes('CPU per request'))) {
    out.push(`rotree serve's CPU per request moved over ${serveSpan(raw, 'plain', 0)} µs ungated and ${serveSpan(raw, 'gated', 0)} µs gated in this run's rounds, so the median of ${raw.serve.runs.plain.length} rounds moves with the machine: six runs of this figure on 2026-12-07 gave 0.97× and 1.10× idle before the change below, and 0.98×, 0.91×, 1.13× and 0.97× after it (those four with the last passed token remembered apart, ~0.12 µs a check, before it became this lookup). Both servers answer from serve's lean front (server/fast-front.js); per request the gated one also finds the token in the query, slices it out (a string of ~35 characters) and checks it (server/edge-token.js checkToken): since 2026-12-07 a token that passed is looked up under the token itself, not under a key built from tree, secret and token (~0.15 µs against ~1 µs a check, a microbenchmark of 2e6 checks of a token sliced from a request's bytes), and a token's MD5 is computed once, when it first passes. A --cpu-prof of the gated server under this row's load, taken the same day before the fast front and before tokens were remembered, placed ~9 µs of the gated extra in the MD5, checkToken's regular expression, gate.blob and garbage collection: the first two now run once per token, and gate.blob is not on the fast front's path.`)
  }
  return out.join(' ')
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const fig = await run({ quick: process.argv.includes('--quick') })
  if (fig.skipped) { console.log(`${fig.id} skipped: ${fig.skipped}`); process.exit(0) }
  const { figureMarkdown } = await import('./lib/report.js')
  console.log(figureMarkdown(fig))
  console.log(JSON.stringify(fig.raw))
  process.exit(0)
}

#!/usr/bin/env node
// One verified read through the client library, in its own process (so it can
// trust a certificate made at bench time through NODE_EXTRA_CA_CERTS, and so
// the bench process does not share its event loop). Prints one JSON line:
//   { openMs, firstMs, totalMs, bytes, truncated, requests, cpuMs[, mem] }
// times from just before openTree() (firstMs: the stream's first chunk).
// --mem adds mem: { before, peak } (VmRSS and RssAnon in bytes from
// /proc/self/status, before the read and its highest, sampled every 50 ms).
// --lend reads with readRange({ lend: true }) and gives each piece back
// (release) once counted, where the default reads createReadStream().
// --grant FILE --grant-key KEYFILE reads a gated tree (FORMAT.md §12.11) as
// `rotree cat --grant --grant-key` does, through gatedTransport, and adds
// tokens: the POSTs to /.rotree/token it made.
//
//   node bench/lib/reader.js ADDR PATH… [--mirror URL]… [--limit-s N] [--first] [--mem] [--lend] [--client DIR] [--opt JSON] [--grant FILE --grant-key KEYFILE]
//   PATH…: one file, or several read one after another through the same tree
//   --client DIR: a checkout whose client-js/src/index.js is used (default: this one)
//   --opt JSON: more openTree() options, e.g. '{"concurrency":16}'
import path from 'node:path'
import { readFileSync } from 'node:fs'
import { pathToFileURL } from 'node:url'

const argv = process.argv.slice(2)
const pos = []; const mirrors = []; let limitS = Infinity; let firstOnly = false; let memory = false; let lend = false
let client = new URL('../../', import.meta.url).pathname; let extra = {}; let grantFile = null; let grantKey = null
for (let i = 0; i < argv.length; i++) {
  const a = argv[i]
  if (a === '--mirror') mirrors.push(argv[++i])
  else if (a === '--limit-s') limitS = Number(argv[++i])
  else if (a === '--first') firstOnly = true
  else if (a === '--mem') memory = true
  else if (a === '--lend') lend = true
  else if (a === '--client') client = argv[++i]
  else if (a === '--opt') extra = JSON.parse(argv[++i])
  else if (a === '--grant') grantFile = argv[++i]
  else if (a === '--grant-key') grantKey = argv[++i]
  else pos.push(a)
}
const [addr, ...files] = pos
const { openTree } = await import(pathToFileURL(path.join(client, 'client-js/src/index.js')).href)

let tokens = null
if (grantFile) {
  // as cli/common.js gatedReader: both files read when the first token is asked for
  const from = p => import(pathToFileURL(path.join(client, p)).href)
  const [{ gatedTransport }, { decodeGrant }, { readKeyFile }] = await Promise.all([from('client-js/src/net/gated-transport.js'), from('client-js/src/format/grant.js'), from('builder/keys.js')])
  tokens = 0
  const counting = (u, init) => { tokens++; return fetch(u, init) }
  extra.wrapTransport = inner => gatedTransport(inner, { grant: async () => decodeGrant(readFileSync(grantFile)), secretKey: async () => (await readKeyFile(grantKey)).secretKey, fetch: counting })
}
const cpu0 = process.cpuUsage()
const t0 = performance.now()
const tree = await openTree(addr, { stateDir: null, mirrors, ...extra })
const openMs = performance.now() - t0
let firstMs = null; let bytes = 0; let truncated = false
const deadline = t0 + limitS * 1000
const memNow = () => {
  const st = readFileSync('/proc/self/status', 'utf8')
  const kb = k => Number(new RegExp(`${k}:\\s+(\\d+) kB`).exec(st)?.[1] ?? NaN) * 1024
  return { rss: kb('VmRSS'), anon: kb('RssAnon') }
}
const mem = memory ? { before: memNow(), peak: memNow() } : null
const sampler = mem && setInterval(() => { const m = memNow(); mem.peak.rss = Math.max(mem.peak.rss, m.rss); mem.peak.anon = Math.max(mem.peak.anon, m.anon) }, 50)
read: for (const file of files) {
  for await (const b of lend ? tree.readRange(file, { lend: true }) : tree.createReadStream(file)) {
    const now = performance.now()
    if (firstMs === null) firstMs = now - t0
    bytes += b.length
    if (lend) tree.release?.(b) // a client from before lent reads has none
    if (firstOnly) break read
    if (now > deadline) { truncated = true; break read }
  }
}
const totalMs = performance.now() - t0
if (sampler) clearInterval(sampler)
const cpu = process.cpuUsage(cpu0)
const requests = tree.transport?.stats?.requests ?? null
tree.close()
process.stdout.write(JSON.stringify({ openMs, firstMs, totalMs, bytes, truncated, requests, cpuMs: (cpu.user + cpu.system) / 1000, ...(tokens !== null ? { tokens } : {}), ...(mem ? { mem } : {}) }) + '\n', () => process.exit(0))

// What an operator sees: every mirror fault on the log (mirror URL without
// credentials, code, path), every root change (sequence, root, expiry), an
// access log line per request, and Prometheus metrics beside the status
// document whose counters move when a mirror lies.
import { needing } from '../helpers/tools.js'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { startLyingServer } from '../helpers/lying-server.js'
import { makeFixture, publishedRoot, startGateway, curl, buildTree, writeTree, tmpdir, prng, address } from './helpers.js'
import { escapeLabel, metricsText, Metrics } from '../../gateway/metrics.js'

const { test, before, after } = needing('curl')

const fx = {}
before(async () => {
  fx.files = { 'hello.txt': 'hello, world\n', 'medium.bin': prng(100 << 10, 'medium'), 'big.bin': prng(3 << 20, 'big') }
  Object.assign(fx, await makeFixture(fx.files))
  fx.work = await tmpdir('rotree-gw-ops-')
})
after(async () => { await fx.cleanup?.(); await fs.rm(fx.work, { recursive: true, force: true }) })

const flip = b => { const c = Buffer.from(b); c[c.length >> 1] ^= 1; return c }

/** A collecting log, as the CLI's stderr lines. */
function lines () {
  const all = []
  return { all, info: m => all.push(m), error: m => all.push(m) }
}

/**
 * The exposition parsed strictly: every sample's family has one HELP and one
 * TYPE line before it, names and labels are well formed. → Map name{labels} → value
 */
function parseExposition (text) {
  assert.ok(text.endsWith('\n'))
  const help = new Set(); const type = new Map(); const samples = new Map()
  for (const line of text.slice(0, -1).split('\n')) {
    let m
    if ((m = /^# HELP ([a-zA-Z_:][a-zA-Z0-9_:]*) .+$/.exec(line))) { assert.ok(!help.has(m[1]), `two HELP lines for ${m[1]}`); help.add(m[1]); continue }
    if ((m = /^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge)$/.exec(line))) { assert.ok(!type.has(m[1]), `two TYPE lines for ${m[1]}`); type.set(m[1], m[2]); continue }
    m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\["\\n])*",?)*\})? (-?[0-9.e+]+|NaN|[+-]Inf)$/.exec(line)
    assert.ok(m, `not a sample line: ${JSON.stringify(line)}`)
    assert.ok(help.has(m[1]) && type.has(m[1]), `${m[1]} has no HELP/TYPE before its samples`)
    if (type.get(m[1]) === 'counter') assert.match(m[1], /_total$/, 'counters end in _total')
    samples.set(m[1] + (m[2] ?? ''), Number(m[3]))
  }
  return samples
}

test('a lying mirror: each fault logged (redacted URL, code, path), counted in the metrics; bytes and requests counted', async t => {
  const liar = await startLyingServer(fx.out, { blob: (h, b) => b.length > 4096 ? { body: flip(b) } : 'honest' })
  t.after(() => liar.close())
  const honest = await startLyingServer(fx.out)
  t.after(() => honest.close())
  const withCreds = liar.url.replace('http://', 'http://op:s3cret@')
  const log = lines()
  const gw = await startGateway(t, { tree: address(withCreds, fx.pk), mirrors: [honest.url], log, mirrorPenaltyMs: 1, cacheDir: path.join(fx.work, 'cache') })

  const before = parseExposition((await curl(gw.url + '.well-known/rotree/metrics')).body.toString())
  const r = await curl(gw.url + 'medium.bin')
  assert.equal(r.status, 200)
  assert.ok(r.body.equals(fx.files['medium.bin']))
  assert.equal((await curl(gw.url + 'hello.txt')).status, 200)
  assert.equal((await curl(gw.url + 'nothing-here')).status, 404)

  const m = await curl(gw.url + '.well-known/rotree/metrics')
  assert.equal(m.status, 200)
  assert.equal(m.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8')
  assert.equal(m.headers['cache-control'], 'no-store')
  const text = m.body.toString()
  assert.ok(!text.includes('s3cret'), 'no credentials in the metrics')
  const after = parseExposition(text)
  const fault = `rotree_gateway_mirror_faults_total{tree="/",mirror="${liar.url}",code="ROTREE_HASH_MISMATCH"}`
  assert.ok(after.get(fault) >= 1, `${fault} in\n${text}`)
  assert.equal(before.get(fault) ?? 0, 0)
  assert.ok(after.get('rotree_gateway_requests_total{method="GET",status="200"}') >= 2)
  assert.equal(after.get('rotree_gateway_requests_total{method="GET",status="404"}'), 1)
  assert.equal(after.get('rotree_gateway_verified_bytes_total{tree="/"}'), fx.files['medium.bin'].length + fx.files['hello.txt'].length)
  assert.ok(after.get('rotree_gateway_root_expiry_seconds{tree="/"}') > 3000, 'the root expires in about an hour')
  assert.ok(after.get('rotree_gateway_root_age_seconds{tree="/"}') >= 0)
  assert.ok(after.get('rotree_gateway_cache_misses_total{cache="memory",tree="/"}') > (before.get('rotree_gateway_cache_misses_total{cache="memory",tree="/"}') ?? 0))
  assert.ok(after.has('rotree_gateway_cache_hits_total{cache="disk",tree=""}'))
  assert.ok(after.get('rotree_gateway_cache_misses_total{cache="disk",tree=""}') >= 1)

  const faultLines = log.all.filter(l => l.includes('mirror fault'))
  assert.ok(faultLines.length >= 1, log.all.join('\n'))
  const blob = (await import('node:crypto')).createHash('sha256').update(fx.files['medium.bin']).digest('hex') // one chunk: named by its bytes
  assert.match(faultLines[0], new RegExp(`^rotree gateway: /: mirror fault: ${liar.url.replace(/[.]/g, '\\.')} ROTREE_HASH_MISMATCH h/${blob.slice(0, 16)}`))
  assert.ok(log.all.every(l => !l.includes('s3cret')), 'no credentials on the log')

  // the status document agrees
  const status = JSON.parse((await curl(gw.url + '.well-known/rotree/status')).body)
  assert.ok(status.trees[0].mirrors.find(x => x.url === liar.url).failed >= 1)
})

test('a root change is logged with its sequence, root and expiry, and counted', async t => {
  const f = await makeFixture({ 'a.txt': 'one\n' })
  t.after(f.cleanup)
  const mirror = await startLyingServer(f.out)
  t.after(() => mirror.close())
  const log = lines()
  const gw = await startGateway(t, { tree: address(mirror.url, f.pk), log })
  // either format: the root page's handle, fsinfo.json's seq and expiry (FORMAT.md §6, §12.4)
  const first = await publishedRoot(f.out)
  assert.ok(log.all.some(l => l === `rotree gateway: /: root change: sequence ${first.seq}, root ${first.root.hash}, expires ${first.info.expires} (from ${mirror.url})`), log.all.join('\n'))
  await writeTree(f.src, { 'a.txt': 'two\n' })
  const { result } = await buildTree(f.src, { key: f.key, out: f.out })
  const next = await publishedRoot(f.out)
  assert.equal(next.seq, result.seq)
  assert.equal(await gw.gateway.gateway.mounts[0].refresh(), true)
  assert.ok(log.all.some(l => l.startsWith(`rotree gateway: /: root change: sequence ${result.seq}, root ${next.root.hash}, expires ${next.info.expires}`)), log.all.join('\n'))
  const after = parseExposition(gw.gateway.gateway.metricsText())
  assert.equal(after.get('rotree_gateway_root_changes_total{tree="/"}'), 2)
  assert.equal(after.get('rotree_gateway_root_seq{tree="/"}'), result.seq)
})

test('the access log: one combined-format line per request, client text escaped, to a file', async t => {
  const mirror = await startLyingServer(fx.out)
  t.after(() => mirror.close())
  const file = path.join(fx.work, 'access.log')
  const gw = await startGateway(t, { tree: address(mirror.url, fx.pk), accessLog: file })
  await curl(gw.url + 'hello.txt', ['-A', 'agent "quoted"\\x', '-e', 'https://ref.example/'])
  await curl(gw.url + 'nothing-here')
  await curl(gw.url + 'hello.txt', ['-I'])
  await curl(gw.url + 'hello.txt', ['-X', 'PUT', '--data-binary', 'x'])
  await gw.close()
  const got = (await fs.readFile(file, 'utf8')).split('\n').filter(Boolean)
  assert.equal(got.length, 4, got.join('\n'))
  const seq = JSON.parse(await fs.readFile(path.join(fx.out, 'fsinfo.json'), 'utf8')).seq
  const LINE = /^127\.0\.0\.1 - - \[\d\d\/[A-Z][a-z]{2}\/\d{4}:\d\d:\d\d:\d\d \+0000\] "([^"]*)" (\d{3}) (\d+) "([^"]*)" "([^"]*)" (\d+\.\d{3}) (\S+) (\S+)$/
  const [a, b, c, d] = got.map(l => { const m = LINE.exec(l); assert.ok(m, l); return m })
  assert.deepEqual([a[1], a[2], a[3], a[4], a[5], a[7], a[8]], ['GET /hello.txt HTTP/1.1', '200', '13', 'https://ref.example/', 'agent \\x22quoted\\x22\\x5cx', String(seq), '-'])
  assert.deepEqual([b[1], b[2], b[8]], ['GET /nothing-here HTTP/1.1', '404', 'ROTREE_NOT_FOUND'])
  assert.deepEqual([c[1], c[2], c[3]], ['HEAD /hello.txt HTTP/1.1', '200', '0'])
  assert.deepEqual([d[1], d[2]], ['PUT /hello.txt HTTP/1.1', '405'])
})

test('label values and help text are escaped as the exposition format says', () => {
  assert.equal(escapeLabel('a"b\\c\nd'), 'a\\"b\\\\c\\nd')
  const m = new Metrics()
  m.faults.inc({ tree: '/', mirror: 'http://x/"} 1\nforged_total 9', code: 'ROTREE_TIMEOUT' })
  const text = metricsText(m, { trees: [], disk: null, nowMs: 0 })
  assert.ok(!/^forged_total/m.test(text), 'no forged sample')
  assert.match(text, /^rotree_gateway_mirror_faults_total\{tree="\/",mirror="http:\/\/x\/\\"} 1\\nforged_total 9",code="ROTREE_TIMEOUT"\} 1$/m)
  parseExposition(text)
})

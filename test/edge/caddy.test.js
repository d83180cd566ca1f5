// Real Caddy from the Caddyfile `caddyConfig` generates: the headers readers
// and caches rely on, only fsinfo.json, h/, trust/ (trust/revoked.json as
// fsinfo.json), history/ and log/ served, every 404 never stored (so a blob
// published after it was asked for is served at once), a new root renamed in within the same second never answered with a
// 304, and the verifying client reading the tree, at / and under a base path.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { createHash } from 'node:crypto'
import { openTree } from 'rotree-client'
import { tmpdir, writeTree, makeKey, buildTree, prng } from '../helpers/fixtures.js'
import { caddyConfig } from '../../server/caddy-config.js'
import { needs, startCaddy, req } from './helpers.js'

const skip = needs('caddy')
const sha = b => createHash('sha256').update(b).digest('hex')

const fx = {}
before(async () => {
  if (skip) return
  fx.dir = await tmpdir('rotree-caddy-test-')
  fx.src = path.join(fx.dir, 'src'); fx.out = path.join(fx.dir, 'out')
  fx.files = { 'a.bin': prng(32 << 10, 'a'), 'big.bin': prng(3 << 20, 'big'), 'index.html': '<h1>hi</h1>\n' }
  await writeTree(fx.src, fx.files)
  fx.key = makeKey()
  ;({ result: fx.result } = await buildTree(fx.src, { key: fx.key, out: fx.out }))
  await fs.mkdir(path.join(fx.out, 'trust'))
  await fs.writeFile(path.join(fx.out, 'trust', '1.json'), '{"type":"rotree-trust"}\n')
  await fs.writeFile(path.join(fx.out, 'h', '.tmp-0123-abcd'), 'half a blob')
  await fs.writeFile(path.join(fx.out, 'unsigned.json'), '{}')
  fx.caddy = await startCaddy(port => caddyConfig({ out: fx.out, listen: `127.0.0.1:${port}`, fsinfoMaxAge: 7, full: true }))
})
after(async () => {
  await fx.caddy?.stop()
  if (fx.dir) await fs.rm(fx.dir, { recursive: true, force: true })
})

test('blobs: octet-stream (never sniffed), immutable, nosniff, ranges, CORS, never compressed', { skip }, async () => {
  const blob = `/h/${fx.result.root}`
  const r = await req(fx.caddy.port, blob, { headers: { 'Accept-Encoding': 'gzip, br, zstd' } })
  assert.equal(r.status, 200)
  assert.ok(r.body.equals(await fs.readFile(path.join(fx.out, 'h', fx.result.root))))
  assert.equal(r.headers['content-type'], 'application/octet-stream')
  assert.equal(r.headers['cache-control'], 'public, max-age=31536000, immutable')
  assert.equal(r.headers['x-content-type-options'], 'nosniff')
  assert.equal(r.headers['access-control-allow-origin'], '*')
  assert.equal(r.headers['content-encoding'], undefined)
  const html = await req(fx.caddy.port, `/h/${sha(Buffer.from(fx.files['a.bin']))}`)
  assert.equal(html.headers['content-type'], 'application/octet-stream')
  const ranged = await req(fx.caddy.port, blob, { headers: { Range: 'bytes=2-9' } })
  assert.equal(ranged.status, 206)
  assert.ok(ranged.body.equals(r.body.subarray(2, 10)))
  const pre = await req(fx.caddy.port, blob, { method: 'OPTIONS', headers: { Origin: 'https://app.example', 'Access-Control-Request-Method': 'GET' } })
  assert.equal(pre.status, 204)
  assert.match(pre.headers['access-control-allow-headers'], /Range/)
  for (const method of ['POST', 'PUT', 'DELETE', 'PROPFIND']) {
    const w = await req(fx.caddy.port, blob, { method })
    assert.equal(w.status, 405, method)
    assert.equal(w.headers.allow, 'GET, HEAD, OPTIONS')
  }
})

test('fsinfo.json: JSON, short lifetime, and no validators: a root renamed in within the same second is never a 304', { skip }, async () => {
  const file = path.join(fx.out, 'fsinfo.json')
  const r = await req(fx.caddy.port, '/fsinfo.json')
  assert.equal(r.status, 200)
  assert.equal(r.headers['content-type'], 'application/json')
  assert.equal(r.headers['cache-control'], 'public, max-age=7')
  assert.equal(r.headers.etag, undefined)
  assert.equal(r.headers['last-modified'], undefined)
  const old = await fs.readFile(file)
  const st = await fs.stat(file)
  const next = Buffer.from(old.toString().replace(/"seq": (\d+)/, (m, n) => `"seq": ${Number(n) + 1}`))
  assert.equal(next.length, old.length)
  await fs.writeFile(file + '.next', next)
  await fs.utimes(file + '.next', st.atime, st.mtime)
  await fs.rename(file + '.next', file)
  try {
    const again = await req(fx.caddy.port, '/fsinfo.json', { headers: { 'If-Modified-Since': st.mtime.toUTCString(), 'If-None-Match': '*' } })
    assert.equal(again.status, 200)
    assert.ok(again.body.equals(next))
  } finally {
    await fs.writeFile(file + '.back', old)
    await fs.rename(file + '.back', file)
  }
})

test('trust/revoked.json (FORMAT.md §12.12), for a gated gateway: cached as fsinfo.json is, no validators, CORS; missing, a 404 no cache keeps', { skip }, async () => {
  const file = path.join(fx.out, 'trust', 'revoked.json')
  const gone = await req(fx.caddy.port, '/trust/revoked.json')
  assert.equal(gone.status, 404)
  assert.equal(gone.headers['cache-control'], 'no-store')
  assert.equal(gone.headers['access-control-allow-origin'], '*')
  const list = Buffer.from('{"type":"rotree-revoked","issued":"2030-01-01T00:00:00Z"}\n') // served as bytes; a gateway verifies
  await fs.writeFile(file, list)
  try {
    const r = await req(fx.caddy.port, '/trust/revoked.json')
    assert.equal(r.status, 200)
    assert.ok(r.body.equals(list))
    assert.equal(r.headers['content-type'], 'application/json')
    assert.equal(r.headers['cache-control'], 'public, max-age=7', 'it changes at every revocation: never immutable')
    assert.equal(r.headers['access-control-allow-origin'], '*')
    assert.equal(r.headers.etag, undefined)
    assert.equal(r.headers['last-modified'], undefined)
    const st = await fs.stat(file)
    const next = Buffer.from(list.toString().replace('2030', '2031'))
    await fs.writeFile(file + '.next', next)
    await fs.utimes(file + '.next', st.atime, st.mtime)
    await fs.rename(file + '.next', file)
    const again = await req(fx.caddy.port, '/trust/revoked.json', { headers: { 'If-Modified-Since': st.mtime.toUTCString(), 'If-None-Match': '*' } })
    assert.equal(again.status, 200)
    assert.ok(again.body.equals(next))
    const pre = await req(fx.caddy.port, '/trust/revoked.json', { method: 'OPTIONS', headers: { Origin: 'https://app.example', 'Access-Control-Request-Method': 'GET' } })
    assert.equal(pre.status, 204)
    for (const p of ['/trust/revoked.json.tmp-1', '/trust/revoked']) assert.equal((await req(fx.caddy.port, p)).status, 404, p)
  } finally { await fs.rm(file, { force: true }) }
})

test('only fsinfo.json, h/<64 hex>, trust/<seq>.json, history/(index|<seq>).json and the log: every other path, and every missing file, is a 404 no cache keeps', { skip }, async () => {
  const trust = await req(fx.caddy.port, '/trust/1.json')
  assert.equal(trust.status, 200)
  assert.equal(trust.headers['content-type'], 'application/json')
  for (const p of [`/history/${fx.result.seq}.json`, '/history/index.json']) {
    const h = await req(fx.caddy.port, p)
    assert.equal(h.status, 200, p)
    assert.equal(h.headers['content-type'], 'application/json', p)
  }
  // the log (docs/FORMAT.md §13): its checkpoint and tiles
  const checkpoint = await req(fx.caddy.port, '/log/checkpoint')
  assert.equal(checkpoint.status, 200)
  assert.equal(checkpoint.headers['content-type'], 'text/plain; charset=utf-8')
  assert.deepEqual(checkpoint.body, await fs.readFile(path.join(fx.out, 'log', 'checkpoint')))
  const proof = await req(fx.caddy.port, '/log/fsinfo.proof') // the tlog-proof of the current fsinfo.json, as the checkpoint
  assert.equal(proof.status, 200)
  assert.equal(proof.headers['content-type'], 'text/plain; charset=utf-8')
  assert.equal(proof.headers['cache-control'], checkpoint.headers['cache-control'])
  assert.deepEqual(proof.body, await fs.readFile(path.join(fx.out, 'log', 'fsinfo.proof')))
  const tiles = (await fs.readdir(path.join(fx.out, 'log', 'tile'), { recursive: true, withFileTypes: true })).filter(e => e.isFile())
  assert.ok(tiles.length > 0, 'the build wrote a log')
  for (const e of tiles) {
    const rel = path.relative(path.join(fx.out, 'log'), path.join(e.parentPath ?? e.path, e.name))
    const t = await req(fx.caddy.port, '/log/' + rel)
    assert.equal(t.status, 200, rel)
    assert.match(t.headers['cache-control'], rel.includes(".p/") ? /max-age=7\b/ : /max-age=86400/, rel)
  }
  const paths = ['/', '/index.html', '/h/', '/h/.tmp-0123-abcd', '/log/', '/log/checkpoint.tmp', '/log/fsinfo.proof.tmp', '/log/fsinfo-proof', '/log/tile/0/1234', '/log/tile/64/000', `/h/${'0'.repeat(64)}`, `/h/${'A'.repeat(64)}`, `/h/${fx.result.root}/`,
    '/history/', `/history/${fx.result.seq + 1}.json`, '/history/01.json', '/.rotree/build-index/CURRENT', '/.rotree-lock', '/unsigned.json',
    '/trust/2.json', '/trust/0.json', '/h/../unsigned.json', '/%2e%2e/unsigned.json', '/h/%2e%2e/unsigned.json']
  // (Caddy matches the decoded path, so /h%2f<hex> is that blob: a spelling of a served path, nothing more)
  for (const p of paths) {
    const r = await req(fx.caddy.port, p)
    assert.equal(r.status, 404, p)
    assert.equal(r.headers['cache-control'], 'no-store', p)
    assert.equal(r.headers['access-control-allow-origin'], '*', p)
    assert.equal(r.headers.etag, undefined, p)
  }
  // asked for before its publish, served right after it
  const later = prng(32 << 10, 'later')
  const blob = `/h/${sha(later)}`
  assert.equal((await req(fx.caddy.port, blob)).status, 404)
  await writeTree(fx.src, { 'later.bin': later })
  // the stand-in trust/1.json above is served as bytes but is no trust document: a build into OUT refuses it
  await fs.rm(path.join(fx.out, 'trust'), { recursive: true })
  await buildTree(fx.src, { key: fx.key, out: fx.out })
  const r = await req(fx.caddy.port, blob)
  assert.equal(r.status, 200)
  assert.ok(r.body.equals(later))
})

test('the verifying client reads the tree through Caddy, at / and under --base /pub/', { skip, timeout: 60_000 }, async t => {
  const tree = await openTree(`${fx.caddy.url}#${fx.key.publicKey}`, { stateDir: null }); t.after(() => tree.close())
  assert.ok(Buffer.from(await tree.readFile('/big.bin')).equals(fx.files['big.bin']))
  const pub = await startCaddy(port => caddyConfig({ out: fx.out, listen: `127.0.0.1:${port}`, base: '/pub/', full: true }))
  t.after(pub.stop)
  assert.equal((await req(pub.port, '/fsinfo.json')).status, 404)
  const sub = await openTree(`${pub.url}pub/#${fx.key.publicKey}`, { stateDir: null }); t.after(() => sub.close())
  assert.equal(Buffer.from(await sub.readFile('/index.html')).toString(), fx.files['index.html'])
})

test('caddyConfig refuses what a Caddyfile cannot take literally', { skip }, () => {
  assert.throws(() => caddyConfig({ out: '/srv/we ird', listen: '8080' }), { code: 'ROTREE_USAGE' })
  assert.throws(() => caddyConfig({ out: '/srv/{x}', listen: '8080' }), { code: 'ROTREE_USAGE' })
  assert.throws(() => caddyConfig({ out: '/srv/x', listen: '1.2.3.4:80 { }' }), { code: 'ROTREE_USAGE' })
  assert.throws(() => caddyConfig({ out: '/srv/x', listen: '8080', base: '/../x/' }), { code: 'ROTREE_USAGE' })
  assert.doesNotMatch(caddyConfig({ out: '/srv/x', listen: '8080' }), /admin off/, 'a site block for the operator\'s own Caddyfile')
})

// A real Varnish edge (the VCL `varnishConfig` generates) in front of a real
// nginx (from `nginx-config --full`): what docs/DEPLOY.md "A CDN in front"
// promises. A blob asked for before its publish is served right after it (no
// 404 kept); a rebuild reaches readers within fsinfo.json's max-age plus the
// edge's grace (by the Age the edge reports on every stale copy), and so does
// a new trust/revoked.json; nothing but fsinfo.json, h/, trust/, history/ and
// log/ reaches the origin; the verifying client reads the tree through the
// edge.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { createHash } from 'node:crypto'
import { execFileSync } from 'node:child_process'
import { openTree } from 'rotree-client'
import { tmpdir, writeTree, makeKey, buildTree, prng } from '../helpers/fixtures.js'
import { varnishConfig } from '../../server/varnish-config.js'
import { needs, startNginx, startVarnish, req } from './helpers.js'

const skip = needs('nginx', 'varnishd')
const MAX_AGE = 2 // fsinfo.json's max-age at the origin, seconds
const GRACE = 2 // the edge's grace for fsinfo.json, seconds

const fx = {}
before(async () => {
  if (skip) return
  fx.dir = await tmpdir('rotree-varnish-test-')
  fx.src = path.join(fx.dir, 'src'); fx.out = path.join(fx.dir, 'out')
  fx.files = { 'a.bin': prng(32 << 10, 'a'), 'big.bin': prng(3 << 20, 'big'), 'docs/readme.txt': 'read me\n' }
  await writeTree(fx.src, fx.files)
  fx.key = makeKey()
  await buildTree(fx.src, { key: fx.key, out: fx.out })
  await fs.mkdir(path.join(fx.out, 'history'), { recursive: true })
  fx.nginx = await startNginx(fx.out, { fsinfoMaxAge: MAX_AGE })
  fx.varnish = await startVarnish(varnishConfig({ backend: `127.0.0.1:${fx.nginx.port}`, grace: GRACE }))
})
after(async () => {
  await fx.varnish?.stop(); await fx.nginx?.stop()
  if (fx.dir) await fs.rm(fx.dir, { recursive: true, force: true })
})

const seqOf = r => JSON.parse(r.body).seq

/** Publish SRC again into OUT (as root, nginx's workers then read it as nobody). */
async function rebuild () {
  const { result } = await buildTree(fx.src, { key: fx.key, out: fx.out })
  if (process.getuid?.() === 0) execFileSync('chmod', ['-R', 'a+rX', fx.out])
  return result
}
const sha = b => createHash('sha256').update(b).digest('hex')

test('a blob asked for before it was published is served right after the publish: the edge keeps no 404', { skip, timeout: 60_000 }, async () => {
  const later = prng(32 << 10, 'later') // one chunk, not inline: its blob is named by the hash of these bytes
  const blob = `/h/${sha(later)}`
  for (let i = 0; i < 3; i++) {
    const r = await req(fx.varnish.port, blob)
    assert.equal(r.status, 404)
    assert.equal(r.headers['cache-control'], 'no-store')
    assert.equal(r.headers['x-cache'], 'MISS')
    assert.equal(r.headers['access-control-allow-origin'], '*')
  }
  await writeTree(fx.src, { 'later.bin': later })
  await rebuild()
  const r = await req(fx.varnish.port, blob)
  assert.equal(r.status, 200)
  assert.ok(r.body.equals(later))
  assert.equal(r.headers['cache-control'], 'public, max-age=31536000, immutable')
  const again = await req(fx.varnish.port, blob, { headers: { Range: 'bytes=10-19' } })
  assert.equal(again.status, 206)
  assert.equal(again.headers['x-cache'], 'HIT', 'a blob is kept once it exists')
  assert.ok(again.body.equals(later.subarray(10, 20)))
  assert.equal(again.headers['content-encoding'], undefined)
})

test('nothing but fsinfo.json, h/<64 hex>, trust/<seq>.json, history/(index|<seq>).json and the log passes the edge; preflights are answered there', { skip }, async () => {
  const before = (await fs.readFile(path.join(fx.nginx.dir, 'access.log'), 'utf8')).length
  const refused = ['/', '/history/01.json', '/history/x.json', '/history/', '/.rotree/build-index/CURRENT', '/.rotree-lock', '/unsigned.json',
    '/h/', `/h/${'A'.repeat(64)}`, '/h/.tmp-0123-abcd', '/fsinfo.json.tmp-1', '/h/../fsinfo.json', '/%2e%2e/fsinfo.json',
    `/h%2f${'0'.repeat(64)}`, '/trust/0.json', '/trust/x.json']
  for (const p of refused) {
    const r = await req(fx.varnish.port, p)
    assert.equal(r.status, 404, p)
    assert.equal(r.headers['cache-control'], 'no-store', p)
    assert.equal(r.body.toString(), 'not found\n', p)
  }
  const log = (await fs.readFile(path.join(fx.nginx.dir, 'access.log'), 'utf8')).slice(before)
  assert.equal(log, '', 'the origin never saw them')
  const pre = await req(fx.varnish.port, '/fsinfo.json', { method: 'OPTIONS', headers: { Origin: 'https://app.example', 'Access-Control-Request-Method': 'GET' } })
  assert.equal(pre.status, 204)
  assert.match(pre.headers['access-control-allow-headers'], /Range/)
  assert.equal((await req(fx.varnish.port, '/fsinfo.json', { method: 'POST' })).status, 405)
  assert.equal((await req(fx.varnish.port, '/trust/1.json')).headers['cache-control'], 'no-store', 'a trust document not there yet: not kept')
  // history passes, for rotree log
  const index = await req(fx.varnish.port, '/history/index.json')
  assert.equal(index.status, 200)
  const [seq] = JSON.parse(index.body).seqs
  assert.deepEqual((await req(fx.varnish.port, `/history/${seq}.json`)).body, await fs.readFile(path.join(fx.out, 'fsinfo.json')))
  // the log passes (docs/FORMAT.md §13): its checkpoint and tiles, nothing else under log/
  const checkpoint = await req(fx.varnish.port, '/log/checkpoint')
  assert.equal(checkpoint.status, 200)
  assert.deepEqual(checkpoint.body, await fs.readFile(path.join(fx.out, 'log', 'checkpoint')))
  const proof = await req(fx.varnish.port, '/log/fsinfo.proof') // the tlog-proof of the current fsinfo.json, as the checkpoint
  assert.equal(proof.status, 200)
  assert.deepEqual(proof.body, await fs.readFile(path.join(fx.out, 'log', 'fsinfo.proof')))
  for (const rel of await logTiles(fx.out)) {
    const t = await req(fx.varnish.port, '/log/' + rel)
    assert.equal(t.status, 200, rel)
    assert.deepEqual(t.body, await fs.readFile(path.join(fx.out, 'log', rel)), rel)
  }
  for (const p of ['/log/', '/log/checkpoint.tmp', '/log/fsinfo.proof.tmp', '/log/fsinfo-proof', '/log/tile/', '/log/tile/0/1234', '/log/tile/64/000', '/log/tile/0/000.p/0', '/log/../fsinfo.json']) {
    assert.equal((await req(fx.varnish.port, p)).status, 404, p)
  }
})

test('trust/revoked.json (FORMAT.md §12.12), for a gated gateway: its absence never kept, then cached as fsinfo.json is, so a new list reaches the edge within max-age + grace', { skip, timeout: 60_000 }, async () => {
  const file = path.join(fx.out, 'trust', 'revoked.json')
  await fs.mkdir(path.dirname(file), { recursive: true })
  for (let i = 0; i < 2; i++) {
    const r = await req(fx.varnish.port, '/trust/revoked.json')
    assert.equal(r.status, 404)
    assert.equal(r.headers['cache-control'], 'no-store')
    assert.equal(r.headers['x-cache'], 'MISS')
  }
  const list = n => Buffer.from(`{"type":"rotree-revoked","issued":"${2030 + n}-01-01T00:00:00Z"}\n`) // served as bytes; a gateway verifies
  const put = async n => {
    await fs.writeFile(file + '.next', list(n))
    if (process.getuid?.() === 0) execFileSync('chmod', ['-R', 'a+rX', fx.out])
    await fs.rename(file + '.next', file)
  }
  await put(0)
  try {
    const r = await req(fx.varnish.port, '/trust/revoked.json')
    assert.equal(r.status, 200, 'served as soon as it is there')
    assert.ok(r.body.equals(list(0)))
    assert.equal(r.headers['cache-control'], `public, max-age=${MAX_AGE}`, 'the origin\'s short lifetime, never immutable')
    assert.equal(r.headers['content-type'], 'application/json')
    assert.equal(r.headers['access-control-allow-origin'], '*')
    assert.equal((await req(fx.varnish.port, '/trust/revoked.json')).headers['x-cache'], 'HIT')
    const pre = await req(fx.varnish.port, '/trust/revoked.json', { method: 'OPTIONS', headers: { Origin: 'https://app.example', 'Access-Control-Request-Method': 'GET' } })
    assert.equal(pre.status, 204)
    // a revocation: the new list, same length, renamed in; the edge hands it out within max-age + grace
    const t0 = Date.now()
    await put(1)
    let got = null
    while (Date.now() - t0 < (MAX_AGE + GRACE + 3) * 1000) {
      got = await req(fx.varnish.port, '/trust/revoked.json')
      if (got.body.equals(list(1))) break
      await new Promise(resolve => setTimeout(resolve, 250))
    }
    assert.ok(got.body.equals(list(1)), 'the new list reached the edge')
    assert.ok(Date.now() - t0 <= (MAX_AGE + GRACE + 2) * 1000, `within max-age + grace (took ${Date.now() - t0} ms)`)
  } finally { await fs.rm(file, { force: true }) }
})

/** Every tile and entry bundle under OUT/log/, relative to it (full and partial). */
async function logTiles (out) {
  const all = await fs.readdir(path.join(out, 'log', 'tile'), { recursive: true, withFileTypes: true })
  const files = all.filter(e => e.isFile()).map(e => path.relative(path.join(out, 'log'), path.join(e.parentPath ?? e.path, e.name)))
  assert.ok(files.length > 0, 'the build wrote a log')
  return files
}

test('a rebuild reaches readers within fsinfo.json\'s max-age plus the edge\'s grace', { skip, timeout: 60_000 }, async () => {
  const first = await req(fx.varnish.port, '/fsinfo.json')
  assert.equal(first.status, 200)
  assert.equal(first.headers['cache-control'], `public, max-age=${MAX_AGE}`, 'readers\' own caches get the origin\'s lifetime')
  const old = seqOf(first)
  assert.equal((await req(fx.varnish.port, '/fsinfo.json')).headers['x-cache'], 'HIT')

  await writeTree(fx.src, { 'docs/readme.txt': 'read me, version 2\n' })
  const result = await rebuild()
  assert.ok(result.seq > old)

  // every copy of the old root the edge still hands out is at most max-age + grace old (its Age says so);
  // the deadline only bounds the loop, the Age is what is checked
  let r
  const deadline = Date.now() + (MAX_AGE + GRACE) * 1000 + 20_000
  for (;;) {
    r = await req(fx.varnish.port, '/fsinfo.json')
    assert.equal(r.status, 200)
    if (seqOf(r) === result.seq) break
    assert.equal(seqOf(r), old)
    assert.ok(Number(r.headers.age) <= MAX_AGE + GRACE, `a copy of age ${r.headers.age} s: more than max-age ${MAX_AGE} + grace ${GRACE}`)
    assert.ok(Date.now() < deadline, `the edge still serves seq ${old}; the origin has ${seqOf(await req(fx.nginx.port, '/fsinfo.json'))}`)
    await new Promise(resolve => setTimeout(resolve, 100))
  }
  for (let i = 0; i < 3; i++) assert.equal(seqOf(await req(fx.varnish.port, '/fsinfo.json')), result.seq, 'never back to the old root')
})

test('the verifying client reads the tree through the edge', { skip, timeout: 60_000 }, async t => {
  const tree = await openTree(`${fx.varnish.url}#${fx.key.publicKey}`, { stateDir: null }); t.after(() => tree.close())
  assert.ok(Buffer.from(await tree.readFile('/big.bin')).equals(fx.files['big.bin']))
  assert.ok(Buffer.from(await tree.readFile('/a.bin')).equals(fx.files['a.bin']))
  const s = await tree.stat('/docs/readme.txt')
  assert.equal(s.type, 'file')
})

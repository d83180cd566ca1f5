// The gateway in front of a lying mirror (test/helpers/lying-server.js): every
// lie becomes the right status (502 for bad data or errors, 504 for stalls,
// never a 404 a mirror made up), and no wrong byte ever reaches the client.
// A lie about a chunk after the first breaks the connection mid-body: curl
// sees a partial transfer (exit 18), and what it got is a prefix of the truth.
import { needing } from '../helpers/tools.js'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { startLyingServer } from '../helpers/lying-server.js'
import { LEAD_CHUNK } from 'rotree-client/format'
import { destroyAfterHeaders } from '../../gateway/http-status.js'
import { Publisher } from '../client/v2-publisher.js'
import { startStaticMirror } from '../client/static-mirror.js'
import { makeFixture, fixtureFiles, entryOf, publishedRoot, startGateway, curl, raw, buildTree, makeKey, address, tmpdir, writeTree, prng } from './helpers.js'

const { test, before, after } = needing('curl')

const fx = {}
before(async () => {
  fx.files = fixtureFiles()
  Object.assign(fx, await makeFixture(fx.files)) // the builder's default format (2)
  fx.info = await publishedRoot(fx.out) // { version, seq, root: the root page's ref }
  fx.medium = (await entryOf(fx.out, 'medium.bin')).chunks[0]
  fx.big = (await entryOf(fx.out, 'big.bin')).chunks
  fx.hugeIndex = (await entryOf(fx.out, 'huge.bin')).index
  fx.docs = (await entryOf(fx.out, 'docs')).dir
  // lies about fsinfo.json the mirror cannot sign for us, in the fixture's
  // format: a version-2 single-key tree is signed by that key (FORMAT.md §12.5)
  const other = await buildTree(fx.src, { key: makeKey() })
  fx.otherFsinfo = await fs.readFile(path.join(other.out, 'fsinfo.json'))
  const expired = await buildTree(fx.src, { key: fx.key, now: Date.now() - 2 * 3600e3, ttlMs: 3600e3 })
  fx.expiredFsinfo = await fs.readFile(path.join(expired.out, 'fsinfo.json'))
  fx.badSigFsinfo = badSignature(await fs.readFile(path.join(fx.out, 'fsinfo.json')))
  fx.extra = [other.out, expired.out]
  // the same lies against a version-1 tree, whose key and signature are
  // checked by their own rules (docs/TRUST.md rule 1: WRONG_KEY, BAD_SIGNATURE)
  // where version 2 names its family (rule 1: WRONG_KEY) and counts valid
  // signers (rule 11: THRESHOLD)
  const src1 = await tmpdir('rotree-gw-src1-')
  await writeTree(src1, { 'hello.txt': fx.files['hello.txt'], 'huge.bin': fx.files['huge.bin'] })
  fx.v1 = { key: makeKey() }
  fx.v1.out = (await buildTree(src1, { key: fx.v1.key, version: 1 })).out
  fx.v1.hugeIndex = (await entryOf(fx.v1.out, 'huge.bin')).index
  fx.v1.otherFsinfo = await fs.readFile(path.join((await buildTree(src1, { key: makeKey(), version: 1, out: await tmpdir('rotree-gw-v1o-') })).out, 'fsinfo.json'))
  const expired1 = await buildTree(src1, { key: fx.v1.key, version: 1, now: Date.now() - 2 * 3600e3, ttlMs: 3600e3 })
  fx.v1.expiredFsinfo = await fs.readFile(path.join(expired1.out, 'fsinfo.json'))
  fx.v1.badSigFsinfo = badSignature(await fs.readFile(path.join(fx.v1.out, 'fsinfo.json')))
  fx.extra.push(src1, fx.v1.out, expired1.out)
})
/** fsinfo.json with its (first) signature changed by one byte, in either format (FORMAT.md §6, §12.4). */
function badSignature (bytes) {
  const j = JSON.parse(bytes)
  const s = j.version === 1 ? j : j.signatures[0]
  s.sig = s.sig.slice(0, -2) + (s.sig.endsWith('00') ? '11' : '00')
  return Buffer.from(JSON.stringify(j))
}
after(async () => { await fx.cleanup?.(); for (const d of fx.extra ?? []) await fs.rm(d, { recursive: true, force: true }) })

const truth = rel => Buffer.from(fx.files[rel].data ?? fx.files[rel])
const flip = b => { const c = Buffer.from(b); c[c.length >> 1] ^= 1; return c }

async function liarGateway (t, behaviour, gwOpts = {}, { out = fx.out, pk = fx.pk } = {}) {
  const liar = await startLyingServer(out, behaviour)
  t.after(() => liar.close())
  const gw = await startGateway(t, { tree: address(liar.url, pk), timeoutMs: 5000, ...gwOpts })
  return { liar, gw }
}

/** An error answer: the status, the code in the body and header, and not one byte of the file. */
function assertErrorAnswer (r, status, codes, what) {
  assert.equal(r.status, status, `${what}: status (body: ${r.body.toString().slice(0, 200)})`)
  const body = r.body.toString()
  assert.match(body, new RegExp(`ROTREE_(${[codes].flat().join('|')})`), `${what}: body names the error`)
  assert.match(r.headers['x-rotree-error'], /^ROTREE_/)
  assert.equal(r.headers['content-type'], 'text/plain; charset=utf-8')
  assert.equal(r.headers['content-length'], String(r.body.length), `${what}: a complete error body`)
}

const BLOB_LIES = [
  ['truncate', 502, 'TRUNCATED'],
  ['truncate-cl', 502, 'MIRROR_NETWORK'],
  ['extend', 502, 'TOO_LARGE'],
  ['extend-cl', 502, 'TOO_LARGE'],
  ['endless', 502, 'TOO_LARGE'],
  ['flipped byte', 502, 'HASH_MISMATCH'],
  ['swap for another blob', 502, ['TOO_LARGE', 'TRUNCATED', 'HASH_MISMATCH']],
  ['404', 502, 'MIRROR_HTTP'],
  ['500', 502, 'MIRROR_HTTP'],
  ['redirect to file:', 502, 'MIRROR_HTTP'],
  ['reset', 502, 'MIRROR_NETWORK'],
  ['reset-mid', 502, 'MIRROR_NETWORK']
]

function lie (name, bytes) {
  switch (name) {
    case 'flipped byte': return { body: flip(bytes) }
    case 'swap for another blob': return { swapWith: fx.big[0].hash }
    case '404': return { status: 404 }
    case '500': return { status: 500 }
    case 'redirect to file:': return { redirect: 'file:///etc/passwd' }
    default: return name
  }
}

for (const [name, status, codes] of BLOB_LIES) {
  test(`a one-chunk file, mirror lies (${name}): ${status}, no file bytes`, async t => {
    const { gw } = await liarGateway(t, { blob: (h, b) => h === fx.medium.hash ? lie(name, b) : 'honest' })
    assertErrorAnswer(await curl(gw.url + 'medium.bin'), status, codes, name)
    assertErrorAnswer(await curl(gw.url + 'medium.bin', ['-r', '10-20']), status, codes, name + ' (range)')
    // the gateway is still up and serves what the mirror does not lie about
    const ok = await curl(gw.url + 'hello.txt')
    assert.equal(ok.status, 200); assert.ok(ok.body.equals(truth('hello.txt')))
  })
}

test('a stalled mirror is a 504, not a hang', async t => {
  for (const how of ['stall', 'stall-silent']) {
    const { gw } = await liarGateway(t, { blob: h => h === fx.medium.hash ? how : 'honest' }, { timeoutMs: 500 })
    assertErrorAnswer(await curl(gw.url + 'medium.bin'), 504, 'TIMEOUT', how)
  }
})

test('a mirror\'s 404 for a directory page is never a 404: every path under it is a 502', async t => {
  const { gw } = await liarGateway(t, { blob: h => h === fx.docs.hash ? { status: 404 } : 'honest' })
  for (const p of ['docs/', 'docs/README.md', 'docs/nope', 'link-to-docs/sub/deep.txt']) {
    assertErrorAnswer(await curl(gw.url + p), 502, 'MIRROR_HTTP', p)
  }
  assertErrorAnswer(await curl(gw.url + 'docs/', ['-X', 'PROPFIND', '-H', 'Depth: 1']), 502, 'MIRROR_HTTP', 'PROPFIND')
  assert.equal((await curl(gw.url + 'hello.txt')).status, 200, 'the rest of the tree still serves')
  assert.equal((await curl(gw.url + 'nope')).status, 404, 'an absence the honest root page proves')
})

test('a lie about the root directory: 502 for everything, even a name that does not exist', async t => {
  const { gw } = await liarGateway(t, { blob: (h, b) => h === fx.info.root.hash ? { body: flip(b) } : 'honest' })
  for (const p of ['', 'hello.txt', 'nope']) assertErrorAnswer(await curl(gw.url + p), 502, 'HASH_MISMATCH', '/' + p)
})

test('a lie about a later chunk: the transfer breaks, and what arrived is a prefix of the truth', async t => {
  const bad = fx.big[2]
  const { gw } = await liarGateway(t, { blob: (h, b) => h === bad.hash ? { body: flip(b) } : 'honest' })
  const big = truth('big.bin')
  const r = await curl(gw.url + 'big.bin')
  assert.equal(r.status, 200, 'the status went out with the first verified chunk')
  assert.equal(r.headers['content-length'], String(big.length))
  assert.equal(r.exit, 18, `curl must see a partial transfer (exit 18), got ${r.exit}: ${r.stderr}`)
  assert.ok(r.body.length < big.length)
  assert.ok(r.body.equals(big.subarray(0, r.body.length)), 'no wrong byte')
  const off = fx.big[0].size + fx.big[1].size
  // a range that starts in the bad chunk fails before its headers: a clean 502
  assertErrorAnswer(await curl(gw.url + 'big.bin', ['-r', `${off + 5}-${off + 10}`]), 502, 'HASH_MISMATCH', 'range in the bad chunk')
  // a range that reaches it breaks too
  const r2 = await curl(gw.url + 'big.bin', ['-r', `${off - 100}-${off + 100}`])
  assert.equal(r2.status, 206); assert.equal(r2.exit, 18)
  assert.ok(r2.body.equals(big.subarray(off - 100, off - 100 + r2.body.length)))
})

test('a lie about a chunk index: 502, in format 2 too (the lead chunk waits for the index)', async t => {
  // format 1: the index comes before any byte of the file
  const v1 = await liarGateway(t, { blob: h => h === fx.v1.hugeIndex.hash ? 'truncate' : 'honest' }, {}, { out: fx.v1.out, pk: fx.v1.key.publicKey })
  assertErrorAnswer(await curl(v1.gw.url + 'huge.bin'), 502, 'TRUNCATED', 'index (format 1)')
  // format 2: the lead ref (FORMAT.md §5.1) is fetched beside the index, but
  // none of its bytes go out before the index's first leaf child confirms it,
  // so a whole-file read, a range inside the lead and one past it all fail
  // before their headers
  const lead = (await entryOf(fx.out, 'huge.bin')).lead
  assert.equal(lead.size, LEAD_CHUNK)
  const { gw } = await liarGateway(t, { blob: h => h === fx.hugeIndex.hash ? 'truncate' : 'honest' })
  assertErrorAnswer(await curl(gw.url + 'huge.bin'), 502, 'TRUNCATED', 'index (format 2, the whole file)')
  assertErrorAnswer(await curl(gw.url + 'huge.bin', ['-r', '100-199']), 502, 'TRUNCATED', 'index (format 2, a range inside the lead chunk)')
  assertErrorAnswer(await curl(gw.url + 'huge.bin', ['-r', `${LEAD_CHUNK + 10}-${LEAD_CHUNK + 20}`]), 502, 'TRUNCATED', 'index (format 2, a range past the lead chunk)')
})

test('a publisher who signs a lead ref other than its index\'s first chunk: 502 for every read of the lead, never its bytes', async t => {
  // one file, two contents: the entry's lead ref names one blob, the chunk
  // index another; a range inside the lead must not show the lead's bytes
  // while ranges past it come from the index (FORMAT.md §5.1, docs/TRUST.md rule 3)
  const p = await Publisher.create({ anchor: 'key' })
  t.after(() => p.close())
  const data = Buffer.from(prng(40 * 16384, 'two contents'))
  const body = await p.w.fileBody(data, { chunkSize: 16384 })
  assert.ok(body.index && body.lead, 'a chunk index and its lead ref')
  const other = Buffer.from(data.subarray(0, body.lead.size)); other.fill(0x41, 0, 4096)
  const lead = { hash: await p.w.putStored(other), size: other.length, storedSize: other.length, codec: 'none' }
  const root = await p.w.dir([{ name: 'f.bin', entry: { type: 'file', ...body, lead } }])
  await p.w.publish({ root, release: { seq: 1 }, relSigners: [p.k.K], tsSigners: [p.k.K] })
  const m = await startStaticMirror(p.out)
  t.after(() => m.close())
  const gw = await startGateway(t, { tree: p.address(m.url), prefetch: false })
  for (const range of ['bytes=0-99', 'bytes=100-4095', 'bytes=0-16383', undefined]) {
    const r = await raw(gw.url, '/f.bin', { headers: range ? { range } : {} })
    assertErrorAnswer(r, 502, 'BAD_FORMAT', `${range ?? 'the whole file'}`)
    assert.ok(!r.body.includes(Buffer.alloc(64, 0x41)), 'no byte of the forged lead')
  }
  // past the lead: the index's bytes, the only content the file has
  const past = await raw(gw.url, '/f.bin', { headers: { range: 'bytes=20000-20099' } })
  assert.equal(past.status, 206)
  assert.ok(past.body.equals(data.subarray(20000, 20100)))
})

test('a transfer broken in the run of microtasks that wrote its first bytes still delivers them (destroyAfterHeaders)', async t => {
  // node:http corks a response's socket until the next tick: destroying it
  // before then would drop the status line and the verified bytes (curl: empty reply)
  const http = await import('node:http')
  const piece = Buffer.alloc(LEAD_CHUNK, 7)
  const server = http.createServer(async (req, res) => {
    await null // as the gateway writes: from a promise continuation
    res.writeHead(200, { 'content-length': String(10 * piece.length) })
    res.write(piece)
    destroyAfterHeaders(res)
  })
  await new Promise(resolve => server.listen(0, '127.0.0.1', resolve))
  t.after(() => new Promise(resolve => { server.closeAllConnections(); server.close(resolve) }))
  const r = await curl(`http://127.0.0.1:${server.address().port}/`)
  assert.equal(r.status, 200, `curl exit ${r.exit}: ${r.stderr}`)
  assert.equal(r.exit, 18)
  assert.ok(r.body.equals(piece))
})

for (const [version, name, pick, code] of [
  [2, 'signed by another key', () => fx.otherFsinfo, 'WRONG_KEY'],
  [2, 'a bad signature', () => fx.badSigFsinfo, 'THRESHOLD'],
  [2, 'expired', () => fx.expiredFsinfo, 'EXPIRED'],
  [2, 'not JSON', () => Buffer.from('<html>hello</html>'), 'BAD_FORMAT'],
  [1, 'signed by another key', () => fx.v1.otherFsinfo, 'WRONG_KEY'],
  [1, 'a bad signature', () => fx.v1.badSigFsinfo, 'BAD_SIGNATURE'],
  [1, 'expired', () => fx.v1.expiredFsinfo, 'EXPIRED'],
  [1, 'not JSON', () => Buffer.from('<html>hello</html>'), 'BAD_FORMAT']
]) {
  test(`fsinfo.json ${name} (format ${version}): 502 naming it, and the status document says why`, async t => {
    const tree = version === 1 ? { out: fx.v1.out, pk: fx.v1.key.publicKey } : {}
    const { gw } = await liarGateway(t, { fsinfo: () => ({ body: pick() }) }, {}, tree)
    assertErrorAnswer(await curl(gw.url + 'hello.txt'), 502, code, name)
    const s = JSON.parse((await curl(gw.url + '.well-known/rotree/status')).body)
    assert.equal(s.trees[0].root, null)
    assert.equal(s.trees[0].lastRefresh.ok, false)
    // a verdict on signed data that every mirror (here: the one) gave is reported as itself (docs/TRUST.md rule 4)
    assert.equal(s.trees[0].lastRefresh.code, code === 'BAD_FORMAT' ? 'ROTREE_ALL_MIRRORS_FAILED' : 'ROTREE_' + code)
    assert.deepEqual(s.trees[0].lastRefresh.mirrors.map(m => m.code), ['ROTREE_' + code], 'what the one mirror did')
  })
}

test('a rollback at refresh is refused: the gateway keeps the newer root and reports the liar', async t => {
  // an honest older publish: in format 2 `seq` is the release's and fsinfo.json's comes
  // from the clock (FORMAT.md §12.4), so build it as of before the fixture: both lower
  const old = await buildTree(fx.src, { key: fx.key, seq: fx.info.seq - 1, now: Date.parse(fx.info.info.issued) - 10_000 })
  t.after(() => fs.rm(old.out, { recursive: true, force: true }))
  const oldFsinfo = await fs.readFile(path.join(old.out, 'fsinfo.json'))
  const was = await publishedRoot(old.out)
  assert.ok(was.seq < fx.info.seq && was.info.release.seq < fx.info.info.release.seq, 'older in every sequence')
  const { liar, gw } = await liarGateway(t, {})
  assert.equal((await curl(gw.url + 'hello.txt')).headers['x-rotree-seq'], String(fx.info.seq))
  liar.set({ fsinfo: () => ({ body: oldFsinfo }) })
  await assert.rejects(gw.gateway.gateway.mounts[0].refresh(), err => err.errors.map(e => e.code).join() === 'ROTREE_ROLLBACK')
  const r = await curl(gw.url + 'hello.txt')
  assert.equal(r.status, 200)
  assert.equal(r.headers['x-rotree-seq'], String(fx.info.seq))
  const s = JSON.parse((await curl(gw.url + '.well-known/rotree/status')).body)
  assert.equal(s.trees[0].lastRefresh.mirrors[0].code, 'ROTREE_ROLLBACK')
  assert.equal(s.trees[0].mirrors[0].lastError.code, 'ROTREE_ROLLBACK')
})

test('with an honest mirror beside the liar, every answer is right and the liar is reported', async t => {
  const liar = await startLyingServer(fx.out, { blob: (h, b) => ({ body: flip(b) }) })
  t.after(() => liar.close())
  const honest = await startLyingServer(fx.out)
  t.after(() => honest.close())
  const gw = await startGateway(t, { tree: address(liar.url, fx.pk), mirrors: [honest.url] })
  for (const rel of ['hello.txt', 'medium.bin', 'big.bin', 'huge.bin', 'docs/README.md']) {
    const r = await curl(gw.url + rel)
    assert.equal(r.status, 200, rel)
    assert.ok(r.body.equals(truth(rel)), rel)
  }
  const s = JSON.parse((await curl(gw.url + '.well-known/rotree/status')).body)
  const m = Object.fromEntries(s.trees[0].mirrors.map(x => [x.url, x]))
  assert.ok(m[liar.url].failed >= 1)
  assert.equal(m[liar.url].lastError.code, 'ROTREE_HASH_MISMATCH')
  assert.equal(m[honest.url].healthy, true)
})

test('mirrors that fail in different ways: 502 ROTREE_ALL_MIRRORS_FAILED, listing each', async t => {
  const a = await startLyingServer(fx.out, { blob: h => h === fx.medium.hash ? { status: 500 } : 'honest' })
  const b = await startLyingServer(fx.out, { blob: h => h === fx.medium.hash ? 'truncate' : 'honest' })
  t.after(() => a.close()); t.after(() => b.close())
  const gw = await startGateway(t, { tree: address(a.url, fx.pk), mirrors: [b.url] })
  const r = await curl(gw.url + 'medium.bin')
  assertErrorAnswer(r, 502, 'ALL_MIRRORS_FAILED', 'mixed')
  const body = r.body.toString()
  assert.ok(body.includes(`${a.url}: ROTREE_MIRROR_HTTP`) && body.includes(`${b.url}: ROTREE_TRUNCATED`), body)
})

test('upstream fetches are bounded: many clients at once never open more than `concurrency` blob requests', async t => {
  // a slow honest mirror that counts how many blob requests it holds at once
  const http = await import('node:http')
  let inflight = 0; let most = 0
  const server = http.createServer(async (req, res) => {
    const isBlob = req.url.startsWith('/h/')
    if (isBlob) { inflight++; most = Math.max(most, inflight) }
    try {
      const body = await fs.readFile(path.join(fx.out, req.url.startsWith('/h/') ? 'h/' + req.url.slice(3).replace(/[^0-9a-f]/g, '') : 'fsinfo.json'))
      if (isBlob) await new Promise(resolve => setTimeout(resolve, 20))
      res.writeHead(200, { 'content-length': body.length }).end(body)
    } catch { res.writeHead(404).end() } finally { if (isBlob) inflight-- }
  })
  await new Promise(resolve => server.listen(0, '127.0.0.1', resolve))
  t.after(() => new Promise(resolve => { server.closeAllConnections(); server.close(resolve) }))
  const gw = await startGateway(t, { tree: address(`http://127.0.0.1:${server.address().port}/`, fx.pk), concurrency: 3 })
  const rels = ['big.bin', 'huge.bin', 'medium.bin', 'docs/README.md', 'big.bin', 'huge.bin']
  const results = await Promise.all(rels.map(rel => curl(gw.url + rel)))
  results.forEach((r, i) => { assert.equal(r.status, 200); assert.ok(r.body.equals(truth(rels[i])), rels[i]) })
  assert.ok(most >= 2, 'fetches did overlap')
  assert.ok(most <= 3, `at most 3 blob requests at once upstream, saw ${most}`)
})

// Several mirrors at once (client-js/src/fetch/mirrors.js, sched.js): two mirrors
// both carry a read; a mirror that answers every blob just under the timeout
// gets few requests beside an honest one; a stalled request is hedged to
// another mirror; fsinfo.json from a fast stale mirror does not win over a
// slower honest one whose usual time is known; mirror credentials never show.
// Real servers on port 0 (mirrors-server.js, the lying server); counts, no
// timing assertions.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { openTree } from 'rotree-client'
import { Mirrors } from 'rotree-client/fetch'
import { createTransport } from 'rotree-client/net'
import { MAX_FSINFO_V2, decodeDirPage } from 'rotree-client/format'
import { decodeBlobSync } from 'rotree-client/codec'
import { decodeRoot, verifyRoot } from '../../lib/published/signed-roots.js'
import { tmpdir, makeKey, writeTree, buildTree, address, prng } from '../helpers/fixtures.js'
import { startLyingServer } from '../helpers/lying-server.js'
import { startMirror } from './mirrors-server.js'

const FILES = { 'big.bin': prng(16 << 20, 'mirrors-big'), 'mid.bin': prng(3 << 20, 'mirrors-mid') }
for (let i = 0; i < 6; i++) FILES[`f${i}.bin`] = prng(1 << 20, `mirrors-f${i}`)

const fx = {}
before(async () => {
  fx.dir = await tmpdir('rotree-mirrors-')
  const src = path.join(fx.dir, 'src')
  await writeTree(src, { ...FILES, 'v.txt': 'one\n' })
  fx.key = makeKey()
  const out = path.join(fx.dir, 'out')
  const now = Date.now()
  // the builder's default format and its own sequence numbers (each above the last)
  fx.oldSeq = (await buildTree(src, { key: fx.key, out, now: now - 60_000 })).result.seq
  fx.oldFsinfo = await fs.readFile(path.join(out, 'fsinfo.json'))
  await fs.writeFile(path.join(src, 'v.txt'), 'two\n')
  fx.newSeq = (await buildTree(src, { key: fx.key, out, now })).result.seq
  assert.ok(fx.newSeq > fx.oldSeq)
  fx.out = out
  // the root page as its ref says it is stored (either format version: FORMAT.md §12.6)
  const { version, root: ref } = decodeRoot(await fs.readFile(path.join(out, 'fsinfo.json')))
  const stored = await fs.readFile(path.join(out, 'h', ref.hash))
  const root = decodeDirPage(version === 2 ? decodeBlobSync(stored, ref.codec, ref.size) : stored, { version })
  fx.entries = Object.fromEntries(root.entries.map(e => [e.name, e]))
})
after(() => fs.rm(fx.dir, { recursive: true, force: true }))

const addr = url => address(url, fx.key.publicKey)
const same = (got, name) => assert.ok(Buffer.from(got).equals(Buffer.from(FILES[name])), `${name}: wrong bytes`)

async function opened (t, url, opts) {
  const tree = await openTree(addr(url), { stateDir: null, ...opts })
  t.after(() => tree.close())
  return tree
}

async function mirror (t, opts) {
  const m = await startMirror(fx.out, opts)
  t.after(() => m.close())
  return m
}

test('two mirrors, each behind its own rate limit, both carry a large read', { timeout: 60_000 }, async t => {
  const a = await mirror(t, { delayMs: 10, mbit: 160 })
  const b = await mirror(t, { delayMs: 10, mbit: 160 })
  const tree = await opened(t, a.url, { mirrors: [b.url], concurrency: 32, readAhead: 32 })
  const parts = []
  for await (const chunk of tree.createReadStream('/big.bin')) parts.push(chunk)
  same(Buffer.concat(parts), 'big.bin')
  const total = a.stats.blobBytes + b.stats.blobBytes
  assert.ok(a.stats.blobBytes > 0.1 * total && b.stats.blobBytes > 0.1 * total,
    `bytes per mirror: ${a.stats.blobBytes} / ${b.stats.blobBytes}`)
  const h = tree.stats.mirrors
  assert.ok(h[0].requests > 0 && h[1].requests > 0, JSON.stringify(h))
})

test('a mirror that answers every blob just under the timeout gets few requests beside an honest one', { timeout: 60_000 }, async t => {
  const slow = await mirror(t, { blobDelayMs: 700 })
  const honest = await mirror(t, {})
  // the slow one first: the old reader asked it for everything, and waited each time
  const tree = await opened(t, slow.url, { mirrors: [honest.url], timeoutMs: 1500 })
  for (const name of ['mid.bin', 'f0.bin', 'f1.bin', 'f2.bin', 'f3.bin', 'f4.bin', 'f5.bin']) same(await tree.readFile('/' + name), name)
  const blobs = slow.stats.blobRequests + honest.stats.blobRequests
  assert.ok(slow.stats.blobRequests <= 14, `the slow mirror was asked for ${slow.stats.blobRequests} of ${blobs} blobs`)
  assert.ok(honest.stats.blobRequests > 2 * slow.stats.blobRequests, `honest ${honest.stats.blobRequests}, slow ${slow.stats.blobRequests}`)
  const h = tree.stats.mirrors.find(m => m.url === slow.url)
  assert.equal(h.healthy, true, 'slow, not benched')
  assert.ok(h.late >= 1, `reported late: ${JSON.stringify(h)}`)
})

test('a stalled request is hedged to another mirror and the loser cancelled', { timeout: 60_000 }, async t => {
  const victim = fx.entries['mid.bin'].chunks[2].hash
  const liar = await startLyingServer(fx.out, { blob: hash => hash === victim ? 'stall' : 'honest' })
  t.after(() => liar.close())
  const honest = await mirror(t, {})
  // a timeout far longer than the test: only a hedge finishes this read in time
  const tree = await opened(t, liar.url, { mirrors: [honest.url], timeoutMs: 50_000 })
  same(await tree.readFile('/mid.bin'), 'mid.bin')
  const h = Object.fromEntries(tree.stats.mirrors.map(m => [m.url, m]))
  assert.ok(h[honest.url].hedges >= 1, `no hedge: ${JSON.stringify(h)}`)
  assert.ok(liar.requests.includes('/h/' + victim))
  assert.equal(h[liar.url].lastError?.code, 'ROTREE_TIMEOUT', 'the late mirror is reported')
  assert.equal(h[liar.url].healthy, true, 'and not benched')
  assert.equal(h[liar.url].inflight, 0, 'its request was cancelled')
})

test('closing a tree: reads in flight and after fail with ROTREE_ABORTED, and no mirror is blamed', { timeout: 60_000 }, async t => {
  // slow enough that the read is still fetching when the tree closes
  const a = await mirror(t, { delayMs: 20, mbit: 80 })
  const b = await mirror(t, { delayMs: 20, mbit: 80 })
  const tree = await openTree(addr(a.url), { stateDir: null, mirrors: [b.url] })
  let chunks = 0; let bytes = 0
  const read = (async () => { for await (const c of tree.createReadStream('/big.bin')) { bytes += c.length; if (++chunks === 2) tree.close() } })()
  await assert.rejects(read, e => e.code === 'ROTREE_ABORTED' && /tree closed/.test(e.message))
  // chunks already verified and waiting may still come out; the rest does not
  assert.ok(chunks >= 2 && bytes < FILES['big.bin'].length, `${chunks} chunks, ${bytes} bytes`)
  await assert.rejects(tree.readFile('/mid.bin'), e => e.code === 'ROTREE_ABORTED')
  await assert.rejects(tree.refresh(), e => e.code === 'ROTREE_ABORTED')
  await new Promise(resolve => setTimeout(resolve, 100)) // what the closed connections still report
  for (const m of tree.stats.mirrors) {
    assert.equal(m.failed, 0, `${m.url} was blamed: ${JSON.stringify(m.lastError)}`)
    assert.equal(m.healthy, true)
    assert.equal(m.inflight, 0)
  }
})

test('fsinfo.json: a fast stale mirror does not win over a slower honest one whose usual time is known', { timeout: 60_000 }, async t => {
  const stale = await mirror(t, { fsinfoBody: fx.oldFsinfo })
  const honest = await mirror(t, { delayMs: 300 })
  const tree = await opened(t, stale.url, { mirrors: [honest.url], fsinfoSettleMs: 50 })
  // the first time nothing is known about either: the settle window decides
  assert.equal(tree.info.seq, fx.oldSeq)
  // its answer came later, and with it the honest mirror's usual time
  for (let i = 0; i < 200 && tree.stats.mirrors[1].medianMs === null; i++) await new Promise(resolve => setTimeout(resolve, 25))
  await tree.refresh()
  assert.equal(tree.info.seq, fx.newSeq, 'the newest root, from the slower honest mirror')
  assert.equal(new TextDecoder().decode(await tree.readFile('/v.txt')), 'two\n')
})

test('fetchAll: onResult sees every mirror\'s answer, also after the settle window closed', { timeout: 60_000 }, async t => {
  const fast = await mirror(t, { fsinfoBody: fx.oldFsinfo })
  const late = await mirror(t, { delayMs: 400 })
  const transport = createTransport()
  t.after(() => transport.close())
  const m = new Mirrors([fast.url, late.url], { transport, timeoutMs: 5000 })
  const seen = []
  let lateSeen
  const arrived = new Promise(resolve => { lateSeen = resolve })
  // the signature checked under the address's key (either format version, FORMAT.md §12.5)
  const check = bytes => verifyRoot(bytes, { anchor: { kind: 'key', key: fx.key.publicKey }, name: '', chain: { docs: [] } })
  const results = await m.fetchAll('fsinfo.json', MAX_FSINFO_V2, check, {
    settleMs: 20,
    onResult: r => { seen.push(r); if (r.mirror === late.url) lateSeen() }
  })
  assert.deepEqual(results.map(r => r.value.seq), [fx.oldSeq], 'resolved with what had arrived')
  await Promise.race([arrived, new Promise(resolve => setTimeout(resolve, 5000))])
  assert.deepEqual(seen.map(r => [r.mirror, r.value.seq]), [[fast.url, fx.oldSeq], [late.url, fx.newSeq]])
})

test('a mirror URL with user:password@ is used as given and reported without them', { timeout: 60_000 }, async t => {
  const liar = await startLyingServer(fx.out, { blob: () => ({ status: 500 }) })
  t.after(() => liar.close())
  const honest = await mirror(t, {})
  const withCreds = u => u.replace('http://', 'http://reader:s3cret@')
  const tree = await opened(t, withCreds(liar.url), { mirrors: [withCreds(honest.url)] })
  same(await tree.readFile('/f0.bin'), 'f0.bin')
  assert.deepEqual([...honest.stats.auth], ['Basic ' + Buffer.from('reader:s3cret').toString('base64')], 'the credentials went out')
  const shown = JSON.stringify({ stats: tree.stats.mirrors, info: tree.info })
  assert.ok(!shown.includes('s3cret') && !shown.includes('reader@'), shown)
  assert.deepEqual(tree.stats.mirrors.map(m => m.url), [liar.url, honest.url])
  // every mirror failing: the error names them without credentials
  const alone = await opened(t, withCreds(liar.url), {})
  let err
  try { await alone.readFile('/f1.bin') } catch (e) { err = e }
  assert.ok(err, 'the read failed')
  assert.ok(!JSON.stringify(err.errors ?? []).includes('s3cret') && !err.message.includes('s3cret'), `${err.message} ${JSON.stringify(err.errors)}`)
})

// Directory read-ahead (gateway/readahead.js): after a listing, the gateway
// fetches what a client walking the listings asks for next, so that client's
// next requests are answered from the gateway's cache, not from the mirror;
// and what it fetches ahead is bounded, whatever the tree, and by what
// clients take of it (the tree's credit, docs/GATEWAY.md "Read-ahead").
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import http from 'node:http'
import { makeFixture, startGateway, curl, address, prng, entryOf, publishedRoot } from './helpers.js'
import { AHEAD, BYTES, FILE_MAX, CREDIT_START, EARN_LISTED, listingBudget } from '../../gateway/readahead.js'

const DIRS = 3 * AHEAD // the root listing reads ahead the first AHEAD, d00's listing the next AHEAD, d05's the last
const name = i => 'd' + String(i).padStart(2, '0')
let fx, mirror
const bait = {} // the tree of the credit tests below, made by the first of them

before(async () => {
  const files = { 'top.bin': prng(40 * 1024, 'top') }
  for (let i = 0; i < DIRS; i++) {
    files[`${name(i)}/f.bin`] = prng(20 * 1024, `f${i}`) // one chunk: a blob of its own
    files[`${name(i)}/note.txt`] = `note ${i}\n` // inline: nothing to fetch
  }
  // more small files than one listing's byte budget
  for (let i = 0; i < Math.ceil(BYTES / FILE_MAX) + 4; i++) files[`fat/${String(i).padStart(2, '0')}.bin`] = prng(FILE_MAX, `fat${i}`)
  fx = await makeFixture(files)
  mirror = await countingMirror(fx.out)
})

after(async () => {
  await mirror.close()
  await fx.cleanup()
  if (bait.out !== undefined) { await bait.mirror.close(); await bait.cleanup() }
})

/** The published folder `out` served, every request counted by path, and the blob bytes served. */
async function countingMirror (out) {
  const seen = new Map()
  const m = { seen, blobBytes: 0 }
  const server = http.createServer(async (req, res) => {
    const p = req.url.startsWith('/h/') ? 'h/' + req.url.slice(3).replace(/[^0-9a-f]/g, '') : 'fsinfo.json'
    seen.set(p, (seen.get(p) ?? 0) + 1)
    try {
      const body = await fs.readFile(path.join(out, p))
      if (p !== 'fsinfo.json') m.blobBytes += body.length
      res.writeHead(200, { 'content-length': body.length }).end(body)
    } catch { res.writeHead(404).end() }
  })
  await new Promise(resolve => server.listen(0, '127.0.0.1', resolve))
  return Object.assign(m, {
    url: `http://127.0.0.1:${server.address().port}/`,
    asked: hash => seen.get('h/' + hash) ?? 0,
    close: () => { server.closeAllConnections(); return new Promise(resolve => server.close(resolve)) }
  })
}

const pageOf = async i => (await entryOf(fx.out, name(i))).dir.hash
const fileOf = async i => (await entryOf(fx.out, `${name(i)}/f.bin`)).chunks[0].hash

async function gateway (t, opts = {}) {
  const gw = await startGateway(t, { tree: address(mirror.url, fx.pk), cacheDir: null, ...opts })
  return { ...gw, ra: gw.gateway.gateway.root.readAhead }
}

test('a listing warms the directory\'s small files and its first directories; a listing of one of them, the next ones', async t => {
  const gw = await gateway(t)
  assert.equal((await curl(gw.url)).status, 200)
  await gw.ra.idle()
  const top = (await entryOf(fx.out, 'top.bin')).chunks[0].hash
  assert.equal(mirror.asked(top), 1, 'the listed directory\'s small file was fetched ahead')
  for (let i = 0; i < AHEAD; i++) {
    assert.equal(mirror.asked(await pageOf(i)), 1, `${name(i)}'s page was fetched ahead`)
    assert.equal(mirror.asked(await fileOf(i)), 1, `${name(i)}/f.bin was fetched ahead`)
  }
  for (let i = AHEAD; i < DIRS; i++) assert.equal(mirror.asked(await pageOf(i)), 0, `${name(i)} is past the read-ahead`)

  // a client reads what it found (from the read-ahead: the mirror is not asked again), then lists d00/ …
  assert.equal((await curl(gw.url + 'top.bin')).status, 200)
  for (let i = 0; i < AHEAD; i++) assert.equal((await curl(gw.url + name(i) + '/f.bin')).status, 200)
  assert.equal(mirror.asked(top), 1)
  assert.equal((await curl(gw.url + name(0) + '/')).status, 200)
  await gw.ra.idle()
  for (let i = AHEAD; i < 2 * AHEAD; i++) {
    assert.equal(mirror.asked(await pageOf(i)), 1, `${name(i)}: the next directories after d00 in its parent's listing not fetched yet were fetched ahead`)
    assert.equal(mirror.asked(await fileOf(i)), 1)
  }
  assert.equal(mirror.asked(await pageOf(2 * AHEAD)), 0, 'and no further')

  // what was fetched ahead answers the client's requests: the mirror is not asked again
  const listing = await curl(gw.url + name(5) + '/')
  const file = await curl(gw.url + name(5) + '/f.bin')
  assert.equal(listing.status, 200)
  assert.ok(listing.body.toString().includes('f.bin'))
  assert.equal(file.status, 200)
  assert.ok(file.body.equals(prng(20 * 1024, 'f5')), 'the verified bytes')
  assert.equal(mirror.asked(await pageOf(5)), 1, 'd05/ was listed from the page fetched ahead')
  assert.equal(mirror.asked(await fileOf(5)), 1, 'd05/f.bin was answered from the chunk fetched ahead')
  await gw.ra.idle()
  const status = await curl(gw.url + '.well-known/rotree/status')
  const p = JSON.parse(status.body).trees[0].prefetch
  assert.equal(p.listings, 3)
  assert.equal(p.dirs, 3 * AHEAD, 'the status counts the directories fetched ahead')
  assert.ok(p.blobs >= 3 * AHEAD + 1, `and the blobs: ${p.blobs}`)
})

test('a client that goes through the directories in another order (davfs2 under cp -r) is kept ahead of too', async t => {
  const gw = await gateway(t)
  const page20 = mirror.asked(await pageOf(20))
  const page39 = mirror.asked(await pageOf(39))
  for (const dir of ['', name(40) + '/']) {
    assert.equal((await curl(gw.url + dir)).status, 200)
    await gw.ra.idle()
  }
  // after d40 come d41…d47, then round to the start: d00…d15 are fetched already, so d16 on
  assert.equal(mirror.asked(await pageOf(20)), page20 + 1, 'd20, before d40 in the listing, was fetched ahead')
  assert.equal(mirror.asked(await pageOf(39)), page39, 'but not more than AHEAD new directories')
})

test('a WebDAV listing (PROPFIND, Depth 1) fetches ahead the same way', async t => {
  const gw = await gateway(t)
  const before = mirror.asked(await fileOf(30))
  for (const dir of ['', name(29) + '/']) {
    const r = await curl(gw.url + dir, ['-X', 'PROPFIND', '-H', 'Depth: 1'])
    assert.equal(r.status, 207)
    await gw.ra.idle()
  }
  assert.equal(mirror.asked(await fileOf(30)), before + 1, 'the next directory\'s small file was fetched ahead')
})

test('one listing fetches at most its byte budget of files ahead', async t => {
  // a memory cache of 64 MiB and no disk cache: a budget of 4 MiB
  const gw = await gateway(t)
  assert.equal(gw.ra.bytes, 4 << 20)
  assert.equal((await curl(gw.url + 'fat/')).status, 200)
  await gw.ra.idle()
  let bytes = 0; let files = 0
  const all = (await fs.readdir(path.join(fx.src, 'fat'))).sort()
  for (const f of all) {
    const e = await entryOf(fx.out, `fat/${f}`)
    const n = e.chunks.filter(c => mirror.asked(c.hash) > 0).reduce((s, c) => s + (c.storedSize ?? c.size), 0)
    if (n > 0) files++
    bytes += n
  }
  assert.ok(files > 0, 'some were fetched ahead')
  assert.ok(files < all.length, `not all ${all.length}: ${files}`)
  assert.ok(bytes <= gw.ra.bytes, `${bytes} bytes fetched ahead, budget ${gw.ra.bytes}`)
})

test('the byte budget is what the caches can keep: all of it with a disk cache, a share of the memory cache without', async t => {
  assert.equal(listingBudget({ disk: true, memoryBytes: 1 << 20 }), BYTES)
  assert.equal(listingBudget({ disk: false, memoryBytes: 64 << 20 }), 4 << 20)
  assert.equal(listingBudget({ disk: false, memoryBytes: 1 << 30 }), BYTES, 'never more than with a disk cache')
  assert.equal(listingBudget({ disk: false, memoryBytes: 0 }), FILE_MAX, 'at least one small file')
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'rotree-ra-cache-'))
  t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const disk = await gateway(t, { cacheDir: dir })
  assert.equal(disk.ra.bytes, BYTES)
  const big = await gateway(t, { cacheBytes: 512 << 20 })
  assert.equal(big.ra.bytes, BYTES)
})

test('--no-prefetch: a listing fetches nothing ahead', async t => {
  const gw = await gateway(t, { prefetch: false })
  assert.equal(gw.ra, null)
  const before = new Map(mirror.seen)
  assert.equal((await curl(gw.url)).status, 200)
  // the listing needed the root page only; give a read-ahead, were there one, time to show
  await new Promise(resolve => setTimeout(resolve, 200))
  const fetched = [...mirror.seen].filter(([p, n]) => p.startsWith('h/') && n > (before.get(p) ?? 0)).map(([p]) => p)
  const rootHash = (await publishedRoot(fx.out)).root.hash
  assert.deepEqual(fetched.filter(p => p !== 'h/' + rootHash), [], 'nothing but the root page')
})

// ---- bounded by what clients take ---------------------------------------------

// A tree built to make listings expensive: a root listing that names many
// files just small enough to be fetched ahead, and many directories each
// holding one more. Before the credit, its three listings below (9 KB of
// HTML) made the gateway fetch 33.6 MB ahead with its disk cache on.
const BAIT_FILES = 16
const BAIT_DIRS = 3 * AHEAD
async function baitTree (t) {
  if (bait.out === undefined) {
    const files = {}
    for (let i = 0; i < BAIT_FILES; i++) files[`big-${String(i).padStart(2, '0')}.bin`] = prng(768 << 10, `big${i}`)
    for (let i = 0; i < BAIT_DIRS; i++) files[`b${String(i).padStart(2, '0')}/x.bin`] = prng(512 << 10, `x${i}`)
    Object.assign(bait, await makeFixture(files))
    bait.mirror = await countingMirror(bait.out)
  }
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'rotree-ra-bait-'))
  // the command line's defaults: a disk cache, so each listing's budget is the full BYTES
  const gw = await startGateway(t, { tree: address(bait.mirror.url, bait.pk), cacheDir: dir })
  t.after(() => fs.rm(dir, { recursive: true, force: true })) // after the gateway's close, which startGateway registered
  return { ...gw, ra: gw.gateway.gateway.root.readAhead, m: bait.mirror }
}

/** The blobs of `out` a listing of `rel` needs itself: its directory's page (one, in these trees). */
async function pageBytes (out, rel) {
  const ref = rel === '' ? (await publishedRoot(out)).root : (await entryOf(out, rel)).dir
  return (await fs.stat(path.join(out, 'h', ref.hash))).size
}

test('three listings that download nothing make the gateway fetch at most its starting credit and a small multiple of what they sent', async t => {
  const gw = await baitTree(t)
  assert.equal(gw.ra.bytes, BYTES)
  const before = gw.m.blobBytes
  let sent = 0; let own = 0
  for (const rel of ['', 'b00', 'b01']) {
    const r = await curl(gw.url + (rel ? rel + '/' : ''))
    assert.equal(r.status, 200)
    sent += r.body.length
    own += await pageBytes(bait.out, rel)
    await gw.ra.idle()
  }
  const ahead = gw.m.blobBytes - before - own
  t.diagnostic(`three listings: ${sent} bytes sent, ${ahead} bytes fetched ahead`)
  // docs/GATEWAY.md's bound, for a client that takes nothing but listings
  assert.ok(ahead <= CREDIT_START + EARN_LISTED * sent, `${ahead} bytes fetched ahead for ${sent} bytes of listings`)
  assert.ok(ahead <= 1 << 20, `${ahead} bytes fetched ahead`)
  assert.ok(ahead > 0, 'something was fetched ahead')
  assert.ok(gw.ra.counts.bytes >= ahead, 'the read-ahead counts what it fetched (the pages of b00 and b01 too)')
})

test('a client that reads every file after each listing still finds most of them fetched ahead, and little is left untaken', async t => {
  const gw = await baitTree(t)
  const before = gw.m.blobBytes
  let files = 0; let ahead = 0; let sent = 0
  const read = async rel => {
    const e = await entryOf(bait.out, rel)
    if (e.chunks.every(c => gw.m.asked(c.hash) > (asked.get(c.hash) ?? 0))) ahead++
    const r = await curl(gw.url + rel)
    assert.equal(r.status, 200)
    sent += r.body.length
    files++
  }
  const asked = new Map() // what the mirror had been asked for before this client's walk
  for (const [p, n] of gw.m.seen) if (p.startsWith('h/')) asked.set(p.slice(2), n)
  // wget -r's order: a listing, then what it names, breadth-first
  const root = await curl(gw.url)
  sent += root.body.length
  await gw.ra.idle()
  for (let i = 0; i < BAIT_FILES; i++) await read(`big-${String(i).padStart(2, '0')}.bin`)
  for (let i = 0; i < BAIT_DIRS; i++) {
    const d = `b${String(i).padStart(2, '0')}`
    const r = await curl(gw.url + d + '/')
    sent += r.body.length
    await gw.ra.idle()
    await read(`${d}/x.bin`)
  }
  const fetched = gw.m.blobBytes - before
  const { bytes, taken } = gw.ra.counts
  t.diagnostic(`reading client: ${files} files, ${ahead} found fetched ahead; ${bytes} bytes fetched ahead, ${taken} taken; ${fetched} fetched in all for ${sent} sent`)
  assert.ok(ahead >= 0.75 * files, `${ahead} of ${files} files were fetched ahead`)
  assert.ok(taken >= 0.9 * bytes, `${taken} of ${bytes} bytes fetched ahead were taken`)
})

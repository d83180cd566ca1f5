// The gateway's verified-blob cache on disk (one file per blob, a level
// database of records): it survives a restart, a corrupted or truncated
// entry is re-fetched and never served (disks rot), it stays within its
// size, a crash's leftovers are swept, a cache of the old layout (blobs as
// LevelDB values) starts empty, and a second process on the same folder is
// told why it cannot have it.
import { needing } from '../helpers/tools.js'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { createHash, randomBytes } from 'node:crypto'
import { Level } from 'level'
import { startLyingServer } from '../helpers/lying-server.js'
import { openDiskCache } from '../../gateway/index.js'
import { makeFixture, fixtureFiles, entryOf, startGateway, curl, tmpdir, address } from './helpers.js'

const { test, before, after } = needing('curl')

const fx = {}
before(async () => {
  fx.files = fixtureFiles()
  Object.assign(fx, await makeFixture(fx.files))
  fx.medium = (await entryOf(fx.out, 'medium.bin')).chunks[0]
  fx.mirror = await startLyingServer(fx.out) // honest; it logs requests
  fx.dir = await tmpdir('rotree-gw-cache-')
})
after(async () => { await fx.mirror?.close(); await fx.cleanup?.(); await fs.rm(fx.dir, { recursive: true, force: true }) })

const truth = rel => Buffer.from(fx.files[rel].data ?? fx.files[rel])
const blobRequests = (from) => fx.mirror.requests.slice(from).filter(u => u.startsWith('/h/')).map(u => u.slice(3))
const sha = b => createHash('sha256').update(b).digest('hex')
const blobFile = (dir, hash) => path.join(dir, 'blobs', hash.slice(0, 2), hash)

async function withGateway (cacheDir, fn) {
  const gw = await startGateway(null, { tree: address(fx.mirror.url, fx.pk), cacheDir, cacheSize: 64 << 20 })
  try { return await fn(gw) } finally { await gw.close() }
}

test('the cache survives a restart: the second gateway fetches no blob the first one stored', async () => {
  const cacheDir = path.join(fx.dir, 'restart')
  const rels = ['medium.bin', 'big.bin', 'huge.bin', 'docs/README.md']
  let dropped
  await withGateway(cacheDir, async gw => {
    for (const rel of rels) assert.ok((await curl(gw.url + rel)).body.equals(truth(rel)))
    await gw.gateway.gateway.disk.flush()
    const s = JSON.parse((await curl(gw.url + '.well-known/rotree/status')).body)
    assert.ok(s.diskCache.entries > 0 && s.diskCache.puts > 0)
    assert.equal(s.diskCache.dir, cacheDir)
    // a blob that arrives while the disk is 8 MiB behind is not cached (the download does not wait for it)
    dropped = s.diskCache.dropped
  })
  const from = fx.mirror.requests.length
  await withGateway(cacheDir, async gw => {
    for (const rel of rels) assert.ok((await curl(gw.url + rel)).body.equals(truth(rel)), rel)
    const s = JSON.parse((await curl(gw.url + '.well-known/rotree/status')).body)
    assert.ok(s.diskCache.hits > 0)
    assert.equal(s.trees[0].localFaults, 0)
  })
  assert.equal(blobRequests(from).length, dropped, 'every blob the first gateway stored came from the disk cache')
  assert.ok(fx.mirror.requests.slice(from).includes('/fsinfo.json'), 'the root is always checked with the mirrors')
})

test('a corrupted cache entry is caught, re-fetched and repaired; the client gets the true bytes', async () => {
  const cacheDir = path.join(fx.dir, 'rot')
  await withGateway(cacheDir, async gw => { await curl(gw.url + 'medium.bin') })
  // rot one byte of the stored blob, as a failing disk would
  const file = blobFile(cacheDir, fx.medium.hash)
  const stored = await fs.readFile(file)
  assert.equal(sha(stored), fx.medium.hash)
  stored[1000] ^= 0x40
  await fs.writeFile(file, stored)

  let from = fx.mirror.requests.length
  await withGateway(cacheDir, async gw => {
    const r = await curl(gw.url + 'medium.bin')
    assert.equal(r.status, 200)
    assert.ok(r.body.equals(truth('medium.bin')), 'the rotten copy never reaches the client')
    const s = JSON.parse((await curl(gw.url + '.well-known/rotree/status')).body)
    assert.equal(s.trees[0].localFaults, 1)
  })
  assert.deepEqual(blobRequests(from), [fx.medium.hash], 'the blob was fetched again from the mirror')
  from = fx.mirror.requests.length
  await withGateway(cacheDir, async gw => { assert.ok((await curl(gw.url + 'medium.bin')).body.equals(truth('medium.bin'))) })
  assert.deepEqual(blobRequests(from), [], 'and the repaired entry serves the next restart')
})

test('a truncated cache file is a miss: the blob is fetched again and the entry rewritten', async () => {
  const cacheDir = path.join(fx.dir, 'short')
  await withGateway(cacheDir, async gw => { await curl(gw.url + 'medium.bin'); await gw.gateway.gateway.disk.flush() })
  const file = blobFile(cacheDir, fx.medium.hash)
  await fs.truncate(file, 1000)
  const from = fx.mirror.requests.length
  await withGateway(cacheDir, async gw => {
    assert.ok((await curl(gw.url + 'medium.bin')).body.equals(truth('medium.bin')))
    await gw.gateway.gateway.disk.flush()
  })
  assert.deepEqual(blobRequests(from), [fx.medium.hash])
  assert.equal(sha(await fs.readFile(file)), fx.medium.hash, 'the good copy replaced it')
})

test('opening the cache sweeps files no record names (a crash between file and record) and temporary files', async () => {
  const dir = path.join(fx.dir, 'sweep')
  const b = randomBytes(5000); const h = sha(b)
  let c = await openDiskCache(dir, { maxBytes: 1 << 20 })
  c.put(h, b); await c.flush()
  await c.close()
  const stray = randomBytes(3000); const sh = sha(stray)
  await fs.mkdir(path.dirname(blobFile(dir, sh)), { recursive: true })
  await fs.writeFile(blobFile(dir, sh), stray)
  await fs.writeFile(blobFile(dir, h) + '.tmp', b.subarray(0, 100))
  c = await openDiskCache(dir, { maxBytes: 1 << 20 })
  try {
    await assert.rejects(fs.stat(blobFile(dir, sh)), { code: 'ENOENT' })
    await assert.rejects(fs.stat(blobFile(dir, h) + '.tmp'), { code: 'ENOENT' })
    assert.equal(c.stats().bytes, 5000, 'a swept file was never counted')
    assert.ok(Buffer.from(await c.get(h)).equals(b), 'the recorded blob stays')
  } finally { await c.close() }
})

test('a cache of the old layout (blobs as LevelDB values) starts empty and loses those values', async () => {
  const dir = path.join(fx.dir, 'legacy')
  const b = randomBytes(50_000); const h = sha(b)
  const db = new Level(dir, { keyEncoding: 'utf8', valueEncoding: 'view' })
  await db.batch([
    { type: 'put', sublevel: db.sublevel('b', { keyEncoding: 'utf8', valueEncoding: 'view' }), key: h, value: b },
    { type: 'put', sublevel: db.sublevel('m', { keyEncoding: 'utf8', valueEncoding: 'utf8' }), key: h, value: `${b.length} 1` }
  ])
  await db.close()
  const c = await openDiskCache(dir, { maxBytes: 1 << 20 })
  try {
    assert.deepEqual(c.stats().entries, 0)
    assert.equal(await c.get(h), undefined)
    const old = []
    for await (const k of c.db.sublevel('b', { keyEncoding: 'utf8', valueEncoding: 'view' }).keys()) old.push(k)
    assert.deepEqual(old, [])
  } finally { await c.close() }
})

test('a hit reads into the pool it is given; a short file gives the buffer back', async () => {
  const { BufferPool } = await import('../../client-js/src/fetch/buffer-pool.js')
  const dir = path.join(fx.dir, 'pooled')
  const b = randomBytes(200_000); const h = sha(b)
  const c = await openDiskCache(dir, { maxBytes: 1 << 20 })
  try {
    c.put(h, b); await c.flush()
    const pool = new BufferPool()
    const got = await c.get(h, pool)
    assert.ok(pool.owns(got) && Buffer.from(got).equals(b))
    pool.lend(got, 0)
    await fs.truncate(blobFile(dir, h), 10)
    assert.equal(await c.get(h, pool), undefined)
    assert.equal(pool.freeBytes, 256 << 10, 'both buffers went back: the first reused, none lost')
    assert.equal(c.stats().entries, 0, 'and the short entry is dropped')
  } finally { await c.close() }
})

test('random puts, gets, deletes and evictions: every hit is its blob, the books match the files, a restart agrees', async () => {
  const dir = path.join(fx.dir, 'random')
  const blobs = Array.from({ length: 24 }, (_, i) => randomBytes(10_000 + 4_000 * i))
  const hashes = blobs.map(sha)
  let seed = 7
  const rand = n => { seed = (Math.imul(seed, 1103515245) + 12345) >>> 0; return (seed >>> 16) % n } // the high bits: an LCG's low bits repeat quickly
  const c = await openDiskCache(dir, { maxBytes: 600_000 })
  let hits = 0
  for (let op = 0; op < 400; op++) {
    const i = rand(blobs.length); const what = rand(10)
    if (what < 5) c.put(hashes[i], blobs[i])
    else if (what < 9) {
      const got = await c.get(hashes[i])
      if (got !== undefined) { hits++; assert.ok(Buffer.from(got).equals(blobs[i]), `op ${op}: a hit is its blob`) }
    } else await c.delete(hashes[i])
    if (rand(20) === 0) await c.flush()
    const sum = [...c.index.values()].reduce((n, e) => n + e.size, 0)
    assert.equal(c.bytes, sum, `op ${op}: bytes is the sum of the entries`)
    assert.ok(c.bytes <= 600_000, `op ${op}: within the bound`)
  }
  assert.ok(hits > 20, `some gets hit (${hits})`)
  assert.ok(c.stats().evictions > 20, `and the bound evicted (${c.stats().evictions})`)
  await c.flush()
  const kept = [...c.index.keys()].sort()
  const onDisk = []
  for (const sub of await fs.readdir(path.join(dir, 'blobs'))) {
    for (const name of await fs.readdir(path.join(dir, 'blobs', sub))) {
      onDisk.push(name)
      assert.equal(sha(await fs.readFile(path.join(dir, 'blobs', sub, name))), name, 'a file holds the blob its name says')
    }
  }
  assert.deepEqual(onDisk.sort(), kept, 'after the queue drains, the files are exactly the entries')
  await c.close()
  const again = await openDiskCache(dir, { maxBytes: 600_000 })
  try {
    assert.deepEqual([...again.index.keys()].sort(), kept)
    for (const h of kept) assert.ok(Buffer.from(await again.get(h)).equals(blobs[hashes.indexOf(h)]))
  } finally { await again.close() }
})

test('the cache stays within its size, evicting the least recently used, and keeps that order across a restart', async () => {
  const dir = path.join(fx.dir, 'evict')
  const blobs = Array.from({ length: 12 }, (_, i) => randomBytes(100_000 + i))
  const hashes = blobs.map(sha)
  let c = await openDiskCache(dir, { maxBytes: 1_000_000 })
  for (let i = 0; i < 8; i++) await c.put(hashes[i], blobs[i])
  assert.ok(await c.get(hashes[0]), 'touch the oldest: now the most recent')
  for (let i = 8; i < 12; i++) await c.put(hashes[i], blobs[i])
  let s = c.stats()
  assert.ok(s.bytes <= 1_000_000, `${s.bytes} bytes held`)
  assert.ok(s.evictions >= 2)
  assert.ok(await c.get(hashes[0]), 'the recently used one stayed')
  assert.equal(await c.get(hashes[1]), undefined, 'the least recently used went first')
  const kept = hashes.filter(h => c.index.has(h))
  await c.close()
  c = await openDiskCache(dir, { maxBytes: 1_000_000 })
  assert.deepEqual([...c.index.keys()].sort(), [...kept].sort())
  for (const h of kept) assert.ok(Buffer.from(await c.get(h)).equals(blobs[hashes.indexOf(h)]))
  await c.close()
  // a smaller limit on the next start trims at once
  c = await openDiskCache(dir, { maxBytes: 300_000 })
  assert.ok(c.stats().bytes <= 300_000)
  await c.close()
})

test('overlapping downloads of a streamed file with the disk cache on: every copy is the file, and chunk buffers are reused', async () => {
  // huge.bin streams past the memory cache, so its chunks are read into
  // buffers of the tree's pool that go back once the socket and the disk
  // cache are done with them (client-js/src/fetch/buffer-pool.js); a chunk still
  // queued for the disk is served to a second download as a copy
  await withGateway(path.join(fx.dir, 'overlap'), async gw => {
    const pool = gw.gateway.gateway.root.tree.blobs.pool
    const made = pool.stats.made
    const want = truth('huge.bin')
    const first = await Promise.all(Array.from({ length: 4 }, () => curl(gw.url + 'huge.bin')))
    for (const r of first) assert.ok(r.body.equals(want))
    await gw.gateway.gateway.disk.flush()
    assert.ok(pool.stats.made > made, 'the cold downloads read into pooled buffers')
    assert.ok(pool.stats.reused > 0, 'and reused them')
    const { hits } = gw.gateway.gateway.disk.stats(); const { made: made2, reused } = pool.stats
    for (let i = 0; i < 2; i++) assert.ok((await curl(gw.url + 'huge.bin')).body.equals(want))
    assert.ok(gw.gateway.gateway.disk.stats().hits > hits, 'the warm downloads read the disk cache')
    assert.ok(pool.stats.reused > reused, 'into pooled buffers')
    assert.ok(pool.stats.made - made2 <= 16, `reused, not made anew (${pool.stats.made - made2} made)`)
  })
})

test('one process per cache folder: the second is told why', async () => {
  const dir = path.join(fx.dir, 'locked')
  const a = await openDiskCache(dir, { maxBytes: 1 << 20 })
  try {
    await assert.rejects(openDiskCache(dir, { maxBytes: 1 << 20 }), err => {
      assert.equal(err.code, 'ROTREE_STATE')
      assert.match(err.message, /in use by another process.*--cache-dir/)
      return true
    })
  } finally { await a.close() }
})

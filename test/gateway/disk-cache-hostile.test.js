// The gateway's disk cache against a local user who could write its folder
// (docs/SECURITY.md, the local user; docs/GATEWAY.md, the disk cache): a link
// planted at a temporary or an entry name never leads a write out of the
// cache, a FIFO at an entry's name is a miss that blocks nothing, the start-up
// scan follows no link, and a folder that is a symlink, another user's or
// writable by others is refused at start with ROTREE_STATE.
import { needing } from '../helpers/tools.js'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import { openSync, closeSync, lstatSync, constants } from 'node:fs'
import path from 'node:path'
import { execFileSync } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { startLyingServer } from '../helpers/lying-server.js'
import { openDiskCache } from '../../gateway/index.js'
import { makeFixture, fixtureFiles, entryOf, startGateway, curl, tmpdir, address } from './helpers.js'

const { test, before, after } = needing('curl', 'mkfifo')

const fx = {}
before(async () => {
  fx.files = fixtureFiles()
  Object.assign(fx, await makeFixture(fx.files))
  fx.medium = (await entryOf(fx.out, 'medium.bin')).chunks[0]
  fx.big = (await entryOf(fx.out, 'big.bin')).chunks
  fx.mirror = await startLyingServer(fx.out) // honest; it logs requests
  fx.dir = await tmpdir('rotree-gw-cache-hostile-')
})
after(async () => { await fx.mirror?.close(); await fx.cleanup?.(); await fs.rm(fx.dir, { recursive: true, force: true }) })

const truth = rel => Buffer.from(fx.files[rel].data ?? fx.files[rel])
const sha = b => createHash('sha256').update(b).digest('hex')
const blobFile = (dir, hash) => path.join(dir, 'blobs', hash.slice(0, 2), hash)
const blobRequests = from => fx.mirror.requests.slice(from).filter(u => u.startsWith('/h/')).map(u => u.slice(3))
const exists = p => fs.lstat(p).then(() => true, () => false)

const gatewayOn = cacheDir => startGateway(null, { tree: address(fx.mirror.url, fx.pk), cacheDir, cacheSize: 64 << 20 })

async function withGateway (cacheDir, fn) {
  const gw = await gatewayOn(cacheDir)
  try { return await fn(gw) } finally { await gw.close() }
}

/** The error a gateway on `cacheDir` fails to start with (a gateway that starts is closed, and the test fails). */
async function refusedAtStart (cacheDir) {
  let gw
  try { gw = await gatewayOn(cacheDir) } catch (err) { return err }
  await gw.close()
  assert.fail(`a gateway started on the cache folder ${cacheDir}`)
}

/** A symlink at `at` (its folder made as the gateway makes it) pointing at `target`. */
async function plantLink (target, at) {
  await fs.mkdir(path.dirname(at), { recursive: true, mode: 0o700 })
  await fs.rm(at, { force: true })
  await fs.symlink(target, at)
}

test('links planted at temporary and entry names never lead a write or a read out of the cache', async () => {
  const cacheDir = path.join(fx.dir, 'links')
  const victim = path.join(fx.dir, 'victim.txt')
  const absent = path.join(fx.dir, 'made-by-the-gateway')
  await fs.writeFile(victim, 'a file of the gateway\'s user\n')
  const [c0, c1] = fx.big
  await withGateway(cacheDir, async gw => {
    // the temporary names the cache used to write through, and an entry's own name
    await plantLink(victim, blobFile(cacheDir, fx.medium.hash) + '.tmp')
    await plantLink(absent, blobFile(cacheDir, c0.hash) + '.tmp')
    await plantLink(victim, blobFile(cacheDir, c1.hash))
    for (const rel of ['medium.bin', 'big.bin']) assert.ok((await curl(gw.url + rel)).body.equals(truth(rel)), rel)
    await gw.gateway.gateway.disk.flush()
    assert.ok(gw.gateway.gateway.disk.stats().puts > 0)
  })
  assert.equal(await fs.readFile(victim, 'utf8'), 'a file of the gateway\'s user\n', 'the file a link pointed at is unchanged')
  assert.equal(await exists(absent), false, 'and no file was made where a dangling link pointed')
  for (const h of [fx.medium.hash, c0.hash, c1.hash]) {
    const st = await fs.lstat(blobFile(cacheDir, h))
    assert.ok(st.isFile(), `${h} is stored as a file of its own, not through a link`)
    assert.equal(st.mode & 0o777, 0o600)
    assert.equal(sha(await fs.readFile(blobFile(cacheDir, h))), h)
  }

  // a link at a recorded entry's name, planted once a restarted gateway has
  // scanned the folder (and before it read the blob into memory): a miss,
  // never read through, and replaced
  const from = fx.mirror.requests.length
  await withGateway(cacheDir, async gw => {
    await plantLink(victim, blobFile(cacheDir, fx.medium.hash))
    const r = await curl(gw.url + 'medium.bin')
    assert.equal(r.status, 200)
    assert.ok(r.body.equals(truth('medium.bin')))
    await gw.gateway.gateway.disk.flush()
  })
  assert.deepEqual(blobRequests(from), [fx.medium.hash], 'fetched again from the mirror')
  assert.equal(await fs.readFile(victim, 'utf8'), 'a file of the gateway\'s user\n')
  assert.ok((await fs.lstat(blobFile(cacheDir, fx.medium.hash))).isFile(), 'the link was replaced by the blob\'s file')
})

test('FIFOs planted at entry names are misses: the blobs come from the mirror at once, and four of them block no other request', async () => {
  const cacheDir = path.join(fx.dir, 'fifo')
  assert.ok(fx.big.length >= 4, `big.bin has ${fx.big.length} chunks`)
  await withGateway(cacheDir, async gw => {
    for (const rel of ['medium.bin', 'big.bin']) assert.ok((await curl(gw.url + rel)).body.equals(truth(rel)))
    await gw.gateway.gateway.disk.flush()
  })
  const offsets = []
  for (let i = 0, at = 0; i < fx.big.length; at += fx.big[i].size, i++) offsets.push(at)
  // four: as many as libuv's pool has threads, which a blocking open() of
  // each would hold for good. Planted once the restarted gateway has scanned
  // the folder, and before it read these blobs into memory.
  const fifos = fx.big.slice(0, 4).map(c => blobFile(cacheDir, c.hash))
  const gw = await gatewayOn(cacheDir)
  try {
    for (const f of fifos) { await fs.rm(f); execFileSync('mkfifo', [f]) }
    const from = fx.mirror.requests.length
    const t0 = Date.now()
    const ranges = fx.big.slice(0, 4).map((c, i) => curl(gw.url + 'big.bin', ['-r', `${offsets[i]}-${offsets[i] + c.size - 1}`], { timeoutMs: 10_000 }))
    await sleep(300) // let the four reach the cache first
    const other = await curl(gw.url + 'medium.bin', [], { timeoutMs: 10_000 })
    assert.equal(other.exit, 0, `a request for a blob stored as a file completes (curl exit ${other.exit})`)
    assert.ok(other.body.equals(truth('medium.bin')))
    const whole = truth('big.bin')
    for (const [i, r] of (await Promise.all(ranges)).entries()) {
      assert.equal(r.exit, 0, `chunk ${i}: curl exit ${r.exit}`)
      assert.equal(r.status, 206)
      assert.ok(r.body.equals(whole.subarray(offsets[i], offsets[i] + fx.big[i].size)), `chunk ${i}: the true bytes`)
    }
    assert.ok(Date.now() - t0 < 8000, `served in ${Date.now() - t0} ms`)
    assert.deepEqual(blobRequests(from).sort(), fx.big.slice(0, 4).map(c => c.hash).sort(), 'each FIFO\'s blob was fetched from the mirror')
    await gw.gateway.gateway.disk.flush()
    for (const f of fifos) assert.ok(!(await fs.lstat(f).catch(() => null))?.isFIFO(), `${f}: no longer a FIFO`)
  } finally {
    // a reader that did block (the code before this test) is let go, so the gateway can close
    for (const f of fifos) {
      try { if (lstatSync(f).isFIFO()) closeSync(openSync(f, constants.O_WRONLY | constants.O_NONBLOCK)) } catch {}
    }
    await gw.close()
  }
})

test('opening the cache follows no link: not a blobs/<xx> folder\'s, nor one where LevelDB writes a file by name', async () => {
  const dir = path.join(fx.dir, 'scan')
  const outside = path.join(fx.dir, 'outside')
  await fs.mkdir(outside)
  await fs.writeFile(path.join(outside, 'keep.txt'), 'kept\n')
  const victim = path.join(fx.dir, 'victim-of-leveldb.txt')
  await fs.writeFile(victim, 'not a LevelDB file\n')
  await fs.mkdir(path.join(dir, 'blobs'), { recursive: true, mode: 0o700 })
  await fs.symlink(outside, path.join(dir, 'blobs', 'ab'))
  // a fresh database writes CURRENT as 000001.dbtmp, then renames it
  await fs.symlink(victim, path.join(dir, '000001.dbtmp'))
  const c = await openDiskCache(dir, { maxBytes: 1 << 20 })
  try {
    const b = randomBytes(5000); const h = 'ab' + sha(b).slice(2) // lands in blobs/ab
    c.put(h, b); await c.flush()
    assert.ok(Buffer.from(await c.get(h)).equals(b))
  } finally { await c.close() }
  assert.deepEqual(await fs.readdir(outside), ['keep.txt'], 'the folder a blobs/<xx> link pointed at is untouched')
  assert.equal(await fs.readFile(path.join(outside, 'keep.txt'), 'utf8'), 'kept\n')
  assert.equal(await fs.readFile(victim, 'utf8'), 'not a LevelDB file\n', 'LevelDB wrote no file through a link')
  assert.ok((await fs.lstat(path.join(dir, 'blobs', 'ab'))).isDirectory(), 'blobs/ab is a folder of the cache\'s own again')
})

test('a cache folder writable by its group or by everyone is refused at start, untouched, with ROTREE_STATE and what to do', async () => {
  for (const mode of [0o770, 0o757]) {
    const cacheDir = path.join(fx.dir, `open-${mode.toString(8)}`)
    await fs.mkdir(cacheDir)
    await fs.chmod(cacheDir, mode)
    const err = await refusedAtStart(cacheDir)
    assert.equal(err.name, 'StateError', String(err))
    assert.equal(err.code, 'ROTREE_STATE')
    assert.ok(err.message.includes(cacheDir), err.message)
    assert.match(err.message, mode & 0o002 ? /writable by every user/ : /writable by its group/)
    assert.ok(err.message.includes(`chmod 700 ${cacheDir}`), err.message)
    assert.deepEqual(await fs.readdir(cacheDir), [], 'nothing was made in it')
  }
})

test('a cache folder of another user is refused at start with ROTREE_STATE', async () => {
  let cacheDir
  if (process.getuid() === 0) {
    cacheDir = path.join(fx.dir, 'foreign')
    await fs.mkdir(cacheDir, { mode: 0o700 })
    await fs.chown(cacheDir, 65534, 65534) // nobody
  } else cacheDir = '/' // root's; refused before anything is made in it
  const err = await refusedAtStart(cacheDir)
  assert.equal(err.code, 'ROTREE_STATE', String(err))
  assert.ok(err.message.includes(`${cacheDir} belongs to uid `), err.message)
  assert.ok(err.message.includes(`not to this process's user (uid ${process.getuid()})`), err.message)
  if (cacheDir !== '/') assert.deepEqual(await fs.readdir(cacheDir), [])
})

test('a cache folder that is itself a symlink is refused at start, and the folder it points at is untouched', async () => {
  const real = path.join(fx.dir, 'real-cache')
  await fs.mkdir(real, { mode: 0o700 })
  const cacheDir = path.join(fx.dir, 'cache-link')
  await fs.symlink(real, cacheDir)
  const err = await refusedAtStart(cacheDir)
  assert.equal(err.code, 'ROTREE_STATE', String(err))
  assert.match(err.message, /is a symlink: give the folder itself/)
  assert.ok(err.message.includes(cacheDir))
  assert.deepEqual(await fs.readdir(real), [])
})

test('a cache folder the gateway makes is mode 0700, and so are its blob folders', async () => {
  const cacheDir = path.join(fx.dir, 'made', 'cache')
  await withGateway(cacheDir, async gw => {
    await curl(gw.url + 'medium.bin')
    await gw.gateway.gateway.disk.flush()
  })
  for (const d of [path.join(fx.dir, 'made'), cacheDir, path.join(cacheDir, 'blobs'), path.dirname(blobFile(cacheDir, fx.medium.hash))]) {
    assert.equal((await fs.lstat(d)).mode & 0o777, 0o700, d)
  }
})

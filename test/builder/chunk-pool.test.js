// The chunk worker pool (builder/chunk-pool.js): the tree does not depend on
// how many threads read the files, and a file's error comes back from a worker
// as the same typed error the main thread gives.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { spawnSync } from 'node:child_process'
import { rmSync } from 'node:fs'
import { createHash } from 'node:crypto'
import { tmpdir, writeTree, makeKey, prng } from '../helpers/fixtures.js'
import { checkPublished } from '../helpers/check-tree.js'
import { build } from '../../builder/build.js'
import { StatBlobStore } from '../../lib/published/blob-store.js'
import { ChunkPool } from '../../builder/chunk-pool.js'
import { chunkFileSync, readBuffer, READ_SIZE } from '../../builder/chunk-file.js'
import { chunkLengths, CHUNK_MIN, CHUNK_MAX, INLINE_MAX } from 'rotree-client/format'
import { BuildInputError, RotreeError } from 'rotree-client/errors'

const NOW = Date.UTC(2026, 5, 1)
const opts = (src, out, key, extra = {}) => ({ src, out, key, ttlMs: 3600e3, now: NOW, fsync: false, racyMs: 0, ...extra })

// Every size at which chunking changes behaviour, files that share chunks, one
// file larger than a read buffer (the refill path), and enough small files to
// fill several batches.
async function bigTree (src) {
  const files = {
    'empty': '', 'inline-max': prng(INLINE_MAX, 'i'), 'inline-max+1': prng(INLINE_MAX + 1, 'j'),
    'min': prng(CHUNK_MIN, 'm'), 'min+1': prng(CHUNK_MIN + 1, 'n'), 'max': prng(CHUNK_MAX, 'x'), 'max+1': prng(CHUNK_MAX + 1, 'y'),
    'zeros': new Uint8Array(3 * CHUNK_MAX + 5), // no cut point: CHUNK_MAX pieces
    'huge.bin': prng(READ_SIZE * 2 + 12345, 'huge'),
    'dup/a.bin': prng(700_000, 'dup'), 'dup/b.bin': prng(700_000, 'dup'), 'dup/c/d.bin': prng(700_000, 'dup'),
    'tool': { data: '#!/bin/sh\necho hi\n', mode: 0o755 },
    'link': { symlink: 'dup/a.bin' }
  }
  for (let i = 0; i < 300; i++) files[`many/d${i % 7}/f${i}`] = prng((i * 7919) % 90_000, `f${i}`)
  await writeTree(src, files)
}

const listH = async out => (await fs.readdir(path.join(out, 'h'))).sort()

test('the tree and every blob in h/ are the same for 0, 1 and 3 worker threads', { timeout: 120_000 }, async t => {
  const dir = await tmpdir(); t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const src = path.join(dir, 'src')
  await bigTree(src)
  const key = makeKey()
  // bigAt 2 MiB in segments of 1 MiB: huge.bin and zeros are cut on several threads when there are two or more
  const big = { bigAt: 2 << 20, segment: 1 << 20 }
  const runs = [
    { name: 'main thread only', threads: 0 },
    { name: '1 worker', threads: 1, workersAfter: 0 },
    { name: '3 workers', threads: 3, workersAfter: 0, ...big },
    { name: 'default pool, workers started on demand', threads: undefined, workersAfter: 1 << 20, ...big }
  ]
  const results = []
  for (const r of runs) {
    const out = path.join(dir, `out-${results.length}`)
    const res = await build(opts(src, out, key, { threads: r.threads, workersAfter: r.workersAfter, bigAt: r.bigAt, segment: r.segment }))
    await checkPublished(out, key.publicKey, { now: NOW })
    results.push({ ...r, res, h: await listH(out) })
  }
  const [zero, ...rest] = results
  assert.equal(zero.res.pool.workerFiles, 0)
  for (const r of rest) {
    assert.equal(r.res.root, zero.res.root, `${r.name}: root`)
    assert.deepEqual(r.h, zero.h, `${r.name}: h/ listing`)
    assert.equal(r.res.blobs.written + r.res.blobs.reused, zero.res.blobs.written + zero.res.blobs.reused, `${r.name}: blobs stored`)
  }
  assert.equal(results[2].res.pool.bigFiles, 2, 'huge.bin and zeros on several threads')
  // the workers did read: with workersAfter 0 every file goes to them
  assert.equal(results[1].res.pool.mainFiles, 0); assert.ok(results[1].res.pool.workerFiles > 300)
  assert.equal(results[2].res.pool.mainFiles, 0); assert.equal(results[2].res.pool.threads, 3)
  assert.ok(results[3].res.pool.threads > 0, 'past WORKERS_AFTER_FILES files, workers start (whether they are up before the main thread is done depends on the machine)')
  // and so does an incremental rebuild after an edit, on either side
  await writeTree(src, { 'many/d3/f10': prng(50_000, 'edited'), 'huge.bin': prng(READ_SIZE + 99, 'huge2') })
  const a = await build(opts(src, path.join(dir, 'out-0'), key, { threads: 0 }))
  const b = await build(opts(src, path.join(dir, 'out-2'), key, { threads: 3, workersAfter: 0 }))
  assert.equal(a.root, b.root)
  assert.equal(a.index.misses, 2); assert.equal(b.index.misses, 2)
  assert.deepEqual(await listH(path.join(dir, 'out-0')), await listH(path.join(dir, 'out-2')))
})

test('chunkFileSync cuts a file read in several buffers where chunkLengths cuts it whole', async t => {
  const dir = await tmpdir(); t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const data = prng(2 * READ_SIZE + 3 * CHUNK_MAX + 17, 'stream')
  const file = path.join(dir, 'f')
  await fs.writeFile(file, data)
  const st = await fs.stat(file)
  const stored = new Map()
  const r = chunkFileSync({ abs: file, rel: '/f', size: st.size, mtimeMs: st.mtimeMs, dev: st.dev, ino: st.ino }, (h, b) => { stored.set(h, Buffer.from(b)); return true }, readBuffer())
  assert.deepEqual(r.chunks.map(c => c.size), chunkLengths(data))
  assert.deepEqual(Buffer.concat(r.chunks.map(c => stored.get(c.hash))), data)
  assert.equal(r.sha256, createHash('sha256').update(data).digest('hex'), 'the whole file\'s SHA-256, in the same pass')
})

// what a file becomes with 0 or 2 threads: the settled value, or the error's observable shape
async function outcome (store, threads, file) {
  const pool = new ChunkPool(store, { threads, workersAfter: 0 })
  try {
    const r = await pool.chunk(file.dir, file.name, file.expect ?? null)
    return { ok: r, pool: pool.stats }
  } catch (err) {
    return {
      err: { class: err.constructor.name, name: err.name, code: err.code, message: err.message, path: err.path, changed: err.changed, cause: err.cause?.code, rotree: err instanceof RotreeError },
      pool: pool.stats
    }
  } finally { await pool.close() }
}

test('a file\'s error from a worker is the error the main thread gives: class, code, message, fields', async t => {
  const dir = await tmpdir(); t.after(() => fs.rm(dir, { recursive: true, force: true }))
  await writeTree(dir, { 'src/small': 'twelve bytes', 'src/big.bin': prng(300_000, 'b'), 'src/sub/x': 'x', 'src/ln': { symlink: 'small' } })
  const store = new StatBlobStore(path.join(dir, 'out'), { fsync: false }).open()
  const at = { open: path.join(dir, 'src') + '/', rel: '/' }
  const st = async p => fs.lstat(path.join(dir, 'src', p))
  const was = async p => { const s = await st(p); return { size: s.size, mtimeMs: s.mtimeMs, ctimeMs: s.ctimeMs, ino: s.ino, dev: s.dev } }
  const cases = {
    vanished: { dir: at, name: 'gone' },
    'vanished, known to the index': { dir: at, name: 'gone', expect: await was('small') },
    'a directory now': { dir: at, name: 'sub' },
    'a directory now, known to the index as a file': { dir: at, name: 'sub', expect: await was('small') },
    'a symlink now': { dir: at, name: 'ln' },
    'a symlink now, known to the index as a file': { dir: at, name: 'ln', expect: await was('small') }
  }
  for (const [name, file] of Object.entries(cases)) {
    const main = await outcome(store, 0, file)
    const worker = await outcome(store, 2, file)
    assert.ok(main.err, `${name}: fails`)
    assert.equal(main.err.code, 'ROTREE_BUILD_INPUT', `${name}: ${main.err.message}`)
    assert.equal(main.err.class, 'BuildInputError')
    assert.ok(main.err.message.startsWith('/' + file.name + ': '), `${name}: names the path: ${main.err.message}`)
    assert.deepEqual(worker.err, main.err, name)
    assert.equal(worker.pool.workerFiles + worker.pool.mainFiles, 0)
  }
  assert.equal((await outcome(store, 0, cases.vanished)).err.cause, 'ENOENT')
  assert.equal((await outcome(store, 0, cases['a symlink now'])).err.cause, 'ELOOP') // never followed out of the tree
  assert.equal((await outcome(store, 2, cases['a directory now'])).err.changed, true)
  // and a good file is the same from both; known and unchanged, it is not read
  const ok = { dir: at, name: 'big.bin' }
  const [m, w] = [await outcome(store, 0, ok), await outcome(store, 2, ok)]
  assert.deepEqual({ ...w.ok, readStart: 0 }, { ...m.ok, readStart: 0 })
  assert.equal(w.pool.workerFiles, 1)
  const same = { dir: at, name: 'big.bin', expect: await was('big.bin') }
  assert.equal((await outcome(store, 2, same)).ok, null)
  assert.equal((await outcome(store, 0, { ...same, expect: { ...same.expect, ctimeMs: 1 } })).ok.size, 300_000, 'changed: read')
})

test('chunkFileSync: a file that is not what its lstat said fails, naming it', async t => {
  const dir = await tmpdir(); t.after(() => fs.rm(dir, { recursive: true, force: true }))
  await writeTree(dir, { small: 'twelve bytes', 'big.bin': prng(300_000, 'b') })
  const st = async p => fs.lstat(path.join(dir, p))
  const task = async (p, over = {}) => { const s = await st(p); return { abs: path.join(dir, p), rel: '/' + p, size: s.size, mtimeMs: s.mtimeMs, dev: s.dev, ino: s.ino, ...over } }
  const cases = {
    'grew since the scan': await task('big.bin', { size: 1000 }),
    'shrank since the scan': await task('small', { size: 20 }),
    'touched since the scan': await task('big.bin', { mtimeMs: 5 }),
    'another file now': await task('small', { ino: (await st('big.bin')).ino })
  }
  for (const [name, t] of Object.entries(cases)) {
    assert.throws(() => chunkFileSync(t, () => true, readBuffer()), err => err instanceof BuildInputError && err.changed === true && err.message.startsWith(t.rel + ': '), name)
  }
})

test('a file that vanishes while workers read the tree fails the build naming it; --skip-bad skips it', async t => {
  const dir = await tmpdir(); t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const src = path.join(dir, 'src')
  const tree = { 'victim.bin': prng(200_000, 'v'), 'keep.txt': 'kept' }
  for (let i = 0; i < 20; i++) tree[`sub/f${i}`] = prng(30_000 + i, `s${i}`)
  await writeTree(src, tree)
  const key = makeKey()
  const before = process.getActiveResourcesInfo().filter(r => r === 'Worker' || r === 'MessagePort').length
  // listed, not yet opened: gone (the root's mtime is fsinfo's, not in a page: a clean build after it is the same tree)
  const vanish = async rel => { if (rel === '/') rmSync(path.join(src, 'victim.bin'), { force: true }) }

  const out = path.join(dir, 'out')
  await assert.rejects(build(opts(src, out, key, { threads: 2, workersAfter: 0, onListed: vanish })),
    err => err instanceof BuildInputError && err.code === 'ROTREE_BUILD_INPUT' && err.message === '/victim.bin: cannot open (ENOENT)' && err.cause?.code === 'ENOENT')
  await assert.rejects(fs.access(path.join(out, 'fsinfo.json')), { code: 'ENOENT' }) // nothing published
  assert.deepEqual((await fs.readdir(path.join(out, 'h'))).filter(n => !/^[0-9a-f]{64}$/.test(n)), [])

  await writeTree(src, { 'victim.bin': prng(200_000, 'v') })
  const warnings = []
  const skipped = await build(opts(src, out, key, { threads: 2, workersAfter: 0, onBad: 'skip', warn: m => warnings.push(m), onListed: vanish }))
  assert.deepEqual(warnings, ['skipping /victim.bin: cannot open (ENOENT)'])
  assert.equal(skipped.pool.mainFiles, 0)
  const clean = await build(opts(src, path.join(dir, 'clean'), key, { threads: 0 })) // victim.bin is gone now
  assert.equal(skipped.root, clean.root)
  await checkPublished(out, key.publicKey, { now: NOW })
  // no worker outlives a build, failed or not
  const after = process.getActiveResourcesInfo().filter(r => r === 'Worker' || r === 'MessagePort').length
  assert.equal(after, before)
})

test('a worker that dies fails what it held and the pool, without hanging', async t => {
  const dir = await tmpdir(); t.after(() => fs.rm(dir, { recursive: true, force: true }))
  await writeTree(dir, { 'src/a.bin': prng(3 * READ_SIZE, 'a') })
  const store = new StatBlobStore(path.join(dir, 'out'), { fsync: false }).open()
  const pool = new ChunkPool(store, { threads: 1, workersAfter: 0 })
  const at = { open: path.join(dir, 'src') + '/', rel: '/' }
  const p = pool.chunk(at, 'a.bin')
  // once it is working on the file, kill its thread
  while (!pool.workers[0]?.inflight) await new Promise(resolve => setImmediate(resolve))
  await pool.workers[0].w.terminate()
  await assert.rejects(p, /chunk worker thread exited unexpectedly/)
  await assert.rejects(pool.chunk(at, 'a.bin'), /chunk worker thread exited unexpectedly/)
  await pool.close()
})

test('a pool left open does not keep the process alive', async t => {
  const dir = await tmpdir(); t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const lib = name => JSON.stringify(new URL(`../../builder/${name}`, import.meta.url).href)
  const script = path.join(dir, 'forgets-close.mjs')
  await fs.writeFile(script, `
    import fs from 'node:fs'
    import path from 'node:path'
    import { StatBlobStore } from ${JSON.stringify(new URL('../../lib/published/blob-store.js', import.meta.url).href)}
    import { ChunkPool } from ${lib('chunk-pool.js')}
    const dir = ${JSON.stringify(dir)}
    fs.writeFileSync(path.join(dir, 'f'), 'x'.repeat(100000))
    const store = new StatBlobStore(path.join(dir, 'out'), { fsync: false }).open()
    const pool = new ChunkPool(store, { threads: 2, workersAfter: 0 })
    const r = await pool.chunk({ open: dir + '/', rel: '/' }, 'f')
    console.log(r.chunks.length, pool.stats.workerFiles)
    // no pool.close(): the process must end all the same
  `)
  const env = { ...process.env }; delete env.NODE_TEST_CONTEXT
  const r = spawnSync(process.execPath, [script], { encoding: 'utf8', timeout: 60_000, env })
  assert.equal(r.signal, null, 'ended by itself, not killed at the timeout')
  assert.equal(r.status, 0, r.stderr)
  assert.equal(r.stdout.trim(), '1 1')
})

test('a full disk under the workers: ENOSPC comes back as itself, no temporary file is left, the old tree stays', { timeout: 60_000 }, async t => {
  const mnt = await tmpdir('rotree-tinyfs-')
  const { execFileSync } = await import('node:child_process')
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=16m', 'tmpfs', mnt], { stdio: 'ignore' })
  } catch {
    await fs.rm(mnt, { recursive: true, force: true })
    return t.skip('needs root to mount a small tmpfs')
  }
  t.after(async () => { execFileSync('umount', [mnt]); await fs.rm(mnt, { recursive: true, force: true }) })
  const dir = await tmpdir(); t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const src = path.join(dir, 'src'); const out = path.join(mnt, 'out')
  const key = makeKey()
  await writeTree(src, { 'a.txt': 'first', 'b.bin': prng(4 << 20, 'one') })
  await build(opts(src, out, key, { threads: 2, workersAfter: 0 }))
  const before = await fs.readFile(path.join(out, 'fsinfo.json'))
  const more = {}
  for (let i = 0; i < 12; i++) more[`more/m${i}.bin`] = prng(1 << 20, `two${i}`) // 12 MiB into the ~12 MiB left
  await writeTree(src, more)
  await assert.rejects(build(opts(src, out, key, { threads: 2, workersAfter: 0 })), err => err.code === 'ENOSPC' && err.syscall === 'write')
  assert.deepEqual(await fs.readFile(path.join(out, 'fsinfo.json')), before)
  assert.deepEqual((await fs.readdir(path.join(out, 'h'))).filter(n => !/^[0-9a-f]{64}$/.test(n)), [])
  await checkPublished(out, key.publicKey, { now: NOW })
})

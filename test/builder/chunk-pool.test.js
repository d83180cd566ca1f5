// The chunk worker pool (builder/chunk-pool.js): the tree does not depend on
// how many threads read the files, and a file's error comes back from a worker
// as the same typed error the main thread gives.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { spawnSync } from 'node:child_process'
import { rmSync } from 'node:fs'
import { tmpdir, writeTree, makeKey, prng } from '../helpers/fixtures.js'
import { checkPublished } from '../helpers/check-tree.js'
import { build } from '../../builder/build.js'
import { BlobStore } from '../../lib/published/blob-store.js'
import { ChunkPool, encodeError, decodeError } from '../../builder/chunk-pool.js'
import { chunkFileSync, readBuffer, READ_SIZE } from '../../builder/chunk-file.js'
import { chunkLengths } from 'rotree-client/src/format/cdc.js'
import { BuildInputError, RotreeError } from 'rotree-client/errors'
import { CHUNK_MIN, CHUNK_MAX, INLINE_MAX } from 'rotree-client/src/format/limits.js'

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
  const runs = [
    { name: 'main thread only', threads: 0 },
    { name: '1 worker', threads: 1, workersAfter: 0 },
    { name: '3 workers', threads: 3, workersAfter: 0 },
    { name: 'default pool, workers started on demand', threads: undefined, workersAfter: 1 << 20 }
  ]
  const results = []
  for (const r of runs) {
    const out = path.join(dir, `out-${results.length}`)
    const res = await build(opts(src, out, key, { threads: r.threads, workersAfter: r.workersAfter }))
    await checkPublished(out, key.publicKey, { now: NOW })
    results.push({ ...r, res, h: await listH(out) })
  }
  const [zero, ...rest] = results
  assert.equal(zero.res.pool.workerFiles, 0)
  for (const r of rest) {
    assert.equal(r.res.root, zero.res.root, `${r.name}: root`)
    assert.deepEqual(r.h, zero.h, `${r.name}: h/ listing`)
    assert.deepEqual(r.res.blobs, zero.res.blobs, `${r.name}: blobs written and reused`)
  }
  // the workers did read: with workersAfter 0 every file goes to them
  assert.equal(results[1].res.pool.mainFiles, 0); assert.ok(results[1].res.pool.workerFiles > 300)
  assert.equal(results[2].res.pool.mainFiles, 0); assert.equal(results[2].res.pool.threads, 3)
  assert.ok(results[3].res.pool.workerFiles > 0, 'past workersAfter, workers take over')
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
})

// what a task becomes with 0 or 2 threads: the settled value, or the error's observable shape
async function outcome (store, threads, task) {
  const pool = new ChunkPool(store, { threads, workersAfter: 0 })
  try {
    const r = await pool.chunk(task)
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
  const store = await new BlobStore(path.join(dir, 'out'), { fsync: false }).open()
  const st = async p => fs.lstat(path.join(dir, 'src', p))
  const id = async p => { const s = await st(p); return { dev: s.dev, ino: s.ino } }
  const cases = {
    vanished: { abs: path.join(dir, 'src/gone'), rel: '/gone', size: 10, mtimeMs: 1, dev: 0, ino: 0 },
    'grew since the scan': { abs: path.join(dir, 'src/big.bin'), rel: '/big.bin', size: 1000, mtimeMs: (await st('big.bin')).mtimeMs, ...await id('big.bin') },
    'shrank since the scan': { abs: path.join(dir, 'src/small'), rel: '/small', size: 20, mtimeMs: (await st('small')).mtimeMs, ...await id('small') },
    'touched since the scan': { abs: path.join(dir, 'src/big.bin'), rel: '/big.bin', size: 300_000, mtimeMs: 5, ...await id('big.bin') },
    'a directory now': { abs: path.join(dir, 'src/sub'), rel: '/sub', size: 4096, mtimeMs: (await st('sub')).mtimeMs, ...await id('small') },
    'a symlink now': { abs: path.join(dir, 'src/ln'), rel: '/ln', size: 5, mtimeMs: (await st('ln')).mtimeMs, ...await id('small') },
    'another file now': { abs: path.join(dir, 'src/small'), rel: '/small', size: 12, mtimeMs: (await st('small')).mtimeMs, ...await id('big.bin') }
  }
  for (const [name, task] of Object.entries(cases)) {
    const main = await outcome(store, 0, task)
    const worker = await outcome(store, 2, task)
    assert.ok(main.err, `${name}: fails`)
    assert.equal(main.err.code, 'ROTREE_BUILD_INPUT', `${name}: ${main.err.message}`)
    assert.equal(main.err.class, 'BuildInputError')
    assert.ok(main.err.message.startsWith(task.rel + ': '), `${name}: names the path: ${main.err.message}`)
    assert.deepEqual(worker.err, main.err, name)
    assert.equal(worker.pool.workerFiles + worker.pool.mainFiles, 0)
  }
  assert.equal((await outcome(store, 0, cases.vanished)).err.cause, 'ENOENT')
  assert.equal((await outcome(store, 0, cases['a symlink now'])).err.cause, 'ELOOP') // never followed out of the tree
  assert.equal((await outcome(store, 2, cases['grew since the scan'])).err.changed, true)
  // and a good file is the same from both
  const ok = { abs: path.join(dir, 'src/big.bin'), rel: '/big.bin', size: 300_000, mtimeMs: (await st('big.bin')).mtimeMs, ...await id('big.bin') }
  const [m, w] = [await outcome(store, 0, ok), await outcome(store, 2, ok)]
  assert.deepEqual(w.ok, m.ok)
  assert.equal(w.pool.workerFiles, 1)
})

test('system errors keep their code, errno, syscall and path across the thread boundary', () => {
  const sys = Object.assign(new Error('ENOSPC: no space left on device, write'), { errno: -28, code: 'ENOSPC', syscall: 'write', path: '/x/h/.tmp-1' })
  const back = decodeError(encodeError(sys))
  assert.equal(back.constructor, Error)
  for (const k of ['message', 'errno', 'code', 'syscall', 'path']) assert.equal(back[k], sys[k], k)
  const input = new BuildInputError('/a: cannot open (EACCES)', { cause: Object.assign(new Error('EACCES'), { code: 'EACCES' }), details: { path: '/a' } })
  const back2 = decodeError(encodeError(input))
  assert.ok(back2 instanceof BuildInputError)
  assert.deepEqual([back2.name, back2.code, back2.message, back2.path, back2.cause.code], [input.name, input.code, input.message, '/a', 'EACCES'])
})

test('a file that vanishes while workers read the tree fails the build naming it; --skip-bad skips it', async t => {
  const dir = await tmpdir(); t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const src = path.join(dir, 'src')
  const tree = { 'victim.bin': prng(200_000, 'v'), 'keep.txt': 'kept' }
  for (let i = 0; i < 20; i++) tree[`sub/f${i}`] = prng(30_000 + i, `s${i}`)
  await writeTree(src, tree)
  const key = makeKey()
  const before = process.getActiveResourcesInfo().filter(r => r === 'Worker' || r === 'MessagePort').length
  // build.js reads a directory's files only after its subdirectories': the
  // first file done (in sub/) is done before any file of the root is read
  const onProgressOnce = () => { let once = false; return () => { if (!once) { once = true; rmSync(path.join(src, 'victim.bin'), { force: true }) } } }

  const out = path.join(dir, 'out')
  await assert.rejects(build(opts(src, out, key, { threads: 2, workersAfter: 0, onProgress: onProgressOnce() })),
    err => err instanceof BuildInputError && err.code === 'ROTREE_BUILD_INPUT' && err.message === '/victim.bin: cannot open (ENOENT)' && err.cause?.code === 'ENOENT')
  await assert.rejects(fs.access(path.join(out, 'fsinfo.json')), { code: 'ENOENT' }) // nothing published
  assert.deepEqual((await fs.readdir(path.join(out, 'h'))).filter(n => !/^[0-9a-f]{64}$/.test(n)), [])

  await writeTree(src, { 'victim.bin': prng(200_000, 'v') })
  const warnings = []
  const skipped = await build(opts(src, out, key, { threads: 2, workersAfter: 0, onBad: 'skip', warn: m => warnings.push(m), onProgress: onProgressOnce() }))
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
  const st = await fs.stat(path.join(dir, 'src/a.bin'))
  const store = await new BlobStore(path.join(dir, 'out'), { fsync: false }).open()
  const pool = new ChunkPool(store, { threads: 1, workersAfter: 0 })
  const task = { abs: path.join(dir, 'src/a.bin'), rel: '/a.bin', size: st.size, mtimeMs: st.mtimeMs, dev: st.dev, ino: st.ino }
  const p = pool.chunk(task)
  // once it is working on the file, kill its thread
  while (!pool.workers[0]?.inflight) await new Promise(resolve => setImmediate(resolve))
  await pool.workers[0].w.terminate()
  await assert.rejects(p, /chunk worker thread exited unexpectedly/)
  await assert.rejects(pool.chunk(task), /chunk worker thread exited unexpectedly/)
  await pool.close()
})

test('a pool left open does not keep the process alive', async t => {
  const dir = await tmpdir(); t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const lib = name => JSON.stringify(new URL(`../../builder/${name}`, import.meta.url).href)
  const script = path.join(dir, 'forgets-close.mjs')
  await fs.writeFile(script, `
    import fs from 'node:fs'
    import path from 'node:path'
    import { BlobStore } from ${JSON.stringify(new URL('../../lib/published/blob-store.js', import.meta.url).href)}
    import { ChunkPool } from ${lib('chunk-pool.js')}
    const dir = ${JSON.stringify(dir)}
    fs.writeFileSync(path.join(dir, 'f'), 'x'.repeat(100000))
    const st = fs.statSync(path.join(dir, 'f'))
    const store = await new BlobStore(path.join(dir, 'out'), { fsync: false }).open()
    const pool = new ChunkPool(store, { threads: 2, workersAfter: 0 })
    const r = await pool.chunk({ abs: path.join(dir, 'f'), rel: '/f', size: st.size, mtimeMs: st.mtimeMs, dev: st.dev, ino: st.ino })
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

// `rotree get` writes files on a thread of its own once a download is large
// (cli/get-writer.js): the same bytes, modes and mtimes as on the main
// thread, nothing left under a temporary name, a name already taken refused,
// and the thread's failures reported, never waited on forever. Real files,
// a real server on port 0.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { createHash } from 'node:crypto'
import diagnostics from 'node:diagnostics_channel'
import { openTree } from 'rotree-client'
import { getPath } from '../../cli/download.js'
import { FileWriter } from '../../cli/get-writer.js'
import { tmpdir, address, prng } from '../helpers/fixtures.js'
import { servedHere } from './helpers.js'

/** Every entry below `dir`: kind, mode, mtime (ms) and content hash, by relative path. */
async function listing (dir) {
  const out = {}
  for (const rel of (await fs.readdir(dir, { recursive: true })).sort()) {
    const p = path.join(dir, rel)
    const s = await fs.lstat(p)
    if (s.isSymbolicLink()) out[rel] = 'link ' + await fs.readlink(p)
    else if (s.isDirectory()) out[rel] = 'dir'
    else out[rel] = `file ${(s.mode & 0o777).toString(8)} ${Math.floor(s.mtimeMs)} ${createHash('sha256').update(await fs.readFile(p)).digest('hex')}`
  }
  return out
}

/** Workers started while `fn` runs. */
async function workersDuring (fn) {
  let n = 0
  const count = () => { n++ }
  diagnostics.subscribe('worker_threads', count)
  try { await fn() } finally { diagnostics.unsubscribe('worker_threads', count) }
  return n
}

/** `files` built into a tree and served: { dir, site, tree }. */
async function served (t, files) {
  const s = await servedHere(t, files, 'rotree-writer-')
  const tree = await openTree(address(s.url, s.pub), { stateDir: null })
  t.after(() => tree.close())
  return { ...s, tree }
}

test('a download through the file-writing thread (writerFrom: 0) is exactly as the tree has it', { timeout: 120_000 }, async t => {
  const files = {}
  const mtime = Date.UTC(2024, 4, 1, 12, 0, 0, 123)
  for (let i = 0; i < 400; i++) {
    const d = `d${String(i % 23).padStart(2, '0')}/${i % 3 ? 'sub/' : ''}`
    // inline files, one-chunk files, multi-chunk files under 1 MiB, and three over it (renamed on the thread too)
    const size = i % 150 === 7 ? 1_200_000 : [40, 900, 9000, 40_000, 300_000][i % 20 ? i % 4 : 4]
    files[`${d}f${i}`] = { data: prng(size, 'w' + i), mode: i % 7 ? 0o644 : 0o755, mtime: mtime + i }
  }
  files['d00/link'] = { symlink: 'sub/f3' }
  const { dir, site, tree } = await served(t, files)
  const dest = path.join(dir, 'copy')
  let r
  const threads = await workersDuring(async () => { r = await getPath(tree, '/', dest, { writerFrom: 0 }) })
  assert.equal(threads, 1, 'one file-writing thread for the download')
  assert.equal(r.files, 400)
  const got = await listing(dest)
  assert.deepEqual(got, await listing(site))
  assert.ok(!Object.keys(got).some(n => n.includes('.rotree-')), 'no temporary file left')
  // a second run into the same DEST uses the directories already there (main thread) and keeps every file
  const again = await getPath(tree, '/', dest)
  assert.equal(again.unchanged, 400)
  assert.deepEqual(await listing(dest), got)
})

test('a download of fewer entries than the threshold (1,024) starts no thread', { timeout: 60_000 }, async t => {
  const { dir, site, tree } = await served(t, { 'a/x': 'x\n', 'a/y': prng(50_000, 'y'), z: 'z\n' })
  const dest = path.join(dir, 'copy')
  assert.equal(await workersDuring(() => getPath(tree, '/', dest)), 0)
  assert.deepEqual(await listing(dest), await listing(site))
})

test('FileWriter: bytes, mode, mtime; the ring wraps; a taken name is a collision; errors come back', { timeout: 60_000 }, async t => {
  const dir = await tmpdir('rotree-writer-')
  t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const w = new FileWriter()
  t.after(() => w.close())
  // 30 files of 700-845 KiB: more than the 4 MiB ring holds, so it wraps (and skips its end) again and again
  const want = []
  const jobs = []
  for (let i = 0; i < 30; i++) {
    const data = prng(700_000 + i * 5_000, 'r' + i)
    const pieces = [data.subarray(0, 100), data.subarray(100, 4096), data.subarray(4096)]
    want.push(data)
    jobs.push(w.small({ dir, name: `f${i}`, mode: i % 2 ? 0o755 : 0o600, time: 1_700_000_000.5 + i }, pieces, data.length))
  }
  assert.deepEqual((await Promise.all(jobs)).map(r => !!r.collision), want.map(() => false))
  for (let i = 0; i < 30; i++) {
    const p = path.join(dir, `f${i}`)
    assert.deepEqual(await fs.readFile(p), want[i], `f${i}`)
    const s = await fs.stat(p)
    assert.equal(s.mode & 0o777, i % 2 ? 0o755 : 0o600)
    assert.equal(Math.floor(s.mtimeMs), 1_700_000_000_500 + i * 1000)
  }
  // a name already there is never replaced, and no temporary file is left
  await fs.writeFile(path.join(dir, 'taken'), 'before')
  assert.equal((await w.small({ dir, name: 'taken', mode: 0o644, time: 1 }, [Buffer.from('after')], 5)).collision, true)
  assert.equal(await fs.readFile(path.join(dir, 'taken'), 'utf8'), 'before')
  await fs.writeFile(path.join(dir, 'tmp-a'), 'a')
  assert.equal((await w.place(path.join(dir, 'tmp-a'), path.join(dir, 'taken'))).collision, true)
  assert.deepEqual(await w.place(path.join(dir, 'tmp-a'), path.join(dir, 'moved')), { collision: false })
  assert.equal(await fs.readFile(path.join(dir, 'moved'), 'utf8'), 'a')
  assert.deepEqual((await fs.readdir(dir)).filter(n => n.startsWith('.rotree-')), [])
  // a system error comes back as one, with its code
  await assert.rejects(w.small({ dir: path.join(dir, 'missing'), name: 'x', mode: 0o644, time: 1 }, [Buffer.from('x')], 1), err => err.code === 'ENOENT' && err.syscall === 'open')
  // a thread that is gone fails its callers at once
  await w.close()
  await assert.rejects(w.small({ dir, name: 'late', mode: 0o644, time: 1 }, [Buffer.from('x')], 1))
})

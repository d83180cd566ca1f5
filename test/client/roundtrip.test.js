// Round trip: build a tree with every entry type, serve it with the embedded
// server, read it back with `rotree get` and the library, compare everything.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { createHash } from 'node:crypto'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { openTree } from 'rotree-client'
import { tmpdir, makeKey, writeTree, buildTree, serve, address, prng } from '../helpers/fixtures.js'
import { decodeRoot } from '../../lib/published/signed-roots.js'

const run = promisify(execFile)
const BIN = new URL('../../bin/rotree.js', import.meta.url).pathname
const MTIME = Date.UTC(2024, 4, 17, 12, 30, 15, 250)

const sha = b => createHash('sha256').update(b).digest('hex')

/** Everything about a local tree a round trip must keep: bytes, types, targets, exec bits, mtimes. */
async function describe (root) {
  const out = {}
  async function walk (abs, rel) {
    const st = await fs.lstat(abs)
    const d = { type: st.isDirectory() ? 'dir' : st.isSymbolicLink() ? 'symlink' : 'file', mtime: Math.floor(st.mtimeMs) }
    if (st.isFile()) { d.exec = (st.mode & 0o111) !== 0; d.size = st.size; d.sha = sha(await fs.readFile(abs)) }
    if (st.isSymbolicLink()) { d.target = await fs.readlink(abs); delete d.mtime } // symlink mtimes are best effort
    out[rel] = d
    if (!st.isDirectory()) return
    // 64 entries at a time: one at a time is a thread-pool round trip after another for the 20,000 files below
    const names = await fs.readdir(abs)
    for (let i = 0; i < names.length; i += 64) await Promise.all(names.slice(i, i + 64).map(n => walk(path.join(abs, n), rel + '/' + n)))
  }
  await walk(root, '')
  return out
}

const HUGE = 20_000

test('round trip of every entry type through build, serve and get', { timeout: 300_000 }, async t => {
  const dir = await tmpdir(); t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const src = path.join(dir, 'src')
  const big = prng(100 * 1024 * 1024, 'big')
  await writeTree(src, {
    'empty.txt': '',
    'emptydir': { dir: true },
    'hello.txt': { data: 'hello, world\n', mtime: MTIME },
    'docs/README.md': '# readme\n'.repeat(2000), // > inline threshold (16 KiB in format 2): one chunk
    'docs/deep/a/b/c/file.txt': 'deep\n',
    'bin/tool.sh': { data: '#!/bin/sh\necho hi\n', mode: 0o755 },
    'big.iso': big,
    'mid.bin': prng(3 * 1024 * 1024, 'mid'),
    'héllo wörld ✓.txt': 'unicode\n',
    '日本語/ファイル.txt': 'にほんご\n',
    'link-to-hello': { symlink: 'hello.txt' },
    'docs/link-up': { symlink: '../hello.txt' },
    'link-dir': { symlink: 'docs/deep' },
    'link-chain': { symlink: 'link-to-hello' }
  })
  // a directory of 20,000 entries: ~500 KB of entries, so paged (past PAGE_MIN, FORMAT.md §4.4) under an index
  const huge = path.join(src, 'huge')
  await fs.mkdir(huge)
  for (let i = 0; i < HUGE; i += 1000) {
    await Promise.all(Array.from({ length: 1000 }, (_, j) => fs.writeFile(path.join(huge, `f${String(i + j).padStart(6, '0')}`), String(i + j))))
  }
  await fs.utimes(path.join(src, 'docs'), MTIME / 1000, MTIME / 1000)

  const key = makeKey()
  const { out, result } = await buildTree(src, { key })
  assert.equal(result.files, HUGE + 9)
  const srv = await serve(out); t.after(srv.close)
  const addr = address(srv.url, key.publicKey)

  // every blob file is the SHA-256 of its bytes
  for (const name of await fs.readdir(path.join(out, 'h'))) {
    assert.equal(sha(await fs.readFile(path.join(out, 'h', name))), name)
  }

  const copy = path.join(dir, 'copy')
  const state = path.join(dir, 'state')
  await run(process.execPath, [BIN, 'get', addr, '/', '-o', copy], { env: { ...process.env, ROTREE_STATE: state }, maxBuffer: 1 << 20 })
  const want = await describe(src)
  const got = await describe(copy)
  assert.deepEqual(Object.keys(got).sort(), Object.keys(want).sort())
  for (const k of Object.keys(want)) assert.deepEqual(got[k], want[k], k)

  // the library: stat, readdir, readFile, ranged streams, symlinks
  const tree = await openTree(addr, { stateDir: null }); t.after(() => tree.close())
  assert.equal((await tree.stat('/hello.txt')).mtimeMs, MTIME)
  assert.equal((await tree.stat('/bin/tool.sh')).exec, true)
  assert.equal((await tree.lstat('/link-chain')).target, 'link-to-hello')
  assert.equal(Buffer.from(await tree.readFile('/link-chain')).toString(), 'hello, world\n')
  assert.deepEqual(await tree.readdir('/link-dir'), ['a'])
  assert.equal((await tree.readdir('/huge')).length, HUGE)
  assert.equal(Buffer.from(await tree.readFile('/huge/f014321')).toString(), '14321')
  assert.equal((await tree.stat('/huge')).entries, HUGE)
  await assert.rejects(tree.stat('/huge/f020000'), { code: 'ROTREE_NOT_FOUND' })
  await assert.rejects(tree.stat('/hello.txt/x'), { code: 'ROTREE_NOT_A_DIRECTORY' })
  await assert.rejects(tree.readFile('/docs'), { code: 'ROTREE_IS_A_DIRECTORY' })
  await assert.rejects(tree.stat('/../etc/passwd'), { code: 'ROTREE_BAD_PATH' })
  for (const [start, end] of [[0, 0], [big.length - 1, big.length - 1], [1000, 5000], [262_000, 1_500_000], [big.length - 10, big.length + 10], [50_000_000, 50_000_000 + 3 * 1024 * 1024]]) {
    const parts = []
    for await (const b of tree.createReadStream('/big.iso', { start, end })) parts.push(b)
    assert.ok(Buffer.concat(parts).equals(big.subarray(start, end + 1)), `range ${start}-${end}`)
  }
})

test('the same input gives the same root; an edit moves only nearby chunks', { timeout: 120_000 }, async t => {
  const dir = await tmpdir(); t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const src = path.join(dir, 'src')
  const data = prng(50 * 1024 * 1024, 'fifty')
  await writeTree(src, { 'a/b.txt': 'b', 'file.bin': { data, mtime: MTIME }, 'l': { symlink: 'a/b.txt' } })
  const key = makeKey()
  const now = Date.UTC(2026, 0, 1)
  const one = await buildTree(src, { key, now, seq: 5 })
  const two = await buildTree(src, { key, now, seq: 5 })
  assert.equal(one.result.root, two.result.root)
  assert.deepEqual(await fs.readFile(path.join(one.out, 'fsinfo.json')), await fs.readFile(path.join(two.out, 'fsinfo.json')))

  // insert 100 bytes in the middle and rebuild into the same OUT
  const edited = Buffer.concat([data.subarray(0, 25_000_000), Buffer.alloc(100, 7), data.subarray(25_000_000)])
  await fs.writeFile(path.join(src, 'file.bin'), edited)
  const chunks = one.result.blobs.written - 3 // the blobs of file.bin: all but two directories and the chunk index
  const before = (await fs.readdir(path.join(one.out, 'h'))).length
  const three = await buildTree(src, { key, out: one.out })
  const added = (await fs.readdir(path.join(one.out, 'h'))).length - before
  assert.notEqual(three.result.root, one.result.root)
  // the chunks around the edit, the file's index blob and the root directory: a handful, not ~200
  assert.ok(chunks > 100 && added <= 6, `an edit in a ${chunks}-chunk file added ${added} blobs`)
  assert.ok(three.result.blobs.reused >= chunks - 3, `reused ${three.result.blobs.reused} of ${chunks} chunks`)
})

test('SFSRO Fig. 6 and Fig. 10 request counts (P4, P5)', { timeout: 60_000 }, async t => {
  const dir = await tmpdir(); t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const src = path.join(dir, 'src')
  const files = {}
  for (let d = 0; d < 10; d++) for (let f = 0; f < 100; f++) files[`d${d}/f${f}`] = prng(1024, `${d}/${f}`)
  files['a/b/c/d.txt'] = 'depth four\n'
  files['top.txt'] = 'depth one\n'
  await writeTree(src, files)
  const key = makeKey()
  const { out } = await buildTree(src, { key })
  const srv = await serve(out); t.after(srv.close)
  const addr = address(srv.url, key.publicKey)

  // P4: read all 1,000 files (SFSRO: 2,101 RPCs; target ≤ 25 HTTP requests)
  const { getPath } = await import('../../cli/download.js')
  const tree = await openTree(addr, { stateDir: null }); t.after(() => tree.close())
  await getPath(tree, '/', path.join(dir, 'copy'))
  const p4 = tree.stats.requests
  t.diagnostic(`P4: ${p4} HTTP requests for 1,000 files in 10 directories`)
  assert.ok(p4 <= 25, `P4 took ${p4} requests`)

  // P5: cold lookups, counted after fsinfo.json (SFSRO: 5 / 11 RPCs; targets 2 / 5)
  for (const [p, max] of [['/top.txt', 2], ['/a/b/c/d.txt', 5]]) {
    const cold = await openTree(addr, { stateDir: null })
    const base = cold.stats.requests
    assert.equal(Buffer.from(await cold.readFile(p)).toString().trim().split(' ')[1], p === '/top.txt' ? 'one' : 'four')
    const n = cold.stats.requests - base
    t.diagnostic(`P5: ${n} requests to read ${p} cold`)
    assert.ok(n <= max, `${p}: ${n} requests`)
    cold.close()
  }
})

test('walkTree reaches every blob; snapshot() pins a root; a rotten local cache is re-verified', { timeout: 60_000 }, async t => {
  const { walkTree, verifyDirPage, verifyChunkIndex } = await import('rotree-client')
  const dir = await tmpdir(); t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const src = path.join(dir, 'src')
  await writeTree(src, { 'a.txt': 'a', 'big.bin': prng(12 << 20, 'w'), 'd/e/f.txt': prng(20_000, 'f'), 'same1/x': 'dup', 'same2/x': 'dup' })
  const key = makeKey()
  // the builder's default format, with its own sequence numbers (version 2: from the clock)
  const { out, result } = await buildTree(src, { key })
  const read = ref => fs.readFile(path.join(out, 'h', ref.hash))
  const seen = new Set(); const paths = []
  // the root ref as fsinfo.json signs it (version 2: with its codec and sizes, FORMAT.md §12.6)
  const rootRef = decodeRoot(await fs.readFile(path.join(out, 'fsinfo.json'))).root
  assert.equal(rootRef.hash, result.root)
  await walkTree(rootRef,
    async (ref, kind) => kind === 'dir' ? verifyDirPage(await read(ref), ref) : verifyChunkIndex(await read(ref), ref),
    (ref, kind, p) => { seen.add(ref.hash); paths.push(p) })
  assert.deepEqual([...seen].sort(), (await fs.readdir(path.join(out, 'h'))).sort())
  assert.ok(paths.includes('/same1') && paths.includes('/same2') && paths.includes('/big.bin'))

  const srv = await serve(out); t.after(srv.close)
  const store = new Map()
  const blobCache = { get: async h => store.get(h), put: async (h, b) => { store.set(h, b) }, delete: async h => { store.delete(h) } }
  const tree = await openTree(address(srv.url, key.publicKey), { stateDir: null, blobCache }); t.after(() => tree.close())
  const view = tree.snapshot()
  await buildTree(src, { key, out }) // same content, new root record
  await fs.writeFile(path.join(src, 'a.txt'), 'changed')
  await buildTree(src, { key, out })
  assert.equal(await tree.refresh(), true)
  assert.equal(view.info.seq, result.seq)
  assert.equal(Buffer.from(await view.readFile('/a.txt')).toString(), 'a') // the pinned root
  assert.equal(Buffer.from(await tree.readFile('/a.txt')).toString(), 'changed')
  await tree.readFile('/d/e/f.txt') // root, d, e pages and the chunk now sit in the local cache
  // rot every cached blob: reads still return true bytes, fetched again from the mirror
  for (const [h, b] of store) { const bad = Buffer.from(b); bad[0] ^= 1; store.set(h, bad) }
  const fresh = await openTree(address(srv.url, key.publicKey), { stateDir: null, blobCache }); t.after(() => fresh.close())
  assert.equal(Buffer.from(await fresh.readFile('/d/e/f.txt')).compare(prng(20_000, 'f')), 0)
  assert.equal(fresh.stats.localFaults, 4)
})

// The build index (builder/build-index.js): a rebuild reads only changed
// files, and whatever the edits, gives exactly the root a clean build of the
// same input gives.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { Level } from 'level'
import { tmpdir, writeTree, makeKey, prng } from '../helpers/fixtures.js'
import { build } from '../../builder/build.js'
import { pageLoader } from '../../lib/published/pages.js'
import { BuildIndex, INDEX_DIR } from '../../builder/build-index.js'
import { checkPublished } from '../helpers/check-tree.js'

const NOW = Date.UTC(2026, 5, 1)
// racyMs 0: these files were all written a moment ago; the default would
// (rightly) refuse to trust any of them. The racy rule has its own test below.
const opts = (src, out, key, extra = {}) => ({ src, out, key, ttlMs: 3600e3, now: NOW, fsync: false, racyMs: 0, ...extra })

/** A small deterministic PRNG (mulberry32), so a failure can be replayed from its seed. */
function rng (seed) {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

async function allFiles (root, rel = '') {
  const out = []
  for (const e of await fs.readdir(path.join(root, rel), { withFileTypes: true })) {
    const r = path.join(rel, e.name)
    if (e.isDirectory()) out.push(...await allFiles(root, r))
    else if (e.isFile()) out.push(r)
  }
  return out.sort()
}

const sizes = [0, 10, 900, 4096, 4097, 20_000, 70_000, 300_000, 1_500_000]

async function randomEdit (src, rand, i) {
  const files = await allFiles(src)
  const pick = () => files[Math.floor(rand() * files.length)]
  const size = () => sizes[Math.floor(rand() * sizes.length)]
  const kind = Math.floor(rand() * 10)
  const f = pick()
  const p = f && path.join(src, f)
  switch (kind) {
    case 0: { // same size, new bytes, old mtime put back: only ctime tells
      if (!f) break
      const st = await fs.stat(p)
      if (st.mtimeMs % 1000 !== 0) break // only a whole-second mtime can be put back exactly
      await fs.writeFile(p, prng(st.size, `edit ${i}`))
      await fs.utimes(p, st.mtimeMs / 1000, st.mtimeMs / 1000)
      assert.equal((await fs.stat(p)).mtimeMs, st.mtimeMs)
      return `rewrite ${f} keeping size and mtime`
    }
    case 1: if (f) { await fs.appendFile(p, `more ${i}\n`); return `append ${f}` } break
    case 2: if (f) { await fs.truncate(p, Math.floor((await fs.stat(p)).size / 3)); return `truncate ${f}` } break
    case 3: if (f) { await fs.rm(p); return `delete ${f}` } break
    case 4: if (f) { const st = await fs.stat(p); await fs.chmod(p, st.mode ^ 0o111); return `chmod ${f}` } break
    case 5: if (f) { await fs.utimes(p, new Date(NOW - i * 1000), new Date(NOW - i * 7777)); return `touch ${f}` } break
    case 6: if (f) { await fs.rename(p, path.join(src, `moved-${i}`)); return `rename ${f}` } break
    case 7: if (f) { await fs.rm(p); await fs.symlink('moved-elsewhere', p); return `replace ${f} with a symlink` } break
  }
  const n = `new${i}/${i % 3 ? 'x' : 'y'}-${i}.bin`
  await writeTree(src, { [n]: prng(size(), `new ${i}`) })
  return `add ${n}`
}

test('random edits: every incremental rebuild equals a clean build, and reads only what changed', { timeout: 120_000 }, async t => {
  const seed = Number(process.env.ROTREE_SEED ?? Date.now() % 1e6)
  t.diagnostic(`seed ${seed} (ROTREE_SEED=${seed} replays it)`)
  const rand = rng(seed)
  const dir = await tmpdir(); t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const src = path.join(dir, 'src'); const out = path.join(dir, 'out')
  const files = { 'huge.bin': prng(12 << 20, 'huge'), 'dup1/same.bin': prng(300_000, 'dup'), 'dup2/same.bin': prng(300_000, 'dup'), 'l': { symlink: 'huge.bin' } }
  for (let i = 0; i < 60; i++) files[`d${i % 6}/f${i}`] = { data: prng(sizes[i % sizes.length], `f${i}`), mtime: NOW - i * 1000 }
  await writeTree(src, files)
  const key = makeKey()
  const first = await build(opts(src, out, key))
  assert.equal(first.index.hits, 0)

  let totalHits = 0
  for (let round = 1; round <= 6; round++) {
    const done = []
    const edits = 1 + Math.floor(rand() * 4)
    for (let e = 0; e < edits; e++) done.push(await randomEdit(src, rand, round * 10 + e))
    const inc = await build(opts(src, out, key))
    const clean = await build(opts(src, path.join(dir, `clean${round}`), key, { seq: inc.seq }))
    assert.equal(inc.root, clean.root, `round ${round} (${done.join('; ')}): incremental ${inc.root} != clean ${clean.root}`)
    assert.equal(clean.index.hits, 0)
    // at most one file per edit is read again (a rename reads the file under its new name)
    assert.ok(inc.index.misses <= edits, `round ${round}: read ${inc.index.misses} files for ${edits} edits (${done.join('; ')})`)
    totalHits += inc.index.hits
    await checkPublished(out, key.publicKey, { now: NOW })
    await fs.rm(path.join(dir, `clean${round}`), { recursive: true })
  }
  assert.ok(totalHits > 6 * 50, `only ${totalHits} index hits`)
})

test('an indexed file whose chunk was deleted from h/ is read again; the root is unchanged', async t => {
  const dir = await tmpdir(); t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const src = path.join(dir, 'src'); const out = path.join(dir, 'out')
  await writeTree(src, { 'big.bin': prng(3 << 20, 'b'), 'small.txt': 'hi', 'mid.bin': prng(100_000, 'm') })
  const key = makeKey()
  const one = await build(opts(src, out, key))
  // its one chunk as the tree names it (version 2 names a blob by its stored bytes, deflated
  // when that pays: FORMAT.md §12.6), and that chunk holds the whole file
  const mid = (await fs.readFile(path.join(src, 'mid.bin')))
  const rootPage = await pageLoader(out)(one.version === 1 ? { hash: one.root, size: one.rootSize } : { hash: one.root, size: one.rootSize, storedSize: one.rootStoredSize, codec: one.rootCodec }, 'dir')
  const midEntry = rootPage.entries.find(e => e.name === 'mid.bin')
  assert.equal(midEntry.chunks.length, 1); assert.equal(midEntry.chunks[0].size, mid.length)
  const midHash = midEntry.chunks[0].hash
  await fs.rm(path.join(out, 'h', midHash))
  const two = await build(opts(src, out, key))
  assert.equal(two.root, one.root)
  assert.equal(two.index.misses, 1)
  assert.equal(two.index.hits, 2)
  await fs.access(path.join(out, 'h', midHash))
  await checkPublished(out, key.publicKey, { now: NOW })
})

test('new bytes under the old size and mtime are still seen (ctime), unlike a stat-only cache', async t => {
  const dir = await tmpdir(); t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const src = path.join(dir, 'src'); const out = path.join(dir, 'out')
  const mtime = NOW - 86400e3
  await writeTree(src, { 'a.bin': { data: prng(50_000, 'one'), mtime }, 'b.txt': { data: 'four', mtime } })
  const key = makeKey()
  const one = await build(opts(src, out, key))
  await new Promise(resolve => setTimeout(resolve, 20)) // past the file system's timestamp granularity
  await writeTree(src, { 'a.bin': { data: prng(50_000, 'two'), mtime }, 'b.txt': { data: 'FOUR', mtime } })
  const two = await build(opts(src, out, key))
  assert.equal(two.index.hits, 0)
  assert.notEqual(two.root, one.root)
  assert.equal(two.root, (await build(opts(src, path.join(dir, 'clean'), key))).root)
})

test('changed chunking parameters empty the index; --rehash reads everything', async t => {
  const dir = await tmpdir(); t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const src = path.join(dir, 'src'); const out = path.join(dir, 'out')
  await writeTree(src, { 'a.bin': prng(200_000, 'a'), 'b.txt': 'b', 'c/d.bin': prng(5000, 'd') })
  const key = makeKey()
  const one = await build(opts(src, out, key))
  assert.equal((await build(opts(src, out, key))).index.hits, 3)
  const rehash = await build(opts(src, out, key, { rehash: true }))
  assert.equal(rehash.index.hits, 0); assert.equal(rehash.index.misses, 3); assert.equal(rehash.root, one.root)

  // an index written under other parameters (a stored fingerprint that differs)
  const db = new Level(path.join(out, INDEX_DIR), { keyEncoding: 'utf8', valueEncoding: 'view' })
  await db.put('meta:params', Buffer.from('chunked with other parameters'))
  await db.close()
  const two = await build(opts(src, out, key))
  assert.equal(two.index.invalidated, true)
  assert.equal(two.index.hits, 0)
  assert.equal(two.root, one.root)
  assert.equal((await build(opts(src, out, key))).index.hits, 3)
})

test('files changed just before they were read are not trusted next time (racy entries)', async t => {
  const dir = await tmpdir(); t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const src = path.join(dir, 'src'); const out = path.join(dir, 'out')
  await writeTree(src, { 'a.txt': 'a', 'b.bin': prng(100_000, 'b') })
  const key = makeKey()
  const one = await build({ ...opts(src, out, key), racyMs: undefined }) // the default margin
  assert.equal(one.index.racy, 2)
  const two = await build({ ...opts(src, out, key), racyMs: undefined })
  assert.equal(two.index.hits, 0, 'a file written a moment ago must be read again')
  // the same files, seen as old enough
  await build(opts(src, out, key))
  assert.equal((await build(opts(src, out, key))).index.hits, 2)
})

test('a build holds OUT\'s lock: a second build into the same OUT fails at once with ROTREE_LOCKED', async t => {
  const dir = await tmpdir(); t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const src = path.join(dir, 'src'); const out = path.join(dir, 'out')
  await writeTree(src, { 'a.txt': 'a' })
  const key = makeKey()
  await build(opts(src, out, key))
  const held = await BuildIndex.open(out)
  try {
    await assert.rejects(build(opts(src, out, key)), err => err.code === 'ROTREE_LOCKED' && /is locked by pid \d+ \(rotree build\)/.test(err.message))
  } finally { await held.close() }
  await build(opts(src, out, key))
})

test('a deleted file leaves its directory\'s record; a file that comes back is read again; a deleted directory\'s record is pruned', async t => {
  const dir = await tmpdir(); t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const src = path.join(dir, 'src'); const out = path.join(dir, 'out')
  await writeTree(src, { 'a.txt': 'a', 'b.txt': 'b', 'sub/c.txt': 'c', 'sub/deeper/d.txt': 'd' })
  const key = makeKey()
  await build(opts(src, out, key))
  await fs.rm(path.join(src, 'b.txt'))
  const two = await build(opts(src, out, key))
  assert.deepEqual([two.index.dirsEncoded, two.index.hits, two.index.misses], [1, 3, 0])
  await writeTree(src, { 'b.txt': 'b again' })
  const three = await build(opts(src, out, key))
  assert.equal(three.index.misses, 1)
  await fs.rm(path.join(src, 'sub'), { recursive: true })
  const four = await build(opts(src, out, key))
  assert.equal(four.index.pruned, 2, 'the records of sub/ and sub/deeper/')
  const keys = []
  const db = new Level(path.join(out, INDEX_DIR), { keyEncoding: 'utf8', valueEncoding: 'view' })
  for await (const k of db.keys({ gte: 'd:', lt: 'd;' })) keys.push(k)
  await db.close()
  assert.deepEqual(keys, ['d:'])
})

test('unchanged directories are not encoded again; one whose page left h/ is', async t => {
  const dir = await tmpdir(); t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const src = path.join(dir, 'src'); const out = path.join(dir, 'out')
  await writeTree(src, { 'a/x.txt': 'x', 'a/b/y.bin': prng(80_000, 'y'), 'c/z.txt': 'z', 'top.txt': 'top' })
  const key = makeKey()
  const one = await build(opts(src, out, key))
  assert.equal(one.index.dirsEncoded, 4)
  const two = await build(opts(src, out, key))
  assert.deepEqual([two.index.dirHits, two.index.dirsEncoded], [4, 0])
  assert.equal(two.root, one.root)
  // change one file two levels down: that directory and its parents are encoded, c/ is not
  await writeTree(src, { 'a/b/y.bin': prng(80_000, 'y2') })
  const three = await build(opts(src, out, key))
  assert.deepEqual([three.index.dirHits, three.index.dirsEncoded], [1, 3])
  // the root page gone from h/: encoded (and written) again, same root
  await fs.rm(path.join(out, 'h', three.root))
  const four = await build(opts(src, out, key))
  assert.equal(four.root, three.root)
  assert.equal(four.index.dirsEncoded, 1)
  await checkPublished(out, key.publicKey, { now: NOW })
})

test('an unchanged inlined file of a directory that changed is read again for its bytes; none is kept in the index', async t => {
  const dir = await tmpdir(); t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const src = path.join(dir, 'src'); const out = path.join(dir, 'out')
  await writeTree(src, { 'd/small.txt': 'small and inlined', 'd/other.txt': 'other', 'd/empty': '', 'd/big.bin': prng(100_000, 'big') })
  const key = makeKey()
  await build(opts(src, out, key))
  await writeTree(src, { 'd/other.txt': 'other, changed' })
  const r = await build(opts(src, out, key))
  assert.equal(r.index.misses, 1) // other.txt
  assert.equal(r.index.reread, 2) // small.txt and empty, for their bytes; big.bin comes from its record
  assert.equal(r.index.hits, 3)
  assert.equal(r.root, (await build(opts(src, path.join(dir, 'clean'), key))).root)
  // the index holds no file's bytes: one record per directory, and the meta keys
  const db = new Level(path.join(out, INDEX_DIR), { keyEncoding: 'utf8', valueEncoding: 'view' })
  const keys = []
  let bytes = 0
  for await (const [k, v] of db.iterator()) { keys.push(k); bytes += v.length }
  await db.close()
  assert.deepEqual(keys.sort(), ['d:', 'd:\0d', 'meta:h', 'meta:params', 'meta:totals'])
  assert.ok(bytes < 2000, `${bytes} bytes`)
})

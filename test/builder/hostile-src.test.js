// A build never signs bytes from outside SRC, and never publishes an entry
// readers would refuse, whatever happens to SRC between the scan and the read
// (builder/src-dirs.js, chunk-file.js) or to the build index in between builds.
// The swaps happen between a directory's listing (which lstat()s its
// subdirectories) and the open of what it lists: the build's onListed hook.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { inflateRawSync } from 'node:zlib'
import { Level } from 'level'
import { tmpdir, writeTree, makeKey, prng } from '../helpers/fixtures.js'
import { checkPublished } from '../helpers/check-tree.js'
import { build } from '../../builder/build.js'
import { checkFileEntry } from '../../builder/encode-dir.js'
import { DirRecord, HEAD, ROW } from '../../builder/dir-record.js'
import { INDEX_DIR } from '../../builder/build-index.js'
import { pageLoader } from '../../lib/published/pages.js'
import { BuildInputError } from 'rotree-client/errors'

const NOW = Date.UTC(2026, 5, 1)
const opts = (src, out, key, extra = {}) => ({ src, out, key, ttlMs: 3600e3, now: NOW, fsync: false, racyMs: 0, ...extra })
const MARK = 'OUTSIDE-SECRET'

// SRC with a file two levels down, and, outside SRC, a look-alike: same
// names, same sizes, same mtimes, other bytes (what a swap would serve).
async function setup (t) {
  const dir = await tmpdir('rotree-swap-'); t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const src = path.join(dir, 'src'); const outside = path.join(dir, 'outside')
  const inside = { 'a/b/big.bin': prng(200_000, 'inside'), 'a/b/small.txt': 'inside, and inlined', 'top.txt': 'top' }
  await writeTree(src, inside)
  for (const rel of ['a/b/big.bin', 'a/b/small.txt']) {
    const st = await fs.stat(path.join(src, rel))
    const fake = Buffer.alloc(st.size, '.')
    fake.write(MARK)
    await writeTree(outside, { [rel]: fake })
    // a whole second, so both mtimes are exactly equal: size and mtime cannot tell them apart
    for (const root of [src, outside]) await fs.utimes(path.join(root, rel), 1_700_000_000, 1_700_000_000)
  }
  return { dir, src, outside, key: makeKey() }
}

/** Does any blob in OUT/h hold the outside bytes? */
async function leaked (out) {
  const h = path.join(out, 'h')
  let names = []
  try { names = await fs.readdir(h) } catch { return false }
  for (const n of names) {
    const bytes = await fs.readFile(path.join(h, n))
    if (bytes.includes(MARK)) return true
    // version 2 stores a blob deflated when it pays (FORMAT.md §12.6): the outside bytes, mostly
    // dots, would be; look inside every blob that inflates
    let inflated = null
    try { inflated = inflateRawSync(bytes) } catch {}
    if (inflated?.includes(MARK)) return true
  }
  return false
}

// each swap, and the directory whose listing it follows
const swaps = {
  // SRC/a/b moved away, a symlink to the look-alike in its place: the file's own directory
  'its directory for a symlink': async s => {
    await fs.rename(path.join(s.src, 'a/b'), path.join(s.dir, 'b-moved'))
    await fs.symlink(path.join(s.outside, 'a/b'), path.join(s.src, 'a/b'))
  },
  // SRC/a moved away: a directory higher up on the path
  'a directory higher up for a symlink': async s => {
    await fs.rename(path.join(s.src, 'a'), path.join(s.dir, 'a-moved'))
    await fs.symlink(path.join(s.outside, 'a'), path.join(s.src, 'a'))
  },
  // no symlink at all: another directory moved into its place
  'its directory for another directory': async s => {
    await fs.rename(path.join(s.src, 'a/b'), path.join(s.dir, 'b-moved'))
    await fs.rename(path.join(s.outside, 'a/b'), path.join(s.src, 'a/b'))
  }
}

const after = { 'its directory for a symlink': '/a', 'a directory higher up for a symlink': '/', 'its directory for another directory': '/a' }
const at = (name, s) => async rel => { if (rel === after[name]) await swaps[name](s) }

for (const [name] of Object.entries(swaps)) {
  for (const threads of [0, 2]) {
    test(`SRC swaps ${name} between scan and read (${threads} worker threads): refused, nothing from outside in h/`, async t => {
      const s = await setup(t)
      const out = path.join(s.dir, 'out')
      const extra = { threads, workersAfter: 0, onListed: at(name, s) }
      await assert.rejects(build(opts(s.src, out, s.key, extra)), err => {
        assert.ok(err instanceof BuildInputError, err.stack)
        assert.match(err.message, /^\/a(\/b)?: directory changed since the scan/)
        assert.ok(['/a', '/a/b'].includes(err.path), err.path)
        return true
      })
      assert.equal(await leaked(out), false, 'outside bytes in h/')
      await assert.rejects(fs.access(path.join(out, 'fsinfo.json')), 'nothing published')
    })
  }
}

test('with --skip-bad a swapped directory is left out, with a warning naming it, and the rest is published', async t => {
  const s = await setup(t)
  const out = path.join(s.dir, 'out')
  const warnings = []
  const r = await build(opts(s.src, out, s.key, { onBad: 'skip', warn: m => warnings.push(m), onListed: at('its directory for a symlink', s) }))
  assert.equal(warnings.length, 1)
  assert.match(warnings[0], /^skipping \/a\/b: directory changed since the scan \(is a symlink now\)/)
  assert.equal(await leaked(out), false)
  await checkPublished(out, s.key.publicKey, { now: NOW })
  // the tree is SRC without a/b
  const load = pageLoader(out)
  // the root's ref as the build made it: version 2's carries its codec and stored size (FORMAT.md §12.6)
  const root = await load(r.version === 1 ? { hash: r.root, size: r.rootSize } : { hash: r.root, size: r.rootSize, storedSize: r.rootStoredSize, codec: r.rootCodec }, 'dir')
  assert.deepEqual(root.entries.map(e => e.name), ['a', 'top.txt'])
  assert.deepEqual((await load(root.entries[0].dir, 'dir')).entries, [])
})

test('a rebuild reads through the same checks: a swap after an edit is refused', async t => {
  const s = await setup(t)
  const out = path.join(s.dir, 'out')
  await build(opts(s.src, out, s.key))
  await fs.appendFile(path.join(s.src, 'a/b/big.bin'), 'edited')
  await assert.rejects(build(opts(s.src, out, s.key, { onListed: at('a directory higher up for a symlink', s) })), { code: 'ROTREE_BUILD_INPUT', path: '/a' })
  assert.equal(await leaked(out), false)
})

test('an index record whose chunks do not add up to the file is not used: the file is read again', async t => {
  const dir = await tmpdir(); t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const src = path.join(dir, 'src'); const out = path.join(dir, 'out')
  await writeTree(src, { 'd/big.bin': prng(300_000, 'big'), 'd/other.txt': 'other' })
  const key = makeKey()
  const first = await build(opts(src, out, key))
  // damage big.bin's row in d/'s record: its first chunk one byte longer (stat fields untouched, so it would hit)
  const db = new Level(path.join(out, INDEX_DIR), { keyEncoding: 'utf8', valueEncoding: 'view' })
  const k = 'd:\0d'
  const v = Buffer.from(await db.get(k))
  const rec = new DirRecord(v)
  const i = rec.names.indexOf('big.bin')
  assert.ok(rec.chunks(i) !== null, 'a chunked record')
  const size = rec.chunks(i)[0].size
  const firstChunk = v.readDoubleLE(HEAD + ROW * i + 56) + 32 + 4 // its chunks: u32 n, then hash[32] u32 size each
  v.writeUInt32LE(v.readUInt32LE(firstChunk + 32) + 1, firstChunk + 32)
  assert.equal(new DirRecord(v).chunks(i)[0].size, size + 1)
  await db.put(k, v)
  await db.close()
  await writeTree(src, { 'd/other.txt': 'other, changed' }) // so d/ is encoded again from its records
  const r = await build(opts(src, out, key))
  assert.equal(r.index.misses, 2, 'big.bin read again')
  assert.equal(r.root, (await build(opts(src, path.join(dir, 'clean'), key))).root)
  assert.notEqual(r.root, first.root)
  await checkPublished(out, key.publicKey, { now: NOW })
})

test('checkFileEntry: chunk sizes must add up to the file size', () => {
  const e = { name: 'f', type: 'file', size: 10, mtime: 0, exec: false, chunks: [{ hash: 'a'.repeat(64), size: 4 }, { hash: 'b'.repeat(64), size: 6 }] }
  assert.equal(checkFileEntry(e, '/f'), e)
  assert.throws(() => checkFileEntry({ ...e, size: 11 }, '/d/f'), { code: 'ROTREE_BAD_FORMAT', path: '/d/f', message: /^\/d\/f: its chunks add up to 10 bytes, but the file is 11/ })
  assert.equal(checkFileEntry({ ...e, chunks: undefined, inline: new Uint8Array(3), size: 3 }, '/i').size, 3)
})

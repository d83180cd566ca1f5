// One file chunked on several threads (builder/big-file.js) cuts exactly
// where one sequential pass cuts: the segments' candidate chains are stitched
// by walking the true chain across each boundary until it meets them, and
// data on which they never meet is walked whole, never guessed.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import { openSync, closeSync, readSync } from 'node:fs'
import path from 'node:path'
import { createHash } from 'node:crypto'
import { tmpdir, writeTree, makeKey, prng } from '../helpers/fixtures.js'
import { checkPublished } from '../helpers/check-tree.js'
import { build } from '../../builder/build.js'
import { cutsFrom, stitch } from '../../builder/big-file.js'
import { recordedFiles } from '../../builder/build-index.js'
import { chunkLengths, nextCut, CHUNK_MAX, CHUNK_AVG } from 'rotree-client/format'

const NOW = Date.UTC(2026, 5, 1)
const opts = (src, out, key, extra = {}) => ({ src, out, key, ttlMs: 3600e3, now: NOW, fsync: false, racyMs: 0, ...extra })

const ends = lengths => { let p = 0; return lengths.map(n => (p += n)) }

function repeat (unit, n) {
  const b = Buffer.alloc(n)
  for (let i = 0; i < n; i += unit.length) unit.copy(b, i, 0, Math.min(unit.length, n - i))
  return b
}

// Kinds of data: random (chains meet within a chunk or two), no cut point at
// all (every chunk CHUNK_MAX long from wherever a chain starts: chains that
// start out of phase never meet), periodic (cuts repeat with the period, so
// chains meet only if their phases agree), and mixtures that switch between
// them across segment boundaries.
const data = {
  random: prng(24 << 20, 'random'),
  zeros: Buffer.alloc(9 * CHUNK_MAX + 12345),
  'periodic, 1,000-byte period': repeat(prng(1000, 'p1'), 12 << 20),
  'periodic, period near CHUNK_AVG': repeat(prng(CHUNK_AVG + 17, 'p2'), 12 << 20),
  'random, zeros, random': Buffer.concat([prng(5 << 20, 'm1'), Buffer.alloc(7 << 20), prng(6 << 20, 'm2')]),
  'zeros, then random': Buffer.concat([Buffer.alloc(6 * CHUNK_MAX + 1), prng(6 << 20, 'm3')])
}

test('stitched segment chains are the sequential cuts, on random, cut-free, periodic and mixed data', async t => {
  const dir = await tmpdir(); t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const buf = Buffer.allocUnsafe(4 * CHUNK_MAX)
  const one = Buffer.allocUnsafe(CHUNK_MAX)
  let walkedAll = 0; let meets = 0
  for (const [name, bytes] of Object.entries(data)) {
    const file = path.join(dir, 'f')
    await fs.writeFile(file, bytes)
    const fd = openSync(file, 'r')
    try {
      const size = bytes.length
      const want = ends(chunkLengths(bytes))
      // segment sizes below, at and above a chunk's, and not multiples of anything
      for (const seg of [CHUNK_MAX - 1, CHUNK_MAX, 1_500_007, 3 << 20, 5_000_011]) {
        const starts = []
        for (let p = 0; p < size; p += seg) starts.push(p)
        const chains = starts.map((s, k) => cutsFrom(fd, s, starts[k + 1] ?? size, size, buf, '/f'))
        const cutAt = p => { const n = Math.min(CHUNK_MAX, size - p); readSync(fd, one, 0, n, p); return p + nextCut(one, 0, n, p + n === size) }
        const { ends: got, walked } = stitch(starts, chains, cutAt)
        assert.deepEqual(got, want, `${name}, segments of ${seg}`)
        if (walked >= want.length - chains[0].length) walkedAll++
        if (walked < want.length / 2) meets++
      }
    } finally { closeSync(fd) }
  }
  t.diagnostic(`${meets} cases where the chains met early, ${walkedAll} walked to the end`)
  assert.ok(walkedAll > 0, 'some data never lets the chains meet (and is still cut right)')
  assert.ok(meets > 0, 'on random data the chains meet')
})

test('a large file: the same root, h/ and whole-file SHA-256 for 0, 1 and 3 threads, and on a rebuild', { timeout: 180_000 }, async t => {
  const dir = await tmpdir(); t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const src = path.join(dir, 'src')
  const files = { 'small.txt': 'small', 'empty': '' }
  for (const [name, bytes] of Object.entries(data)) files[name.replace(/[^a-z0-9]+/g, '-') + '.bin'] = bytes
  files['just-below.bin'] = prng((2 << 20) - 1, 'below') // one below bigAt
  files['just-at.bin'] = prng(2 << 20, 'at')
  await writeTree(src, files)
  const key = makeKey()
  const want = new Map(Object.entries(files).map(([n, b]) => [`/${n}`, createHash('sha256').update(b).digest('hex')]))
  const runs = [{ threads: 0 }, { threads: 1, workersAfter: 0 }, { threads: 3, workersAfter: 0 }, { threads: 2, workersAfter: 0, segment: 1_000_003 }]
  let first = null
  for (const [i, r] of runs.entries()) {
    const out = path.join(dir, `out${i}`)
    const seen = new Map()
    const res = await build(opts(src, out, key, { ...r, bigAt: 2 << 20, segment: r.segment ?? 3 << 20, onFile: f => seen.set(f.path, f.sha256) }))
    await checkPublished(out, key.publicKey, { now: NOW })
    assert.deepEqual(seen, want, `threads ${r.threads}: whole-file SHA-256`)
    const h = (await fs.readdir(path.join(out, 'h'))).sort()
    if (r.threads >= 2) assert.equal(res.pool.bigFiles, Object.keys(data).length + 1, 'every file of 2 MiB or more on several threads')
    else assert.equal(res.pool.bigFiles, 0)
    if (!first) first = { root: res.root, h }
    assert.equal(res.root, first.root, `threads ${r.threads}: root`)
    assert.deepEqual(h, first.h, `threads ${r.threads}: h/`)
    // a rebuild takes the hashes from the index, not from reading
    const again = new Map()
    const re = await build(opts(src, out, key, { ...r, onFile: f => again.set(f.path, f.sha256) }))
    assert.equal(re.index.misses, 0)
    assert.deepEqual(again, want)
    // and they are in the index, for whoever asks
    const recorded = new Map()
    for await (const f of recordedFiles(out)) recorded.set(f.path, f.sha256)
    assert.deepEqual(recorded, want)
  }
})

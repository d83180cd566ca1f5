// FORMAT.md §5.1: build({ version: 2 }) starts a file of at least
// LEAD_MIN_FILE bytes with a chunk of exactly LEAD_CHUNK bytes and cuts the
// rest with FastCDC from there, exactly as chunkLengths(bytes, { version: 2 })
// does, whether the file is read by one thread (chunk-file.js) or in
// segments by several (big-file.js); version 1 keeps no lead chunk. Each
// tree is read back through the client over the embedded server, and its
// chunk lists are decoded from h/.
import { test, after } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import { openSync, fstatSync } from 'node:fs'
import path from 'node:path'
import { createHash } from 'node:crypto'
import { openTree } from 'rotree-client'
import { decodeChunkIndex, chunkLengths, LEAD_CHUNK, LEAD_MIN_FILE, CHUNK_MIN, CHUNK_MAX } from 'rotree-client/format'
import { decodeBlobSync } from 'rotree-client/codec'
import { tmpdir, writeTree, makeKey, prng, serve } from '../helpers/fixtures.js'
import { build } from '../../builder/build.js'
import { chunkBig, cutsFrom, hashChunks, hashWhole } from '../../builder/big-file.js'
import { statOf } from '../../builder/chunk-file.js'

const cleanups = []
after(async () => { for (const c of cleanups.reverse()) await c() })
const sha = b => createHash('sha256').update(b).digest('hex')
const MiB = 1 << 20

async function dir (prefix) { const d = await tmpdir(prefix); cleanups.push(() => fs.rm(d, { recursive: true, force: true })); return d }

// BIG_AT: the files at or above it take big-file.js's path (with 2 threads),
// in segments of SEGMENT bytes (not a multiple of anything, so boundaries
// fall anywhere). 'zeros-then-random.bin' has no cut point in its first
// 5 MiB: every chunk there is CHUNK_MAX long from wherever a chain starts, so
// a segment chain started from 0 instead of LEAD_CHUNK would be out of phase
// with the true one and never meet it.
const BIG_AT = 4 * MiB
const SEGMENT = MiB + 4099
const FILES = {
  'below.bin': prng(LEAD_MIN_FILE - 1, 'below'),
  'at.bin': prng(LEAD_MIN_FILE, 'at'),
  'three.bin': prng(3 * MiB + 12_345, 'three'),
  'big.bin': prng(7 * MiB + 777, 'big'),
  'zeros-then-random.bin': Buffer.concat([Buffer.alloc(5 * MiB), prng(MiB + 5, 'tail')]),
  'small.txt': 'not chunked: inline\n'
}
const CHUNKED = Object.keys(FILES).filter(p => FILES[p].length > 4096)
const bytesOf = p => Buffer.from(FILES[p])

let _src = null
async function source () {
  if (_src) return _src
  _src = path.join(await dir('rotree-lead-src-'), 'src')
  await writeTree(_src, FILES)
  return _src
}

const opts = (src, out, key, version, extra = {}) => ({
  src, out, key, ttlMs: 3600e3, fsync: false, racyMs: 0, version, threads: 2, workersAfter: 0, bigAt: BIG_AT, segment: SEGMENT, ...extra
})

/**
 * Read a built OUT back through the client: each file's bytes and stat, and
 * its chunk lengths from its entry (the chunk-index pages decoded from h/).
 * @returns {Promise<Map<string, number[]>>}
 */
async function readBack (out, key, version) {
  const srv = await serve(out); cleanups.push(srv.close)
  const tree = await openTree(`${srv.url}#${key.publicKey}`, { stateDir: null, timeoutMs: 10_000, fsinfoSettleMs: 50 })
  cleanups.push(() => tree.close())
  assert.equal(tree.info.version ?? 1, version) // a version-1 root reports none
  const page = async ref => {
    const stored = await fs.readFile(path.join(out, 'h', ref.hash))
    return decodeChunkIndex(version === 1 ? stored : decodeBlobSync(new Uint8Array(stored), ref.codec, ref.size), { version })
  }
  const lengthsOf = async ref => {
    const ix = await page(ref)
    const out = []
    for (const c of ix.children) out.push(...(ix.level === 1 ? [c.size] : await lengthsOf(c)))
    return out
  }
  const lengths = new Map()
  for (const p of Object.keys(FILES)) {
    const want = bytesOf(p)
    assert.ok(Buffer.from(await tree.readFile('/' + p)).equals(want), `v${version} ${p}: the bytes read back are the source's`)
    assert.equal((await tree.stat('/' + p)).size, want.length)
    const entry = await tree.resolve('/' + p)
    if (entry.inline) continue
    lengths.set(p, entry.chunks ? entry.chunks.map(c => c.size) : await lengthsOf(entry.index))
  }
  return lengths
}

test('version 2: files of LEAD_MIN_FILE bytes or more start with a LEAD_CHUNK chunk, on one thread and in segments, as chunkLengths cuts them', { timeout: 180_000 }, async () => {
  const src = await source()
  const key = makeKey()
  const out = path.join(await dir('rotree-lead-out-'), 'out')
  const r = await build(opts(src, out, key, 2))
  assert.equal(r.version, 2)
  assert.equal(r.pool.bigFiles, 2, 'big.bin and zeros-then-random.bin went through big-file.js')
  const got = await readBack(out, key, 2)
  for (const p of CHUNKED) {
    const bytes = bytesOf(p)
    assert.deepEqual(got.get(p), chunkLengths(bytes, { version: 2 }), `${p}: the cuts of chunkLengths(bytes, { version: 2 })`)
    if (bytes.length >= LEAD_MIN_FILE) assert.equal(got.get(p)[0], LEAD_CHUNK, `${p} starts with the lead chunk`)
  }
  assert.deepEqual(got.get('below.bin'), chunkLengths(bytesOf('below.bin')), 'one byte short of LEAD_MIN_FILE: cut as version 1 cuts it')
  assert.notEqual(got.get('below.bin')[0], LEAD_CHUNK)
  // the lead chunk moves the phase of a cut-free run: its chunks are CHUNK_MAX long from LEAD_CHUNK on
  assert.deepEqual(got.get('zeros-then-random.bin').slice(0, 5), [LEAD_CHUNK, CHUNK_MAX, CHUNK_MAX, CHUNK_MAX, CHUNK_MAX])

  // all on one thread (no segments): the same cuts, so the same root
  const one = await build(opts(src, path.join(await dir('rotree-lead-out-'), 'out'), key, 2, { threads: 0 }))
  assert.equal(one.pool.bigFiles, 0)
  assert.equal(one.root, r.root, 'the sequential and the segmented paths cut alike')

  // a rebuild takes every record, and they hold the lead chunk's cuts
  const again = await build(opts(src, out, key, 2))
  assert.equal(again.index.misses, 0)
  assert.equal(again.root, r.root)
})

test('version 1 keeps no lead chunk, on one thread and in segments', { timeout: 180_000 }, async () => {
  const src = await source()
  const key = makeKey()
  const out = path.join(await dir('rotree-lead-out-'), 'out')
  const r = await build(opts(src, out, key, 1))
  assert.equal(r.version, 1)
  assert.equal(r.pool.bigFiles, 2)
  const got = await readBack(out, key, 1)
  for (const p of CHUNKED) {
    const lens = got.get(p)
    assert.deepEqual(lens, chunkLengths(bytesOf(p)), `${p}: version 1's cuts`)
    assert.ok(lens.slice(0, -1).every(n => n >= CHUNK_MIN), `${p}: no chunk but the last is below CHUNK_MIN`)
  }
})

test('an index a version-1 build left in OUT gives a version-2 build of the same source no cuts of its own', { timeout: 180_000 }, async () => {
  const src = await source()
  const key = makeKey()
  const out = path.join(await dir('rotree-lead-out-'), 'out')
  const clean = await build(opts(src, path.join(await dir('rotree-lead-out-'), 'out'), key, 2))

  await build(opts(src, out, key, 1))
  assert.equal((await build(opts(src, out, key, 1))).index.misses, 0, 'the version-1 index is complete and taken by version 1')
  const v2 = await build(opts(src, out, key, 2))
  assert.equal(v2.index.hits, 0, 'no version-1 file record taken for version 2')
  assert.equal(v2.index.dirHits, 0)
  assert.ok(v2.index.otherVersion >= 1, 'the version-1 record was seen and passed over')
  assert.equal(v2.root, clean.root, 'the version-2 tree is the clean version-2 build')
  const got = await readBack(out, key, 2)
  for (const p of CHUNKED) assert.deepEqual(got.get(p), chunkLengths(bytesOf(p), { version: 2 }), `${p}: cut for version 2`)
})

test('big-file.js with segments shorter than, equal to and just past the lead chunk cuts as chunkLengths does', { timeout: 120_000 }, async () => {
  const d = await dir('rotree-lead-seg-')
  const file = path.join(d, 'f')
  // cut-free runs at the start and in the middle: a chain from the wrong start stays out of phase through them
  const bytes = Buffer.concat([Buffer.alloc(2 * CHUNK_MAX + 17), prng(MiB + 3000, 'seg'), Buffer.alloc(2 * CHUNK_MAX + 5), prng(MiB, 'seg2')])
  await fs.writeFile(file, bytes)
  // the pool's tasks run here, in this thread, as chunk-worker.js runs them
  const buf = Buffer.allocUnsafe(2 * CHUNK_MAX)
  const stored = new Map()
  const store = (hash, b) => { stored.set(hash, Buffer.from(b)); return true }
  for (const version of [1, 2]) {
    const pool = {
      task: async m => m.type === 'cuts'
        ? cutsFrom(m.fd, m.from, m.to, m.size, buf, m.rel)
        : m.type === 'write' ? hashChunks(m.fd, m.pairs, store, buf, m.rel, undefined, version) : hashWhole(m.fd, m.size, buf, m.rel)
    }
    for (const segment of [LEAD_CHUNK - 1, LEAD_CHUNK, LEAD_CHUNK + 1, CHUNK_MAX - 1, 1_500_007]) {
      const fd = openSync(file, 'r') // chunkBig closes it
      const r = await chunkBig(pool, { fd, st: statOf(fstatSync(fd)), readStart: Date.now() }, '/f', segment, version)
      assert.deepEqual(r.chunks.map(c => c.size), chunkLengths(bytes, { version }), `version ${version}, segments of ${segment}`)
      assert.equal(r.sha256, sha(bytes))
      let at = 0
      for (const c of r.chunks) {
        const piece = bytes.subarray(at, at + c.size); at += c.size
        const got = stored.get(c.hash)
        assert.ok(Buffer.from(c.codec ? decodeBlobSync(new Uint8Array(got), c.codec, c.size) : got).equals(piece), `version ${version}: the chunk at ${at - c.size} is stored`)
      }
    }
  }
})

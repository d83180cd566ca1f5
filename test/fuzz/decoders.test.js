// Property-based fuzzing of every decoder and the verifier (docs/TRUST.md rules 3 and 9).
// Random and mutated bytes must never crash a decoder with anything but a
// typed format error, never hang, never allocate past the format's limits,
// and never make the verifier accept bytes whose hash does not match.
// FUZZ_RUNS sets the number of cases (npm run fuzz sets it high).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import fc from 'fast-check'
import { decodeDirPage, buildDirectory, encodeLeaf, encodeEntry, decodeChunkIndex, buildFileBody, decodeFsinfo, encodeFsinfo, fsinfoMessage, chunkLengths, decodeFsinfoV2, fsinfoVersion, decodeTrustDoc, CHUNK_MIN, CHUNK_MAX, MAX_BLOB } from 'rotree-client/format'
import { verifyBlob, verifyFsinfo, verifyDecoded, VERIFIERS } from 'rotree-client/verify'
import { deflateRawSync } from 'node:zlib'
import * as nodeCodec from 'rotree-client/codec'
// the browser's codec, tested in Node beside node:zlib's (a unit test of that file)
import * as webCodec from '../../client-js/src/format/codec-web.js'
import { generateKeyPair, sign } from 'rotree-client/crypto'
import { prng } from '../helpers/fixtures.js'

const RUNS = Number(process.env.FUZZ_RUNS || 300)
const hex = b => createHash('sha256').update(b).digest('hex')
const FORMAT_CODES = new Set(['ROTREE_BAD_FORMAT', 'ROTREE_UNSUPPORTED_VERSION'])

/** The decoder either returns or throws a typed format error; anything else is a bug. */
function decodesOrRefuses (fn, bytes) {
  try { return fn(bytes) } catch (err) {
    if (!FORMAT_CODES.has(err.code)) throw new Error(`decoder threw ${err.name} ${err.code}: ${err.message}`)
    return null
  }
}

const nameArb = fc.string({ minLength: 1, maxLength: 40, unit: 'grapheme' }).filter(n => n !== '.' && n !== '..' && !n.includes('/') && !n.includes('\0') && Buffer.byteLength(n) <= 255)
const h32 = fc.uint8Array({ minLength: 32, maxLength: 32 }).map(b => Buffer.from(b).toString('hex'))
const entryArb = fc.oneof(
  fc.record({ type: fc.constant('file'), inline: fc.uint8Array({ maxLength: 64 }), exec: fc.boolean(), mtime: fc.integer({ min: -1e12, max: 4e12 }) }).map(e => ({ ...e, size: e.inline.length })),
  fc.record({ type: fc.constant('file'), chunks: fc.array(fc.record({ hash: h32, size: fc.integer({ min: 1, max: CHUNK_MAX }) }), { minLength: 1, maxLength: 4 }), exec: fc.boolean(), mtime: fc.integer() }).map(e => ({ ...e, size: e.chunks.reduce((n, c) => n + c.size, 0) })),
  fc.record({ type: fc.constant('dir'), dir: fc.record({ hash: h32, size: fc.integer({ min: 1, max: 1 << 20 }) }), size: fc.nat(1e6), mtime: fc.integer(), exec: fc.constant(false) }),
  fc.record({ type: fc.constant('symlink'), target: nameArb, mtime: fc.integer(), exec: fc.constant(false) }).map(e => ({ ...e, size: Buffer.byteLength(e.target) }))
)
const dirArb = fc.uniqueArray(fc.tuple(nameArb, entryArb), { selector: ([n]) => n, maxLength: 30 }).map(xs => xs.map(([name, e]) => ({ name, ...e })))

async function pageOf (entries) {
  const store = new Map()
  const ref = await buildDirectory(entries, async b => { const h = hex(b); store.set(h, b); return { hash: h, size: b.length } })
  return store.get(ref.hash)
}

test('directory pages: encode → decode round-trips any entries, sorted bytewise', async () => {
  await fc.assert(fc.asyncProperty(dirArb, async entries => {
    const page = decodeDirPage(await pageOf(entries))
    const byName = new Map(entries.map(e => [e.name, e]))
    assert.equal(page.entries.length, entries.length)
    for (let i = 1; i < page.entries.length; i++) assert.ok(Buffer.compare(Buffer.from(page.entries[i - 1].nameBytes), Buffer.from(page.entries[i].nameBytes)) < 0)
    for (const got of page.entries) {
      const want = byName.get(got.name)
      assert.equal(got.type, want.type); assert.equal(got.size, want.size); assert.equal(got.mtime, want.mtime)
    }
  }), { numRuns: RUNS })
})

test('directory pages: random and mutated bytes decode or are refused, never crash', async () => {
  const valid = await pageOf([{ name: 'a', type: 'file', size: 1, mtime: 1, exec: false, inline: Uint8Array.of(1) }, { name: 'b', type: 'dir', size: 3, mtime: 2, exec: false, dir: { hash: 'ab'.repeat(32), size: 9 } }])
  fc.assert(fc.property(fc.uint8Array({ maxLength: 2048 }), b => { decodesOrRefuses(decodeDirPage, b) }), { numRuns: RUNS })
  // a valid header with random bodies reaches deep into the entry decoder
  fc.assert(fc.property(fc.uint8Array({ maxLength: 512 }), b => { decodesOrRefuses(decodeDirPage, Uint8Array.of(0x72, 0x74, 0x44, 0x01, ...b)) }), { numRuns: RUNS })
  fc.assert(fc.property(fc.uint8Array({ maxLength: 512 }), b => { decodesOrRefuses(decodeDirPage, Uint8Array.of(0x72, 0x74, 0x58, 0x01, ...b)) }), { numRuns: RUNS })
  fc.assert(fc.property(fc.nat(valid.length - 1), fc.integer({ min: 1, max: 255 }), (i, x) => {
    const m = Uint8Array.from(valid); m[i] ^= x
    decodesOrRefuses(decodeDirPage, m)
  }), { numRuns: RUNS })
})

test('limits hold before allocation: huge counts and lengths are refused at once', () => {
  // count = 2^49 entries, a name length of 2^40: refused without allocating either
  const huge = [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01]
  const before = process.memoryUsage().heapUsed
  for (const body of [huge, [1, ...huge], [2, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01]]) {
    assert.throws(() => decodeDirPage(Uint8Array.of(0x72, 0x74, 0x44, 0x01, ...body)), { code: 'ROTREE_BAD_FORMAT' })
    assert.throws(() => decodeDirPage(Uint8Array.of(0x72, 0x74, 0x58, 0x01, ...body)), { code: 'ROTREE_BAD_FORMAT' })
    assert.throws(() => decodeChunkIndex(Uint8Array.of(0x72, 0x74, 0x43, 0x01, ...body)), { code: 'ROTREE_BAD_FORMAT' })
  }
  assert.ok(process.memoryUsage().heapUsed - before < 16 << 20)
})

test('chunk indexes: random and mutated bytes decode or are refused', async () => {
  const store = new Map()
  const chunks = Array.from({ length: 40 }, (_, i) => ({ hash: hex(String(i)), size: 1000 + i }))
  const body = await buildFileBody(chunks, async b => { const h = hex(b); store.set(h, b); return { hash: h, size: b.length } })
  const valid = store.get(body.index.hash)
  fc.assert(fc.property(fc.uint8Array({ maxLength: 1024 }), b => { decodesOrRefuses(decodeChunkIndex, Uint8Array.of(0x72, 0x74, 0x43, 0x01, ...b)) }), { numRuns: RUNS })
  fc.assert(fc.property(fc.nat(valid.length - 1), fc.integer({ min: 1, max: 255 }), (i, x) => {
    const m = Uint8Array.from(valid); m[i] ^= x
    const idx = decodesOrRefuses(decodeChunkIndex, m)
    if (idx) for (const c of idx.children) assert.ok(c.size >= 1 && c.size <= CHUNK_MAX)
  }), { numRuns: RUNS })
})

test('fsinfo.json: no mutation of a signed file verifies unless it keeps every signed value', () => {
  const k = generateKeyPair()
  const f = { key: k.publicKey, seq: 42, issued: '2026-01-01T00:00:00.000Z', expires: '2036-01-01T00:00:00.000Z', root: 'cd'.repeat(32), rootSize: 77, rootMtime: 5 }
  const text = encodeFsinfo({ ...f, sig: sign(fsinfoMessage(f), k.secretKey) })
  const now = Date.parse('2026-06-01T00:00:00Z')
  fc.assert(fc.property(fc.nat(text.length - 1), fc.integer({ min: 0, max: 127 }), (i, c) => {
    const m = text.slice(0, i) + String.fromCharCode(c) + text.slice(i + 1)
    let info
    try { info = verifyFsinfo(m, { publicKey: k.publicKey, now }) } catch (err) {
      assert.ok(err.code?.startsWith('ROTREE_'), err.message); return
    }
    // accepted: then every signed value is what the publisher signed
    for (const key of ['seq', 'issued', 'expires', 'rootMtime']) assert.equal(info[key], f[key])
    assert.equal(info.root.hash, f.root); assert.equal(info.root.size, f.rootSize)
  }), { numRuns: RUNS * 3 })
  fc.assert(fc.property(fc.string({ maxLength: 600 }), s => { decodesOrRefuses(decodeFsinfo, s) }), { numRuns: RUNS })
  fc.assert(fc.property(fc.jsonValue(), v => { decodesOrRefuses(decodeFsinfo, JSON.stringify(v)) }), { numRuns: RUNS })
})

test('blobs: the verifier never accepts bytes whose hash is not the handle', async () => {
  await fc.assert(fc.asyncProperty(fc.uint8Array({ minLength: 1, maxLength: 4096 }), fc.nat(), fc.integer({ min: 1, max: 255 }), async (b, i, x) => {
    const ref = { hash: hex(b), size: b.length }
    assert.equal(await verifyBlob(b, ref), b)
    const m = Uint8Array.from(b); m[i % m.length] ^= x
    await assert.rejects(verifyBlob(m, ref), { code: 'ROTREE_HASH_MISMATCH' })
    await assert.rejects(verifyBlob(b.subarray(0, b.length - 1), ref), { code: 'ROTREE_TRUNCATED' })
  }), { numRuns: RUNS })
})

test('FastCDC: lengths always add up and stay inside the bounds', () => {
  fc.assert(fc.property(fc.integer({ min: 0, max: 3 * CHUNK_MAX }), fc.nat(), (n, seed) => {
    const buf = prng(n, String(seed))
    const lens = chunkLengths(buf)
    assert.equal(lens.reduce((a, b) => a + b, 0), n)
    lens.slice(0, -1).forEach(l => assert.ok(l >= CHUNK_MIN && l <= CHUNK_MAX))
  }), { numRuns: Math.min(RUNS, 40) })
})

test('a leaf with a mutated name order is always refused', () => {
  fc.assert(fc.property(fc.uniqueArray(nameArb, { minLength: 2, maxLength: 20 }), names => {
    const e = n => encodeEntry({ name: n, type: 'file', size: 0, mtime: 0, exec: false, inline: new Uint8Array(0) })
    const sorted = [...names].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)))
    const swapped = [...sorted]; [swapped[0], swapped[1]] = [swapped[1], swapped[0]]
    assert.throws(() => decodeDirPage(encodeLeaf(swapped.map(e))), { code: 'ROTREE_BAD_FORMAT' })
  }), { numRuns: RUNS })
})

// ---- format version 2 (FORMAT.md §12.6, §12.7) -----------------------------

const V2 = { version: 2 }
const v2RefArb = max => fc.oneof(
  fc.record({ hash: h32, size: fc.integer({ min: 1, max }) }).map(r => ({ ...r, storedSize: r.size, codec: 'none' })),
  fc.record({ hash: h32, size: fc.integer({ min: 1, max }), storedSize: fc.integer({ min: 1, max: MAX_BLOB }) }).map(r => ({ ...r, codec: 'deflate-raw' }))
)
const v2EntryArb = fc.oneof(
  fc.record({ type: fc.constant('file'), inline: fc.uint8Array({ maxLength: 64 }), exec: fc.boolean(), mtime: fc.integer({ min: -1e12, max: 4e12 }) }).map(e => ({ ...e, size: e.inline.length })),
  fc.record({ type: fc.constant('file'), chunks: fc.array(v2RefArb(CHUNK_MAX), { minLength: 1, maxLength: 4 }), sha256: h32, exec: fc.boolean(), mtime: fc.integer() }).map(e => ({ ...e, size: e.chunks.reduce((n, c) => n + c.size, 0) })),
  fc.record({ type: fc.constant('file'), index: fc.tuple(v2RefArb(MAX_BLOB), fc.integer({ min: 1, max: 6 })).map(([r, levels]) => ({ ...r, levels })), lead: v2RefArb(CHUNK_MAX), size: fc.integer({ min: CHUNK_MAX, max: 2 ** 40 }), sha256: h32, exec: fc.boolean(), mtime: fc.integer() }),
  fc.record({ type: fc.constant('dir'), dir: v2RefArb(MAX_BLOB), size: fc.nat(1e6), mtime: fc.integer(), exec: fc.constant(false) }),
  fc.record({ type: fc.constant('symlink'), target: nameArb, mtime: fc.integer(), exec: fc.constant(false) }).map(e => ({ ...e, size: Buffer.byteLength(e.target) }))
)
const v2DirArb = fc.uniqueArray(fc.tuple(nameArb, v2EntryArb), { selector: ([n]) => n, maxLength: 30 }).map(xs => xs.map(([name, e]) => ({ name, ...e })))

async function v2PageOf (entries) {
  const store = new Map()
  const ref = await buildDirectory(entries, async b => { const h = hex(b); store.set(h, b); return { hash: h, size: b.length, storedSize: b.length, codec: 'none' } }, V2)
  return store.get(ref.hash)
}

test('v2 directory pages: encode → decode round-trips any entries, refs with their codec, files with their SHA-256', async () => {
  await fc.assert(fc.asyncProperty(v2DirArb, async entries => {
    const page = decodeDirPage(await v2PageOf(entries), V2)
    const byName = new Map(entries.map(e => [e.name, e]))
    assert.equal(page.entries.length, entries.length)
    for (const got of page.entries) {
      const want = byName.get(got.name)
      assert.equal(got.type, want.type); assert.equal(got.size, want.size); assert.equal(got.mtime, want.mtime)
      if (want.chunks) assert.deepEqual(got.chunks, want.chunks)
      if (want.index) assert.deepEqual(got.index, want.index)
      if (want.lead) assert.deepEqual(got.lead, want.lead)
      if (want.dir) assert.deepEqual(got.dir, want.dir)
      if (want.type === 'file') assert.equal(got.sha256, want.sha256 ?? null)
    }
  }), { numRuns: RUNS })
})

test('v2 directory pages and chunk indexes: random and mutated bytes decode or are refused, never crash', async () => {
  const valid = await v2PageOf([
    { name: 'a', type: 'file', size: 1, mtime: 1, exec: false, inline: Uint8Array.of(1) },
    { name: 'b', type: 'file', size: 70000, mtime: 1, exec: false, sha256: 'cd'.repeat(32), chunks: [{ hash: 'ab'.repeat(32), size: 70000, storedSize: 900, codec: 'deflate-raw' }] },
    { name: 'c', type: 'dir', size: 3, mtime: 2, exec: false, dir: { hash: 'ab'.repeat(32), size: 9, storedSize: 9, codec: 'none' } }
  ])
  for (const magic of [[0x72, 0x74, 0x44, 0x02], [0x72, 0x74, 0x58, 0x02]]) {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 512 }), b => { decodesOrRefuses(b => decodeDirPage(b, V2), Uint8Array.of(...magic, ...b)) }), { numRuns: RUNS })
  }
  fc.assert(fc.property(fc.uint8Array({ maxLength: 1024 }), b => { decodesOrRefuses(b => decodeChunkIndex(b, V2), Uint8Array.of(0x72, 0x74, 0x43, 0x02, ...b)) }), { numRuns: RUNS })
  fc.assert(fc.property(fc.nat(valid.length - 1), fc.integer({ min: 1, max: 255 }), (i, x) => {
    const m = Uint8Array.from(valid); m[i] ^= x
    const page = decodesOrRefuses(b => decodeDirPage(b, V2), m)
    // whatever decodes keeps every bound: decoded sizes within their kind's limit, stored sizes within MAX_BLOB
    for (const e of page?.entries ?? []) {
      for (const c of e.chunks ?? []) assert.ok(c.size >= 1 && c.size <= CHUNK_MAX && c.storedSize >= 1 && c.storedSize <= MAX_BLOB)
      for (const r of [e.dir, e.index].filter(Boolean)) assert.ok(r.size >= 1 && r.size <= MAX_BLOB && r.storedSize <= MAX_BLOB)
    }
    decodesOrRefuses(decodeDirPage, m) // a version-1 reader refuses it, never misreads it
  }), { numRuns: RUNS })
  // every codec byte: 0 and 1 are codecs, 0x10 and 0x11 the same sealed (a private tree's ref, FORMAT.md
  // §12.8: its decoded size and key follow, so what comes after is read as those), the rest malformed
  for (let c = 0; c < 256; c++) {
    const m = Uint8Array.from(valid)
    const at = Buffer.from(m).indexOf(Buffer.from('ab'.repeat(32), 'hex')) + 32 + 2 // past hash and uint(900)
    assert.equal(m[at], 1)
    m[at] = c
    const code = c === 0 || c === 1 || c === 0x10 || c === 0x11 ? null : 'ROTREE_BAD_FORMAT'
    if (code) assert.throws(() => decodeDirPage(m, V2), { code }, `codec byte ${c}`)
    else decodesOrRefuses(b => decodeDirPage(b, V2), m)
  }
})

for (const [name, codec] of [['node', nodeCodec], ['web', webCodec]]) {
  test(`codec (${name}): random bytes and decoded sizes give exactly that many bytes or ROTREE_BAD_FORMAT`, async () => {
    const text = Buffer.from('all work and no play makes a tree dull. '.repeat(200))
    const packed = deflateRawSync(text)
    await fc.assert(fc.asyncProperty(fc.uint8Array({ minLength: 1, maxLength: 512 }), fc.integer({ min: 1, max: 1 << 16 }), async (b, n) => {
      try { assert.equal((await codec.decodeBlob(b, 'deflate-raw', n)).length, n) } catch (err) { assert.equal(err.code, 'ROTREE_BAD_FORMAT', err.message) }
    }), { numRuns: RUNS })
    await fc.assert(fc.asyncProperty(fc.nat(packed.length - 1), fc.integer({ min: 1, max: 255 }), async (i, x) => {
      const m = Buffer.from(packed); m[i] ^= x
      try {
        const out = await codec.decodeBlob(m, 'deflate-raw', text.length)
        assert.equal(out.length, text.length)
      } catch (err) { assert.equal(err.code, 'ROTREE_BAD_FORMAT', err.message) }
    }), { numRuns: RUNS })
  })

  test(`codec (${name}): bombs stop at the recorded size`, async () => {
    for (const [zeros, bound] of [[64 << 20, 1 << 20], [8 << 20, 4096], [1 << 20, (1 << 20) - 1]]) {
      const bomb = deflateRawSync(Buffer.alloc(zeros))
      const before = process.memoryUsage().arrayBuffers
      await assert.rejects(codec.decodeBlob(bomb, 'deflate-raw', bound), { code: 'ROTREE_BAD_FORMAT' })
      // nothing near the bomb's size was ever held (a few MiB of the last piece at most)
      assert.ok(process.memoryUsage().arrayBuffers - before < 32 << 20, `${zeros} zeros held in memory`)
    }
  })
}

test('v2 blobs: the verifier never hands out bytes that are not the stored bytes decoded', async () => {
  const data = Buffer.from('a compressible chunk of a version-2 tree. '.repeat(100))
  const stored = new Uint8Array(deflateRawSync(data))
  const ref = { hash: hex(stored), size: data.length, storedSize: stored.length, codec: 'deflate-raw' }
  assert.ok(Buffer.from(await VERIFIERS.data(stored, ref)).equals(data))
  await fc.assert(fc.asyncProperty(fc.nat(), fc.integer({ min: 1, max: 255 }), fc.integer({ min: -3, max: 3 }), async (i, x, d) => {
    const m = Uint8Array.from(stored); m[i % m.length] ^= x
    await assert.rejects(verifyDecoded(m, ref), { code: 'ROTREE_HASH_MISMATCH' })
    if (d !== 0) await assert.rejects(verifyDecoded(stored, { ...ref, size: ref.size + d }), { code: 'ROTREE_BAD_FORMAT' })
  }), { numRuns: RUNS })
})

test('v2 fsinfo.json and trust documents: any text decodes or is refused with a format code', () => {
  for (const f of [decodeFsinfoV2, decodeTrustDoc, fsinfoVersion]) {
    fc.assert(fc.property(fc.string({ maxLength: 600 }), s => { decodesOrRefuses(f, s) }), { numRuns: RUNS })
    fc.assert(fc.property(fc.jsonValue(), v => { decodesOrRefuses(f, JSON.stringify(v)) }), { numRuns: RUNS })
    fc.assert(fc.property(fc.jsonValue(), v => { decodesOrRefuses(f, JSON.stringify({ version: 2, type: 'rotree-trust', ...(typeof v === 'object' && v) })) }), { numRuns: RUNS })
  }
})

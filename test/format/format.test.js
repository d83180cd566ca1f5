// Unit tests of the wire format: strict decoding, limits, sorting, chunking.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { Writer, Reader, writeEntry, readEntry, buildDirectory, decodeDirPage, encodeLeaf, encodeEntry, buildFileBody, decodeChunkIndex, chunkLengths, decodeFsinfo, encodeFsinfo, fsinfoMessage, CHUNK_MIN, CHUNK_MAX, MAX_DIRECT_CHUNKS, INLINE_MAX, INLINE_MAX_V2, inlineMax, isoTime, isoString } from 'rotree-client/format'
import { verifyFsinfo, checkRollback, verifyBlob } from 'rotree-client/verify'
import { generateKeyPair, sign } from 'rotree-client/crypto'
import { prng } from '../helpers/fixtures.js'

const hex = b => createHash('sha256').update(b).digest('hex')
const memStore = () => {
  const m = new Map()
  return { m, put: async b => { const h = hex(b); m.set(h, b); return { hash: h, size: b.length } } }
}

test('varints: round trip at the edges, minimal encoding enforced', () => {
  for (const v of [0, 1, 127, 128, 16383, 16384, 2 ** 32, Number.MAX_SAFE_INTEGER]) {
    const w = new Writer(); w.uint(v); const r = new Reader(w.result())
    assert.equal(r.uint(), v); r.end()
  }
  for (const v of [-1, -2, 0, 1, -(2 ** 40)]) {
    const w = new Writer(); w.sint(v); assert.equal(new Reader(w.result()).sint(), v)
  }
  assert.throws(() => new Reader(Uint8Array.of(0x80, 0x00)).uint(), { code: 'ROTREE_BAD_FORMAT' }) // non-minimal
  assert.throws(() => new Reader(Uint8Array.of(0x80)).uint(), { code: 'ROTREE_BAD_FORMAT' }) // truncated
  assert.throws(() => new Reader(Uint8Array.of(0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01)).uint(), { code: 'ROTREE_BAD_FORMAT' })
  assert.throws(() => new Reader(Uint8Array.of(0x05)).uint(4), { code: 'ROTREE_BAD_FORMAT' }) // above a limit
})

test('entries: every kind round-trips; bad names and flags are refused', () => {
  const h = 'ab'.repeat(32)
  const kinds = [
    { name: 'empty', type: 'file', size: 0, mtime: 0, exec: false, inline: new Uint8Array(0) },
    { name: 'x.sh', type: 'file', size: 3, mtime: -5, exec: true, inline: Uint8Array.of(1, 2, 3) },
    { name: 'big', type: 'file', size: 300, mtime: 1, exec: false, chunks: [{ hash: h, size: 100 }, { hash: h, size: 200 }] },
    { name: 'huge', type: 'file', size: 1e12, mtime: 1, exec: false, index: { hash: h, size: 999, levels: 2 } },
    { name: 'd', type: 'dir', size: 7, mtime: 1, exec: false, dir: { hash: h, size: 50 } },
    { name: 'ln', type: 'symlink', size: 5, mtime: 1, exec: false, target: '../x' }
  ]
  for (const e of kinds) {
    const w = new Writer(); writeEntry(w, e)
    const got = readEntry(new Reader(w.result()))
    delete got.nameBytes
    if (e.type === 'symlink') e.size = 4
    assert.deepEqual(got, e)
  }
  for (const name of ['', '.', '..', 'a/b', 'a\0b', 'x'.repeat(256)]) {
    assert.throws(() => writeEntry(new Writer(), { ...kinds[0], name }))
  }
  // flags on a directory, and invalid UTF-8 in a name
  const w = new Writer(); writeEntry(w, kinds[4]); const b = w.result(); b[3] = 1
  assert.throws(() => readEntry(new Reader(b)), { code: 'ROTREE_BAD_FORMAT' })
  const bad = Uint8Array.of(2, 0xc3, 0x28, 1, 0, 0, 0)
  assert.throws(() => readEntry(new Reader(bad)), { code: 'ROTREE_BAD_FORMAT' })
})

test('inline files: up to INLINE_MAX in version 1 and INLINE_MAX_V2 in version 2, one byte more refused by reader and writer', () => {
  const entry = n => ({ name: 'f', type: 'file', size: n, mtime: 0, exec: false, inline: new Uint8Array(n).fill(7) })
  // the bytes of an inline entry of n bytes, written without writeEntry's check
  const raw = n => { const w = new Writer(); w.lbytes(Uint8Array.of(0x66)); w.byte(1); w.byte(0); w.sint(0); w.uint(n); w.bytes(new Uint8Array(n)); return w.result() }
  for (const [version, max] of [[1, INLINE_MAX], [2, INLINE_MAX_V2]]) {
    const w = new Writer(); writeEntry(w, entry(max), { version })
    assert.equal(readEntry(new Reader(w.result()), { version }).inline.length, max)
    assert.throws(() => writeEntry(new Writer(), entry(max + 1), { version }), /bad inline size/)
    assert.throws(() => readEntry(new Reader(raw(max + 1)), { version }), { code: 'ROTREE_BAD_FORMAT' })
  }
  assert.equal(inlineMax(1), 4096); assert.equal(inlineMax(2), 16384)
})

test('directory pages: sorted bytewise, unsorted or duplicate names refused', async () => {
  const e = n => ({ name: n, type: 'file', size: 0, mtime: 0, exec: false, inline: new Uint8Array(0) })
  const { m, put } = memStore()
  const ref = await buildDirectory([e('b'), e('a'), e('É'), e('Z')], put)
  const page = decodeDirPage(m.get(ref.hash))
  assert.deepEqual(page.entries.map(x => x.name), ['Z', 'a', 'b', 'É']) // bytewise UTF-8, not locale order
  assert.throws(() => decodeDirPage(encodeLeaf([encodeEntry(e('b')), encodeEntry(e('a'))])), { code: 'ROTREE_BAD_FORMAT' })
  assert.throws(() => decodeDirPage(encodeLeaf([encodeEntry(e('a')), encodeEntry(e('a'))])), { code: 'ROTREE_BAD_FORMAT' })
  const ok = encodeLeaf([encodeEntry(e('a'))])
  assert.throws(() => decodeDirPage(Uint8Array.of(...ok, 0)), { code: 'ROTREE_BAD_FORMAT' }) // trailing bytes
  assert.throws(() => decodeDirPage(ok.subarray(0, ok.length - 1)), { code: 'ROTREE_BAD_FORMAT' })
  await assert.rejects(buildDirectory([e('a'), e('a')], put))
})

test('a million-entry directory: lookups touch O(log n) blobs, well under 1 MiB', async () => {
  const { m, put } = memStore()
  const h = 'cd'.repeat(32)
  const entries = Array.from({ length: 1_000_000 }, (_, i) => ({ name: `file-${String(i).padStart(7, '0')}`, type: 'file', size: 5000, mtime: 1, exec: false, chunks: [{ hash: h, size: 5000 }] }))
  const ref = await buildDirectory(entries, put)
  assert.equal(ref.entries, 1_000_000)
  // walk to one name the way the reader does, counting blobs and bytes
  const target = Buffer.from('file-0765432')
  let page = decodeDirPage(m.get(ref.hash)); let blobs = 1; let bytes = m.get(ref.hash).length
  while (page.kind === 'index') {
    const c = page.children.findLast(c => Buffer.compare(Buffer.from(c.firstNameBytes), target) <= 0)
    page = decodeDirPage(m.get(c.hash)); blobs++; bytes += m.get(c.hash).length
  }
  assert.ok(page.entries.some(x => x.name === 'file-0765432'))
  assert.ok(blobs <= 4 && bytes < 1024 * 1024, `${blobs} blobs, ${bytes} bytes`)
})

test('chunk lists: direct up to the limit, then an index tree whose sums are checked', async () => {
  const { m, put } = memStore()
  const chunks = Array.from({ length: 5000 }, (_, i) => ({ hash: hex(String(i)), size: 1000 + i }))
  assert.deepEqual(await buildFileBody(chunks.slice(0, MAX_DIRECT_CHUNKS), put), { chunks: chunks.slice(0, MAX_DIRECT_CHUNKS) })
  const body = await buildFileBody(chunks, put)
  assert.ok(body.index.levels >= 2)
  const top = decodeChunkIndex(m.get(body.index.hash))
  assert.equal(top.bytes, chunks.reduce((n, c) => n + c.size, 0))
  const leaves = []
  for (const c of top.children) leaves.push(...decodeChunkIndex(m.get(c.hash)).children)
  assert.deepEqual(leaves.map(c => c.hash), chunks.map(c => c.hash))
})

test('FastCDC: bounds hold, cut points are stable under an insertion', () => {
  const data = prng(8 * 1024 * 1024, 'cdc')
  const lens = chunkLengths(data)
  assert.equal(lens.reduce((a, b) => a + b, 0), data.length)
  for (const l of lens.slice(0, -1)) assert.ok(l >= CHUNK_MIN && l <= CHUNK_MAX)
  const cuts = l => { const s = new Set(); let o = 0; for (const x of l) { o += x; s.add(o) } return s }
  const before = cuts(lens)
  const edited = Buffer.concat([data.subarray(0, 4e6), Buffer.from('inserted'), data.subarray(4e6)])
  const after = [...cuts(chunkLengths(edited))].map(o => o > 4e6 ? o - 8 : o)
  const kept = after.filter(o => before.has(o)).length
  assert.ok(kept >= before.size - 2, `kept ${kept} of ${before.size} cut points`)
  // zeros: no cut point in the content, so chunks are CHUNK_MAX
  assert.deepEqual(chunkLengths(new Uint8Array(3 * CHUNK_MAX)), [CHUNK_MAX, CHUNK_MAX, CHUNK_MAX])
})

function signed (k, over = {}) {
  const f = { key: k.publicKey, seq: 7, issued: '2026-01-01T00:00:00.000Z', expires: '2026-01-08T00:00:00.000Z', root: 'ee'.repeat(32), rootSize: 100, rootMtime: 0, ...over }
  return encodeFsinfo({ ...f, sig: sign(fsinfoMessage(f), k.secretKey) })
}

test('fsinfo.json: strict fields, signature over the fixed message, time and key checks', () => {
  const k = generateKeyPair()
  const now = Date.parse('2026-01-02T00:00:00Z')
  const text = signed(k)
  const info = verifyFsinfo(text, { publicKey: k.publicKey, now })
  assert.equal(info.seq, 7)
  // re-serialising (whitespace, key order) does not change what was signed
  const j = JSON.parse(text)
  const reordered = JSON.stringify(Object.fromEntries(Object.entries(j).reverse()))
  assert.equal(verifyFsinfo(reordered, { publicKey: k.publicKey, now }).seq, 7)
  const mut = o => JSON.stringify({ ...j, ...o })
  assert.throws(() => verifyFsinfo(mut({ seq: 8 }), { publicKey: k.publicKey, now }), { code: 'ROTREE_BAD_SIGNATURE' })
  assert.throws(() => verifyFsinfo(mut({ rootMtime: 1 }), { publicKey: k.publicKey, now }), { code: 'ROTREE_BAD_SIGNATURE' })
  assert.throws(() => verifyFsinfo(text, { publicKey: generateKeyPair().publicKey, now }), { code: 'ROTREE_WRONG_KEY' })
  assert.throws(() => verifyFsinfo(text, { publicKey: k.publicKey, now: Date.parse('2026-01-08T00:00:01Z') }), { code: 'ROTREE_EXPIRED' })
  assert.equal(verifyFsinfo(text, { publicKey: k.publicKey, now: Date.parse('2026-01-08T00:00:01Z'), graceMs: 60e3 }).seq, 7)
  assert.throws(() => verifyFsinfo(text, { publicKey: k.publicKey, now: Date.parse('2025-12-31T23:54:00Z') }), { code: 'ROTREE_NOT_YET_VALID' })
  assert.equal(verifyFsinfo(text, { publicKey: k.publicKey, now: Date.parse('2025-12-31T23:56:00Z') }).seq, 7) // inside the 5 min skew
  assert.throws(() => decodeFsinfo(mut({ version: 2 })), { code: 'ROTREE_UNSUPPORTED_VERSION' })
  assert.throws(() => decodeFsinfo(mut({ extra: 1 })), { code: 'ROTREE_BAD_FORMAT' })
  assert.throws(() => decodeFsinfo(mut({ issued: '2026-01-01T00:00:00Z' })), { code: 'ROTREE_BAD_FORMAT' }) // one spelling only
  assert.throws(() => decodeFsinfo(mut({ seq: 1.5 })), { code: 'ROTREE_BAD_FORMAT' })
  assert.throws(() => decodeFsinfo('{"version":1'), { code: 'ROTREE_BAD_FORMAT' })
  assert.throws(() => decodeFsinfo('x'.repeat(5000)), { code: 'ROTREE_BAD_FORMAT' })
  assert.throws(() => decodeFsinfo(mut({ expires: j.issued })), { code: 'ROTREE_BAD_FORMAT' })
})

test('times: one spelling, exactly what toISOString prints, across the whole Date range', () => {
  const edges = [0, -1, 1, 8.64e15, -8.64e15, 253402300799999, 253402300800000, -62167219200000, -62167219200001, Date.parse('2024-02-29T23:59:59.999Z')]
  const r = prng(20000 * 8, 'times')
  for (let i = 0; i < r.length; i += 8) edges.push(Math.round((r.readUInt32LE(i) / 2 ** 32 * 2 - 1) * (8.64e15 - 1000) + r.readUInt32LE(i + 4) % 1000))
  for (const ms of edges) assert.equal(isoString(ms), new Date(ms).toISOString(), `at ${ms}`)
  assert.equal(isoTime('2026-01-02T03:04:05.006Z', 't'), Date.parse('2026-01-02T03:04:05.006Z'))
  assert.equal(isoTime('+010000-01-01T00:00:00.000Z', 't'), Date.parse('+010000-01-01T00:00:00.000Z'))
  for (const bad of ['2026-01-02T03:04:05Z', '2026-01-02T03:04:05.006+00:00', '2026-02-30T00:00:00.000Z', '2026-1-02T03:04:05.006Z', '010000-01-01T00:00:00.000Z', ' 2026-01-02T03:04:05.006Z', '2026-01-02T03:04:05.0060Z']) {
    assert.throws(() => isoTime(bad, 't'), { code: 'ROTREE_BAD_FORMAT' }, bad)
  }
})

test('rollback: lower sequence refused, equal with another root is a fork', () => {
  const info = { seq: 5, root: { hash: 'aa' } }
  assert.equal(checkRollback(info, null), true)
  assert.equal(checkRollback(info, { seq: 4, root: 'bb' }), true)
  assert.equal(checkRollback(info, { seq: 5, root: 'aa' }), false)
  assert.throws(() => checkRollback(info, { seq: 6, root: 'aa' }), { code: 'ROTREE_ROLLBACK' })
  assert.throws(() => checkRollback(info, { seq: 5, root: 'bb' }), { code: 'ROTREE_FORK' })
})

test('blobs: exact size and hash, checked before anything parses them', async () => {
  const b = Buffer.from('hello')
  const ref = { hash: hex(b), size: 5 }
  assert.equal(await verifyBlob(b, ref), b)
  await assert.rejects(verifyBlob(Buffer.from('hellO'), ref), { code: 'ROTREE_HASH_MISMATCH' })
  await assert.rejects(verifyBlob(Buffer.from('hell'), ref), { code: 'ROTREE_TRUNCATED' })
  await assert.rejects(verifyBlob(Buffer.from('hello!'), ref), { code: 'ROTREE_TOO_LARGE' })
})

// ---- format version 2 (FORMAT.md §12.6, §12.7) -------------------------------

test('version 2, the bytes of FORMAT.md §12.6: a leaf with an inline file, a compressed chunk, an index and a directory', async () => {
  const { encodeDirPage } = await import('rotree-client/format')
  const h = n => String(n).repeat(64).slice(0, 64)
  const H = n => Buffer.from(h(n), 'hex')
  // written by hand from the grammar
  const bytes = Buffer.concat([
    Buffer.from('rtD\x02', 'latin1'), Buffer.of(4),
    Buffer.of(1), Buffer.from('a'), Buffer.of(1, 0, 0, 2), Buffer.from('hi'), // inline: no hash stored
    Buffer.of(1), Buffer.from('b'), Buffer.of(2, 1, 0), Buffer.of(0xa0, 0x8d, 0x06), H(1), // chunk list, exec; size 100000; sha256
    Buffer.of(1), H(2), Buffer.of(0x90, 0x03, 1, 0xa0, 0x8d, 0x06), //   1 chunk: storedSize 400, deflate-raw, decodedSize 100000
    Buffer.of(1), Buffer.from('c'), Buffer.of(3, 0, 0), Buffer.of(0x80, 0x80, 0x80, 0x01), H(3), // index; size 2^21; sha256
    Buffer.of(2), H(4), Buffer.of(0x2a, 0), //   levels 2, the index page: 42 bytes, codec none
    H(6), Buffer.of(0x80, 0x60, 0), //   the lead ref: the first chunk, 12288 bytes, codec none
    Buffer.of(1), Buffer.from('d'), Buffer.of(4, 0, 0), Buffer.of(7), H(5), Buffer.of(9, 1, 0x80, 0x02) // dir of 7 entries: 9 bytes stored, 256 decoded
  ])
  const page = decodeDirPage(bytes, { version: 2 })
  const [a, b, c, d] = page.entries
  assert.deepEqual([Buffer.from(a.inline).toString(), a.sha256], ['hi', null])
  assert.deepEqual([b.exec, b.size, b.sha256, b.chunks], [true, 100000, h(1), [{ hash: h(2), size: 100000, storedSize: 400, codec: 'deflate-raw' }]])
  assert.deepEqual([c.size, c.sha256, c.index, c.lead], [2 ** 21, h(3), { hash: h(4), size: 42, storedSize: 42, codec: 'none', levels: 2 }, { hash: h(6), size: 12288, storedSize: 12288, codec: 'none' }])
  assert.deepEqual([d.size, d.dir], [7, { hash: h(5), size: 256, storedSize: 9, codec: 'deflate-raw' }])
  // and the encoder writes exactly these bytes back
  assert.ok(Buffer.from(encodeDirPage(page, { version: 2 })).equals(bytes))
  // the version-1 decoder refuses it; a version-1 page is refused by version 2
  assert.throws(() => decodeDirPage(bytes), { code: 'ROTREE_BAD_FORMAT' })
  assert.throws(() => decodeDirPage(Uint8Array.of(0x72, 0x74, 0x44, 0x01, 0), { version: 2 }), { code: 'ROTREE_BAD_FORMAT' })
})

test('version 2 refs: bounds, codecs and sealed blobs', async () => {
  const { readRef, writeRef } = await import('rotree-client/format')
  const ref = bytes => readRef(new Reader(Uint8Array.from([...Buffer.alloc(32, 7), ...bytes])), 2, CHUNK_MAX)
  assert.deepEqual(ref([5, 0]), { hash: '07'.repeat(32), size: 5, storedSize: 5, codec: 'none' })
  assert.deepEqual(ref([5, 1, 9]), { hash: '07'.repeat(32), size: 9, storedSize: 5, codec: 'deflate-raw' })
  assert.deepEqual(ref([5, 0x11, 9, ...Buffer.alloc(32, 1)]), { hash: '07'.repeat(32), size: 9, storedSize: 5, codec: 'deflate-raw', key: '01'.repeat(32) })
  for (const [bytes, code] of [
    [[0, 0], 'ROTREE_BAD_FORMAT'], // empty blob
    [[5, 1, 0], 'ROTREE_BAD_FORMAT'], // empty decoded blob
    [[5, 2, 9], 'ROTREE_BAD_FORMAT'], // no such codec
    [[5, 0x10, 9], 'ROTREE_BAD_FORMAT'], // a sealed blob (FORMAT.md §12.8) needs its 32-byte key after the size
    [[5, 0x12, 9, ...Buffer.alloc(32, 1)], 'ROTREE_BAD_FORMAT'], // no such codec inside the seal
    [[5, 0x11, 0, ...Buffer.alloc(32, 1)], 'ROTREE_BAD_FORMAT'], // empty decoded blob
    [[5, 1, 0x81, 0x80, 0x40], 'ROTREE_BAD_FORMAT'], // decodedSize past CHUNK_MAX
    [[0x81, 0x80, 0x40, 0], 'ROTREE_BAD_FORMAT'] // storedSize past MAX_BLOB
  ]) assert.throws(() => ref(bytes), { code }, JSON.stringify(bytes))
  const w = new Writer()
  assert.throws(() => writeRef(w, { hash: 'ab'.repeat(32), size: 9, storedSize: 5, codec: 'none' }, 2), RangeError)
  assert.throws(() => writeRef(w, { hash: 'ab'.repeat(32), size: 9, storedSize: 5, codec: 'deflate-raw' }, 1), RangeError)
})

test('version 2: chunk indexes and whole directories round-trip; a chunked file needs its SHA-256', async () => {
  const { encodeChunkIndex } = await import('rotree-client/format')
  const { m, put } = memStore()
  const V2 = { version: 2 }
  const chunks = Array.from({ length: MAX_DIRECT_CHUNKS + 8 }, (_, i) => ({ hash: hex('c' + i), size: 5000 + i, storedSize: 100 + i, codec: 'deflate-raw' }))
  const body = await buildFileBody(chunks, async b => ({ ...(await put(b)), storedSize: b.length, codec: 'none' }), V2)
  const leaves = []
  const walk = hash => {
    const idx = decodeChunkIndex(m.get(hash), V2)
    assert.ok(Buffer.from(encodeChunkIndex(idx, V2)).equals(Buffer.from(m.get(hash))))
    assert.throws(() => decodeChunkIndex(m.get(hash)), { code: 'ROTREE_BAD_FORMAT' })
    for (const c of idx.children) if (idx.level === 1) leaves.push(c); else walk(c.hash)
  }
  walk(body.index.hash)
  assert.deepEqual(leaves.map(c => [c.hash, c.size, c.storedSize, c.codec, c.bytes]), chunks.map(c => [c.hash, c.size, c.storedSize, c.codec, c.size]))
  const file = { name: 'f', type: 'file', size: chunks.reduce((n, c) => n + c.size, 0), mtime: 0, exec: false, ...body }
  assert.throws(() => encodeEntry(file, V2), RangeError) // no sha256
  const dir = await buildDirectory([{ ...file, sha256: hex('f') }], async b => ({ ...(await put(b)), storedSize: b.length, codec: 'none' }), V2)
  const page = decodeDirPage(m.get(dir.hash), V2)
  assert.equal(page.entries[0].sha256, hex('f'))
  assert.deepEqual(page.entries[0].index, { ...body.index })
})

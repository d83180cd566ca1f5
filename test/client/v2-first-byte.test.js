// A whole-file read of a version-2 file checks the file's SHA-256 at the end
// (FORMAT.md §12.7) by holding back only its last piece: every other piece is
// handed out as soon as its chunk verifies. Here the mirror holds the answer
// for the file's second chunk until the reader has its first piece, so a
// reader that held each piece until the next one arrived would wait forever.
import { test, after } from 'node:test'
import assert from 'node:assert/strict'
import http from 'node:http'
import fs from 'node:fs/promises'
import path from 'node:path'
import { createHash } from 'node:crypto'
import { openTree } from 'rotree-client'
import { Publisher } from './v2-publisher.js'

const sha = b => createHash('sha256').update(b).digest('hex')
const cleanups = []
after(async () => { for (const c of cleanups.reverse()) await c() })

/** A static mirror of `dir` that holds the answer for one path until release(). */
async function holdingMirror (dir) {
  let held = null; let release = null
  const released = new Promise(resolve => { release = resolve })
  const seen = new Set()
  const server = http.createServer(async (req, res) => {
    const p = new URL(req.url, 'http://x').pathname
    seen.add(p)
    if (p === held) await released
    const body = await fs.readFile(path.join(dir, p)).catch(() => null)
    if (!body) { res.writeHead(404).end(); return }
    res.writeHead(200, { 'content-length': body.length }).end(body)
  })
  await new Promise(resolve => server.listen(0, '127.0.0.1', resolve))
  cleanups.push(() => { release(); server.closeAllConnections(); return new Promise(resolve => server.close(resolve)) })
  return { url: `http://127.0.0.1:${server.address().port}/`, hold: p => { held = p }, release: () => release(), seen }
}

async function threeChunkTree (fileSha) {
  const p = await Publisher.create({ anchor: 'key' })
  cleanups.push(() => fs.rm(p.out, { recursive: true, force: true }))
  const data = Buffer.alloc(3 * 65536)
  for (let i = 0; i < data.length; i++) data[i] = (i * 2654435761) >>> 24
  await p.publish({ 'f.bin': { data, chunkSize: 65536 } })
  const m = await holdingMirror(p.out)
  const tree = await openTree(p.address(m.url), { stateDir: null })
  cleanups.push(() => tree.close())
  let entry = await tree.resolve('/f.bin')
  if (fileSha) {
    // the publisher signs a wrong SHA-256 (every chunk still verifies)
    const root = await p.w.dir([{ name: 'f.bin', entry: { ...entry, sha256: fileSha } }])
    await p.w.publish({ root, seq: p.seq + 1, release: { seq: 2 }, relSigners: [p.k.K], tsSigners: [p.k.K] })
    await tree.refresh()
    entry = await tree.resolve('/f.bin')
  }
  assert.equal(entry.chunks.length, 3)
  return { data, tree, m, second: '/h/' + entry.chunks[1].hash }
}

test('the first piece of a whole version-2 file comes before its next chunk is answered', { timeout: 10_000 }, async () => {
  const { data, tree, m, second } = await threeChunkTree()
  m.hold(second)
  const pieces = []
  for await (const b of tree.createReadStream('/f.bin')) {
    pieces.push(Buffer.from(b))
    if (pieces.length === 1) {
      assert.ok(m.seen.has(second), 'the second chunk was asked for (read ahead)')
      m.release() // only now: the first piece did not wait for it
    }
  }
  assert.equal(sha(Buffer.concat(pieces)), sha(data))
})

test('a wrong whole-file SHA-256 still fails before the last piece is handed out', async () => {
  const { data, tree } = await threeChunkTree(sha('other'))
  let got = 0
  await assert.rejects(async () => { for await (const b of tree.createReadStream('/f.bin')) got += b.length }, { code: 'ROTREE_HASH_MISMATCH' })
  assert.equal(got, 2 * 65536, 'every piece but the last')
  assert.ok(got < data.length)
})

/** A version-2 file under a chunk index (40 chunks of 16 KiB), on a mirror that can hold one path. */
async function indexedTree (lie) {
  const p = await Publisher.create({ anchor: 'key' })
  cleanups.push(() => fs.rm(p.out, { recursive: true, force: true }))
  const data = Buffer.alloc(40 * 16384)
  for (let i = 0; i < data.length; i++) data[i] = (i * 2654435761) >>> 24
  await p.publish({ 'f.bin': { data, chunkSize: 16384 } })
  if (lie) {
    // the publisher names another blob as the first chunk than its index does (the same size, stored raw)
    const other = Buffer.from(data.subarray(0, 16384)); other[0] ^= 1
    const entry = { ...(await p.w.fileBody(data, { chunkSize: 16384 })) }
    entry.lead = { hash: await p.w.putStored(other), size: other.length, storedSize: other.length, codec: 'none' }
    const root = await p.w.dir([{ name: 'f.bin', entry: { type: 'file', ...entry } }])
    await p.w.publish({ root, seq: p.seq + 1, release: { seq: 2 }, relSigners: [p.k.K], tsSigners: [p.k.K] })
  }
  const m = await holdingMirror(p.out)
  const tree = await openTree(p.address(m.url), { stateDir: null })
  cleanups.push(() => tree.close())
  const entry = await tree.resolve('/f.bin')
  assert.ok(entry.index && entry.lead, 'a chunk index and its lead ref')
  return { data, tree, m, entry }
}

test('the first chunk of a file under a chunk index is asked for beside the index, from the lead ref in its entry, and goes out once the index confirms it', { timeout: 10_000 }, async () => {
  const { data, tree, m, entry } = await indexedTree(false)
  // hold the index's top page: the lead is asked for meanwhile (no round trip added), but
  // no byte of it goes out before the index's first leaf child is the same ref (FORMAT.md §5.1)
  m.hold('/h/' + entry.index.hash)
  const it = tree.createReadStream('/f.bin')[Symbol.asyncIterator]()
  let out = false
  const first = it.next()
  first.then(() => { out = true }, () => {})
  while (!m.seen.has('/h/' + entry.lead.hash)) await new Promise(resolve => setTimeout(resolve, 5))
  assert.ok(m.seen.has('/h/' + entry.index.hash), 'the index was asked for beside the lead')
  await new Promise(resolve => setTimeout(resolve, 100)) // the lead's answer is in by now
  assert.equal(out, false, 'the lead went out before the index confirmed it')
  m.release()
  const { value } = await first
  assert.ok(Buffer.from(value).equals(data.subarray(0, 16384)), 'the first chunk, verified against the lead ref')
  const pieces = [Buffer.from(value)]
  for (let n = await it.next(); !n.done; n = await it.next()) pieces.push(Buffer.from(n.value))
  assert.equal(sha(Buffer.concat(pieces)), sha(data))
  // a range inside the lead reads it, once the index agrees
  const part = []
  for await (const b of tree.readRange('/f.bin', { start: 100, end: 199 })) part.push(Buffer.from(b))
  assert.ok(Buffer.concat(part).equals(data.subarray(100, 200)))
})

test('a lead ref that is not the index\'s first chunk is refused (ROTREE_BAD_FORMAT), and only the bytes it signed were shown', { timeout: 10_000 }, async () => {
  const { tree } = await indexedTree(true)
  await assert.rejects(tree.readFile('/f.bin'), { code: 'ROTREE_BAD_FORMAT' })
})

test('a range inside a lead chunk that the index contradicts is refused before any byte (readRange, a stream, readEntry)', { timeout: 10_000 }, async () => {
  const { tree, entry } = await indexedTree(true)
  const reads = {
    readRange: () => tree.readRange('/f.bin', { start: 100, end: 199 }),
    'readRange from 0': () => tree.readRange('/f.bin', { start: 0, end: 16383 }),
    createReadStream: () => tree.createReadStream('/f.bin', { start: 0, end: 99 }),
    readEntry: () => tree.readEntry(entry, 10, 20)
  }
  for (const [name, read] of Object.entries(reads)) {
    let got = 0
    await assert.rejects(async () => { for await (const b of read()) got += b.length }, { code: 'ROTREE_BAD_FORMAT' }, name)
    assert.equal(got, 0, `${name}: ${got} bytes of the lead went out`)
  }
  // past the lead the index alone answers: the one content every read agrees on
  const past = []
  for await (const b of tree.readRange('/f.bin', { start: 20000, end: 20099 })) past.push(Buffer.from(b))
  assert.equal(Buffer.concat(past).length, 100)
})

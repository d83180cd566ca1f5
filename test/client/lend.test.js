// Lent reads (client-js/src/fetch/buffer-pool.js): a big read's chunks are read
// into buffers the consumer gives back, and the next chunks reuse them. What
// must hold: a buffer is never reused while anyone still holds a piece of
// it, including a chunk that one fetch answered for two readers (blobs.js
// shares fetches in flight), and what a lent read yields is the file's bytes.
import { test, after } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { openTree } from 'rotree-client'
import { createHash } from 'node:crypto'
import { BufferPool, VerifiedBlobs } from 'rotree-client/fetch'
import { tmpdir, makeKey, writeTree, buildTree, serve, address, prng } from '../helpers/fixtures.js'

const cleanups = []
after(async () => { for (const c of cleanups.reverse()) await c() })

test('BufferPool: a buffer comes back only after every claim on it is gone, each piece counted once', () => {
  const pool = new BufferPool({ maxBytes: 1 << 20 })
  const a = pool.take(100_000)
  assert.equal(a.length, 128 * 1024, 'sizes are rounded up to a power of two, 64 KiB at least')
  assert.equal(pool.take(2 ** 20 + 1), null, 'nothing larger than a blob can be')
  pool.mark(a.subarray(0, 10))
  pool.give(a.subarray(0, 10)) // another view than the one handed out
  pool.give(a) // never handed out: a buffer still being read into cannot be given back
  assert.notEqual(pool.take(100_000), a, 'the request that took it still holds it')
  pool.lend(a, 2) // the request's claim passes to two readers
  const p1 = a.subarray(0, 100); const p2 = a.subarray(0, 100)
  pool.mark(p1); pool.mark(p2)
  pool.give(p1); pool.give(p1) // the same piece twice counts once
  assert.notEqual(pool.take(100_000), a, 'the second reader still holds it')
  pool.hold(a) // a store that writes it later
  pool.give(p2)
  assert.notEqual(pool.take(100_000), a, 'the store still holds it')
  pool.drop(a)
  assert.equal(pool.take(100_000), a, 'every claim gone: reused')
  pool.lend(a, 0)
  pool.drop(a) // already free: nothing
  assert.equal(pool.take(100_000), a)
  assert.notEqual(pool.take(100_000), a, 'in the free list once')
  const foreign = new Uint8Array(10)
  pool.mark(foreign); pool.give(foreign); pool.lend(foreign, 0) // not the pool's: ignored
  // the free list is bounded: the rest is left to the garbage collector
  const bs = Array.from({ length: 12 }, () => pool.take(128 * 1024))
  for (const b of bs) pool.lend(b, 0)
  assert.ok(pool.freeBytes <= 1 << 20)
})

test('one fetch answering two readers: its buffer is reused only after both gave it back', async () => {
  const pool = new BufferPool()
  const data = prng(200_000, 'one chunk')
  const ref = { hash: createHash('sha256').update(data).digest('hex'), size: data.length }
  let fetches = 0
  // a mirror that answers in the buffer it is given, as the transport does (sched.js)
  const mirrors = {
    async fetch (p, cap, check, signal, o) {
      fetches++
      const into = o.pool?.take(cap) ?? new Uint8Array(cap)
      await new Promise(resolve => setTimeout(resolve, 5))
      into.set(data)
      return check(into.subarray(0, cap), 'm')
    }
  }
  const blobs = new VerifiedBlobs({ mirrors, cacheBytes: 0, concurrency: 8, counters: {}, pool })
  const [a, b] = await Promise.all([blobs.chunk(ref, false, true), blobs.chunk(ref, false, true)])
  assert.equal(fetches, 1, 'the second reader joined the first one\'s fetch')
  assert.ok(a.buffer === b.buffer)
  // each reader is handed its own view, marked (as Tree#readRange does)
  const pa = a.subarray(0); const pb = b.subarray(0)
  pool.mark(pa); pool.mark(pb)
  pool.give(pa)
  const other = pool.take(200_000)
  assert.ok(other.buffer !== a.buffer, 'b still lies in it')
  pool.give(pb)
  assert.ok(pool.take(200_000).buffer === a.buffer, 'both gave it back: reused')
  // a read that does not lend (or keeps what it reads) never gets a pooled buffer
  const c = await blobs.chunk(ref, false, false)
  assert.equal(pool.owns(c), false)
})

async function fixture () {
  const dir = await tmpdir('rotree-lend-')
  cleanups.push(() => fs.rm(dir, { recursive: true, force: true }))
  const block = prng(1 << 20, 'block')
  const files = {
    // one 1 MiB block 16 times, each followed by 512 KiB of its own: one
    // blob read for several places of the file, other chunks between them
    'repeated.bin': Buffer.concat(Array.from({ length: 16 }, (_, i) => [block, prng(512 << 10, 'gap' + i)]).flat()),
    'random.bin': prng(9 << 20, 'random'),
    'text.txt': Array.from({ length: 200_000 }, (_, i) => `line ${i} of a file that deflates well\n`).join('')
  }
  await writeTree(path.join(dir, 'src'), files)
  const key = makeKey()
  const { out } = await buildTree(path.join(dir, 'src'), { key, out: path.join(dir, 'out') })
  const srv = await serve(out)
  cleanups.push(() => srv.close())
  // a small read-ahead: fetches keep starting while earlier pieces are held and given back
  const tree = await openTree(address(srv.url, key.publicKey), { stateDir: null, readAhead: 4, maxInflightBytes: 1 << 20 })
  cleanups.push(() => tree.close())
  return { tree, files }
}

test('a lent read yields the file, reuses buffers, and never reuses one a piece still lies in', async () => {
  const { tree, files } = await fixture()
  for (const name of ['repeated.bin', 'random.bin', 'text.txt']) {
    const want = Buffer.from(files[name])
    const reusedBefore = tree.blobs.pool.stats.reused
    const held = [] // pieces not yet given back: the last three
    let off = 0
    const giveOldest = () => {
      const { piece, at } = held.shift()
      // still the bytes it was handed: nothing was read into its buffer meanwhile
      assert.ok(Buffer.from(piece).equals(want.subarray(at, at + piece.length)), `${name}: the piece at ${at} changed while held`)
      tree.release(piece)
    }
    for await (const piece of tree.readRange('/' + name, { lend: true })) {
      assert.ok(Buffer.from(piece).equals(want.subarray(off, off + piece.length)), `${name}: wrong bytes at ${off}`)
      held.push({ piece, at: off })
      off += piece.length
      if (held.length > 3) giveOldest()
    }
    while (held.length) giveOldest()
    assert.equal(off, want.length, name)
    assert.ok(tree.blobs.pool.stats.reused > reusedBefore, `${name}: buffers were reused`)
  }
})

test('a read that does not lend gets buffers nobody reuses; giving them back does nothing', async () => {
  const { tree, files } = await fixture()
  const made = tree.blobs.pool.stats.made
  const pieces = []
  for await (const piece of tree.readRange('/random.bin')) { pieces.push(piece); tree.release(piece) }
  assert.equal(tree.blobs.pool.stats.made, made, 'no pooled buffer was used')
  assert.ok(Buffer.concat(pieces).equals(files['random.bin']))
})

// The adaptive window (client-js/src/fetch/window.js, sched.js, read-pipeline.js):
// over a link with delay a streaming read keeps more than the old fixed 8
// chunks in flight, counted by the server, and never more bytes than
// maxInflightBytes; and the window's rules on their own, on a made-up clock.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { createHash } from 'node:crypto'
import { openTree } from 'rotree-client'
import { Mirrors, MirrorWindow } from 'rotree-client/fetch'
import { readChunks } from 'rotree-client/tree'
import { createTransport } from 'rotree-client/net'
import { verifyBlob, verifyChunkIndex, checkChunkIndexPlacement } from 'rotree-client/verify'
import { tmpdir, makeKey, writeTree, buildTree, address, prng } from '../helpers/fixtures.js'
import { startMirror } from './mirrors-server.js'

const fx = {}
before(async () => {
  fx.dir = await tmpdir('rotree-window-')
  fx.big = prng(24 << 20, 'window-big')
  await writeTree(path.join(fx.dir, 'src'), { 'big.bin': fx.big })
  fx.key = makeKey()
  fx.out = (await buildTree(path.join(fx.dir, 'src'), { key: fx.key, out: path.join(fx.dir, 'out') })).out
})
after(() => fs.rm(fx.dir, { recursive: true, force: true }))

/** What a Tree gives the read pipeline, over a Mirrors of our own (so its options are ours). */
function sourceOver (mirrors) {
  return {
    sched: mirrors,
    chunk: ref => mirrors.fetch('h/' + ref.hash, ref.size, b => verifyBlob(b, ref)),
    chunkIndex: async (ref, expect) => {
      const idx = await mirrors.fetch('h/' + ref.hash, ref.size, b => verifyChunkIndex(b, ref))
      checkChunkIndexPlacement(idx, expect)
      return idx
    }
  }
}

const sha = b => createHash('sha256').update(b).digest('hex')

test('over a link with delay the window grows past 8 requests in flight, within maxInflightBytes', { timeout: 60_000 }, async t => {
  const srv = await startMirror(fx.out, { delayMs: 25 })
  t.after(() => srv.close())
  const tree = await openTree(address(srv.url, fx.key.publicKey), { stateDir: null })
  t.after(() => tree.close())
  const entry = await tree.resolve('/big.bin')
  srv.stats.peakConcurrent = srv.stats.concurrent; srv.stats.peakBytes = srv.stats.bytes

  const maxInflightBytes = 6 << 20
  const transport = createTransport({ maxSockets: 64 })
  t.after(() => transport.close())
  const mirrors = new Mirrors([srv.url], { transport, timeoutMs: 20_000, maxRequests: 64, maxInflightBytes })
  const h = createHash('sha256')
  let n = 0
  for await (const b of readChunks(sourceOver(mirrors), entry, 0, entry.size)) { h.update(b); n += b.length }
  assert.equal(n, fx.big.length)
  assert.equal(h.digest('hex'), sha(fx.big))
  assert.ok(srv.stats.peakConcurrent > 8, `at most ${srv.stats.peakConcurrent} requests were in flight at once`)
  assert.ok(srv.stats.peakBytes <= maxInflightBytes, `${srv.stats.peakBytes} bytes in flight at once, maxInflightBytes is ${maxInflightBytes}`)
  assert.ok(mirrors.schedStats().peakInflightBytes <= maxInflightBytes)
  assert.equal(mirrors.held, 0, 'every byte read ahead was released')
})

test('maxInflightBytes holds even a large readAhead down, and the read still completes', { timeout: 60_000 }, async t => {
  const srv = await startMirror(fx.out, { delayMs: 10 })
  t.after(() => srv.close())
  const tree = await openTree(address(srv.url, fx.key.publicKey), { stateDir: null })
  t.after(() => tree.close())
  const entry = await tree.resolve('/big.bin')
  srv.stats.peakConcurrent = 0; srv.stats.peakBytes = 0
  const transport = createTransport({ maxSockets: 64 })
  t.after(() => transport.close())
  // readAhead asks for 16 chunks (~4 MiB) ahead; the budget lets 1 MiB of them out at a time
  const mirrors = new Mirrors([srv.url], { transport, timeoutMs: 20_000, maxRequests: 64, maxInflightBytes: 1 << 20 })
  let n = 0
  const stream = readChunks(sourceOver(mirrors), entry, 5 << 20, 9 << 20, { readAhead: 16 })
  for await (const b of stream) n += b.length
  assert.equal(n, 4 << 20)
  // one blob beyond the budget is allowed when nothing else is in flight
  assert.ok(srv.stats.peakBytes <= 1 << 20 || srv.stats.peakConcurrent === 1, `${srv.stats.peakBytes} bytes in flight at once`)
})

test('read-ahead is counted in stored bytes against the windows, and in decoded bytes against the budget', async () => {
  // a version-2 file that compresses 4×: 256 KiB chunks stored as 64 KiB blobs
  const DECODED = 256 << 10; const STORED = 64 << 10; const N = 64
  const chunks = Array.from({ length: N }, (_, i) => ({ hash: sha(String(i)), size: DECODED, storedSize: STORED, codec: 'deflate' }))
  const entry = { size: N * DECODED, chunks }
  const asked = []; const answers = []
  const sched = {
    held: 0, maxInflightBytes: 64 << 20,
    readAheadBytes: () => 1 << 20, // what the windows can carry: 1 MiB on the wire
    reserve (n) { this.held += n }, release (n) { this.held -= n }
  }
  const source = {
    sched,
    chunk: ref => { asked.push(ref); return new Promise(resolve => answers.push(() => resolve(new Uint8Array(ref.size)))) },
    chunkIndex: () => { throw new Error('no index here') }
  }
  const it = readChunks(source, entry, 0, entry.size, { readAhead: 2 })[Symbol.asyncIterator]()
  const first = it.next()
  await new Promise(resolve => setImmediate(resolve))
  // 1 MiB of stored bytes is 16 chunks; counted decoded it would have been 4
  assert.equal(asked.length, 16, `${asked.length} chunks asked for ahead`)
  assert.equal(sched.held, 16 * DECODED, 'the budget is charged what the chunks hold once decoded')
  answers[0]()
  assert.equal((await first).value.length, DECODED)
  let n = DECODED
  for (let i = 1; ; i++) {
    while (answers.length <= i && answers.length < N) await new Promise(resolve => setImmediate(resolve))
    if (i >= N) break
    answers[i]()
    const r = await it.next()
    n += r.value.length
  }
  assert.equal((await it.next()).done, true)
  assert.equal(n, entry.size)
  assert.equal(sched.held, 0, 'every byte reserved was released')

  // a budget smaller than the windows: reservations in decoded bytes stop the asking
  asked.length = 0; answers.length = 0
  const tight = { ...sched, held: 0, maxInflightBytes: 4 * DECODED, reserve (k) { this.held += k }, release (k) { this.held -= k } }
  const it2 = readChunks({ ...source, sched: tight }, entry, 0, entry.size, { readAhead: 2 })[Symbol.asyncIterator]()
  const first2 = it2.next()
  await new Promise(resolve => setImmediate(resolve))
  assert.equal(asked.length, 4, `${asked.length} chunks asked for within a budget of 4 decoded chunks`)
  answers[0]()
  await first2
  await it2.return()
  assert.equal(tight.held, 0)
})

/**
 * A path simulated on a made-up clock: requests of `size` bytes, a one-way
 * delay of d/2 each way, a link of `rate` bytes per ms that sends answers in
 * turn; the reader always wants more, and sends the next request as soon as
 * the window has room.
 */
function simulate ({ d, rate, size = 256 * 1024, n = 1000, faultAt = -1 }) {
  let now = 0
  const events = []
  const at = (t, fn) => { let i = events.length; events.push(null); while (i > 0 && events[i - 1].t > t) { events[i] = events[i - 1]; i-- } events[i] = { t, fn } }
  const w = new MirrorWindow({ initial: 8 * size, min: 4 * size, max: 64 << 20, minRequests: 8, now: () => now })
  w.sample(d) // fsinfo.json, on a quiet path
  let linkFree = 0; let sent = 0; let faulted = null
  const windows = []
  const pump = () => {
    while (sent < n && w.fits(size)) {
      const tk = w.sent(size)
      const i = sent++
      linkFree = Math.max(linkFree, now + d / 2) + size / rate
      at(linkFree + d / 2, () => {
        if (i === faultAt) { faulted = { before: w.bytes }; w.dropped(tk, { fault: true }); faulted.after = w.bytes } else w.done(tk)
      })
    }
    if (sent < n) w.full()
  }
  pump()
  while (events.length) {
    const e = events.shift()
    now = e.t
    e.fn()
    if (windows.at(-1) !== w.bytes) windows.push(w.bytes)
    pump()
  }
  return { w, windows, ms: now, faulted, bdp: rate * d }
}

test('the window: slow start while the rate rises, then about twice bandwidth × delay', () => {
  const MiB = 1 << 20
  for (const [d, mbit] of [[10, 1000], [50, 1000], [100, 1000], [20, 200]]) {
    const rate = mbit * 1e6 / 8 / 1000
    const r = simulate({ d, rate })
    const what = `RTT ${d} ms, ${mbit} Mbit/s: windows ${r.windows.map(b => (b / MiB).toFixed(1)).join(' ')} MiB`
    assert.equal(r.w.startup, false, `${what}: start-up ended`)
    assert.ok(r.w.bytes >= 1.5 * r.bdp && r.w.bytes <= 3 * r.bdp + 4 * 256 * 1024, `${what}: bandwidth × delay is ${(r.bdp / MiB).toFixed(1)} MiB`)
    assert.ok(r.w.bytes > 8 * 256 * 1024 || r.bdp < 2 * MiB, `${what}: grew past the first 8 chunks`)
    // the first rounds double
    if (r.bdp > 4 * MiB) {
      assert.equal(r.windows[0], 8 * 256 * 1024, what)
      assert.ok(r.windows[1] >= 1.9 * r.windows[0] && r.windows[2] >= 1.9 * r.windows[1], what)
    }
    // the path was kept busy, start-up included (~250 MiB)
    assert.ok(1000 * 256 * 1024 / rate / r.ms > 0.8, `${what}: ${(100 * 1000 * 256 * 1024 / rate / r.ms).toFixed(0)}% of the link used`)
  }
})

test('the window: a fault halves it; a reader that does not fill it does not move it', () => {
  const r = simulate({ d: 50, rate: 125_000, faultAt: 600 })
  assert.ok(r.faulted, 'the fault happened')
  assert.equal(r.faulted.after, Math.max(4 * 256 * 1024, Math.floor(r.faulted.before / 2)))
  assert.equal(r.w.startup, false)
  let now = 0
  const w = new MirrorWindow({ initial: 1 << 20, min: 256 << 10, max: 64 << 20, now: () => now })
  for (let i = 0; i < 20; i++) { const t = w.sent(256 << 10); now += 10; w.done(t) }
  assert.equal(w.bytes, 1 << 20, 'rounds the reader did not fill leave the window alone')
})

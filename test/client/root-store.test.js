// The root store (client-js/src/trust/root-store.js) and the public API the gateway
// reads it through: rootRecord, isFresh(), readChunk(). And the settle window:
// a fast stale mirror wins the first answer, but a newer root that a slower
// honest mirror sends afterwards is adopted when it arrives, without changing
// the root under a read already pinned (docs/TRUST.md rules 2, 4 and 6).
import { test, after } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import http from 'node:http'
import { openTree } from 'rotree-client'
import { startLyingServer } from '../helpers/lying-server.js'
import { tmpdir, makeKey, writeTree, buildTree, serve, address } from '../helpers/fixtures.js'

const cleanups = []
after(async () => { for (const c of cleanups.reverse()) await c() })

async function twoVersions () {
  const dir = await tmpdir('rotree-roots-')
  cleanups.push(() => fs.rm(dir, { recursive: true, force: true }))
  const key = makeKey()
  const src = path.join(dir, 'src')
  await writeTree(src, { 'a.txt': 'one\n', 'big.bin': new Uint8Array(100_000).fill(7) })
  // the builder's default format; its sequence numbers are the builder's own
  // (version 2: from the clock, FORMAT.md §6.2), each above the last
  const { out, result: r1 } = await buildTree(src, { key })
  const old = await fs.readFile(path.join(out, 'fsinfo.json'))
  await writeTree(src, { 'a.txt': 'two\n' })
  const { result: r2 } = await buildTree(src, { key, out })
  assert.ok(r2.seq > r1.seq)
  return { key, out, old, oldSeq: r1.seq, newSeq: r2.seq }
}

/** A mirror of `out` whose fsinfo.json is held back until release() (a slow honest mirror). */
async function heldMirror (out) {
  let release
  const gate = new Promise(resolve => { release = resolve })
  const server = http.createServer(async (req, res) => {
    const p = new URL(req.url, 'http://x').pathname
    if (p === '/fsinfo.json') await gate
    const file = p === '/fsinfo.json' ? 'fsinfo.json' : /^\/h\/[0-9a-f]{64}$/.test(p) ? p.slice(1) : null
    const body = file && await fs.readFile(path.join(out, file)).catch(() => null)
    if (!body) { res.writeHead(404).end(); return }
    res.writeHead(200, { 'content-length': body.length }).end(body)
  })
  await new Promise(resolve => server.listen(0, '127.0.0.1', resolve))
  cleanups.push(() => { release(); server.closeAllConnections(); return new Promise(resolve => server.close(resolve)) })
  return { url: `http://127.0.0.1:${server.address().port}/`, release }
}

async function until (what, cond) {
  for (let i = 0; i < 500 && !cond(); i++) await new Promise(resolve => setTimeout(resolve, 20)) // at most ~10 s
  assert.ok(cond(), what)
}

test('rootRecord, isFresh() and the deprecated current: one record per adopted root; a snapshot keeps its own', async t => {
  const { key, out, newSeq } = await twoVersions()
  const srv = await serve(out); cleanups.push(srv.close)
  let now = Date.now()
  const tree = await openTree(address(srv.url, key.publicKey), { stateDir: null, now: () => now }); cleanups.push(() => tree.close())
  const first = tree.rootRecord
  assert.equal(first.seq, newSeq)
  assert.equal(tree.current, first)
  assert.equal(tree.isFresh(), true)
  assert.equal(await tree.refresh(), false)
  assert.equal(tree.rootRecord, first, 'the same root again keeps its record')
  const view = tree.snapshot()
  assert.equal(view.rootRecord, first)
  now += 2 * 3600e3 // past expiry by the tree's own clock
  assert.equal(tree.isFresh(), false)
  assert.equal(view.isFresh(), false)
  assert.equal(tree.rootRecord, first, 'an expired record is still the accepted one until refreshed')
})

test('a newer root from a mirror slower than the settle window is adopted when it arrives; pinned reads keep theirs', async t => {
  const { key, out, old, oldSeq, newSeq } = await twoVersions()
  const stale = await startLyingServer(out, { fsinfo: () => ({ body: old }) }); cleanups.push(() => stale.close())
  const slow = await heldMirror(out)
  const tree = await openTree(address(stale.url, key.publicKey), { mirrors: [slow.url], stateDir: null, fsinfoSettleMs: 20, timeoutMs: 15_000 })
  cleanups.push(() => tree.close())
  assert.equal(tree.info.seq, oldSeq, 'the fast stale mirror answered first')
  const pinned = tree.snapshot()
  const stream = pinned.readRange('/a.txt')
  const before = tree.rootRecord
  slow.release()
  await until('the newer root was never adopted', () => tree.info.seq === newSeq)
  assert.notEqual(tree.rootRecord, before)
  assert.equal(Buffer.from(await tree.readFile('/a.txt')).toString(), 'two\n')
  // the view pinned before stays on its root, and so does a read started on it
  assert.equal(pinned.info.seq, oldSeq)
  const parts = []
  for await (const b of stream) parts.push(b)
  assert.equal(Buffer.concat(parts).toString(), 'one\n')
  assert.equal(Buffer.from(await pinned.readFile('/a.txt')).toString(), 'one\n')
  // the stale mirror is reported, not trusted
  const h = tree.stats.mirrors.find(m => m.url === stale.url)
  assert.equal(h.lastError?.code, 'ROTREE_ROLLBACK')
})

test('a late answer that is older than the adopted root changes nothing', async t => {
  const { key, out, old, newSeq } = await twoVersions()
  const fast = await serve(out); cleanups.push(fast.close)
  const dir = await tmpdir('rotree-roots-old-'); cleanups.push(() => fs.rm(dir, { recursive: true, force: true }))
  await fs.cp(out, dir, { recursive: true })
  await fs.writeFile(path.join(dir, 'fsinfo.json'), old)
  const slow = await heldMirror(dir)
  const tree = await openTree(address(fast.url, key.publicKey), { mirrors: [slow.url], stateDir: null, fsinfoSettleMs: 20, timeoutMs: 15_000 })
  cleanups.push(() => tree.close())
  const record = tree.rootRecord
  assert.equal(record.seq, newSeq)
  slow.release()
  await until('the late stale answer was never reported', () => tree.stats.mirrors.find(m => m.url === slow.url).lastError?.code === 'ROTREE_ROLLBACK')
  assert.equal(tree.rootRecord, record)
})

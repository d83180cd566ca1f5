// How long a reader opening a tree waits for the mirrors that have not
// answered fsinfo.json yet (mirrors.js fetchAll, FORMAT.md §12.9 step 2): as
// long as each one's distance explains, measured by its first connection's
// handshake (handshake-times.js), not a fixed settle time. A far but honest
// mirror with the newer root is waited for, so a near stale one does not win
// by speed; a near mirror that stays silent does not hold every open().
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import net from 'node:net'
import path from 'node:path'
import { openTree } from 'rotree-client'
import { tmpdir, writeTree, buildTree, makeKey, serve, address } from '../helpers/fixtures.js'
import { startTlsServer } from '../helpers/tls-server.js'
import { needs } from '../helpers/tools.js'
import { startLink } from '../../bench/lib/link.js'

async function twoRoots (t) {
  const dir = await tmpdir('rotree-settle-')
  t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const key = makeKey()
  const src = path.join(dir, 'src'); const out = path.join(dir, 'out'); const stale = path.join(dir, 'stale')
  await writeTree(src, { 'a.txt': 'one\n' })
  await buildTree(src, { key, out, seq: 100 })
  await fs.cp(out, stale, { recursive: true })
  await writeTree(src, { 'a.txt': 'two\n' })
  await buildTree(src, { key, out, seq: 200 })
  return { key, out, stale }
}

test('a far honest mirror with the newer root is waited for: a near stale one does not win by speed', { skip: needs('openssl'), timeout: 60_000 }, async t => {
  const { key, out, stale } = await twoRoots(t)
  const near = await serve(stale); t.after(() => near.close())
  // the honest mirror over HTTPS behind a 1 s round trip: its TLS handshake (two round trips
  // through the link) measures the distance before it has answered anything
  const tls = await startTlsServer(async (req, res) => {
    const body = await fs.readFile(path.join(out, decodeURIComponent(new URL(req.url, 'https://x').pathname))).catch(() => null)
    if (!body) { res.writeHead(404); return res.end() }
    res.writeHead(200, { 'content-length': body.length }); res.end(body)
  }, { h2: true, allowHTTP1: true })
  t.after(() => tls.close())
  const link = await startLink({ target: `127.0.0.1:${tls.port}`, rttMs: 1000 })
  t.after(() => link.stop())
  // the fsinfo.json settle time stays the default (2 s): the far answer comes after it
  const tree = await openTree(address(near.url, key.publicKey), { mirrors: [`https://127.0.0.1:${link.port}/`], ca: tls.cert, stateDir: null })
  t.after(() => tree.close())
  assert.equal(tree.info.seq, 200, 'the far mirror\'s newer root is the one read')
  assert.equal(Buffer.from(await tree.readFile('/a.txt')).toString(), 'two\n')
})

test('a near mirror that accepts and never answers costs a few of its round trips, not the settle time', { timeout: 30_000 }, async t => {
  const { key, out } = await twoRoots(t)
  const honest = await serve(out); t.after(() => honest.close())
  const sockets = new Set()
  const silent = net.createServer(s => { sockets.add(s); s.on('error', () => {}) })
  await new Promise(resolve => silent.listen(0, '127.0.0.1', resolve))
  t.after(() => { for (const s of sockets) s.destroy(); silent.close() })
  // a settle time and a deadline far longer than the test may run: only the measured
  // distance of the silent mirror can end the wait for it
  const tree = await openTree(address(honest.url, key.publicKey), {
    mirrors: [`http://127.0.0.1:${silent.address().port}/`], stateDir: null, fsinfoSettleMs: 120_000, timeoutMs: 120_000
  })
  t.after(() => tree.close())
  assert.equal(tree.info.seq, 200)
  assert.equal(Buffer.from(await tree.readFile('/a.txt')).toString(), 'two\n')
})

// openTree() starts its round trips early (client-js/src/tree/tree.js,
// root-store.js): the connection to each mirror opens while the reader is
// still being set up, and the root page is asked for as soon as a root
// verifies, while the other mirrors' fsinfo.json answers and the rollback
// state are still to come. Asking early must not mean accepting early: a
// root that the rollback state refuses is never read, though its page was
// asked for, and a root page that no mirror has fails the read that needs
// it, not the open.
import { test, after } from 'node:test'
import assert from 'node:assert/strict'
import http from 'node:http'
import fs from 'node:fs/promises'
import path from 'node:path'
import { openTree } from 'rotree-client'
import { Tree } from 'rotree-client/tree'
import { tmpdir } from '../helpers/fixtures.js'
import { startStaticMirror } from './static-mirror.js'
import { Publisher } from './v2-publisher.js'

const cleanups = []
after(async () => { for (const c of cleanups.reverse()) await c() })
const text = b => Buffer.from(b).toString()

async function publisher () { const p = await Publisher.create({ anchor: 'key' }); cleanups.push(() => p.close()); return p }
async function mirror (dir) { const m = await startStaticMirror(dir); cleanups.push(() => m.close()); return m }
async function stateDir () { const d = await tmpdir('rotree-early-state-'); cleanups.push(() => fs.rm(d, { recursive: true, force: true })); return d }
const rootPath = async out => '/h/' + JSON.parse(await fs.readFile(path.join(out, 'fsinfo.json'), 'utf8')).release.root.hash

/** A mirror of `dir` that holds fsinfo.json until release(), and counts connections (`on`: each request and the connection it came on). */
async function slowMirror (dir) {
  let release
  const released = new Promise(resolve => { release = resolve })
  const requests = []; const on = []
  const server = http.createServer(async (req, res) => {
    const p = new URL(req.url, 'http://x').pathname
    requests.push(p)
    on.push(`${p} on connection ${req.socket.n}`)
    if (p === '/fsinfo.json') await released
    const body = await fs.readFile(path.join(dir, p)).catch(() => null)
    if (!body) { res.writeHead(404, { 'content-length': 0 }).end(); return }
    res.writeHead(200, { 'content-length': body.length }).end(body)
  })
  let connections = 0
  server.on('connection', sock => { sock.n = connections++ })
  await new Promise(resolve => server.listen(0, '127.0.0.1', resolve))
  cleanups.push(() => { release(); server.closeAllConnections(); return new Promise(resolve => server.close(resolve)) })
  return { url: `http://127.0.0.1:${server.address().port}/`, requests, on, release: () => release(), get connections () { return connections } }
}

async function until (cond, what) {
  for (let i = 0; i < 500 && !cond(); i++) await new Promise(resolve => setTimeout(resolve, 10))
  assert.ok(cond(), what)
}

test('the root page is asked for once a root verifies, before a slower mirror has answered fsinfo.json', { timeout: 20_000 }, async () => {
  const p = await publisher()
  await p.publish({ 'a.txt': 'one', 'b.bin': 'x'.repeat(40_000) })
  const fast = await mirror(p.out)
  const slow = await slowMirror(p.out)
  const root = await rootPath(p.out)
  // (how long the open waits for the slow mirror is its distance's business: Mirrors.fetchAll)
  const opening = openTree(p.address(fast.url), { stateDir: null, mirrors: [slow.url], fsinfoSettleMs: 10_000, timeoutMs: 10_000 })
    .then(t => { cleanups.push(() => t.close()); return t })
  await until(() => [...fast.requests, ...slow.requests].includes(root), 'the root page was asked for before the slow mirror answered')
  assert.equal([...fast.requests, ...slow.requests].filter(r => r === root).length, 1, 'asked for once')
  slow.release()
  const tree = await opening
  assert.equal(text(await tree.readFile('/a.txt')), 'one')
  assert.equal(text(await tree.readFile('/b.bin')), 'x'.repeat(40_000))
  // the page fetched early is the one the read used: not asked for again
  assert.equal([...fast.requests, ...slow.requests].filter(r => r === root).length, 1)
})

test('a root the rollback state refuses is never read, though its page was asked for', { timeout: 20_000 }, async () => {
  const p = await publisher()
  await p.publish({ 'a.txt': 'one' })
  const oldFsinfo = await fs.readFile(path.join(p.out, 'fsinfo.json'))
  const oldRoot = await rootPath(p.out)
  await p.publish({ 'a.txt': 'two' })
  const m = await mirror(p.out)
  const state = await stateDir()
  const tree = await openTree(p.address(m.url), { stateDir: state, fsinfoSettleMs: 200 })
  assert.equal(text(await tree.readFile('/a.txt')), 'two')
  tree.close()

  // the mirror goes back to the first release: signed, fresh, and behind what this reader saw
  m.set('/fsinfo.json', oldFsinfo)
  const before = m.requests.length
  const err = await openTree(p.address(m.url), { stateDir: state, fsinfoSettleMs: 200 }).then(() => null, e => e)
  assert.ok(err, 'the rolled-back root was refused')
  assert.ok([err.code, ...(err.errors ?? []).map(e => e.code)].includes('ROTREE_ROLLBACK'), `${err.code}: ${err.message}`)
  await until(() => m.requests.slice(before).includes(oldRoot), 'its root page was asked for before the state was read')
})

test('a root page no mirror has fails the read that needs it, not the open', { timeout: 20_000 }, async () => {
  const p = await publisher()
  await p.publish({ 'a.txt': 'one' })
  const m = await mirror(p.out)
  const root = await rootPath(p.out)
  m.set(root, null)
  const tree = await openTree(p.address(m.url), { stateDir: null, fsinfoSettleMs: 200, timeoutMs: 5000 })
  cleanups.push(() => tree.close())
  const err = await tree.readFile('/a.txt').then(() => null, e => e)
  assert.ok(err, 'the read failed')
  assert.equal(err.code, 'ROTREE_ALL_MIRRORS_FAILED', err.message)
  m.set(root, undefined) // the mirror has it again: the next read asks anew and succeeds
  assert.equal(text(await tree.readFile('/a.txt')), 'one')
})

test('each mirror\'s connection opens with the tree, before a request is ready; the first request finds it open', { timeout: 20_000 }, async () => {
  const p = await publisher()
  await p.publish({ 'a.txt': 'one' })
  const a = await slowMirror(p.out)
  const b = await slowMirror(p.out)
  const tree = new Tree(p.address(a.url), { stateDir: null, mirrors: [b.url], fsinfoSettleMs: 200, timeoutMs: 10_000 })
  cleanups.push(() => tree.close())
  await until(() => a.connections === 1 && b.connections === 1, 'a connection to each mirror, with nothing asked yet')
  assert.deepEqual([...a.requests, ...b.requests], [])
  a.release(); b.release()
  await tree.refresh()
  assert.equal(text(await tree.readFile('/a.txt')), 'one')
  // the first request to each went on the connection opened ahead (later ones may open more)
  assert.equal(a.on[0], '/fsinfo.json on connection 0')
  assert.equal(b.on[0], '/fsinfo.json on connection 0')
})

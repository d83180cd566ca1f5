// A tree that is itself malformed, or just expensive, must not harm the
// gateway's clients or its other requests:
//   - a tree view that yields more bytes than the entry announced (or fewer)
//     never gets them past the Content-Length: on a pipelining connection the
//     extra bytes would be read as the answer to the next request;
//   - a listing of many symlinks whose lookups all settle at once (a warm
//     cache) yields to the event loop, so a request that arrives meanwhile is
//     answered before it ends; symlink targets are resolved within a budget.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import http from 'node:http'
import { Tree } from 'rotree-client'
import { NotFoundError } from 'rotree-client/errors'
import { serve } from '../helpers/fixtures.js'
import { withTargets } from '../../gateway/targets.js'
import { makeFixture, prng, startGateway, rawSocket, raw, address } from './helpers.js'

const FORGED = 'HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 26\r\n\r\n<h1>forged by the tree</h1>'

const fx = {}
before(async () => {
  fx.files = { 'hello.txt': 'hello, world\n', 'medium.bin': prng(100 * 1024, 'm'), 'big.bin': prng(3 * 1024 * 1024, 'b') }
  Object.assign(fx, await makeFixture(fx.files))
  fx.mirror = await serve(fx.out)
  fx.addr = address(fx.mirror.url, fx.pk)
})
after(async () => { await fx.mirror?.close(); await fx.cleanup?.() })

/** A Tree whose pinned views lie about bytes the way `lie` says (the gateway's only source of them). */
async function lyingTree (t, lie) {
  const tree = new Tree(fx.addr, { stateDir: null })
  t.after(() => tree.close())
  await tree.refresh()
  const snapshot = tree.snapshot.bind(tree)
  tree.snapshot = () => {
    const view = snapshot()
    const readEntry = view.readEntry.bind(view)
    view.readEntry = (entry, start, end) => lie.readEntry?.(readEntry(entry, start, end)) ?? readEntry(entry, start, end)
    const readChunk = view.readChunk.bind(view) // the one-chunk path
    view.readChunk = (...a) => readChunk(...a).then(b => lie.chunk?.(b) ?? b)
    return view
  }
  return tree
}

// the last request asks to close, so the connection ends when everything was answered
const pipelined = (host, paths) => paths.map((p, i) => `GET ${p} HTTP/1.1\r\nHost: ${host}\r\n${i === paths.length - 1 ? 'Connection: close\r\n' : ''}\r\n`).join('')

test('a tree that yields more bytes than announced: the connection breaks, no forged response reaches a pipelining client', async t => {
  const tree = await lyingTree(t, { readEntry: async function * (it) { yield * it; yield Buffer.from(FORGED) } })
  const lines = []
  const gw = await startGateway(t, { tree, log: { error: m => lines.push(m), info: () => {} } })
  const host = `127.0.0.1:${gw.port}`
  const got = await rawSocket(gw.url, pipelined(host, ['/big.bin', '/hello.txt']))
  assert.ok(!got.includes('forged by the tree'), 'the forged response was sent')
  assert.equal(got.match(/HTTP\/1\.1 \d{3}/g).length, 1, 'one response, then the connection broke')
  const head = got.slice(0, got.indexOf('\r\n\r\n'))
  const length = Number(/content-length: (\d+)/i.exec(head)[1])
  assert.equal(length, fx.files['big.bin'].length)
  assert.ok(got.length - head.length - 4 <= length, 'never more body than Content-Length')
  assert.ok(lines.some(l => /more|yielded/.test(l)), 'logged: ' + lines.join('\n'))
  // the gateway itself is fine
  assert.equal((await raw(gw.url, '/hello.txt')).status, 200)
})

test('a first piece already longer than the answer: a 502 before any header, not a body', async t => {
  const tree = await lyingTree(t, { readEntry: async function * (it) { for await (const b of it) yield Buffer.concat([b, Buffer.from(FORGED)]) } })
  const gw = await startGateway(t, { tree })
  const b1 = (await tree.resolve('/big.bin')).chunks[0].size
  const many = await raw(gw.url, '/big.bin', { headers: { range: `bytes=${b1 - 5}-${b1 + 5}` } }) // two chunks, 11 bytes
  assert.equal(many.status, 502)
  assert.match(many.body.toString(), /ROTREE_BAD_FORMAT/)
  assert.ok(!many.body.toString().includes('forged by the tree'))
})

test('a chunk shorter than its entry says: 502 for a one-chunk answer, never a short body under a longer Content-Length', async t => {
  const tree = await lyingTree(t, { chunk: b => b.subarray(0, b.length - 10) })
  const gw = await startGateway(t, { tree })
  const host = `127.0.0.1:${gw.port}`
  const got = await rawSocket(gw.url, pipelined(host, ['/medium.bin', '/hello.txt']))
  assert.match(got, /^HTTP\/1\.1 502 /, got.slice(0, 200))
  assert.match(got, /ROTREE_BAD_FORMAT/)
  assert.ok(got.includes('hello, world'), 'the next pipelined request was answered normally')
})

// ---- listings that cost CPU ------------------------------------------------------

const CHAIN = 16 // hops of every symlink below: s* → l00 → l01 → … → l15 → hello.txt
const LINKS = 1000 // small enough that the whole listing fits the buffered (unstreamed) first 256 KiB

async function chainFixture () {
  const files = { 'hello.txt': 'hello, world\n' }
  for (let i = 0; i < CHAIN; i++) files[`l${String(i).padStart(2, '0')}`] = { symlink: i === CHAIN - 1 ? 'hello.txt' : `l${String(i + 1).padStart(2, '0')}` }
  for (let i = 0; i < LINKS; i++) files[`s${String(i).padStart(4, '0')}`] = { symlink: 'l00' }
  return makeFixture(files)
}

/**
 * A Tree whose pinned views list the root and resolve every name from memory,
 * as promises that settle without ever letting the event loop turn (the worst
 * case of a warm cache). Whatever the client does to yield, the gateway's own
 * listing loop must.
 */
async function microtaskTree (t, addr) {
  const tree = new Tree(addr, { stateDir: null })
  t.after(() => tree.close())
  await tree.refresh()
  const v0 = tree.snapshot()
  const root = await v0.resolve('/')
  const entries = []
  for await (const e of v0.entriesOf(root)) entries.push(e)
  const resolved = new Map([['/', root]])
  for (const e of entries) resolved.set('/' + e.name, await v0.resolve('/' + e.name))
  const snapshot = tree.snapshot.bind(tree)
  tree.snapshot = () => {
    const view = snapshot()
    view.resolve = async path => {
      const e = resolved.get(path)
      if (e === undefined) throw new NotFoundError(`${path} does not exist`)
      return e
    }
    view.entriesOf = async function * () { yield * entries }
    return view
  }
  return tree
}

test('a listing whose every lookup is already in memory still yields: a request arriving meanwhile is answered first', async t => {
  const chains = await chainFixture()
  const mirror = await serve(chains.out)
  t.after(async () => { await mirror.close(); await chains.cleanup() })
  const gw = await startGateway(t, { tree: await microtaskTree(t, address(mirror.url, chains.pk)) })
  // The order in which the gateway answers (writeHead: a listing this size is sent whole once it is
  // complete): a request that arrives while the listing is being made must be answered first.
  const answered = []
  let other
  const onRequest = (req, res) => {
    const writeHead = res.writeHead
    res.writeHead = function (...a) { answered.push(req.url); return writeHead.apply(this, a) }
    if (req.url === '/') other = get(gw.url, '/hello.txt') // the listing has started: now ask for something small
  }
  gw.server.on('request', onRequest)
  const listing = await get(gw.url, '/')
  const hello = await other
  gw.server.off('request', onRequest)
  assert.equal(listing.status, 200)
  assert.equal((listing.body.toString().match(/→ l00<\/a>/g) ?? []).length, LINKS, 'every link resolved and listed')
  assert.ok(listing.body.length < 256 * 1024)
  assert.equal(hello.status, 200)
  assert.deepEqual(answered, ['/hello.txt', '/'], 'the small request waited for the whole listing')
})

test('symlink targets are resolved within a per-request budget; past it they are listed unresolved', async t => {
  const chains = await chainFixture()
  const mirror = await serve(chains.out)
  const tree = new Tree(address(mirror.url, chains.pk), { stateDir: null })
  t.after(async () => { tree.close(); await mirror.close(); await chains.cleanup() })
  await tree.refresh()
  const pin = { view: tree.snapshot() }
  const root = await pin.view.resolve('/')
  const seen = { resolved: 0, unresolved: 0, plain: 0 }
  for await (const { entry, target } of withTargets(pin, [], root, { budget: 100 })) {
    if (entry.type !== 'symlink') seen.plain++
    else if (target === undefined) seen.unresolved++
    else seen.resolved++
  }
  assert.deepEqual(seen, { resolved: 100, unresolved: CHAIN + LINKS - 100, plain: 1 })
})

function get (url, path) {
  const u = new URL(url)
  return new Promise((resolve, reject) => {
    http.get({ host: u.hostname, port: u.port, path, agent: false }, res => {
      const parts = []
      res.on('data', c => parts.push(c))
      res.on('end', () => resolve({ status: res.statusCode, body: Buffer.concat(parts) }))
    }).on('error', reject)
  })
}

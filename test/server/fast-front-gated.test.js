// serve's lean front on a gated tree (server/fast-front.js with gate.js
// fastAdmit): a cached blob asked for with a valid edge token in the query,
// as readers send it, is answered by the front with the private
// Cache-Control and the access-log line node:http's path writes; a missing,
// forged or expired token, or a token in the header, goes to node:http for
// its answer. Differential, as fast-front.test.js: the same request to the
// front and to a handed-off connection must get the same answer.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import net from 'node:net'
import fs from 'node:fs/promises'
import path from 'node:path'
import { tmpdir, writeTree, makeKey, buildTree } from '../helpers/fixtures.js'
import { createRotreeServer } from '../../server/index.js'
import { gatedTree } from '../../server/gate.js'
import { mintToken } from '../../server/edge-token.js'

const SECRET = 'e'.repeat(64)
let dir, srv, port, hex, body, tree
const log = []

before(async () => {
  dir = await tmpdir('rotree-fast-gated-')
  await writeTree(path.join(dir, 'src'), { 'big.bin': Buffer.alloc(200_000, 9) })
  const { out } = await buildTree(path.join(dir, 'src'), { key: makeKey(), out: path.join(dir, 'out') })
  // the largest blob: the file's chunk
  const names = await fs.readdir(path.join(out, 'h'))
  const sizes = await Promise.all(names.map(async n => [(await fs.stat(path.join(out, 'h', n))).size, n]))
  hex = sizes.sort((a, b) => b[0] - a[0])[0][1]
  body = await fs.readFile(path.join(out, 'h', hex))
  tree = await gatedTree(out)
  srv = await createRotreeServer({ dir: out, gate: { secret: SECRET, ttlS: 600, accessLog: line => log.push(line) } })
  port = (await srv.listen({ port: 0, host: '127.0.0.1' })).port
})

after(async () => {
  await srv.close({ timeoutMs: 1000 })
  await fs.rm(dir, { recursive: true, force: true })
})

const nowS = () => Math.floor(Date.now() / 1000)
const token = (expires = nowS() + 300) => mintToken({ secret: SECRET, tree: tree.id, expires })
const get = (query, extra = '') => `GET /h/${hex}${query} HTTP/1.1\r\nHost: 127.0.0.1\r\n${extra}\r\n`

/** One answer to each request, on one new connection, `gapMs` between writes. */
function exchange (parts, expect, gapMs = 100) {
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, '127.0.0.1')
    let buf = Buffer.alloc(0)
    const answers = []
    sock.on('data', d => {
      buf = Buffer.concat([buf, d])
      for (;;) {
        const end = buf.indexOf('\r\n\r\n')
        if (end === -1) return
        const head = buf.subarray(0, end).toString('latin1')
        const n = Number(/\r\ncontent-length: (\d+)/i.exec(head)?.[1] ?? 0)
        if (buf.length < end + 4 + n) return
        answers.push({ head, body: buf.subarray(end + 4, end + 4 + n) })
        buf = buf.subarray(end + 4 + n)
        if (answers.length === expect) { sock.destroy(); return resolve(answers) }
      }
    })
    sock.on('error', reject)
    sock.setTimeout(10_000, () => reject(new Error('timed out')))
    sock.once('connect', async () => { for (const p of parts) { sock.write(p); await new Promise(resolve => setTimeout(resolve, gapMs)) } })
  })
}

const noDate = head => head.replace(/\r\nDate: [^\r]*/, '')

async function both (req) {
  let seen = 0
  const count = () => { seen++ }
  srv.server.on('request', count)
  const [front] = await exchange([req], 1)
  srv.server.off('request', count)
  const [, viaHttp] = await exchange(['GET /nope HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n', req], 2)
  return { front, http: viaHttp, seen }
}

test('a valid token in the query: the front answers as node:http does, private to caches, and logs the request', async () => {
  const t = token()
  await exchange([get(`?rotree_token=${t}`)], 1) // into the cache
  log.length = 0
  const { front, http, seen } = await both(get(`?rotree_token=${t}`))
  assert.equal(seen, 0, 'node:http saw the request the front should have answered')
  assert.match(front.head, /^HTTP\/1\.1 200 OK\r\n/)
  assert.match(front.head, /\r\nCache-Control: private, max-age=31536000, immutable\r\n/)
  assert.ok(front.body.equals(body))
  assert.equal(noDate(front.head), noDate(http.head))
  // one line for the front's answer, one for node:http's (the gate logs blob requests only)
  assert.equal(log.length, 2)
  const [fromFront, fromHttp] = log.map(l => l.replace(/^\S+ /, ''))
  assert.equal(fromFront, fromHttp)
  assert.match(fromFront, new RegExp(`^127\\.0\\.0\\.1 GET /h/${hex} 200 holder=- token=ok$`))
})

test('no token, a forged or expired one, or one in the header: node:http answers, the same on either connection', async () => {
  const t = token()
  const forged = 'A'.repeat(22) + ',' + (nowS() + 300)
  const cases = [
    get(''),
    get(`?rotree_token=${forged}`),
    get(`?rotree_token=${token(nowS() - 10)}`),
    get(`?rotree_token=${t}&x=1`),
    get(`?rotree_token=${t}`, `X-Rotree-Token: ${forged}\r\n`),
    get('?rotree_token=', ''),
    get(`?rotree_token=${t}`, 'Range: bytes=0-3\r\n')
  ]
  for (const req of cases) {
    const { front, http, seen } = await both(req)
    assert.equal(seen, 1, JSON.stringify(req))
    assert.equal(noDate(front.head), noDate(http.head), JSON.stringify(req))
    assert.ok(front.body.equals(http.body))
  }
})

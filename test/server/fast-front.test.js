// The lean front of `rotree serve` (server/fast-front.js): a plain GET of a
// cached blob is answered without node:http, byte for byte as node:http
// answers it; every other request, on any connection, is node:http's. The
// differential tests send the same request to the front (a new connection)
// and to node:http (a connection handed off by an earlier request) and
// compare the whole answer, Date aside.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import net from 'node:net'
import fs from 'node:fs/promises'
import path from 'node:path'
import os from 'node:os'
import { createHash, randomBytes } from 'node:crypto'
import { createRotreeServer } from '../../server/index.js'

let dir, srv, port
const small = randomBytes(3000)
const smallHex = createHash('sha256').update(small).digest('hex')
const big = randomBytes(1 << 20)
const bigHex = createHash('sha256').update(big).digest('hex')

before(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'rotree-fast-front-'))
  await fs.mkdir(path.join(dir, 'h'))
  await fs.writeFile(path.join(dir, 'h', smallHex), small)
  await fs.writeFile(path.join(dir, 'h', bigHex), big)
  srv = await createRotreeServer({ dir })
  port = (await srv.listen({ port: 0, host: '127.0.0.1' })).port
  // both blobs in the cache: the front answers them from here on
  await exchange([get(smallHex), get(bigHex)], { expect: 2 })
})

after(async () => {
  await srv.close({ timeoutMs: 1000 })
  await fs.rm(dir, { recursive: true, force: true })
})

const get = (hex, extra = '') => `GET /h/${hex} HTTP/1.1\r\nHost: 127.0.0.1\r\n${extra}\r\n`

/**
 * Send `parts` (strings or Buffers, each one write, `gapMs` apart) on one
 * connection and collect `expect` answers (or all until the server closes).
 * @returns {Promise<{ answers: Array<{ head: string, body: Buffer }>, closed: boolean }>}
 */
function exchange (parts, { expect = Infinity, gapMs = 0, readDelayMs = 0 } = {}) {
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, '127.0.0.1')
    let buf = Buffer.alloc(0)
    const answers = []
    let closed = false
    const done = () => { sock.destroy(); resolve({ answers, closed }) }
    const parse = () => {
      for (;;) {
        const end = buf.indexOf('\r\n\r\n')
        if (end === -1) return
        const head = buf.subarray(0, end).toString('latin1')
        const len = /^HTTP\/1\.1 (204|304)|\r\nContent-Length: 0\r\n/i.test(head) || head.startsWith('HTTP/1.1 416') ? 0 : Number(/\r\ncontent-length: (\d+)/i.exec(head)?.[1] ?? 0)
        const isHead = parts.join?.('')?.startsWith?.('HEAD') ?? false
        const n = isHead ? 0 : len
        if (buf.length < end + 4 + n) return
        answers.push({ head, body: buf.subarray(end + 4, end + 4 + n) })
        buf = buf.subarray(end + 4 + n)
        if (answers.length >= expect) return done()
      }
    }
    sock.on('data', d => { buf = Buffer.concat([buf, d]); parse() })
    sock.on('end', () => { closed = true; done() })
    sock.on('error', reject)
    sock.setTimeout(10_000, () => reject(new Error(`timed out with ${answers.length} answers`)))
    if (readDelayMs) { sock.pause(); setTimeout(() => sock.resume(), readDelayMs) }
    sock.once('connect', async () => {
      for (const p of parts) {
        sock.write(p)
        if (gapMs) await new Promise(resolve => setTimeout(resolve, gapMs))
      }
    })
  })
}

const noDate = head => head.replace(/\r\nDate: [^\r]*/, '')

/**
 * The answer to `req` from the front (first on its connection) and from
 * node:http (after a handed-off request); seen: the requests node:http saw
 * of the front's connection (0 when the front answered it itself).
 */
async function both (req) {
  let seen = 0
  const count = () => { seen++ }
  srv.server.on('request', count)
  const front = await exchange([req], { expect: 1 })
  srv.server.off('request', count)
  // the request that hands the connection off is answered before `req` is sent (a refused
  // head makes node:http drop what it has not written yet)
  const viaHttp = await exchange(['GET /nope HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n', req], { expect: 2, gapMs: 100 })
  return { front: front.answers[0], http: viaHttp.answers[1], seen }
}

test('a cached blob: the front answers exactly what node:http answers, Date aside', async () => {
  for (const [hex, body] of [[smallHex, small], [bigHex, big]]) {
    const { front, http, seen } = await both(get(hex))
    assert.equal(seen, 0, 'node:http saw the request the front should have answered')
    assert.match(front.head, /^HTTP\/1\.1 200 OK\r\n/)
    assert.ok(front.body.equals(body))
    assert.equal(noDate(front.head), noDate(http.head))
    assert.match(front.head, /\r\nDate: \w{3}, \d\d \w{3} \d{4} \d\d:\d\d:\d\d GMT/)
    assert.match(front.head, /\r\nKeep-Alive: timeout=30$/)
  }
})

test('requests the front does not take are node:http\'s, answered the same on a new connection as on a handed-off one', async () => {
  const cases = [
    get(smallHex, 'Range: bytes=0-9\r\n'),
    get(smallHex, `If-None-Match: "${smallHex}"\r\n`),
    get(smallHex, 'Connection: close\r\n'),
    get(smallHex, 'Transfer-Encoding: chunked\r\n').replace(/\r\n$/, '\r\n0\r\n\r\n'),
    `GET /h/${smallHex}?x=1 HTTP/1.1\r\nHost: a\r\n\r\n`,
    `GET /h/${smallHex.toUpperCase()} HTTP/1.1\r\nHost: a\r\n\r\n`,
    `GET /h/${'0'.repeat(64)} HTTP/1.1\r\nHost: a\r\n\r\n`, // not in the cache (nor on disk)
    `GET /h/${smallHex} HTTP/1.1\r\n\r\n`, // no Host
    `GET /h/${smallHex} HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n`,
    `GET /h/${smallHex} HTTP/1.1\r\nHost: a\r\nX-Odd: a\x01b\r\n\r\n`,
    `GET /h/${smallHex} HTTP/1.1\r\nHost: a\r\nBad Name: v\r\n\r\n`,
    `GET /fsinfo.json HTTP/1.1\r\nHost: a\r\n\r\n`,
    `OPTIONS /h/${smallHex} HTTP/1.1\r\nHost: a\r\n\r\n`
  ]
  for (const req of cases) {
    const { front, http, seen } = await both(req)
    assert.ok(front && http, `no answer to ${JSON.stringify(req)}`)
    // node:http answered it (a head it refuses is no request to it)
    assert.equal(seen, /^HTTP\/1\.1 400 /.test(front.head) ? 0 : 1, JSON.stringify(req))
    assert.equal(noDate(front.head), noDate(http.head), JSON.stringify(req))
    assert.ok(front.body.equals(http.body), JSON.stringify(req))
  }
  // and the ones the front does take, with headers that change nothing
  // (an edge token header means nothing to an ungated server)
  for (const req of [get(smallHex, 'Connection: keep-alive\r\nUser-Agent: x\tand tab\r\nAccept: */*\r\n'), `GET /h/${smallHex} HTTP/1.1\r\nhOsT: a\r\n\r\n`, get(smallHex, 'X-Rotree-Token: abc\r\n')]) {
    const { front, http, seen } = await both(req)
    assert.equal(seen, 0, JSON.stringify(req))
    assert.equal(noDate(front.head), noDate(http.head), JSON.stringify(req))
    assert.ok(front.body.equals(small))
  }
})

test('a bad request after answered ones: the answers come first, then node:http\'s refusal', async () => {
  const { answers, closed } = await exchange([get(smallHex) + get(smallHex) + `GET /h/\0${smallHex} HTTP/1.1\r\nHost: x\r\n\r\n`])
  assert.equal(answers.length, 3)
  assert.ok(answers[0].body.equals(small) && answers[1].body.equals(small))
  assert.match(answers[2].head, /^HTTP\/1\.1 400 /)
  assert.ok(closed)
})

test('pipelined requests, fast and not, in one write: answered in order', async () => {
  const reqs = [get(smallHex), get(bigHex), 'GET /nope HTTP/1.1\r\nHost: a\r\n\r\n', get(smallHex), get(smallHex, 'Range: bytes=1-2\r\n'), get(bigHex)]
  const { answers } = await exchange([reqs.join('')], { expect: reqs.length })
  assert.deepEqual(answers.map(a => a.head.split('\r\n')[0]), ['200 OK', '200 OK', '404 Not Found', '200 OK', '206 Partial Content', '200 OK'].map(s => 'HTTP/1.1 ' + s))
  assert.ok(answers[0].body.equals(small) && answers[1].body.equals(big) && answers[3].body.equals(small) && answers[5].body.equals(big))
  assert.ok(answers[4].body.equals(small.subarray(1, 3)))
})

test('a head split over writes, even byte by byte, is answered', async () => {
  const req = get(smallHex)
  const { answers } = await exchange([req.slice(0, 10), req.slice(10, 90), req.slice(90)], { expect: 1, gapMs: 30 })
  assert.ok(answers[0].body.equals(small))
  const bytes = [...Buffer.from(get(smallHex) + get(smallHex))].map(b => Buffer.from([b]))
  const two = await exchange(bytes, { expect: 2 })
  assert.ok(two.answers.every(a => a.body.equals(small)))
})

test('a client that asks for more than it reads: the answers wait for it, none lost or reordered', async () => {
  const n = 48 // 48 MiB asked for on one connection
  const reqs = Array.from({ length: n }, (_, i) => i % 7 === 3 ? 'GET /nope HTTP/1.1\r\nHost: a\r\n\r\n' : get(bigHex)).join('')
  const { answers } = await exchange([reqs], { expect: n, readDelayMs: 300 })
  assert.equal(answers.length, n)
  answers.forEach((a, i) => {
    if (i % 7 === 3) assert.match(a.head, /^HTTP\/1\.1 404 /)
    else assert.ok(a.body.equals(big), `answer ${i}`)
  })
})

test('a client that sends requests one by one and reads nothing: what the server holds for it stays bounded', async () => {
  let server = null
  const grab = s => { server = s }
  srv.server.once('connection', grab)
  const sock = net.connect(port, '127.0.0.1')
  await new Promise(resolve => sock.once('connect', resolve))
  sock.pause() // reads nothing
  for (let i = 0; i < 40; i++) {
    sock.write(get(bigHex))
    await new Promise(resolve => setTimeout(resolve, 5))
  }
  await new Promise(resolve => setTimeout(resolve, 200))
  // 40 MiB asked for: the server stopped at its high-water mark (1 MiB) plus the answer that crossed it
  assert.ok(server.writableLength <= 3 * big.length, `${server.writableLength} bytes queued to a client that reads nothing`)
  let got = 0
  sock.on('data', d => { got += d.length })
  sock.resume()
  while (got < 40 * big.length) await new Promise(resolve => setTimeout(resolve, 10))
  sock.destroy()
})

test('close() ends idle fast connections at once', async () => {
  const s = await createRotreeServer({ dir })
  const { port: p } = await s.listen({ port: 0, host: '127.0.0.1' })
  const sock = net.connect(p, '127.0.0.1')
  await new Promise(resolve => sock.once('connect', resolve))
  sock.write(get(smallHex) + get(smallHex)) // the second is a cache hit: answered by the front
  let got = 0
  sock.on('data', d => { got += d.length })
  while (got < 2 * small.length) await new Promise(resolve => setTimeout(resolve, 10))
  const ended = new Promise(resolve => sock.once('close', resolve))
  const t0 = performance.now()
  await s.close({ timeoutMs: 5000 })
  await ended
  assert.ok(performance.now() - t0 < 2000, 'close waited on an idle keep-alive connection')
})

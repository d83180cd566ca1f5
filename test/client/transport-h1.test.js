// The lean HTTP/1.1 client for http: mirrors (client-js/src/net/transport-h1.js):
// keep-alive within maxSockets, every body framing (Content-Length, chunked,
// to the close), interim 1xx answers, a kept-alive connection the server
// closed under a request, and answers that are malformed or carry more bytes
// than their framing. Real servers on 127.0.0.1:0: node:http where it can say
// the thing, a raw TCP server where only raw bytes can.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import http from 'node:http'
import net from 'node:net'
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { createTransport } from 'rotree-client/net'

const TRANSPORT = fileURLToPath(new URL('../../client-js/src/net/transport-node.js', import.meta.url))
const BODY = Buffer.from(Array.from({ length: 300_000 }, (_, i) => (i * 7) & 255))
const get = (tr, url, o = {}) => tr.get(url, { cap: 1 << 20, timeoutMs: 5000, ...o })

function transport (t, opts) {
  const tr = createTransport(opts)
  t.after(() => tr.close())
  return tr
}

async function httpServer (t, handler) {
  const server = http.createServer(handler)
  const state = { connections: 0, requests: 0 }
  server.on('connection', () => state.connections++)
  server.on('request', () => state.requests++)
  await new Promise(resolve => server.listen(0, '127.0.0.1', resolve))
  t.after(() => { server.closeAllConnections(); server.close() })
  return Object.assign(state, { url: `http://127.0.0.1:${server.address().port}/` })
}

/**
 * A raw TCP server: answer(requestIndexOnConnection, connectionIndex, socket, requestHead)
 * is called for each request head received.
 */
async function rawServer (t, answer) {
  const sockets = new Set()
  let conns = 0
  const server = net.createServer(s => {
    const conn = conns++
    let seen = 0; let buf = ''
    sockets.add(s)
    s.on('close', () => sockets.delete(s))
    s.on('error', () => {})
    s.on('data', d => {
      buf += d.toString('latin1')
      let i
      while ((i = buf.indexOf('\r\n\r\n')) >= 0) {
        const head = buf.slice(0, i); buf = buf.slice(i + 4)
        answer(seen++, conn, s, head)
      }
    })
  })
  await new Promise(resolve => server.listen(0, '127.0.0.1', resolve))
  t.after(() => { for (const s of sockets) s.destroy(); server.close() })
  return { url: `http://127.0.0.1:${server.address().port}/`, get connections () { return conns } }
}

async function rejects (p, code) {
  const err = await p.then(() => null, e => e)
  assert.ok(err, `expected ${code}, got bytes`)
  assert.equal(err.code, code, `${err.code}: ${err.message}`)
  return err
}

test('keep-alive: many requests, sequential and concurrent, within maxSockets connections', async t => {
  const srv = await httpServer(t, (req, res) => { res.writeHead(200, { 'content-length': BODY.length }); res.end(BODY) })
  const tr = transport(t, { maxSockets: 4 })
  for (let i = 0; i < 10; i++) assert.ok(Buffer.from(await get(tr, srv.url + 's' + i)).equals(BODY))
  assert.equal(srv.connections, 1)
  const all = await Promise.all(Array.from({ length: 40 }, (_, i) => get(tr, srv.url + 'c' + i)))
  assert.ok(all.every(b => Buffer.from(b).equals(BODY)))
  assert.ok(srv.connections <= 4, `${srv.connections} connections`)
  assert.equal(srv.requests, 50)
  assert.equal(tr.stats.requests, 50)
  assert.equal(tr.stats.bytes, 50 * BODY.length)
})

test('chunked bodies are decoded, extensions and trailers included, and capped', async t => {
  const good = await rawServer(t, (i, c, s) => {
    s.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n')
    for (const [a, b] of [[0, 1000], [1000, 150_000], [150_000, BODY.length]]) {
      s.write((b - a).toString(16) + ';name=value\r\n')
      s.write(BODY.subarray(a, b))
      s.write('\r\n')
    }
    s.write('0\r\nX-Trailer: yes\r\n\r\n')
  })
  const tr = transport(t)
  for (let i = 0; i < 3; i++) assert.ok(Buffer.from(await get(tr, good.url + i)).equals(BODY))
  assert.equal(good.connections, 1, 'a chunked answer keeps the connection')
  const err = await rejects(get(tr, good.url + 'small', { cap: 100_000 }), 'ROTREE_TOO_LARGE')
  assert.match(err.message, /more than 100000 bytes/)
})

test('a body without Content-Length runs to the close, and is capped', async t => {
  const srv = await rawServer(t, (i, c, s) => {
    s.write('HTTP/1.0 200 OK\r\nContent-Type: application/octet-stream\r\n\r\n')
    s.end(BODY)
  })
  const tr = transport(t)
  assert.ok(Buffer.from(await get(tr, srv.url + 'a')).equals(BODY))
  assert.ok(Buffer.from(await get(tr, srv.url + 'b')).equals(BODY))
  assert.equal(srv.connections, 2)
  await rejects(get(tr, srv.url + 'c', { cap: 1000 }), 'ROTREE_TOO_LARGE')
})

test('interim 1xx answers are skipped', async t => {
  const srv = await rawServer(t, (i, c, s) => {
    s.write('HTTP/1.1 103 Early Hints\r\nLink: </x>; rel=preload\r\n\r\nHTTP/1.1 100 Continue\r\n\r\n')
    s.write(`HTTP/1.1 200 OK\r\nContent-Length: ${BODY.length}\r\n\r\n`)
    s.write(BODY)
  })
  const tr = transport(t)
  assert.ok(Buffer.from(await get(tr, srv.url + 'a')).equals(BODY))
  assert.ok(Buffer.from(await get(tr, srv.url + 'b')).equals(BODY))
  assert.equal(srv.connections, 1)
})

test('a kept-alive connection the server closed under a request is retried once on a new one', async t => {
  const srv = await rawServer(t, (i, c, s) => {
    // every connection answers its first request, then closes on the second without a word
    if (i > 0) return s.destroy()
    s.write(`HTTP/1.1 200 OK\r\nContent-Length: ${BODY.length}\r\n\r\n`)
    s.write(BODY)
  })
  const tr = transport(t, { maxSockets: 1 })
  for (let i = 0; i < 4; i++) assert.ok(Buffer.from(await get(tr, srv.url + i)).equals(BODY), `request ${i}`)
  assert.equal(srv.connections, 4)
  // a new connection that closes before answering is a fault, not a retry loop
  const mute = await rawServer(t, (i, c, s) => s.destroy())
  const err = await rejects(get(tr, mute.url + 'x'), 'ROTREE_MIRROR_NETWORK')
  assert.match(err.message, /before answering/)
  assert.equal(mute.connections, 1)
})

test('an origin that closes every connection before answering costs each request a few connections, never a loop', async t => {
  // the first answer keeps its connection (pipelining may start); every later request meets a close
  let answered = false
  const srv = await rawServer(t, (i, c, s) => {
    if (answered) return s.destroy()
    answered = true
    s.write(`HTTP/1.1 200 OK\r\nContent-Length: ${BODY.length}\r\n\r\n`)
    s.write(BODY)
  })
  const tr = transport(t, { maxSockets: 4 })
  assert.ok(Buffer.from(await get(tr, srv.url + 'warm')).equals(BODY))
  const before = srv.connections
  const N = 16
  await Promise.all(Array.from({ length: N }, (_, i) => rejects(get(tr, srv.url + 'x' + i, { timeoutMs: 30_000 }), 'ROTREE_MIRROR_NETWORK')))
  // a request queued on a connection that closed is asked again at most 3 times (transport-h1.js MAX_REQUEUE)
  assert.ok(srv.connections - before <= N * 4, `${srv.connections - before} connections for ${N} requests`)
})

test('bytes past an answer\'s framing never become the next answer', async t => {
  const srv = await rawServer(t, (i, c, s) => {
    // the first answer carries a second, forged one behind it
    if (c === 0) return s.write('HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabcHTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nforged')
    s.write('HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nreal')
  })
  const tr = transport(t, { maxSockets: 1 })
  assert.equal(Buffer.from(await get(tr, srv.url + 'a')).toString(), 'abc')
  assert.equal(Buffer.from(await get(tr, srv.url + 'b')).toString(), 'real')
  assert.equal(srv.connections, 2)
})

test('malformed answers are network faults of that mirror', async t => {
  const answers = {
    '/not-http': 'SSH-2.0-OpenSSH_9.2\r\n\r\n',
    '/bad-length': 'HTTP/1.1 200 OK\r\nContent-Length: 12abc\r\n\r\n',
    '/two-lengths': 'HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd',
    '/folded': 'HTTP/1.1 200 OK\r\nX-A: 1\r\n  folded\r\nContent-Length: 1\r\n\r\na',
    '/bad-chunk': 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n',
    '/chunk-no-crlf': 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcX\r\n0\r\n\r\n',
    '/switch': 'HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\n\r\n',
    '/huge-head': 'HTTP/1.1 200 OK\r\n' + 'X-Junk: ' + 'j'.repeat(20_000) + '\r\nContent-Length: 1\r\n\r\na'
  }
  const srv = await rawServer(t, (i, c, s, head) => s.write(answers[head.split(' ')[1]]))
  const tr = transport(t)
  for (const path of Object.keys(answers)) {
    const err = await rejects(get(tr, srv.url + path.slice(1), { timeoutMs: 2000 }), 'ROTREE_MIRROR_NETWORK')
    assert.ok(err.message.startsWith(srv.url.slice(0, -1)), err.message)
  }
})

test('an idle keep-alive connection does not keep the process alive', async t => {
  const srv = await httpServer(t, (req, res) => { res.writeHead(200, { 'content-length': 5 }); res.end('hello') })
  const code = `
    const { createTransport } = await import(${JSON.stringify(TRANSPORT)})
    const tr = createTransport()
    const b = await tr.get(${JSON.stringify(srv.url + 'y')}, { cap: 100, timeoutMs: 5000 })
    console.log(b.length)`
  const child = spawn(process.execPath, ['--input-type=module', '-e', code], { timeout: 10_000 })
  let out = ''
  child.stdout.on('data', d => { out += d })
  const [exit, signal] = await new Promise(resolve => child.on('close', (c, s) => resolve([c, s])))
  assert.equal(signal, null, 'the child had to be killed: an idle connection kept it alive')
  assert.equal(exit, 0)
  assert.equal(Number(out), 5)
})

test('preconnect opens the connection the first request uses; to a closed port the request gets its own network error', async t => {
  const srv = await httpServer(t, (req, res) => { res.writeHead(200, { 'content-length': 5 }); res.end('hello') })
  const tr = transport(t)
  tr.preconnect(srv.url + 'x', { timeoutMs: 5000 })
  tr.preconnect(srv.url + 'y', { timeoutMs: 5000 }) // one is open or opening: nothing more
  for (let i = 0; srv.connections === 0 && i < 500; i++) await new Promise(resolve => setTimeout(resolve, 10))
  assert.equal(srv.connections, 1)
  assert.equal(srv.requests, 0)
  assert.equal(Buffer.from(await get(tr, srv.url + 'x')).toString(), 'hello')
  assert.equal(srv.connections, 1, 'the request went on the connection opened ahead')

  // a server that drops the connection opened ahead when the request comes (as a keep-alive
  // timeout would): the request is asked once more on a new one, as on a kept-alive connection
  const dropper = await rawServer(t, (i, c, s) => {
    if (c === 0) return s.destroy()
    s.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok')
  })
  tr.preconnect(dropper.url, { timeoutMs: 5000 })
  for (let i = 0; dropper.connections === 0 && i < 500; i++) await new Promise(resolve => setTimeout(resolve, 10))
  assert.equal(Buffer.from(await get(tr, dropper.url + 'x')).toString(), 'ok')
  assert.equal(dropper.connections, 2)

  const closed = net.createServer()
  await new Promise(resolve => closed.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${closed.address().port}/`
  await new Promise(resolve => closed.close(resolve))
  tr.preconnect(url, { timeoutMs: 5000 })
  await rejects(get(tr, url + 'z'), 'ROTREE_MIRROR_NETWORK')
  tr.preconnect('not a url', { timeoutMs: 5000 }) // a bad URL is the request's to report
  await rejects(get(tr, 'not a url'), 'ROTREE_MIRROR_HTTP')

  // a process that only preconnected still exits
  const code = `
    const { createTransport } = await import(${JSON.stringify(TRANSPORT)})
    createTransport().preconnect(${JSON.stringify(srv.url)}, { timeoutMs: 5000 })
    console.log('done')`
  const child = spawn(process.execPath, ['--input-type=module', '-e', code], { timeout: 10_000 })
  const [exit, signal] = await new Promise(resolve => child.on('close', (c, s) => resolve([c, s])))
  assert.equal(signal, null, 'the child had to be killed: the connection opened ahead kept it alive')
  assert.equal(exit, 0)
})

test('close() fails what is in flight or queued, and ends every connection', async t => {
  const sockets = []
  const srv = await rawServer(t, (i, c, s) => { sockets.push(s); s.write('HTTP/1.0 200 OK\r\n\r\npartial body, to the close') })
  const tr = createTransport({ maxSockets: 1 })
  const inflight = get(tr, srv.url + 'a')
  const queued = get(tr, srv.url + 'b')
  for (let i = 0; sockets.length === 0 && i < 500; i++) await new Promise(resolve => setTimeout(resolve, 10))
  tr.close()
  // a body that runs to the close is not complete because the reader closed
  await rejects(inflight, 'ROTREE_MIRROR_NETWORK')
  await rejects(queued, 'ROTREE_MIRROR_NETWORK')
  await new Promise(resolve => sockets[0].destroyed ? resolve() : sockets[0].on('close', resolve))
  await rejects(get(tr, srv.url + 'c'), 'ROTREE_MIRROR_NETWORK')
})

test('a head that arrives a few bytes at a time is gathered; one past the limit is refused', async t => {
  const dribble = (s, text, body) => {
    const bytes = Buffer.from(text, 'latin1')
    let i = 0
    const next = () => {
      if (s.destroyed) return
      if (i >= bytes.length) return s.write(body)
      s.write(bytes.subarray(i, i += 7), () => setImmediate(next))
    }
    next()
  }
  const srv = await rawServer(t, (i, c, s, head) => {
    if (head.startsWith('GET /big')) return dribble(s, 'HTTP/1.1 200 OK\r\n' + 'X-Pad: ' + 'p'.repeat(17_000) + '\r\nContent-Length: 3\r\n\r\n', 'abc')
    dribble(s, 'HTTP/1.1 200 OK\r\n' + 'X-Pad: ' + 'p'.repeat(3000) + `\r\nContent-Length: ${BODY.length}\r\n\r\n`, BODY)
  })
  const tr = transport(t)
  assert.ok(Buffer.from(await get(tr, srv.url + 'a')).equals(BODY))
  assert.ok(Buffer.from(await get(tr, srv.url + 'b')).equals(BODY))
  await rejects(get(tr, srv.url + 'big'), 'ROTREE_MIRROR_NETWORK')
})

/**
 * A raw server that answers each connection's requests in order, one at a
 * time, `delayMs` after the one before (so requests pile up behind an answer
 * as they do at a distance), and records, as each answer goes out, how many
 * requests its connection had outstanding (received and not yet answered).
 */
async function pipelineServer (t, answer, { delayMs = 20 } = {}) {
  const outstanding = []
  const srv = await rawServer(t, (i, c, s, head) => {
    s.q ??= []
    s.q.push(() => {
      outstanding.push(s.q.length)
      answer(i, c, s, head)
    })
    if (s.q.length === 1) next(s)
  })
  function next (s) {
    setTimeout(() => {
      if (s.destroyed) return
      s.q[0]()
      s.q.shift()
      if (s.q.length) next(s)
    }, delayMs)
  }
  return Object.assign(srv, { outstanding })
}

const ok = (s, body) => s.write(`HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\n\r\n${body}`)
const text = b => Buffer.from(b).toString()

test('pipelining: once an origin kept a connection alive, requests queue behind answers on a few connections', async t => {
  const srv = await pipelineServer(t, (i, c, s, head) => ok(s, head.split(' ')[1]))
  const tr = transport(t, { maxSockets: 64, pipelineDepth: 4 })
  // before anything is known of the origin: one connection per request, nothing queued on one
  assert.deepEqual((await Promise.all([get(tr, srv.url + 'a'), get(tr, srv.url + 'b')])).map(text), ['/a', '/b'])
  assert.equal(srv.connections, 2)
  assert.deepEqual(srv.outstanding, [1, 1])
  // 40 at once: 8 connections (2 of them kept) with up to 4 answers outstanding each, then new ones
  const paths = Array.from({ length: 40 }, (_, i) => 'p' + i)
  assert.deepEqual((await Promise.all(paths.map(p => get(tr, srv.url + p)))).map(text), paths.map(p => '/' + p))
  assert.equal(srv.connections, 10, '8 connections carry 32 requests, 2 more the other 8')
  assert.equal(Math.max(...srv.outstanding), 4)
  assert.equal(tr.stats.requests, 42)

  // pipelineDepth 1: never more than one request outstanding on a connection
  const plain = await pipelineServer(t, (i, c, s, head) => ok(s, head.split(' ')[1]))
  const tr1 = transport(t, { maxSockets: 16, pipelineDepth: 1 })
  await get(tr1, plain.url + 'first')
  assert.deepEqual((await Promise.all(paths.map(p => get(tr1, plain.url + p)))).map(text), paths.map(p => '/' + p))
  assert.equal(Math.max(...plain.outstanding), 1)
  assert.equal(plain.connections, 16)
})

test('pipelining: answers of every framing stay in order; an error answer or a cancelled request in the middle does not shift the rest', async t => {
  const chunked = body => `HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`
  const srv = await pipelineServer(t, (i, c, s, head) => {
    const p = head.split(' ')[1]
    if (p.startsWith('/chunked')) return s.write(chunked(p))
    if (p.startsWith('/missing')) return s.write('HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\n\r\nnot found')
    if (p.startsWith('/big')) { s.write(`HTTP/1.1 200 OK\r\nContent-Length: ${BODY.length}\r\n\r\n`); return s.write(BODY) }
    ok(s, p)
  })
  const tr = transport(t, { maxSockets: 1, pipelineDepth: 8 })
  await get(tr, srv.url + 'warm')
  const ctrl = new AbortController()
  const asked = [
    get(tr, srv.url + 'big1'),
    get(tr, srv.url + 'chunked1'),
    get(tr, srv.url + 'missing'),
    get(tr, srv.url + 'cancelled', { signal: ctrl.signal }),
    get(tr, srv.url + 'plain1'),
    get(tr, srv.url + 'chunked2'),
    get(tr, srv.url + 'big2'),
    get(tr, srv.url + 'plain2')
  ]
  ctrl.abort()
  const settled = await Promise.allSettled(asked)
  assert.ok(Buffer.from(settled[0].value).equals(BODY))
  assert.equal(text(settled[1].value), '/chunked1')
  assert.equal(settled[2].reason.code, 'ROTREE_MIRROR_HTTP')
  assert.equal(settled[3].reason.code, 'ROTREE_ABORTED')
  assert.equal(text(settled[4].value), '/plain1')
  assert.equal(text(settled[5].value), '/chunked2')
  assert.ok(Buffer.from(settled[6].value).equals(BODY))
  assert.equal(text(settled[7].value), '/plain2')
  assert.equal(srv.connections, 1, 'one connection carried them all')
  assert.equal(Math.max(...srv.outstanding), 8)
})

test('pipelining: requests queued on a connection that closes are asked again; an unannounced close ends pipelining to that origin', async t => {
  // announced: each connection's third answer says Connection: close, and what was queued behind it is asked again
  const announced = await pipelineServer(t, (i, c, s, head) => {
    const p = head.split(' ')[1]
    if (i < 2) return ok(s, p)
    s.end(`HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: ${p.length}\r\n\r\n${p}`)
  })
  const tr = transport(t, { maxSockets: 2, pipelineDepth: 8 })
  await get(tr, announced.url + 'warm')
  const paths = Array.from({ length: 24 }, (_, i) => 'a' + i)
  assert.deepEqual((await Promise.all(paths.map(p => get(tr, announced.url + p)))).map(text), paths.map(p => '/' + p))
  assert.ok(Math.max(...announced.outstanding) > 1, 'still pipelined after announced closes')

  // unannounced: every connection answers one request, then closes without a word
  const dropper = await pipelineServer(t, (i, c, s, head) => {
    if (i > 0) return s.destroy()
    ok(s, head.split(' ')[1])
  })
  const tr2 = transport(t, { maxSockets: 2, pipelineDepth: 8 })
  await get(tr2, dropper.url + 'warm')
  const more = Array.from({ length: 12 }, (_, i) => 'd' + i)
  assert.deepEqual((await Promise.all(more.map(p => get(tr2, dropper.url + p)))).map(text), more.map(p => '/' + p))
  // after the first unannounced close, one request per connection
  const before = dropper.outstanding.length
  await Promise.all(more.map(p => get(tr2, dropper.url + p)))
  const after = dropper.outstanding.slice(before) // one per request received (a kept connection's is dropped and asked again)
  assert.ok(after.length >= more.length && after.every(n => n === 1), `outstanding per answer: ${after}`)
})

test('pipelining: never to an origin that has not kept a connection alive', async t => {
  // HTTP/1.0 without keep-alive: every answer ends its connection
  const srv = await pipelineServer(t, (i, c, s, head) => s.end(`HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok`))
  const tr = transport(t, { maxSockets: 2, pipelineDepth: 8 })
  for (let round = 0; round < 2; round++) {
    assert.deepEqual((await Promise.all(Array.from({ length: 6 }, (_, i) => get(tr, srv.url + i)))).map(text), Array(6).fill('ok'))
  }
  assert.deepEqual(srv.outstanding, Array(12).fill(1))
  assert.equal(srv.connections, 12)
})

test('pipelining: a malformed answer fails its own request; those queued behind it are asked again on a new connection', async t => {
  const srv = await pipelineServer(t, (i, c, s, head) => {
    const p = head.split(' ')[1]
    if (p === '/garbage') return s.write('SSH-2.0-OpenSSH_9.2\r\n\r\n')
    ok(s, p)
  })
  const tr = transport(t, { maxSockets: 1, pipelineDepth: 8 })
  await get(tr, srv.url + 'warm')
  const settled = await Promise.allSettled(['one', 'garbage', 'two', 'three'].map(p => get(tr, srv.url + p)))
  assert.equal(text(settled[0].value), '/one')
  assert.equal(settled[1].reason.code, 'ROTREE_MIRROR_NETWORK')
  assert.equal(text(settled[2].value), '/two')
  assert.equal(text(settled[3].value), '/three')
  assert.equal(srv.connections, 2)
})

test('a head whose first piece is one or two bytes is still found (a split at any byte)', async t => {
  const srv = await rawServer(t, (i, c, s, head) => {
    const p = head.split(' ')[1]
    const cut = Number(p.slice(1))
    const answer = `HTTP/1.1 200 OK\r\nContent-Length: ${p.length}\r\n\r\n${p}`
    s.write(answer.slice(0, cut), () => setTimeout(() => s.write(answer.slice(cut)), 20))
  })
  const tr = transport(t, { maxSockets: 1 })
  for (const cut of [1, 2, 3, 4]) assert.equal(text(await get(tr, srv.url + cut)), '/' + cut)
  // pipelined: the previous answer and the first bytes of the next arrive in one read
  const piped = await pipelineServer(t, (i, c, s, head) => {
    const p = head.split(' ')[1]
    if (p === '/warm') return ok(s, p)
    if (p.startsWith('/a')) { s.cutAt = Number(p.slice(3)); return }
    const cut = s.cutAt
    const b = `HTTP/1.1 200 OK\r\nContent-Length: ${p.length}\r\n\r\n${p}`
    s.write(`HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc${b.slice(0, cut)}`, () => setTimeout(() => s.write(b.slice(cut)), 20))
  }, { delayMs: 5 })
  const tr2 = transport(t, { maxSockets: 1, pipelineDepth: 4 })
  await get(tr2, piped.url + 'warm')
  for (const cut of [1, 2, 3]) {
    const [a, b] = await Promise.all([get(tr2, piped.url + 'a-' + cut), get(tr2, piped.url + 'b' + cut)])
    assert.equal(text(a), 'abc')
    assert.equal(text(b), '/b' + cut)
  }
  assert.equal(piped.connections, 1)
})

test('pipelining: a request cancelled mid-body with a short rest left keeps the connection, and the next answer is its own', async t => {
  let release = null
  const body = Buffer.alloc(60_000, 7)
  const srv = await rawServer(t, (i, c, s, head) => {
    const p = head.split(' ')[1]
    if (p === '/warm') return ok(s, p)
    if (p === '/slow') {
      // half of a 60 KB body now; the rest, and the answers queued behind it, once the reader gave up on it
      s.write(`HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\n\r\n`)
      s.write(body.subarray(0, 30_000))
      s.later = [body.subarray(30_000)]
      return
    }
    s.later.push(`HTTP/1.1 200 OK\r\nContent-Length: ${p.length}\r\n\r\n${p}`)
    if (s.later.length === 3) release = () => { for (const x of s.later) s.write(x) }
  })
  const tr = transport(t, { maxSockets: 1, pipelineDepth: 4 })
  await get(tr, srv.url + 'warm')
  const ctrl = new AbortController()
  const slow = get(tr, srv.url + 'slow', { signal: ctrl.signal })
  const next = get(tr, srv.url + 'next')
  const after = get(tr, srv.url + 'after')
  for (let i = 0; !release && i < 500; i++) await new Promise(resolve => setTimeout(resolve, 5))
  await new Promise(resolve => setTimeout(resolve, 30)) // the first half is read, into the request's buffer
  ctrl.abort()
  await rejects(slow, 'ROTREE_ABORTED')
  release()
  assert.equal(text(await next), '/next')
  assert.equal(text(await after), '/after')
  assert.equal(srv.connections, 1, 'the connection was kept')
})

test('pipelining: a small request waits behind short answers rather than open a connection; a large one opens one', async t => {
  const srv = await pipelineServer(t, (i, c, s, head) => ok(s, head.split(' ')[1]))
  const tr = transport(t, { maxSockets: 8, pipelineDepth: 8 })
  await get(tr, srv.url + 'warm', { cap: 100 })
  // three small requests at once: the kept connection carries them all
  assert.deepEqual((await Promise.all(['s1', 's2', 's3'].map(p => get(tr, srv.url + p, { cap: 100 })))).map(text), ['/s1', '/s2', '/s3'])
  assert.equal(srv.connections, 1)
  assert.equal(Math.max(...srv.outstanding), 3)
  // a small one, then one that may be large: the second gets a connection of its own
  assert.deepEqual((await Promise.all([get(tr, srv.url + 'small', { cap: 100 }), get(tr, srv.url + 'large', { cap: 1 << 20 })])).map(text), ['/small', '/large'])
  assert.equal(srv.connections, 2)
})

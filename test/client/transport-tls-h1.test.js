// https: mirrors over the lean HTTP/1.1 client on TLS (client-js/src/net/
// transport-h1.js), the Node transport's default there: trust through `ca`,
// the body read into the caller's buffer, keep-alive and pipelining as on
// http:, preconnect and the handshake's round trip, and a reader that asked
// for HTTP/2 (http2: true) falling back to this client when the mirror
// chooses http/1.1 by ALPN. Real node:https and node:http2 servers on
// 127.0.0.1:0 with a self-signed certificate.
import { test } from 'node:test'
import tls from 'node:tls'
import assert from 'node:assert/strict'
import { createTransport } from 'rotree-client/net'
import { startTlsServer, testCert } from '../helpers/tls-server.js'

const BODY = Buffer.from(Array.from({ length: 300_000 }, (_, i) => (i * 13) & 255))
const get = (tr, url, o = {}) => tr.get(url, { cap: 1 << 20, timeoutMs: 5000, ...o })

function transport (t, opts = {}) {
  const tr = createTransport({ ca: testCert().cert, ...opts })
  t.after(() => tr.close())
  return tr
}

async function server (t, o = { h2: false }) {
  const srv = await startTlsServer((req, res) => {
    if (req.url === '/missing') { res.writeHead(404, { 'content-length': 0 }); return res.end() }
    const body = req.url === '/big' ? BODY : Buffer.from(req.url)
    res.writeHead(200, { 'content-length': body.length })
    res.end(body)
  }, o)
  t.after(() => srv.close())
  return srv
}

test('an https: mirror is read over HTTP/1.1 on TLS, trusted through `ca`; without it the certificate is refused', async t => {
  const srv = await server(t)
  const tr = transport(t)
  const timings = []
  const into = new Uint8Array(400_000)
  const got = await get(tr, srv.url + 'big', { into, onTiming: x => timings.push(x) })
  assert.ok(Buffer.from(got).equals(BODY))
  assert.equal(got.buffer, into.buffer, 'the body was read into the caller\'s buffer')
  assert.equal(tr.stats.origins[srv.origin].protocol, 'http/1.1')
  assert.equal(timings[0].protocol, 'http/1.1')
  assert.deepEqual(srv.protocols, ['1.1'])
  const err = await get(tr, srv.url + 'missing').then(() => null, e => e)
  assert.equal(err?.code, 'ROTREE_MIRROR_HTTP')

  const untrusting = createTransport()
  t.after(() => untrusting.close())
  const refused = await get(untrusting, srv.url + 'big').then(() => null, e => e)
  assert.equal(refused?.code, 'ROTREE_MIRROR_NETWORK')
  assert.match(refused.message, /SELF_SIGNED|self.signed|certificate/i)
})

test('keep-alive and pipelining over TLS: many requests on a few connections, answers in order', async t => {
  const srv = await server(t)
  const tr = transport(t, { maxSockets: 16, pipelineDepth: 4 })
  await get(tr, srv.url + 'first') // the origin keeps connections alive: pipelining may start
  const paths = Array.from({ length: 60 }, (_, i) => '/p' + i)
  const got = await Promise.all(paths.map(p => get(tr, srv.url + p.slice(1))))
  assert.deepEqual(got.map(b => Buffer.from(b).toString()), paths)
  assert.ok(srv.connections <= 16, `${srv.connections} connections for 61 requests`)
  assert.ok(srv.connections < 61)
  assert.equal(tr.stats.requests, 61)
})

test('preconnect opens the TLS connection the first request uses, and measures the round trip', async t => {
  const srv = await server(t)
  const tr = transport(t)
  tr.preconnect(srv.url, { timeoutMs: 5000 })
  const rtt = await tr.rtt(srv.url)
  assert.equal(typeof rtt, 'number')
  assert.ok(rtt >= 0)
  assert.equal(Buffer.from(await get(tr, srv.url + 'x')).toString(), '/x')
  assert.equal(srv.connections, 1, 'the request went on the connection opened ahead')
})

test('a reader that asks for HTTP/2 reads over it where offered, and over HTTP/1.1 on TLS where the mirror chooses http/1.1', async t => {
  const h2 = await server(t, { h2: true, allowHTTP1: true })
  const h1 = await server(t, { h2: false })
  const tr = transport(t, { http2: true })
  assert.ok(Buffer.from(await get(tr, h2.url + 'big')).equals(BODY))
  assert.ok(Buffer.from(await get(tr, h1.url + 'big')).equals(BODY))
  assert.ok(Buffer.from(await get(tr, h1.url + 'again')).equals(Buffer.from('/again')))
  assert.deepEqual(h2.protocols, ['2.0'])
  assert.deepEqual(h1.protocols, ['1.1', '1.1'])
  assert.equal(tr.stats.origins[h2.origin].protocol, 'h2')
  assert.equal(tr.stats.origins[h1.origin].protocol, 'http/1.1')
  // the lean client's connection, kept alive for the second request (and the ALPN
  // probe's, which the server may not count: it closes as its handshake ends)
  assert.ok(h1.connections >= 1 && h1.connections <= 2, `${h1.connections} connections`)

  // and the default transport does not offer h2 at all
  const plain = transport(t)
  assert.ok(Buffer.from(await get(plain, h2.url + 'big')).equals(BODY))
  assert.deepEqual(h2.protocols, ['2.0', '1.1'])
})

test('an h2-only https: mirror (it refuses http/1.1 by ALPN) is read over HTTP/2 by a reader that did not ask for it', async t => {
  const h2only = await server(t, { h2: true, allowHTTP1: false })
  const tr = transport(t)
  // many at once: the first refusal moves the origin, and every request still gets its answer
  const paths = ['big', ...Array.from({ length: 20 }, (_, i) => `f${i}`)]
  const got = await Promise.all(paths.map(p => get(tr, h2only.url + p)))
  assert.ok(Buffer.from(got[0]).equals(BODY))
  for (let i = 1; i < paths.length; i++) assert.equal(Buffer.from(got[i]).toString(), '/' + paths[i])
  assert.equal(tr.stats.origins[h2only.origin].protocol, 'h2')
  assert.ok(h2only.protocols.every(p => p === '2.0'), h2only.protocols.join())
  // later requests go straight to HTTP/2: one session in all
  assert.equal(Buffer.from(await get(tr, h2only.url + 'later')).toString(), '/later')
  assert.equal(h2only.sessions, 1)

  // a server that speaks neither refuses both offers: one network fault, not a loop
  const neither = tls.createServer({ key: testCert().key, cert: testCert().cert, ALPNProtocols: ['x-other'] }, sock => sock.destroy())
  await new Promise(resolve => neither.listen(0, '127.0.0.1', resolve))
  t.after(() => neither.close())
  const url = `https://127.0.0.1:${neither.address().port}/x`
  await assert.rejects(get(tr, url), err => err.code === 'ROTREE_MIRROR_NETWORK')
})

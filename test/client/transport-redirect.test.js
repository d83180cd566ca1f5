// Redirects and credentials in both transports (docs/TRUST.md rule 4): one
// deadline across every hop, redirects kept to the mirror's own origin unless
// the reader allows more (so a mirror cannot aim a gateway at any host:port),
// https -> http never, and a mirror URL's user:pass sent as Basic auth to its
// own origin only and never shown in an error or a statistic. The browser
// transport runs here on Node's fetch(), which shows redirects as a browser's
// `redirect: 'manual'` does not; transport-url.test.js covers the shared rules.
import { needing } from '../helpers/tools.js'
import assert from 'node:assert/strict'
import http from 'node:http'
import { createTransport as nodeTransport } from 'rotree-client/net'
import { createTransport as webTransport } from '../../client-js/src/net/transport-web.js'
import { startTlsServer, testCert } from '../helpers/tls-server.js'

const { test } = needing('openssl')

const BODY = Buffer.from('the bytes a mirror serves\n'.repeat(100))
const TRANSPORTS = { node: nodeTransport, web: webTransport }

/** A node:http server on 127.0.0.1:0 whose routes are (req, res, srv) => void; records every request. */
async function httpServer (t, routes) {
  const requests = []
  const server = http.createServer((req, res) => {
    requests.push({ url: req.url, authorization: req.headers.authorization })
    const route = routes[req.url] ?? routes['*']
    if (route) return route(req, res)
    res.writeHead(200, { 'content-length': BODY.length }); res.end(BODY)
  })
  await new Promise(resolve => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address()
  t.after(() => { server.closeAllConnections(); server.close() })
  return { port, url: `http://127.0.0.1:${port}/`, origin: `http://127.0.0.1:${port}`, requests }
}

const redirect = (location, delayMs = 0) => (req, res) => setTimeout(() => { res.writeHead(302, { location, 'content-length': 0 }); res.end() }, delayMs)

function make (t, kind, opts) {
  const tr = TRANSPORTS[kind](opts)
  t.after(() => tr.close())
  return tr
}

const get = (tr, url, o = {}) => tr.get(url, { cap: 1 << 20, timeoutMs: 5000, ...o })

async function rejects (p, code) {
  const err = await p.then(() => null, e => e)
  assert.ok(err, `expected ${code}, got bytes`)
  assert.equal(err.code, code, `${err.code}: ${err.message}`)
  return err
}

for (const kind of Object.keys(TRANSPORTS)) {
  test(`${kind}: one deadline covers every redirect hop`, async t => {
    // four redirects, each slower than a third of the deadline: each hop alone
    // would make it, the chain cannot
    const srv = await httpServer(t, { '/r0': redirect('/r1', 150), '/r1': redirect('/r2', 150), '/r2': redirect('/r3', 150), '/r3': redirect('/ok', 150) })
    const tr = make(t, kind)
    await rejects(get(tr, srv.url + 'r0', { timeoutMs: 400 }), 'ROTREE_TIMEOUT')
    const timings = []
    const bytes = await get(tr, srv.url + 'r0', { onTiming: x => timings.push(x) })
    assert.equal(bytes.length, BODY.length)
    assert.equal(timings[0].redirects, 4)
  })

  test(`${kind}: a redirect to another origin is refused by default, and that origin is never asked`, async t => {
    const other = await httpServer(t, {})
    const srv = await httpServer(t, {
      '/port': redirect(other.url + 'h/x'),
      '/host': redirect(`http://127.0.0.2:${other.port}/h/x`),
      '/same': redirect('/h/x')
    })
    const tr = make(t, kind)
    for (const path of ['port', 'host']) {
      const err = await rejects(get(tr, srv.url + path), 'ROTREE_MIRROR_HTTP')
      assert.match(err.message, /another origin/)
    }
    assert.deepEqual(other.requests, [])
    assert.equal((await get(tr, srv.url + 'same')).length, BODY.length)

    // allowed by name, or all allowed
    assert.equal((await get(make(t, kind, { allowRedirectOrigins: [other.url] }), srv.url + 'port')).length, BODY.length)
    await rejects(get(make(t, kind, { allowRedirectOrigins: [other.url] }), srv.url + 'host'), 'ROTREE_MIRROR_HTTP')
    assert.equal((await get(make(t, kind, { crossOriginRedirects: true }), srv.url + 'port')).length, BODY.length)
    assert.equal(other.requests.length, 2)
  })

  test(`${kind}: user:pass goes as Basic auth to the mirror's origin, across its own redirects, and nowhere else`, async t => {
    const want = 'Basic ' + Buffer.from('alice:p@ss wörd').toString('base64')
    const other = await httpServer(t, {})
    const auth = next => (req, res) => {
      if (req.headers.authorization !== want) { res.writeHead(401, { 'content-length': 0 }); return res.end() }
      next(req, res)
    }
    const srv = await httpServer(t, {
      '/a': auth(redirect('/b')),
      '/b': auth((req, res) => { res.writeHead(200, { 'content-length': BODY.length }); res.end(BODY) }),
      '/away': auth(redirect(other.url + 'h/x'))
    })
    const base = srv.url.replace('http://', 'http://alice:p%40ss%20w%C3%B6rd@')
    const tr = make(t, kind, { allowRedirectOrigins: [other.url] })
    assert.equal((await get(tr, base + 'a')).length, BODY.length)
    assert.equal((await get(tr, base + 'away')).length, BODY.length)
    assert.deepEqual(other.requests, [{ url: '/h/x', authorization: undefined }])
    assert.ok(srv.requests.every(r => r.authorization === want))
  })

  test(`${kind}: userinfo never appears in an error message or a statistic`, async t => {
    const SECRET = 's3cr3t-pw'
    const closed = await httpServer(t, {})
    const srv = await httpServer(t, {
      '/404': (req, res) => { res.writeHead(404, { 'content-length': 0 }); res.end() },
      '/big': (req, res) => { res.writeHead(200, { 'content-length': 5000 }); res.end(Buffer.alloc(5000)) },
      '/stall': () => {},
      '/away': redirect(closed.url + 'x'),
      '/ftp': redirect('ftp://alice:' + SECRET + '@127.0.0.1/x'),
      '/bad': redirect('http://[::1')
    })
    const at = url => url.replace('http://', `http://alice:${SECRET}@`)
    const tr = make(t, kind)
    const cases = [
      [at(srv.url + '404'), 'ROTREE_MIRROR_HTTP'],
      [at(srv.url + 'big'), 'ROTREE_TOO_LARGE', { cap: 100 }],
      [at(srv.url + 'stall'), 'ROTREE_TIMEOUT', { timeoutMs: 100 }],
      [at(srv.url + 'away'), 'ROTREE_MIRROR_HTTP'],
      [at(srv.url + 'ftp'), 'ROTREE_MIRROR_HTTP'],
      [at(srv.url + 'bad'), 'ROTREE_MIRROR_HTTP'],
      [at('http://127.0.0.1:1/x'), 'ROTREE_MIRROR_NETWORK'],
      [at('http://127.0.0.1:99999/x'), 'ROTREE_MIRROR_HTTP'] // does not parse
    ]
    for (const [url, code, o] of cases) {
      const err = await rejects(get(tr, url, o), code)
      for (const text of [err.message, err.stack, JSON.stringify(err), String(err.cause?.message ?? '')]) {
        assert.ok(!text.includes(SECRET) && !text.includes('alice'), `${code} for ${url.replace(SECRET, '***')} shows the userinfo: ${text}`)
      }
    }
    assert.ok(!JSON.stringify(tr.stats).includes(SECRET))
  })
}

// https: mirrors are read over HTTP/1.1 on TLS by default, over HTTP/2 when asked for (http2: true)
const HTTPS = [['HTTP/1.1', {}, '1.1'], ['h2', { http2: true }, '2.0']]

for (const [proto, opts, version] of HTTPS) {
  test(`node, https over ${proto}: https -> http is refused even when any origin is allowed, and the http origin is never asked`, async t => {
    const target = await httpServer(t, {})
    const srv = await startTlsServer((req, res) => {
      if (req.url === '/down') { res.writeHead(302, { location: target.url + 'h/x' }); return res.end() }
      res.writeHead(200, { 'content-length': BODY.length }); res.end(BODY)
    }, { allowHTTP1: true })
    t.after(() => srv.close())
    const tr = make(t, 'node', { ca: testCert().cert, crossOriginRedirects: true, ...opts })
    assert.equal((await get(tr, srv.url + 'ok')).length, BODY.length)
    const err = await rejects(get(tr, srv.url + 'down'), 'ROTREE_MIRROR_HTTP')
    assert.match(err.message, /from https to http/)
    assert.deepEqual(target.requests, [])
    assert.deepEqual(srv.protocols, [version, version])
  })

  test(`node: Basic auth over https ${proto}, kept across a same-origin redirect`, async t => {
    const want = 'Basic ' + Buffer.from('bob:pw').toString('base64')
    const seen = []
    const srv = await startTlsServer((req, res) => {
      seen.push(req.headers.authorization)
      if (req.headers.authorization !== want) { res.writeHead(401); return res.end() }
      if (req.url === '/a') { res.writeHead(301, { location: '/b' }); return res.end() }
      res.writeHead(200, { 'content-length': BODY.length }); res.end(BODY)
    }, { allowHTTP1: true })
    t.after(() => srv.close())
    const tr = make(t, 'node', { ca: testCert().cert, ...opts })
    assert.equal((await get(tr, srv.url.replace('https://', 'https://bob:pw@') + 'a')).length, BODY.length)
    assert.deepEqual(seen, [want, want])
    assert.deepEqual(srv.protocols, [version, version])
  })
}

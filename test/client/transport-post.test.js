// The Node transport's post(): a gated edge's token exchange (FORMAT.md
// §12.11) goes out with the mirrors' own TLS trust (`ca`, as `rotree …
// --ca FILE` gives it), one deadline, and a capped answer of any status.
import { needing } from '../helpers/tools.js'
import assert from 'node:assert/strict'
import http from 'node:http'
import { createTransport } from 'rotree-client/net'
import { startTlsServer, testCert } from '../helpers/tls-server.js'

const { test } = needing('openssl')

function handler (req, res) {
  const parts = []
  req.on('data', c => parts.push(c))
  req.on('end', () => {
    const body = Buffer.concat(parts).toString()
    if (req.url === '/stall') return // never answers
    if (req.url === '/big') { res.writeHead(200); return res.end(Buffer.alloc(100_000, 0x61)) }
    if (req.url === '/refuse') { res.writeHead(403, { 'content-type': 'application/json' }); return res.end('{"code":"ROTREE_NO_ACCESS"}') }
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end(JSON.stringify({ method: req.method, type: req.headers['content-type'], body, auth: req.headers.authorization ?? null }))
  })
}

async function plain (t) {
  const server = http.createServer(handler)
  await new Promise(resolve => server.listen(0, '127.0.0.1', resolve))
  t.after(() => { server.closeAllConnections(); server.close() })
  return `http://127.0.0.1:${server.address().port}/`
}

const text = b => Buffer.from(b).toString()

test('post: the body goes out, the answer of any status comes back; the cap and the deadline hold', async t => {
  const base = await plain(t)
  const tr = createTransport()
  t.after(() => tr.close())
  const ok = await tr.post(base + 'x', '{"a":1}', { cap: 4096, timeoutMs: 5000 })
  assert.equal(ok.status, 200)
  assert.deepEqual(JSON.parse(text(ok.body)), { method: 'POST', type: 'application/json', body: '{"a":1}', auth: null })
  // a mirror URL's own user:pass, as get() sends it
  const withAuth = await tr.post(base.replace('http://', 'http://u:p%40ss@') + 'x', '{}', { cap: 4096, timeoutMs: 5000 })
  assert.equal(JSON.parse(text(withAuth.body)).auth, 'Basic ' + Buffer.from('u:p@ss').toString('base64'))
  const no = await tr.post(base + 'refuse', '{}', { cap: 4096, timeoutMs: 5000 })
  assert.equal(no.status, 403)
  assert.equal(JSON.parse(text(no.body)).code, 'ROTREE_NO_ACCESS')
  await assert.rejects(tr.post(base + 'big', '{}', { cap: 4096, timeoutMs: 5000 }), { code: 'ROTREE_TOO_LARGE' })
  await assert.rejects(tr.post(base + 'stall', '{}', { cap: 4096, timeoutMs: 300 }), { code: 'ROTREE_TIMEOUT' })
  await assert.rejects(tr.post('http://127.0.0.1:1/', '{}', { cap: 4096, timeoutMs: 5000 }), { code: 'ROTREE_MIRROR_NETWORK' })
})

test('post over https trusts the certificates given as ca, as get does, and no others', async t => {
  const srv = await startTlsServer(handler, { allowHTTP1: true })
  t.after(() => srv.close())
  const tr = createTransport({ ca: testCert().cert })
  t.after(() => tr.close())
  const ok = await tr.post(srv.url + 'x', 'hello', { cap: 4096, timeoutMs: 5000, contentType: 'text/plain' })
  assert.equal(ok.status, 200)
  assert.equal(JSON.parse(text(ok.body)).body, 'hello')
  const stranger = createTransport()
  t.after(() => stranger.close())
  await assert.rejects(stranger.post(srv.url + 'x', 'hello', { cap: 4096, timeoutMs: 5000 }), { code: 'ROTREE_MIRROR_NETWORK' })
})

// `into`: a caller that can recycle body buffers (the gateway, once a chunk
// is written) hands one to get(), and the body is read into it when it fits.
// The cap is the cap whatever the buffer's size. Node (lean HTTP/1.1 and h2)
// and the browser transport on Node's fetch().
import { needing } from '../helpers/tools.js'
import assert from 'node:assert/strict'
import http from 'node:http'
import { createTransport as nodeTransport } from 'rotree-client/net'
import { createTransport as webTransport } from '../../client-js/src/net/transport-web.js'
import { startTlsServer, testCert } from '../helpers/tls-server.js'

const { test } = needing('openssl')

const BODY = Buffer.from(Array.from({ length: 100_000 }, (_, i) => (i * 13) & 255))

function handler (req, res) {
  if (req.url === '/unannounced') { res.writeHead(200); return res.end(BODY) } // chunked (HTTP/1.1) or no length (h2)
  res.writeHead(200, { 'content-length': BODY.length }); res.end(BODY)
}

async function plainServer (t) {
  const server = http.createServer(handler)
  await new Promise(resolve => server.listen(0, '127.0.0.1', resolve))
  t.after(() => { server.closeAllConnections(); server.close() })
  return `http://127.0.0.1:${server.address().port}/`
}

const CASES = {
  'node, http/1.1': async t => ({ tr: nodeTransport(), url: await plainServer(t) }),
  'node, https over HTTP/1.1 (the default)': async t => {
    const srv = await startTlsServer(handler, { h2: false })
    t.after(() => srv.close())
    return { tr: nodeTransport({ ca: testCert().cert }), url: srv.url }
  },
  'node, h2': async t => {
    const srv = await startTlsServer(handler)
    t.after(() => srv.close())
    return { tr: nodeTransport({ ca: testCert().cert, http2: true }), url: srv.url }
  },
  web: async t => ({ tr: webTransport(), url: await plainServer(t) })
}

for (const [name, make] of Object.entries(CASES)) {
  test(`${name}: the body is read into the caller's buffer when it fits; the cap holds whatever its size`, async t => {
    const { tr, url } = await make(t)
    t.after(() => tr.close())
    for (const path of ['announced', 'unannounced']) {
      const into = new Uint8Array(200_000)
      const got = await tr.get(url + path, { cap: 150_000, timeoutMs: 5000, into })
      assert.ok(Buffer.from(got).equals(BODY), path)
      assert.equal(got.buffer, into.buffer, `${path}: read into the given buffer`)
      assert.equal(got.byteOffset, into.byteOffset)

      const small = new Uint8Array(1000)
      const own = await tr.get(url + path, { cap: 150_000, timeoutMs: 5000, into: small })
      assert.ok(Buffer.from(own).equals(BODY))
      assert.notEqual(own.buffer, small.buffer, `${path}: a buffer too small is not used`)

      const err = await tr.get(url + path, { cap: 50_000, timeoutMs: 5000, into: new Uint8Array(200_000) }).then(() => null, e => e)
      assert.equal(err?.code, 'ROTREE_TOO_LARGE', `${path}: cap 50000 with a larger buffer`)
    }
  })
}

// The token exchange of a gated reader (docs/FORMAT.md §12.11) goes through
// the reader's own transport: over https it trusts what the mirrors are
// trusted by (`ca`, as `--ca FILE` gives it), and a stalled exchange ends in
// the request's deadline (ROTREE_TIMEOUT) instead of waiting for ever.
import { needing } from '../helpers/tools.js'
import { before, after } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import http from 'node:http'
import { openTree } from 'rotree-client'
import { gatedTransport } from 'rotree-client/net'
import { generateKeyPair } from 'rotree-client/crypto'
import { unsignedGrant, signGrant, encodeGrant, decodeGrant } from 'rotree-client/grant'
import { tmpdir, writeTree, makeKey, buildTree } from '../helpers/fixtures.js'
import { createRotreeServer } from '../../server/index.js'
import { startTlsServer, testCert } from '../helpers/tls-server.js'

const { test } = needing('openssl')
const DAY = 86400e3
const iso = ms => new Date(ms).toISOString()
let dir, key, holder, srv, tls, stall

before(async () => {
  dir = await tmpdir('rotree-gated-exchange-')
  await writeTree(path.join(dir, 'src'), { 'big.bin': Buffer.alloc(300_000, 9) })
  key = makeKey()
  const { out } = await buildTree(path.join(dir, 'src'), { key, out: path.join(dir, 'out'), ttlMs: 30 * DAY })
  holder = generateKeyPair()
  srv = await createRotreeServer({ dir: out, gate: { secret: 'd'.repeat(64), ttlS: 600 } })
  tls = await startTlsServer(srv.handler, { allowHTTP1: true })
  // a gated mirror whose exchange never answers: everything else from the real server
  stall = http.createServer((req, res) => { if (req.method === 'POST') return; srv.handler(req, res) })
  await new Promise(resolve => stall.listen(0, '127.0.0.1', resolve))
})
after(async () => {
  stall.closeAllConnections(); stall.close()
  await tls.close()
  await srv.close({ timeoutMs: 1000 })
  await fs.rm(dir, { recursive: true, force: true })
})

const grant = () => decodeGrant(encodeGrant(signGrant(unsignedGrant({ anchor: key.publicKey, holder: holder.publicKey, issued: iso(Date.now() - 60e3), expires: iso(Date.now() + DAY) }), [key.secretKey])))
const gated = t => gatedTransport(t, { grant: grant(), secretKey: holder.secretKey })

test('over https the exchange trusts the ca the mirrors are read with', async () => {
  const tree = await openTree(`${tls.url}#${key.publicKey}`, { stateDir: null, ca: testCert().cert, wrapTransport: gated })
  try {
    assert.deepEqual(Buffer.from(await tree.readFile('/big.bin')), Buffer.alloc(300_000, 9))
  } finally { tree.close() }
})

test('a stalled exchange ends at the request deadline as ROTREE_TIMEOUT', async () => {
  const tree = await openTree(`http://127.0.0.1:${stall.address().port}/#${key.publicKey}`, { stateDir: null, timeoutMs: 800, wrapTransport: gated })
  try {
    await assert.rejects(tree.readFile('/big.bin'), err => {
      const codes = err.code === 'ROTREE_ALL_MIRRORS_FAILED' ? err.errors.map(e => e.code) : [err.code]
      assert.ok(codes.includes('ROTREE_TIMEOUT'), `${err.code}: ${err.message}`)
      return true
    })
  } finally { tree.close() }
})

test('the first token is asked for while fsinfo.json is read, not after it', async () => {
  // a mirror that holds fsinfo.json's answer until a token POST has arrived (or 5 s pass)
  const seen = []
  let posted; const postSeen = new Promise(resolve => { posted = resolve })
  const holdFsinfo = http.createServer((req, res) => {
    seen.push(`${req.method} ${req.url.split('?')[0]}`)
    if (req.method === 'POST') posted()
    if (req.url === '/fsinfo.json') {
      const t = setTimeout(posted, 5000)
      return postSeen.then(() => { clearTimeout(t); seen.push('fsinfo.json answered'); srv.handler(req, res) })
    }
    srv.handler(req, res)
  })
  await new Promise(resolve => holdFsinfo.listen(0, '127.0.0.1', resolve))
  try {
    let posts = 0
    const counting = t => gatedTransport(t, { grant: grant(), secretKey: holder.secretKey, fetch: (url, o) => { posts++; return fetch(url, o) } })
    const tree = await openTree(`http://127.0.0.1:${holdFsinfo.address().port}/#${key.publicKey}`, { stateDir: null, wrapTransport: counting })
    try {
      assert.deepEqual(Buffer.from(await tree.readFile('/big.bin')), Buffer.alloc(300_000, 9))
    } finally { tree.close() }
    assert.ok(seen.indexOf('POST /.rotree/token') >= 0 && seen.indexOf('POST /.rotree/token') < seen.indexOf('fsinfo.json answered'), seen.join(', '))
    assert.equal(posts, 1, 'the token asked for at open is the one the blobs carry')
    assert.ok(seen.filter(s => s.startsWith('GET /h/')).length > 0)
  } finally {
    holdFsinfo.closeAllConnections(); holdFsinfo.close()
  }
})

test('a first exchange that fails at open is asked again by the first blob request', async () => {
  let posts = 0
  // the first POST fails at the network; the second reaches the edge
  const flaky = t => gatedTransport(t, {
    grant: grant(),
    secretKey: holder.secretKey,
    fetch: (url, o) => { posts++; return posts === 1 ? Promise.reject(new TypeError('fetch failed')) : fetch(url, o) }
  })
  const plain = http.createServer(srv.handler)
  await new Promise(resolve => plain.listen(0, '127.0.0.1', resolve))
  try {
    const tree = await openTree(`http://127.0.0.1:${plain.address().port}/#${key.publicKey}`, { stateDir: null, wrapTransport: flaky })
    try {
      assert.deepEqual(Buffer.from(await tree.readFile('/big.bin')), Buffer.alloc(300_000, 9))
      assert.equal(posts, 2)
    } finally { tree.close() }
  } finally {
    plain.closeAllConnections(); plain.close()
  }
})

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

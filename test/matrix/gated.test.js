// The gated rows of the matrix (docs/FORMAT.md §12.10–12.11, docs/TRUST.md
// rule 20): a gated mirror that gives a reader holding a grant no usable
// token (none arrives with the blob requests, an expired one, another
// tree's), and a real gated edge refusing what the reader presents (a
// replayed proof, a delegation that outlives its parent, a forged grant).
// The library reader (openTree with gatedTransport) and the CLI reader
// (rotree cat --grant --grant-key) each answer ROTREE_NO_ACCESS, as the top
// error (never a mirror fault, never "all mirrors failed"), and hand out no
// byte. Not in docs/SECURITY.md's generated table: these rows are about the
// gate, which decides who may download, not what a reader accepts.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import http from 'node:http'
import { openTree } from 'rotree-client'
import { gatedTransport } from 'rotree-client/net'
import { unsignedGrant, signGrant, encodeGrant, decodeGrant } from 'rotree-client/grant'
import { tmpdir, writeTree, makeKey, buildTree } from '../helpers/fixtures.js'
import { createRotreeServer } from '../../server/index.js'
import { mintToken } from '../../server/edge-token.js'
import { writeKeyFile, readKeyFile } from '../../builder/keys.js'
import { runCli } from './readers.js'

const SECRET = 'e'.repeat(64)
const DAY = 86400e3
const iso = ms => new Date(ms).toISOString()
let dir, key, holder, holderFile, out, edge, edgeUrl
const nowS = () => Math.floor(Date.now() / 1000)

before(async () => {
  dir = await tmpdir('rotree-matrix-gated-')
  await writeTree(path.join(dir, 'src'), { 'a.txt': 'gated hello\n' })
  key = makeKey()
  ;({ out } = await buildTree(path.join(dir, 'src'), { key, out: path.join(dir, 'out'), ttlMs: 30 * DAY }))
  holderFile = path.join(dir, 'holder.key')
  await writeKeyFile(holderFile)
  holder = await readKeyFile(holderFile)
  edge = await createRotreeServer({ dir: out, gate: { secret: SECRET, ttlS: 600, accessLog: null } })
  ;({ url: edgeUrl } = await edge.listen({ port: 0, host: '127.0.0.1' }))
})
after(async () => {
  await edge.close({ timeoutMs: 1000 })
  await fs.rm(dir, { recursive: true, force: true })
})

const grant = ({ by = key, to = holder.publicKey, days = 30, parent = null } = {}) =>
  decodeGrant(encodeGrant(signGrant(unsignedGrant({ anchor: key.publicKey, holder: to, issued: iso(Date.now() - 60e3), expires: iso(Date.now() + days * DAY), parent }), [by.secretKey])))

/**
 * A gated mirror whose exchange answers with `token()` (its blobs are the real
 * edge's, checking the real secret); strip: the blob requests reach the edge
 * without their token.
 */
async function lyingEdge (token, { strip = false } = {}) {
  const srv = http.createServer((req, res) => {
    if (req.method === 'POST' && req.url === '/.rotree/token') {
      req.resume()
      req.on('end', () => {
        const body = JSON.stringify({ token: token(), expires: iso(Date.now() + 600e3), holder: holder.publicKey })
        res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(body)
      })
      return
    }
    if (strip) { req.url = req.url.split('?')[0]; delete req.headers['x-rotree-token'] }
    edge.handler(req, res)
  })
  await new Promise(resolve => srv.listen(0, '127.0.0.1', resolve))
  return { url: `http://127.0.0.1:${srv.address().port}/`, close: () => new Promise(resolve => { srv.closeAllConnections(); srv.close(resolve) }) }
}

/** A proxy to the real edge that posts each token request there once itself first: the reader's proof arrives as a replay. */
async function replayingEdge () {
  const to = new URL(edgeUrl)
  const forward = (method, p, headers, body) => new Promise((resolve, reject) => {
    const r = http.request({ host: to.hostname, port: to.port, path: p, method, headers }, res => {
      const parts = []
      res.on('data', c => parts.push(c)); res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(parts) }))
    })
    r.on('error', reject); r.end(body)
  })
  const srv = http.createServer((req, res) => {
    const parts = []
    req.on('data', c => parts.push(c))
    req.on('end', async () => {
      const body = Buffer.concat(parts)
      const headers = { ...req.headers, host: to.host }
      if (req.method === 'POST' && req.url === '/.rotree/token') await forward('POST', req.url, headers, body)
      const r = await forward(req.method, req.url, headers, body)
      res.writeHead(r.status, r.headers).end(r.body)
    })
  })
  await new Promise(resolve => srv.listen(0, '127.0.0.1', resolve))
  return { url: `http://127.0.0.1:${srv.address().port}/`, close: () => new Promise(resolve => { srv.closeAllConnections(); srv.close(resolve) }) }
}

const ROWS = [
  { id: 'gated-no-token', what: 'the blob requests arrive with no token (the exchange answered, a proxy dropped it)', edge: () => lyingEdge(() => mintToken({ secret: SECRET, tree: `${key.publicKey}:`, expires: nowS() + 600 }), { strip: true }), because: /refuses the edge token it just gave/ },
  { id: 'gated-expired-token', what: 'the exchange hands out a token that has expired', edge: () => lyingEdge(() => mintToken({ secret: SECRET, tree: `${key.publicKey}:`, expires: nowS() - 5 })), because: /refuses the edge token it just gave/ },
  { id: 'gated-other-tree-token', what: 'the exchange hands out a token for another tree', edge: () => lyingEdge(() => mintToken({ secret: SECRET, tree: `${makeKey().publicKey}:`, expires: nowS() + 600 })), because: /refuses the edge token it just gave/ },
  { id: 'gated-replayed-proof', what: 'the reader\'s token request reaches the edge as a replay', edge: replayingEdge, because: /seen before \(a replay\)/ },
  { id: 'gated-delegation-beyond-parent', what: 'the reader holds a delegation that outlives its parent', grant: delegationBeyond, because: /after its parent/ },
  { id: 'gated-forged-grant', what: 'the reader holds a grant not signed by the tree\'s access role', grant: () => grant({ by: makeKey() }), because: /not signed by the tree's access role/ }
]

/** A delegation to the reader, signed by its parent's holder, expiring a day after that parent. */
function delegationBeyond () {
  const mid = makeKey()
  const parent = grant({ to: mid.publicKey, days: 1 })
  return decodeGrant(encodeGrant(signGrant(unsignedGrant({ anchor: key.publicKey, holder: holder.publicKey, issued: iso(Date.now() - 60e3), expires: iso(Date.now() + 2 * DAY), parent }), [mid.secretKey])))
}

const heldGrant = row => row.grant ? row.grant() : grant()

for (const row of ROWS) {
  test(`gated: ${row.id} (${row.what}): library and CLI readers answer ROTREE_NO_ACCESS`, async t => {
    const e = row.edge ? await row.edge() : { url: edgeUrl, close: async () => {} }
    t.after(() => e.close())
    const g = heldGrant(row)
    const addr = `${e.url}#${key.publicKey}`
    // the library
    const tree = await openTree(addr, { stateDir: null, timeoutMs: 5000, wrapTransport: tr => gatedTransport(tr, { grant: g, secretKey: holder.secretKey }) })
    let got = null
    try {
      await assert.rejects(tree.readFile('/a.txt').then(b => { got = b }), err => {
        assert.equal(err.code, 'ROTREE_NO_ACCESS', `library: ${err.code}: ${err.message}`)
        assert.match(err.message, row.because)
        return true
      })
    } finally { await tree.close() }
    assert.equal(got, null)
    // the CLI
    const gf = path.join(dir, `${row.id}.grant`)
    await fs.writeFile(gf, encodeGrant(g))
    const r = await runCli(['cat', addr, '/a.txt', '--grant', gf, '--grant-key', holderFile, '--state-dir', path.join(dir, `state-${row.id}`), '--timeout', '5s'])
    assert.notEqual(r.code, 0)
    assert.equal(r.stdout.length, 0, 'the CLI handed out bytes')
    assert.match(r.stderr, /^rotree: ROTREE_NO_ACCESS: /m, r.stderr)
    assert.match(r.stderr, row.because)
    assert.doesNotMatch(r.stderr, /ROTREE_MIRROR|ALL_MIRRORS/)
  })
}

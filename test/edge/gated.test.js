// A gated tree (docs/FORMAT.md §12.10–12.11): `rotree serve --grants` and a
// real nginx from `nginx-config --gated` refuse blobs without an edge token
// (403) and serve them with one; the exchange at POST /.rotree/token admits
// a grant's holder and its delegate, and refuses an expired token, a token
// for another tree, a forged grant, a delegation beyond its parent and a
// replayed request. The same holds with `rotree token-server` behind nginx,
// behind Caddy (forward_auth to the token-server) and with Varnish in front
// of the gated nginx (a cached blob only to the token nginx admitted, no
// longer than it lives); the access logs name each token's holder.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import http from 'node:http'
import { generateKeyPair } from 'rotree-client/crypto'
import { unsignedGrant, signGrant, encodeGrant, decodeGrant, tokenRequest } from 'rotree-client/grant'
import { tmpdir, writeTree, makeKey, buildTree } from '../helpers/fixtures.js'
import { createRotreeServer } from '../../server/index.js'
import { mintToken } from '../../server/edge-token.js'
import { createTokenServer } from '../../server/token-server.js'
import { caddyConfig } from '../../server/caddy-config.js'
import { varnishConfig } from '../../server/varnish-config.js'
import { needs, startNginx, startCaddy, startVarnish, req } from './helpers.js'

const SECRET = 'a'.repeat(64)
const DAY = 86400e3
const iso = ms => new Date(ms).toISOString()
let dir, out, key, tree, holder, delegate, blob, origin, originPort, tokens, tokenPort
const cleanups = []
const originLog = []
const tokenLog = []
const issued = [] // the exchanges' own lines: token for <tree> to holder <key>, expires <s>

before(async () => {
  dir = await tmpdir('rotree-gated-')
  await writeTree(path.join(dir, 'src'), { 'a.txt': 'gated hello\n' })
  key = makeKey()
  ;({ out } = await buildTree(path.join(dir, 'src'), { key, out: path.join(dir, 'out'), ttlMs: 30 * DAY }))
  blob = (await fs.readdir(path.join(out, 'h')))[0]
  tree = `${key.publicKey}:`
  holder = generateKeyPair(); delegate = generateKeyPair()
  origin = await createRotreeServer({ dir: out, gate: { secret: SECRET, ttlS: 600, accessLog: l => originLog.push(l) } })
  const { url } = await origin.listen({ port: 0, host: '127.0.0.1' })
  originPort = Number(new URL(url).port)
  cleanups.push(() => origin.close({ timeoutMs: 1000 }))
  tokens = await createTokenServer({ dirs: [out], secret: SECRET, ttlS: 600, accessLog: l => tokenLog.push(l), log: { info: m => issued.push(m) } })
  tokenPort = (await tokens.listen({ port: 0, host: '127.0.0.1' })).port
  cleanups.push(() => tokens.close({ timeoutMs: 1000 }))
})
after(async () => {
  for (const c of cleanups.reverse()) await c()
  await fs.rm(dir, { recursive: true, force: true })
})

function grant ({ by = key, to = holder, days = 30, parent = null, now = Date.now() } = {}) {
  return decodeGrant(encodeGrant(signGrant(unsignedGrant({ anchor: key.publicKey, holder: to.publicKey, issued: iso(now - 60e3), expires: iso(now + days * DAY), parent }), [by.secretKey])))
}

function post (port, p, body) {
  return new Promise((resolve, reject) => {
    const r = http.request({ host: '127.0.0.1', port, path: p, method: 'POST', headers: { 'content-type': 'application/json' }, agent: false }, res => {
      const parts = []
      res.on('data', c => parts.push(c))
      res.on('end', () => { const text = Buffer.concat(parts).toString(); resolve({ status: res.statusCode, headers: res.headers, json: (() => { try { return JSON.parse(text) } catch { return text } })() }) })
    })
    r.on('error', reject)
    r.end(body)
  })
}

const exchange = (port, g, sk, o) => post(port, '/.rotree/token', tokenRequest(g, sk.secretKey, o))

/** Every edge refuses and admits alike: `port` is the origin's or nginx's. */
async function gatedBehaviour (port) {
  const p = `/h/${blob}`
  let r = await req(port, p)
  assert.equal(r.status, 403, 'no token')
  assert.equal(r.headers['cache-control'], 'no-store')
  // a token for this tree, from the exchange: header and query argument
  const t = await exchange(port, grant(), holder)
  assert.equal(t.status, 200, JSON.stringify(t.json))
  assert.equal(t.headers['cache-control'], 'no-store')
  assert.ok(Date.parse(t.json.expires) - Date.now() <= 600e3 + 1000)
  r = await req(port, p, { headers: { 'X-Rotree-Token': t.json.token } })
  assert.equal(r.status, 200)
  assert.ok(r.body.includes('gated hello'))
  assert.match(r.headers['cache-control'], /^private/)
  r = await req(port, `${p}?rotree_token=${t.json.token}`)
  assert.equal(r.status, 200)
  // expired, another tree's, a tampered one
  const nowS = Math.floor(Date.now() / 1000)
  assert.equal((await req(port, p, { headers: { 'X-Rotree-Token': mintToken({ secret: SECRET, tree, expires: nowS - 5 }) } })).status, 403, 'expired')
  assert.equal((await req(port, p, { headers: { 'X-Rotree-Token': mintToken({ secret: SECRET, tree, expires: nowS + 60 }) } })).status, 200, 'minted by the secret')
  assert.equal((await req(port, p, { headers: { 'X-Rotree-Token': mintToken({ secret: SECRET, tree: `${makeKey().publicKey}:`, expires: nowS + 60 }) } })).status, 403, 'another tree')
  assert.equal((await req(port, p, { headers: { 'X-Rotree-Token': mintToken({ secret: 'b'.repeat(64), tree, expires: nowS + 60 }) } })).status, 403, 'another secret')
  const [mac, exp] = t.json.token.split(',')
  assert.equal((await req(port, p, { headers: { 'X-Rotree-Token': `${mac},${Number(exp) + 3600}` } })).status, 403, 'a later expiry')
  // the exchange: a delegate, a forged grant, a delegation beyond its parent, a replay
  const parent = grant({ days: 2 })
  const child = grant({ by: holder, to: delegate, days: 1, parent })
  assert.equal((await exchange(port, child, delegate)).status, 200, 'a delegate')
  const refused = async (g, sk, re, o) => {
    const x = await exchange(port, g, sk, o)
    assert.equal(x.status, 403, JSON.stringify(x.json))
    assert.equal(x.json.code, 'ROTREE_NO_ACCESS')
    assert.match(x.json.message, re)
  }
  await refused(grant({ by: holder }), holder, /not signed by the tree's access role/)
  await refused(grant({ by: holder, to: delegate, days: 3, parent }), delegate, /after its parent/)
  await refused(child, holder, /not signed by the grant's holder/)
  await refused(grant({ now: Date.now() - 31 * DAY }), holder, /expired at/)
  const body = tokenRequest(grant(), holder.secretKey)
  assert.equal((await post(port, '/.rotree/token', body)).status, 200)
  const replay = await post(port, '/.rotree/token', body)
  assert.equal(replay.status, 403); assert.match(replay.json.message, /replay/)
  await refused(grant(), holder, /from this edge's clock/, { now: Date.now() - 10 * 60e3 })
}

test('rotree serve --grants: 403 without a token, the blob with one; the exchange admits and refuses', async () => {
  await gatedBehaviour(originPort)
  // fsinfo.json and trust documents stay public: readers verify before they ask for a token
  assert.equal((await req(originPort, '/fsinfo.json')).status, 200)
  // its access log names the holder of each admitted token's grant, and never carries the token
  const ok = originLog.filter(l => / GET \/h\/[0-9a-f]{64} 200 /.test(l))
  assert.ok(ok.length >= 3, originLog.join('\n'))
  assert.ok(ok.some(l => l.includes(`holder=${holder.publicKey} token=ok`)), ok.join('\n'))
  assert.ok(originLog.some(l => / 403 holder=- token=bad$/.test(l)))
  assert.ok(originLog.some(l => / 403 holder=- token=expired$/.test(l)))
  assert.ok(!originLog.some(l => l.includes('rotree_token')))
})

test('two holders in the same second get tokens of different expiries, so each token names one holder', async () => {
  const other = generateKeyPair()
  const a = await exchange(originPort, grant(), holder)
  const b = await exchange(originPort, grant({ to: other }), other)
  assert.equal(a.status, 200); assert.equal(b.status, 200)
  assert.notEqual(a.json.token, b.json.token)
  assert.ok(Date.parse(b.json.expires) > Date.now() + 400e3, 'at most a quarter of the lifetime earlier')
  originLog.length = 0
  await req(originPort, `/h/${blob}`, { headers: { 'X-Rotree-Token': b.json.token } })
  assert.match(originLog.at(-1), new RegExp(`200 holder=${other.publicKey} token=ok$`))
})

test('rotree token-server behind nginx from nginx-config --gated --token-upstream', { skip: needs('nginx') }, async () => {
  const n = await startNginx(out, { gate: { secret: SECRET, tree, tokenUpstream: `127.0.0.1:${tokenPort}` } })
  cleanups.push(n.stop)
  await gatedBehaviour(n.port)
  // nginx's log (--full) keeps no token, and names each admitted token's expiry, which the exchange's log maps to its holder
  const access = await fs.readFile(path.join(n.dir, 'access.log'), 'utf8')
  assert.doesNotMatch(access, /rotree_token/)
  const t = await exchange(n.port, grant(), holder)
  await req(n.port, `/h/${blob}?rotree_token=${t.json.token}`)
  const expires = t.json.token.split(',')[1]
  const line = new RegExp(`"GET /h/${blob} HTTP/1.1" 200 \\d+ token_expires=${expires}\n`)
  // nginx writes the line as it finalizes the request, which may be a moment after the client has the body
  for (let i = 0; i < 50 && !line.test(await fs.readFile(path.join(n.dir, 'access.log'), 'utf8')); i++) await new Promise(resolve => setTimeout(resolve, 100))
  assert.match(await fs.readFile(path.join(n.dir, 'access.log'), 'utf8'), line)
  assert.ok(issued.includes(`rotree: token for ${tree} to holder ${holder.publicKey}, expires ${expires}`), issued.join('\n'))
  // the token-server serves nothing of the folder
  assert.equal((await req(tokenPort, `/h/${blob}`)).status, 404)
  assert.equal((await req(tokenPort, '/fsinfo.json')).status, 404)
})

test('Caddy from caddy-config --gated: each blob checked by the token-server (forward_auth)', { skip: needs('caddy') }, async () => {
  const c = await startCaddy(port => caddyConfig({ out, listen: `127.0.0.1:${port}`, full: true, gate: { tree, upstream: `127.0.0.1:${tokenPort}` } }))
  cleanups.push(c.stop)
  tokenLog.length = 0
  await gatedBehaviour(c.port)
  // the token-server's log of the checks names the holder
  assert.ok(tokenLog.some(l => l.includes(`GET /h/${blob} 204 holder=${holder.publicKey} token=ok`)), tokenLog.join('\n'))
  assert.equal((await req(c.port, '/fsinfo.json')).status, 200)
})

test('Varnish from varnish-config --gated in front of the gated nginx: a cached blob only for the token nginx admitted', { skip: needs('nginx') || needs('varnishd') }, async () => {
  const n = await startNginx(out, { gate: { secret: SECRET, tree, tokenUpstream: `127.0.0.1:${tokenPort}` } })
  cleanups.push(n.stop)
  const v = await startVarnish(varnishConfig({ backend: `127.0.0.1:${n.port}`, gated: true }))
  cleanups.push(v.stop)
  await gatedBehaviour(v.port)
  const p = `/h/${blob}`
  const nowS = Math.floor(Date.now() / 1000)
  const t = mintToken({ secret: SECRET, tree, expires: nowS + 300 })
  assert.equal((await req(v.port, `${p}?rotree_token=${t}`)).status, 200)
  const hit = await req(v.port, p, { headers: { 'X-Rotree-Token': t } })
  assert.equal(hit.status, 200); assert.equal(hit.headers['x-cache'], 'HIT')
  // cached, yet never to a request without that token
  assert.equal((await req(v.port, p)).status, 403)
  assert.equal((await req(v.port, p, { headers: { 'X-Rotree-Token': `${t.split(',')[0]},${nowS + 600}` } })).status, 403)
  assert.equal((await req(v.port, p, { headers: { 'X-Rotree-Token': mintToken({ secret: SECRET, tree: `${makeKey().publicKey}:`, expires: nowS + 300 }) } })).status, 403)
  // kept no longer than the token lives: one good for two more seconds is refused once they pass
  const short = mintToken({ secret: SECRET, tree, expires: nowS + 2 })
  assert.equal((await req(v.port, p, { headers: { 'X-Rotree-Token': short } })).status, 200)
  while (Math.floor(Date.now() / 1000) <= nowS + 2) await new Promise(resolve => setTimeout(resolve, 200))
  assert.equal((await req(v.port, p, { headers: { 'X-Rotree-Token': short } })).status, 403)
})

test('nginx from nginx-config --gated checks the same tokens with secure_link', { skip: needs('nginx') }, async () => {
  const n = await startNginx(out, { gate: { secret: SECRET, tree, tokenUpstream: `127.0.0.1:${originPort}` } })
  cleanups.push(n.stop)
  await gatedBehaviour(n.port)
  // preflight still answered without a token
  assert.equal((await req(n.port, `/h/${blob}`, { method: 'OPTIONS' })).status, 204)
})

// How a gated reader renews its edge token (client-js/src/net/gated-transport.js,
// docs/FORMAT.md §12.11), on a made-up clock with a made-up edge: one exchange
// per mirror however many requests are in flight, a renewal an eighth of a
// short token's life early (not a minute, which would renew at every request),
// the held token sent while its successor is fetched, one fresh token after a
// refusal, and a failed renewal not retried by every request.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { gatedTransport, RENEW_FRACTION } from 'rotree-client/net'
import { generateKeyPair } from 'rotree-client/crypto'
import { unsignedGrant, signGrant, encodeGrant, decodeGrant } from 'rotree-client/grant'

const RENEW_BEFORE_MS = 60e3 // gated-transport.js's margin for long-lived tokens
const key = generateKeyPair(); const holder = generateKeyPair()
const iso = ms => new Date(ms).toISOString()
const grantOf = () => decodeGrant(encodeGrant(signGrant(unsignedGrant({ anchor: key.publicKey, holder: holder.publicKey, issued: iso(Date.now() - 60e3), expires: iso(Date.now() + 30 * 86400e3) }), [key.secretKey])))

const B64 = 'A'.repeat(22)

function edge ({ lifetimeS, clock, fail = () => false }) {
  const issued = []
  const fetch = async (url, init) => {
    assert.equal(init.method, 'POST')
    await new Promise(resolve => setImmediate(resolve)) // an exchange takes a turn of the loop: requests pile up behind it
    if (fail()) return new Response('{"message":"later"}', { status: 503 })
    const expires = Math.floor(clock.t / 1000) + lifetimeS
    const token = `${B64.slice(0, 20)}${String(issued.length).padStart(2, '0')},${expires}`
    issued.push(token)
    return new Response(JSON.stringify({ token }), { status: 200 })
  }
  return { fetch, issued }
}

function innerOf (clock, seen) {
  return {
    async get (url) {
      const token = new URL(url).searchParams.get('rotree_token')
      seen.push(token)
      if (token === null || Number(token.split(',')[1]) * 1000 <= clock.t) { const e = new Error('403'); e.code = 'ROTREE_MIRROR_HTTP'; e.status = 403; throw e }
      return new Uint8Array(1)
    },
    close () {}
  }
}

const grantStub = { grant: grantOf(), secretKey: holder.secretKey }

test('many requests at once: one exchange; a 20 s token renewed once per 17.5 s, not at every request', async () => {
  const clock = { t: 1_000_000_000_000 }
  const e = edge({ lifetimeS: 20, clock })
  const seen = []
  const tr = gatedTransport(innerOf(clock, seen), { ...grantStub, fetch: e.fetch, now: () => clock.t })
  await Promise.all(Array.from({ length: 50 }, (_, i) => tr.get(`http://m.example/h/${String(i).padStart(64, '0')}`, {})))
  assert.equal(e.issued.length, 1, 'fifty requests in flight, one exchange')
  // 60 s of reading, a request every 100 ms
  for (let i = 0; i < 600; i++) {
    clock.t += 100
    await tr.get(`http://m.example/h/${'1'.repeat(64)}`, {})
  }
  // renewed 2.5 s before each expiry: at 17.5, 35 and 52.5 s (a quarter early, 15 s, would make five)
  assert.equal(e.issued.length, 4, `one token per 17.5 s of a 60 s read: ${e.issued.length}`)
  assert.ok(RENEW_BEFORE_MS > 20e3 * RENEW_FRACTION, 'the test is about a token shorter than the fixed margin')
})

test('a refused token: one fresh exchange, shared; a failing renewal is paused, and the held token still sent', async () => {
  const clock = { t: 1_000_000_000_000 }
  let failing = false
  const e = edge({ lifetimeS: 600, clock, fail: () => failing })
  const seen = []
  const tr = gatedTransport(innerOf(clock, seen), { ...grantStub, fetch: e.fetch, now: () => clock.t })
  await tr.get(`http://m.example/h/${'2'.repeat(64)}`, {})
  assert.equal(e.issued.length, 1)
  // into the renewal window (60 s before expiry) with the edge failing: requests go on with the held token
  clock.t += 545e3
  failing = true
  for (let i = 0; i < 20; i++) { await tr.get(`http://m.example/h/${'3'.repeat(64)}`, {}); clock.t += 100 }
  assert.equal(e.issued.length, 1, 'nothing issued while the edge fails')
  assert.ok(seen.slice(-20).every(s => s === e.issued[0]), 'the held token was sent')
  failing = false
  clock.t += 6000 // past the pause
  await tr.get(`http://m.example/h/${'4'.repeat(64)}`, {})
  await new Promise(resolve => setTimeout(resolve, 10))
  assert.equal(e.issued.length, 2, 'renewed once the pause is over')
})

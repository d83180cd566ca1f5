// server/edge-token.js: a token passes only for its tree and secret, until its
// expiry, whether its MD5 was just computed or remembered from an earlier
// request (a reader sends one token with every blob).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mintToken, checkToken } from '../../server/edge-token.js'

const A = 'a'.repeat(64); const B = 'b'.repeat(64)

test('a remembered token passes for its own tree and secret only, and expires on time', () => {
  const nowMs = 1_900_000_000_000
  const expires = Math.floor(nowMs / 1000) + 600
  const token = mintToken({ secret: A, tree: 'k:one', expires })
  for (let i = 0; i < 3; i++) assert.equal(checkToken(token, { secret: A, tree: 'k:one', nowMs }), 'ok') // computed, then remembered
  assert.equal(checkToken(token, { secret: B, tree: 'k:one', nowMs }), 'bad', 'another secret')
  assert.equal(checkToken(token, { secret: A, tree: 'k:two', nowMs }), 'bad', 'another tree')
  assert.equal(checkToken(token, { secret: A, tree: 'k:one', nowMs: (expires + 1) * 1000 }), 'expired', 'past its expiry, though remembered')
  const [mac] = token.split(',')
  assert.equal(checkToken(`${mac},${expires + 3600}`, { secret: A, tree: 'k:one', nowMs }), 'bad', 'a later expiry under the same MAC')
  assert.equal(checkToken(`${mac.startsWith('A') ? 'B' : 'A'}${mac.slice(1)},${expires}`, { secret: A, tree: 'k:one', nowMs }), 'bad', 'a changed MAC')
  // the last of 22 characters carries 2 bits: another spelling of the same bytes is refused, not remembered apart
  const last = 'AQgw'.indexOf(mac.at(-1)) >= 0 ? mac.at(-1) : null
  if (last !== null) assert.equal(checkToken(`${mac.slice(0, -1)}${String.fromCharCode(last.charCodeAt(0) + 1)},${expires}`, { secret: A, tree: 'k:one', nowMs }), 'bad', 'a non-canonical spelling')
  // many other readers' tokens push it out; it is then checked afresh, still ok
  for (let i = 0; i < 1100; i++) checkToken(mintToken({ secret: A, tree: 'k:one', expires: expires + i + 1 }), { secret: A, tree: 'k:one', nowMs })
  assert.equal(checkToken(token, { secret: A, tree: 'k:one', nowMs }), 'ok')
})

// The browser's whole-file SHA-256 (client-js/src/crypto/sha256-web.js),
// run in Node, which has WebCrypto too: a file of known size up to
// BUFFERED_HASH_MAX is copied aside and digested by WebCrypto at the end, a
// larger one or one of unknown size streams through
// @noble/hashes; both give node:crypto's digest, and more bytes than
// announced are refused rather than hashed short.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { createFileSha256, BUFFERED_HASH_MAX } from '../../client-js/src/crypto/sha256-web.js'

const bytes = n => { const b = new Uint8Array(n); for (let i = 0; i < n; i++) b[i] = (i * 31 + 7) & 255; return b }
const want = b => createHash('sha256').update(b).digest('hex')

test('whole files hash alike buffered (WebCrypto), streamed (@noble/hashes) and in node:crypto', async () => {
  assert.ok(globalThis.crypto?.subtle, 'this Node has WebCrypto')
  for (const n of [0, 1, 65_536, 300_001]) {
    const b = bytes(n)
    for (const size of [n, undefined, BUFFERED_HASH_MAX + 1]) {
      const h = createFileSha256(size)
      for (let i = 0; i < n; i += 40_000) h.update(b.subarray(i, Math.min(n, i + 40_000)))
      assert.equal(await h.hex(), want(b), `n ${n}, size ${size}`)
    }
  }
})

test('more bytes than announced are refused, never hashed short', () => {
  const h = createFileSha256(10)
  h.update(bytes(6))
  assert.throws(() => h.update(bytes(5)), RangeError)
})

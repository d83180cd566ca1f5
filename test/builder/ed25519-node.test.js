// builder/ed25519-node.js (node:crypto) signs for `rotree build`; readers verify
// with @noble/ed25519 (client-js/src/ed25519.js). RFC 8032 signatures are
// deterministic, so the two must agree byte for byte.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import * as native from '../../builder/ed25519-node.js'
import * as noble from 'rotree-client/src/ed25519.js'

test('node:crypto and @noble give the same public keys and signatures', () => {
  for (let i = 0; i < 64; i++) {
    const k = noble.generateKeyPair()
    assert.equal(native.publicKeyOf(k.secretKey), k.publicKey)
    const msg = randomBytes(i * 13)
    const sig = native.sign(msg, k.secretKey)
    assert.equal(sig, noble.sign(msg, k.secretKey))
    assert.ok(noble.verifySignature(sig, msg, k.publicKey))
  }
  const n = native.generateKeyPair()
  assert.equal(noble.publicKeyOf(n.secretKey), n.publicKey)
})

test('RFC 8032 §7.1 test 2', () => {
  const sk = '4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb'
  assert.equal(native.publicKeyOf(sk), '3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c')
  assert.equal(native.sign(Uint8Array.of(0x72), sk),
    '92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00')
})

test('a malformed secret key is refused', () => {
  for (const bad of ['', 'zz'.repeat(32), 'AB'.repeat(32), 'ab'.repeat(31), 'ab'.repeat(33)]) assert.throws(() => native.sign(new Uint8Array(1), bad), TypeError)
})

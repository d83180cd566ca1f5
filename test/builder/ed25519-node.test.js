// client-js/src/crypto/ed25519-node.js (node:crypto) is `#ed25519` in Node: it signs
// for `rotree build` and verifies for the Node reader; browsers verify with
// @noble/ed25519 (client-js/src/crypto/ed25519.js). RFC 8032 signatures are
// deterministic, so the two must agree byte for byte, and both must accept
// what either signs and refuse what is not the signer's.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import * as native from 'rotree-client/crypto'
import * as noble from 'rotree-client/crypto'

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

test('both verifiers accept every honest signature and refuse tampered messages, signatures and keys', () => {
  const L = (1n << 252n) + 27742317777372353535851937790883648493n
  for (let i = 0; i < 32; i++) {
    const k = noble.generateKeyPair()
    const other = noble.generateKeyPair()
    const msg = randomBytes(1 + i * 7)
    const sig = native.sign(msg, k.secretKey)
    const flipped = Buffer.from(msg); flipped[i % msg.length] ^= 1
    const badSig = sig.slice(0, 2 * (i % 64)) + ((parseInt(sig[2 * (i % 64)], 16) ^ 1).toString(16)) + sig.slice(2 * (i % 64) + 1)
    // S + L: the same signature with a non-canonical scalar (malleability); RFC 8032 and ZIP-215 both refuse it
    const s = BigInt('0x' + Buffer.from(sig.slice(64), 'hex').reverse().toString('hex')) + L
    const sHex = Buffer.from(s.toString(16).padStart(64, '0'), 'hex').reverse().toString('hex')
    for (const v of [native, noble]) {
      assert.equal(v.verifySignature(sig, msg, k.publicKey), true)
      assert.equal(v.verifySignature(sig, flipped, k.publicKey), false)
      assert.equal(v.verifySignature(badSig, msg, k.publicKey), false)
      assert.equal(v.verifySignature(sig, msg, other.publicKey), false)
      if (sHex.length === 64) assert.equal(v.verifySignature(sig.slice(0, 64) + sHex, msg, k.publicKey), false)
    }
  }
  for (const v of [native, noble]) {
    for (const [sig, pub] of [['', 'ab'.repeat(32)], ['zz'.repeat(64), 'ab'.repeat(32)], ['ab'.repeat(64), ''], ['ab'.repeat(64), 'AB'.repeat(32)], ['ab'.repeat(63), 'ab'.repeat(32)]]) {
      assert.equal(v.verifySignature(sig, new Uint8Array(3), pub), false, `${sig.length}/${pub.length}`)
    }
  }
})

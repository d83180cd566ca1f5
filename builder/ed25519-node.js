// ed25519 for the publisher, through node:crypto (OpenSSL). The reader's
// client-js/src/ed25519.js (@noble/ed25519) runs everywhere, browsers
// included, but a process pays ~25 ms of table precomputation before its
// first signature, plus loading it: a fifth of a one-file rebuild through the
// CLI. Ed25519 signing is deterministic (RFC 8032 §5.1.6), so
// both give the same bytes for the same key and message;
// test/builder/ed25519-node.test.js checks that against @noble.
import { createPrivateKey, createPublicKey, sign as cryptoSign, randomBytes } from 'node:crypto'

// RFC 8410 §7: PKCS#8 of an Ed25519 key is a fixed 16-byte header, then the 32-byte seed:
//   SEQUENCE { INTEGER 0, SEQUENCE { OID 1.3.101.112 }, OCTET STRING { OCTET STRING seed } }
const PKCS8_HEADER = Buffer.from('302e020100300506032b657004220420', 'hex')
// RFC 8410 §4: SubjectPublicKeyInfo is a fixed 12-byte header, then the 32-byte public key
const SPKI_HEADER_LEN = 12

function _privateKey (secretKeyHex) {
  const seed = Buffer.from(secretKeyHex, 'hex')
  if (seed.length !== 32 || seed.toString('hex') !== secretKeyHex) throw new TypeError('an ed25519 secret key is 64 lowercase hex digits')
  return createPrivateKey({ key: Buffer.concat([PKCS8_HEADER, seed]), format: 'der', type: 'pkcs8' })
}

/** @param {string} secretKeyHex 32-byte seed @returns {string} 64 hex */
export function publicKeyOf (secretKeyHex) {
  const spki = createPublicKey(_privateKey(secretKeyHex)).export({ format: 'der', type: 'spki' })
  return spki.subarray(SPKI_HEADER_LEN).toString('hex')
}

/** @param {Uint8Array} message @param {string} secretKeyHex @returns {string} 128 hex */
export function sign (message, secretKeyHex) {
  return cryptoSign(null, message, _privateKey(secretKeyHex)).toString('hex')
}

/** @returns {{ secretKey: string, publicKey: string }} hex; the secret key is 32 random bytes, as @noble's */
export function generateKeyPair () {
  const secretKey = randomBytes(32).toString('hex')
  return { secretKey, publicKey: publicKeyOf(secretKey) }
}

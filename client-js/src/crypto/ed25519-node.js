// ed25519 through node:crypto (OpenSSL): what `#ed25519` is in Node (the
// publisher's signatures and the reader's checks); browsers get ed25519.js
// (@noble/ed25519), which runs everywhere but costs a process its loading
// and a table precomputation before its first verification: in Node that was
// on the path of every openTree(), several round trips at RTT 10 ms, where
// OpenSSL's first verification costs next to nothing (docs/BENCHMARKS.md P3t,
// notes).
//
// Signing is deterministic (RFC 8032 §5.1.6), so both give the same bytes for
// the same key and message. Verification agrees on every signature an honest
// signer makes; the two differ only on encodings crafted to be ambiguous
// (OpenSSL checks RFC 8032 §5.1.7 cofactorless, @noble ZIP-215), which only
// the key's holder can make valid, and a mirror that re-encodes a signature
// changes no signed byte (docs/TRUST.md rule 1). test/builder/ed25519-node.test.js
// checks both against each other and RFC 8032's vectors.
import { createPrivateKey, createPublicKey, sign as cryptoSign, verify as cryptoVerify, randomBytes } from 'node:crypto'

// RFC 8410 §7: PKCS#8 of an Ed25519 key is a fixed 16-byte header, then the 32-byte seed:
//   SEQUENCE { INTEGER 0, SEQUENCE { OID 1.3.101.112 }, OCTET STRING { OCTET STRING seed } }
const PKCS8_HEADER = Buffer.from('302e020100300506032b657004220420', 'hex')
// RFC 8410 §4: SubjectPublicKeyInfo is a fixed 12-byte header, then the 32-byte public key
const SPKI_HEADER = Buffer.from('302a300506032b6570032100', 'hex')
const SPKI_HEADER_LEN = SPKI_HEADER.length
const HEX = /^[0-9a-f]*$/

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

/** RFC 8032 verification; false (never a throw) for malformed keys, points or signatures. */
export function verifySignature (sigHex, message, publicKeyHex) {
  if (typeof sigHex !== 'string' || typeof publicKeyHex !== 'string' || sigHex.length !== 128 || publicKeyHex.length !== 64 || !HEX.test(sigHex) || !HEX.test(publicKeyHex)) return false
  try {
    const key = createPublicKey({ key: Buffer.concat([SPKI_HEADER, Buffer.from(publicKeyHex, 'hex')]), format: 'der', type: 'spki' })
    return cryptoVerify(null, message, key, Buffer.from(sigHex, 'hex'))
  } catch {
    return false
  }
}

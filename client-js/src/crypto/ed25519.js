// ed25519 through @noble/ed25519 with @noble/hashes' SHA-512, so signing and
// verifying are synchronous and work without WebCrypto (plain-http pages).
import * as ed from '@noble/ed25519'
import { sha512 } from '@noble/hashes/sha2.js'
import { toHex, fromHex } from '../format/bytes.js'

ed.hashes.sha512 = sha512

/** @returns {{ secretKey: string, publicKey: string }} hex */
export function generateKeyPair () {
  const sk = ed.utils.randomSecretKey()
  return { secretKey: toHex(sk), publicKey: toHex(ed.getPublicKey(sk)) }
}

export function publicKeyOf (secretKeyHex) { return toHex(ed.getPublicKey(fromHex(secretKeyHex))) }

/** @param {Uint8Array} message @param {string} secretKeyHex @returns {string} 128 hex */
export function sign (message, secretKeyHex) { return toHex(ed.sign(message, fromHex(secretKeyHex))) }

/** RFC 8032 verification; false (never a throw) for malformed points or signatures. */
export function verifySignature (sigHex, message, publicKeyHex) {
  try {
    return ed.verify(fromHex(sigHex), message, fromHex(publicKeyHex))
  } catch {
    return false
  }
}

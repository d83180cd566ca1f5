// FORMAT.md §12.8: the blobs of a private tree, sealed and opened.
//
//   stored := AES-256-GCM(key, nonce = 12 zero bytes, padded)      ciphertext ‖ 16-byte tag
//   padded := inner ‖ 0x80 ‖ 0x00*        len(padded) = padme(len(inner) + 1)
//   key    := HMAC-SHA256(tree secret, "rotree-blob-key-v1" ‖ SHA-256(inner))
//
// `inner` is the blob as its inner codec stores it (§12.6). The key is a PRF
// of exactly the bytes it encrypts, so one key never encrypts two different
// messages and the fixed nonce is safe (FORMAT.md §12.8 says why), while an
// unchanged blob keeps its ciphertext from one build to the next.
//
// Opening checks everything a reader may rely on: the tag (which covers the
// padding), and one spelling of the padding (the marker where padme puts it).
// The hash of the stored bytes was checked before (verify.js, docs/TRUST.md
// rule 3).
import { BadFormatError } from '../errors.js'
import { fromHex, toHex, utf8 } from './bytes.js'
import { MAX_BLOB } from './limits.js'
import { gcmOpen } from '#aead'

export const TAG_LEN = 16
export const NONCE = new Uint8Array(12)
const KEY_LABEL = utf8.encode('rotree-blob-key-v1')

/**
 * Padmé (PURBs, 2019): L rounded up so that it ends in E − S zero bits,
 * E = ⌊log2 L⌋, S = ⌊log2 E⌋ + 1. At most 12% more; leaks O(log log L) bits.
 * @param {number} L ≥ 1 @returns {number}
 */
export function padme (L) {
  if (L < 2) return L
  const E = Math.floor(Math.log2(L))
  const S = Math.floor(Math.log2(E)) + 1
  const lastBits = E - S
  const mask = 2 ** lastBits - 1
  return Math.ceil(L / (mask + 1)) * (mask + 1)
}

/** The largest stored size of an encrypted blob: a MAX_BLOB inner, padded and tagged. */
export const MAX_SEALED = padme(MAX_BLOB + 1) + TAG_LEN

/** The stored size of a sealed blob whose inner bytes are `innerLength` long. */
export const sealedSize = innerLength => padme(innerLength + 1) + TAG_LEN

/** inner ‖ 0x80 ‖ 0x00*, padme(len + 1) bytes. */
export function pad (inner) {
  const out = new Uint8Array(padme(inner.length + 1))
  out.set(inner, 0)
  out[inner.length] = 0x80
  return out
}

/** The inner bytes of padded bytes; a padding that is not the one spelling pad() makes is ROTREE_BAD_FORMAT. */
export function unpad (padded) {
  let i = padded.length - 1
  while (i >= 0 && padded[i] === 0) i--
  if (i < 0 || padded[i] !== 0x80) throw new BadFormatError('sealed blob: no padding marker')
  if (padme(i + 1) !== padded.length) throw new BadFormatError('sealed blob: padded to another length than padme gives')
  return padded.subarray(0, i)
}

/**
 * The key of a blob whose inner bytes hash to `innerHash` (FORMAT.md §12.8), from the tree secret.
 * @param {(key: Uint8Array, data: Uint8Array) => Uint8Array} hmac HMAC-SHA256
 * @param {Uint8Array} secret @param {Uint8Array} innerHash
 */
export function blobKey (hmac, secret, innerHash) {
  const msg = new Uint8Array(KEY_LABEL.length + innerHash.length)
  msg.set(KEY_LABEL, 0); msg.set(innerHash, KEY_LABEL.length)
  return hmac(secret, msg)
}

/**
 * The inner bytes of a sealed blob whose stored bytes already verified by
 * hash: decrypted with the ref's key, the tag and the padding checked.
 * @param {Uint8Array} stored @param {string} keyHex the ref's key (64 hex)
 * @returns {Promise<Uint8Array>}
 */
export async function openSealed (stored, keyHex) {
  const padded = await gcmOpen(fromHex(keyHex), NONCE, stored)
  if (padded === null) throw new BadFormatError('sealed blob does not decrypt under the key its parent names')
  return unpad(padded)
}

/**
 * Seal `inner` under its own key: what a builder stores (Node: the builder
 * passes node:crypto's HMAC and AES-GCM, crypto/aead-node.js).
 * @param {Uint8Array} inner @param {Uint8Array} secret the tree secret
 * @param {{ hmac: Function, sha256: (b: Uint8Array) => Uint8Array, seal: (key: Uint8Array, nonce: Uint8Array, plain: Uint8Array) => Uint8Array }} c
 * @returns {{ stored: Uint8Array, key: string }} key: 64 hex
 */
export function sealBlob (inner, secret, c) {
  const key = blobKey(c.hmac, secret, c.sha256(inner))
  return { stored: c.seal(key, NONCE, pad(inner)), key: toHex(key) }
}

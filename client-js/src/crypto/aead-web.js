// AES-256-GCM and HMAC-SHA256 in browsers: WebCrypto where the page has it
// (a secure context), else @noble/ciphers and @noble/hashes (a page on plain
// http:, which has no crypto.subtle). The Node twin is aead-node.js.
import { gcm } from '@noble/ciphers/aes.js'
import { hmac } from '@noble/hashes/hmac.js'
import { sha256 } from '@noble/hashes/sha2.js'

const subtle = globalThis.crypto?.subtle

/** ciphertext ‖ tag of `plain` under `key` and `nonce`. */
export function gcmSeal (key, nonce, plain) { return gcm(key, nonce).encrypt(plain) }

/** The plaintext of ciphertext ‖ tag; null when the tag does not verify. */
export async function gcmOpen (key, nonce, sealed) {
  if (subtle) {
    try {
      const k = await subtle.importKey('raw', key, 'AES-GCM', false, ['decrypt'])
      return new Uint8Array(await subtle.decrypt({ name: 'AES-GCM', iv: nonce }, k, sealed))
    } catch (err) {
      if (err?.name === 'OperationError') return null // the tag did not verify
      if (err?.name !== 'NotSupportedError') throw err
    }
  }
  return gcmOpenSync(key, nonce, sealed)
}

export function gcmOpenSync (key, nonce, sealed) {
  try { return gcm(key, nonce).decrypt(sealed) } catch { return null }
}

/** HMAC-SHA256(key, data). */
export function hmacSha256 (key, data) { return hmac(sha256, key, data) }

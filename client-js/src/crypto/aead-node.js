// AES-256-GCM and HMAC-SHA256 in Node (node:crypto, OpenSSL with AES-NI):
// the ciphers of private trees (FORMAT.md §12.8). The browser's twin is
// aead-web.js; package.json's "#aead" picks one.
import { createCipheriv, createDecipheriv, createHmac } from 'node:crypto'

const TAG = 16

/**
 * Encrypt `plain` under `key` (32 bytes) and `nonce` (12): ciphertext ‖ tag.
 * @param {Uint8Array} key @param {Uint8Array} nonce @param {Uint8Array} plain @returns {Uint8Array}
 */
export function gcmSeal (key, nonce, plain) {
  const c = createCipheriv('aes-256-gcm', key, nonce)
  const head = c.update(plain)
  const tail = c.final()
  const out = new Uint8Array(head.length + tail.length + TAG)
  out.set(head, 0); out.set(tail, head.length); out.set(c.getAuthTag(), head.length + tail.length)
  return out
}

/**
 * Decrypt ciphertext ‖ tag; null when the tag does not verify.
 * @param {Uint8Array} key @param {Uint8Array} nonce @param {Uint8Array} sealed @returns {Promise<Uint8Array|null>}
 */
export async function gcmOpen (key, nonce, sealed) { return gcmOpenSync(key, nonce, sealed) }

export function gcmOpenSync (key, nonce, sealed) {
  if (sealed.length < TAG) return null
  const d = createDecipheriv('aes-256-gcm', key, nonce)
  d.setAuthTag(sealed.subarray(sealed.length - TAG))
  const head = d.update(sealed.subarray(0, sealed.length - TAG))
  try {
    const tail = d.final()
    if (tail.length === 0) return new Uint8Array(head.buffer, head.byteOffset, head.length)
    const out = new Uint8Array(head.length + tail.length)
    out.set(head, 0); out.set(tail, head.length)
    return out
  } catch {
    return null
  }
}

/** HMAC-SHA256(key, data). @param {Uint8Array} key @param {Uint8Array} data @returns {Uint8Array} */
export function hmacSha256 (key, data) {
  const b = createHmac('sha256', key).update(data).digest()
  return new Uint8Array(b.buffer, b.byteOffset, b.length)
}

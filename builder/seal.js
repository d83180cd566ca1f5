// How a private tree's builder seals a blob (FORMAT.md §12.8): its inner
// bytes (as packBlob stores them) padded and encrypted under a key derived
// from the tree secret and the hash of those bytes, with node:crypto. The
// same on every thread: chunk workers seal what they cut, the main thread
// what it encodes.
import crypto from 'node:crypto'
import { sealBlob, fromHex } from 'rotree-client/format'
import { gcmSeal, hmacSha256 } from 'rotree-client/crypto'

const NODE = {
  hmac: hmacSha256,
  sha256: b => { const d = crypto.createHash('sha256').update(b).digest(); return new Uint8Array(d.buffer, d.byteOffset, d.length) },
  seal: gcmSeal
}

/**
 * A sealing function for a tree secret (64 hex), or null for a public tree.
 * @param {string|null|undefined} secret
 * @returns {((inner: Uint8Array) => { stored: Uint8Array, key: string }) | null}
 */
export function sealerOf (secret) {
  if (!secret) return null
  const s = fromHex(secret)
  return inner => sealBlob(inner, s, NODE)
}

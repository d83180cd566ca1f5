// SHA-256 in browsers: WebCrypto where it exists (secure contexts), else
// @noble/hashes (pages on plain http:// have no crypto.subtle).
import { sha256 as nobleSha256 } from '@noble/hashes/sha2.js'
import { toHex } from './format/bytes.js'

const subtle = globalThis.crypto?.subtle

export function sha256Sync (bytes) { return nobleSha256(bytes) }
export function sha256HexSync (bytes) { return toHex(nobleSha256(bytes)) }

/** @param {Uint8Array} bytes @returns {Promise<string>} 64 lowercase hex */
export async function sha256Hex (bytes) {
  if (subtle) return toHex(new Uint8Array(await subtle.digest('SHA-256', bytes)))
  return toHex(nobleSha256(bytes))
}

export const hashBackend = subtle ? 'webcrypto' : '@noble/hashes'

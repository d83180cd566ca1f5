// SHA-256 in browsers and workers: WebCrypto where it exists (secure contexts:
// https:// and localhost; native), else @noble/hashes (pure JavaScript, far
// slower: docs/BENCHMARKS.md P8 reads with each): pages on plain http:// other
// than localhost have no crypto.subtle at all.
// Which one is a property of the context the code runs in, fixed at load.
import { sha256 as nobleSha256 } from '@noble/hashes/sha2.js'
import { toHex } from '../format/bytes.js'

const subtle = globalThis.crypto?.subtle

export function sha256Sync (bytes) { return nobleSha256(bytes) }
export function sha256HexSync (bytes) { return toHex(nobleSha256(bytes)) }

/** @param {Uint8Array} bytes @returns {Promise<string>} 64 lowercase hex */
export async function sha256Hex (bytes) {
  if (subtle) return toHex(new Uint8Array(await subtle.digest('SHA-256', bytes)))
  return toHex(nobleSha256(bytes))
}

/** 'webcrypto' or '@noble/hashes': shown by the web app's verification panel. */
export const hashBackend = subtle ? 'webcrypto' : '@noble/hashes'

/**
 * An incremental SHA-256 (a whole file's, FORMAT.md §12.7): update(bytes)…,
 * then hex(). WebCrypto has no incremental digest, so this is @noble/hashes
 * everywhere; a whole buffer is faster through sha256Hex.
 */
export function createSha256 () {
  const h = nobleSha256.create()
  return { update (b) { h.update(b); return this }, hex: () => toHex(h.digest()) }
}

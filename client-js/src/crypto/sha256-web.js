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
 * Whole files up to this size, read as a stream, are hashed by WebCrypto once
 * their last byte is in (a copy of the file kept until then) rather than by
 * @noble/hashes piece by piece: WebCrypto is native and runs off the page's
 * thread, where the JavaScript hash held a streamed read to ~0.6× of the
 * same read without it (docs/BENCHMARKS.md P8). Larger files stream through
 * @noble/hashes, in memory that does not grow with them.
 */
export const BUFFERED_HASH_MAX = 64 * 1024 * 1024

/**
 * An incremental SHA-256 (a whole file's, FORMAT.md §12.7): update(bytes)…,
 * then hex(). WebCrypto has no incremental digest, so this is @noble/hashes
 * everywhere; a whole buffer is faster through sha256Hex.
 */
export function createSha256 () {
  const h = nobleSha256.create()
  return { update (b) { h.update(b); return this }, hex: () => toHex(h.digest()) }
}

/**
 * The hasher of a whole file the reader streams (tree.js): update(bytes)…,
 * then hex(), a promise. Given its `size` (at most BUFFERED_HASH_MAX) in a
 * context with WebCrypto, the bytes are copied aside and digested natively at
 * the end; else @noble/hashes hashes them as they come.
 * @param {number} size the number of bytes that will be given
 */
export function createFileSha256 (size) {
  if (subtle && Number.isSafeInteger(size) && size >= 0 && size <= BUFFERED_HASH_MAX) {
    const all = new Uint8Array(size)
    let n = 0
    return {
      update (b) {
        if (n + b.length > size) throw new RangeError(`createFileSha256: more than the ${size} bytes announced`)
        all.set(b, n); n += b.length
        return this
      },
      hex: () => sha256Hex(n === size ? all : all.subarray(0, n))
    }
  }
  const h = createSha256()
  return { update (b) { h.update(b); return this }, hex: async () => h.hex() }
}

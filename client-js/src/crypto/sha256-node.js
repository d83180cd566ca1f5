// SHA-256 in Node: node:crypto (OpenSSL: its rate is in docs/BENCHMARKS.md P2),
// many times as fast as @noble/hashes (P8's floor in a browser).
import { createHash } from 'node:crypto'

/** @param {Uint8Array} bytes @returns {Uint8Array} */
export function sha256Sync (bytes) {
  const d = createHash('sha256').update(bytes).digest()
  return new Uint8Array(d.buffer, d.byteOffset, d.length)
}

/** @param {Uint8Array} bytes @returns {string} 64 lowercase hex */
export function sha256HexSync (bytes) {
  return createHash('sha256').update(bytes).digest('hex')
}

/** Same contract as the browser variant: a promise of the hex digest. */
export async function sha256Hex (bytes) { return sha256HexSync(bytes) }

export const hashBackend = 'node:crypto'

/** An incremental SHA-256 (a whole file's, FORMAT.md §12.7): update(bytes)…, then hex(). */
export function createSha256 () {
  const h = createHash('sha256')
  return { update (b) { h.update(b); return this }, hex: () => h.digest('hex') }
}

/** The hasher of a whole file the reader streams (tree.js): hex() is a promise, as in browsers; node:crypto streams natively. */
export function createFileSha256 () {
  const h = createSha256()
  return { update (b) { h.update(b); return this }, hex: async () => h.hex() }
}

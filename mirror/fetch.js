// A blob from the mirrors, verified: capped at its exact stored size
// (storedSizeOf: a version-2 ref's `size` is its decoded length, FORMAT.md
// §12.6) and checked by hash (and decoded, for pages) before anything uses it (docs/TRUST.md rules 3
// and 4: any fault moves on to the next mirror). Which check applies is the
// kind the referencing parent says, as for a reader (verify.js VERIFIERS).
import { VERIFIERS, storedSizeOf } from 'rotree-client/verify'

/**
 * @param {import('rotree-client/fetch').Mirrors} mirrors
 * @param {{ hash: string, size: number, storedSize?: number, codec?: string }} ref
 * @param {'data'|'dir'|'cindex'} kind
 * @param {import('rotree-client/fetch').BufferPool|null} [pool] the body is read into
 *   a buffer of it, which the caller gives back (pool.lend(raw, 0)) once done with raw and value
 * @returns {Promise<{ value: any, raw: Uint8Array }>} value: decoded for dir/cindex (and a
 *   compressed chunk); raw: the stored bytes, what DIR/h keeps
 */
export async function fetchVerified (mirrors, ref, kind, pool = null) {
  let raw
  const value = await mirrors.fetch('h/' + ref.hash, storedSizeOf(ref), async bytes => {
    const v = await VERIFIERS[kind](bytes, ref)
    raw = bytes
    return v
  }, undefined, { pool })
  return { value, raw }
}

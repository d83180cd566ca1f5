// A blob from the mirrors, verified: capped at its exact size and checked by
// hash (and decoded, for pages) before anything uses it (docs/TRUST.md rules 3
// and 4: any fault moves on to the next mirror). Which check applies is the
// kind the referencing parent says, as for a reader (verify.js VERIFIERS).
import { VERIFIERS } from 'rotree-client/verify'

/**
 * @param {import('rotree-client/src/mirrors.js').Mirrors} mirrors
 * @param {{ hash: string, size: number }} ref
 * @param {'data'|'dir'|'cindex'} kind
 * @returns {Promise<{ value: any, raw: Uint8Array }>} value: decoded for dir/cindex
 */
export async function fetchVerified (mirrors, ref, kind) {
  let raw
  const value = await mirrors.fetch('h/' + ref.hash, ref.size, async bytes => {
    const v = await VERIFIERS[kind](bytes, ref)
    raw = bytes
    return v
  })
  return { value, raw }
}

// Blobs of a mirror folder: read from DIR/h (capped, so a corrupt multi-gigabyte
// file under a blob's name is not slurped) and fetched from mirrors. Whether
// bytes are good is decided only by verify.js (STYLE.md habit 3): here we pick
// the function by the kind the referencing parent says, as a reader does.
import fs from 'node:fs/promises'
import path from 'node:path'
import { verifyBlob, verifyDirPage, verifyChunkIndex } from 'rotree-client/verify'

export const VERIFY = { data: verifyBlob, dir: verifyDirPage, cindex: verifyChunkIndex }

/** Codes verifyBlob gives for bytes that are not the blob: a local copy with them is damaged. */
export const DAMAGE_CODES = new Set(['ROTREE_HASH_MISMATCH', 'ROTREE_TRUNCATED', 'ROTREE_TOO_LARGE'])

export const HEX64 = /^[0-9a-f]{64}$/

export function blobPath (dir, hash) { return path.join(dir, 'h', hash) }

/**
 * The bytes of DIR/h/<hash>, at most `cap` + 1 of them (one more than expected
 * is enough for verifyBlob to call it too large); null when the file is absent.
 */
export async function readLocal (dir, hash, cap) {
  let fh
  try { fh = await fs.open(blobPath(dir, hash), 'r') } catch (err) { if (err.code === 'ENOENT') return null; throw err }
  try {
    const buf = Buffer.allocUnsafe(cap + 1)
    let n = 0
    for (;;) {
      const { bytesRead } = await fh.read(buf, n, buf.length - n, n)
      if (bytesRead === 0) break
      n += bytesRead
      if (n === buf.length) break
    }
    return new Uint8Array(buf.buffer, buf.byteOffset, n)
  } finally { await fh.close() }
}

/**
 * Fetch one blob from the mirrors (trust rules 3 and 4: capped at ref.size,
 * verified before use, the next mirror on any fault).
 * @param {import('rotree-client/src/mirrors.js').Mirrors} mirrors
 * @param {{ hash: string, size: number }} ref
 * @param {'data'|'dir'|'cindex'} kind
 * @returns {Promise<{ value: any, raw: Uint8Array }>} value: decoded for dir/cindex
 */
export async function fetchVerified (mirrors, ref, kind) {
  let raw
  const value = await mirrors.fetch('h/' + ref.hash, ref.size, async bytes => {
    const v = await VERIFY[kind](bytes, ref)
    raw = bytes
    return v
  })
  return { value, raw }
}

// FORMAT.md §12.6 in browsers: DecompressionStream('deflate-raw'), read
// piece by piece into a buffer of exactly the recorded size, so a
// decompression bomb is cut off at that size, never buffered whole.
//
// The stored bytes go in PIECE bytes at a time, each written only once the
// reader has asked for more: a decompression stream may inflate one written
// piece in one go and queue all its output before the reader sees any (the
// standard does not bound it), so feeding a whole 1 MiB bomb at once could
// queue about 1 GB before the first read could stop it. Deflate expands at
// most ~1032:1, so with 4 KiB pieces at most ~4 MiB is ever queued past the
// bound.
import { BadFormatError } from '../errors.js'

const PIECE = 4096

/**
 * @param {Uint8Array} stored bytes whose hash already verified
 * @param {'none'|'deflate-raw'} codec @param {number} decodedSize
 * @returns {Promise<Uint8Array>}
 */
export async function decodeBlob (stored, codec, decodedSize) {
  if (codec === 'none') {
    if (stored.length !== decodedSize) throw new BadFormatError(`an uncompressed blob of ${stored.length} bytes, its parent records ${decodedSize}`)
    return stored
  }
  if (codec !== 'deflate-raw') throw new BadFormatError(`unknown codec ${JSON.stringify(codec)}`)
  const out = new Uint8Array(decodedSize)
  let n = 0
  const ds = new DecompressionStream('deflate-raw')
  const writer = ds.writable.getWriter()
  const reader = ds.readable.getReader()
  // a write settles once the stream has taken the piece, which it does only
  // while a read is waiting (the readable side holds nothing ahead)
  const feed = (async () => {
    for (let o = 0; o < stored.length; o += PIECE) await writer.write(stored.subarray(o, o + PIECE))
    await writer.close()
  })()
  feed.catch(() => {}) // a corrupt stream fails both sides; the read below reports it
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      if (n + value.length > decodedSize) throw new BadFormatError(`blob decodes to more than the ${decodedSize} bytes its parent records`)
      out.set(value, n); n += value.length
    }
    await feed
  } catch (err) {
    if (err instanceof BadFormatError) throw err
    // a corrupt stream, or bytes after its end (the browser reports both as a TypeError)
    throw new BadFormatError(`blob does not decode as ${codec}: ${err.message}`, { cause: err })
  } finally {
    reader.cancel().catch(() => {})
    writer.abort().catch(() => {})
  }
  if (n !== decodedSize) throw new BadFormatError(`blob decodes to ${n} bytes, its parent records ${decodedSize}`)
  return out
}

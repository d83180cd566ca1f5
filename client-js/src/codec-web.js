// FORMAT.md §12.6 in browsers: DecompressionStream('deflate-raw'), read
// piece by piece into a buffer of exactly the recorded size, so a
// decompression bomb is cut off at that size, never buffered whole.
import { BadFormatError } from './errors.js'

/**
 * @param {Uint8Array} stored bytes whose hash already verified
 * @param {'none'|'deflate-raw'} codec @param {number} decodedSize
 * @returns {Promise<Uint8Array>}
 */
export async function decodeBlob (stored, codec, decodedSize) {
  if (codec === 'none') return stored
  if (codec !== 'deflate-raw') throw new BadFormatError(`unknown codec ${JSON.stringify(codec)}`)
  const out = new Uint8Array(decodedSize)
  let n = 0
  const reader = new Blob([stored]).stream().pipeThrough(new DecompressionStream('deflate-raw')).getReader()
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      if (n + value.length > decodedSize) throw new BadFormatError(`blob decodes to more than the ${decodedSize} bytes its parent records`)
      out.set(value, n); n += value.length
    }
  } catch (err) {
    if (err instanceof BadFormatError) throw err
    // a corrupt stream, or bytes after its end (the browser reports both as a TypeError)
    throw new BadFormatError(`blob does not decode as ${codec}: ${err.message}`, { cause: err })
  } finally {
    reader.cancel().catch(() => {})
  }
  if (n !== decodedSize) throw new BadFormatError(`blob decodes to ${n} bytes, its parent records ${decodedSize}`)
  return out
}

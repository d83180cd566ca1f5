// FORMAT.md §12.6 in Node: a verified blob's stored bytes decoded by its
// codec into exactly the size its parent recorded. node:zlib's
// maxOutputLength stops a decompression bomb before it allocates more than
// that; a stream that ends early, runs past the size or leaves bytes unread
// is ROTREE_BAD_FORMAT (the publisher signed bytes that do not decode).
//
// It also packs blobs for builders (packBlob): FORMAT.md §12.6's rule for
// when a blob is stored compressed, with the level pinned so that the same
// input gives the same stored bytes (FORMAT.md §1.6).
import { inflateRaw, inflateRawSync, deflateRawSync } from 'node:zlib'
import { BadFormatError } from '../errors.js'

/** The deflate level builders use (FORMAT.md §12.6). */
export const DEFLATE_LEVEL = 2

/** A blob at least this long is first tried on its first SAMPLE bytes (packBlob). */
export const SAMPLE_FROM = 32 * 1024
export const SAMPLE = 8 * 1024

/**
 * How a builder stores `bytes`: deflate-raw at DEFLATE_LEVEL when that saves
 * at least 1/32 of the size and at least 64 bytes, else as they are
 * (incompressible chunks stay raw, and ranged reads of them need no decoding).
 *
 * A blob of SAMPLE_FROM bytes or more whose first SAMPLE bytes do not shrink
 * by 1/32 at level 1 is stored raw without deflating the rest: already
 * compressed data (.gz, images, archives) costs one small deflate instead of
 * a whole one, for hardly more bytes stored (docs/BENCHMARKS.md P6, notes).
 * The decision depends on the bytes alone, so the stored bytes stay a
 * function of the input (FORMAT.md §1.6).
 * @param {Uint8Array} bytes
 * @returns {{ stored: Uint8Array, codec: 'none'|'deflate-raw' }}
 */
export function packBlob (bytes) {
  if (bytes.length >= SAMPLE_FROM && !pays(SAMPLE, deflateRawSync(bytes.subarray(0, SAMPLE), { level: 1 }).length)) return { stored: bytes, codec: 'none' }
  const z = deflateRawSync(bytes, { level: DEFLATE_LEVEL })
  if (pays(bytes.length, z.length)) return { stored: new Uint8Array(z.buffer, z.byteOffset, z.length), codec: 'deflate-raw' }
  return { stored: bytes, codec: 'none' }
}

function pays (size, packed) {
  const saved = size - packed
  return saved >= 64 && saved * 32 >= size
}

/**
 * @param {Uint8Array} stored bytes whose hash already verified
 * @param {'none'|'deflate-raw'} codec @param {number} decodedSize
 * @returns {Promise<Uint8Array>}
 */
export async function decodeBlob (stored, codec, decodedSize) {
  if (codec !== 'deflate-raw' || decodedSize < ASYNC_FROM) return decodeBlobSync(stored, codec, decodedSize)
  // a large blob inflates on libuv's thread pool, off the thread that
  // receives, hashes and writes
  const out = await new Promise((resolve, reject) => inflateRaw(stored, inflateOptions(decodedSize), (err, r) => err ? reject(decodeError(err, codec, decodedSize)) : resolve(r)))
  return checkDecoded(out, stored, codec, decodedSize)
}

/** Decoded size from which decodeBlob() inflates on the thread pool. */
const ASYNC_FROM = 32 * 1024

function inflateOptions (decodedSize) {
  // one output buffer of the recorded size (and a byte to spare, so a stream
  // that runs past it shows without a second buffer): node:zlib's default
  // 16 KiB pieces, joined at the end, cost more CPU (docs/BENCHMARKS.md P10)
  return { maxOutputLength: decodedSize, chunkSize: Math.max(decodedSize + 1, 64), info: true }
}

function decodeError (err, codec, decodedSize) {
  if (err.code === 'ERR_BUFFER_TOO_LARGE') return new BadFormatError(`blob decodes to more than the ${decodedSize} bytes its parent records`, { cause: err })
  return new BadFormatError(`blob does not decode as ${codec}: ${err.message}`, { cause: err })
}

function checkDecoded (out, stored, codec, decodedSize) {
  if (out.engine.bytesWritten !== stored.length) throw new BadFormatError(`blob has ${stored.length - out.engine.bytesWritten} bytes after its ${codec} stream`)
  if (out.buffer.length !== decodedSize) throw new BadFormatError(`blob decodes to ${out.buffer.length} bytes, its parent records ${decodedSize}`)
  const b = out.buffer
  return new Uint8Array(b.buffer, b.byteOffset, b.length)
}

export function decodeBlobSync (stored, codec, decodedSize) {
  if (codec === 'none') {
    if (stored.length !== decodedSize) throw new BadFormatError(`an uncompressed blob of ${stored.length} bytes, its parent records ${decodedSize}`)
    return stored
  }
  if (codec !== 'deflate-raw') throw new BadFormatError(`unknown codec ${JSON.stringify(codec)}`)
  let out
  try {
    out = inflateRawSync(stored, inflateOptions(decodedSize))
  } catch (err) {
    throw decodeError(err, codec, decodedSize)
  }
  return checkDecoded(out, stored, codec, decodedSize)
}

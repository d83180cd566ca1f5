// Hand-written declarations for rotree-client/codec in browsers and bundlers
// (src/format/codec-web.js): a version-2 blob's verified stored bytes decoded
// by its codec (FORMAT.md §12.6). Node's variant also packs blobs for
// builders: codec-node.d.ts.
import type { Codec } from './format.js'

/**
 * Stored bytes (whose hash already verified) decoded to exactly `decodedSize`
 * bytes; a stream that ends early, runs past that size or leaves bytes over
 * is ROTREE_BAD_FORMAT.
 */
export declare function decodeBlob (stored: Uint8Array, codec: Codec, decodedSize: number): Promise<Uint8Array>

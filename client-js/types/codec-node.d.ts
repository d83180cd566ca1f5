// Hand-written declarations for rotree-client/codec under Node's conditions
// (src/format/codec-node.js): what every platform has (codec.d.ts), and how a
// builder packs blobs (FORMAT.md §12.6), with the level pinned so that the
// same input gives the same stored bytes (FORMAT.md §1.6).
import type { Codec } from './format.js'

export * from './codec.js'

/** The deflate level builders use. */
export declare const DEFLATE_LEVEL: number
/** A blob at least SAMPLE_FROM bytes long is first tried on its first SAMPLE bytes. */
export declare const SAMPLE_FROM: number
export declare const SAMPLE: number
/** How a builder stores `bytes`: deflate-raw when that saves enough, else as they are. */
export declare function packBlob (bytes: Uint8Array): { stored: Uint8Array, codec: Codec }
/** decodeBlob on this thread. */
export declare function decodeBlobSync (stored: Uint8Array, codec: Codec, decodedSize: number): Uint8Array

// FORMAT.md §12.6: how a blob's stored bytes become the bytes its parent
// describes. The handle is always the SHA-256 of the stored bytes, so a
// mirror checks blobs with `sha256sum` and needs no codec; a reader hashes
// first, then decodes, with the output bounded by the decoded size the
// (verified) parent recorded.
//
// In binary refs the codec is one byte: its id below. Values not listed are
// ROTREE_BAD_FORMAT. Bit 4 (0x10) of that byte marks a sealed blob of a private
// tree (FORMAT.md §12.8): the low bits are then the codec of the bytes inside
// the seal, and a decoded size and a key follow (format/ref.js).
export const CODECS = ['none', 'deflate-raw']
export const CODEC_ID = Object.freeze({ none: 0, 'deflate-raw': 1 })
export const CODEC_ENCRYPTED_BIT = 0x10

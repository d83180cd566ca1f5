// The wire format, encode and decode side by side (FORMAT.md). Builders import
// the encoders; readers should go through verify.js, which decodes only bytes
// whose hash it has checked.
export * as limits from './limits.js'
export { decodeFsinfo, encodeFsinfo, fsinfoMessage } from './fsinfo.js'
export { decodeDirPage, encodeDirPage, buildDirectory, encodeEntry, LEAF_MAGIC, INDEX_MAGIC } from './dirpage.js'
export { decodeChunkIndex, encodeChunkIndex, buildFileBody, CINDEX_MAGIC } from './chunkindex.js'
export { readEntry, writeEntry, entryRefs, checkName, KIND } from './entry.js'
export { nextCut, chunkLengths } from './cdc.js'
export { toHex, fromHex, compareBytes } from './bytes.js'
export { weakKeyReason } from './public-key.js'
export { MAX_FSINFO_V2 } from './fsinfo-v2.js'

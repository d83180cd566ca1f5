// rotree-client/format: the wire format, encode and decode side by side
// (FORMAT.md). Builders import the encoders; readers go through trust/
// (verify.js), which decodes only bytes whose hash it has checked. Pure: no
// I/O, the same in Node and browsers. The codecs of format version 2's blobs
// differ by platform: rotree-client/codec.
export * as limits from './limits.js'
export {
  FORMAT_VERSION, HASH_LEN, MAX_BLOB, MAX_NAME, MAX_SYMLINK, MAX_PATH, MAX_DEPTH, MAX_SYMLINK_HOPS, MAX_DIRECT_CHUNKS,
  MAX_INDEX_FANOUT, MAX_INDEX_LEVELS, MAX_PAGE_ENTRIES, MAX_FILE_SIZE, MAX_FSINFO, CHUNK_MIN, CHUNK_AVG, CHUNK_MAX,
  INLINE_MAX, INLINE_MAX_V2, inlineMax, PAGE_MIN, PAGE_MAX, PAGE_CUT_BITS, MAX_KEYRING, MAX_READERS
} from './limits.js'
export { toHex, fromHex, utf8, decodeUtf8, concat, compareBytes, equalBytes, Writer, Reader } from './bytes.js'
export { nextCut, LEAD_CHUNK, LEAD_MIN_FILE, leadCut, chunkLengths } from './cdc.js'
export { GEAR } from './gear.js'
export { groupByContent, hashCut } from './group.js'
export { VERSIONS, versionOf, readRef, writeRef, refOf, refOfReleaseRoot, keylessRoot } from './ref.js'
export { KIND, checkName, writeEntry, readEntry, entryRefs } from './entry.js'
export { LEAF_MAGIC, INDEX_MAGIC, decodeDirPage, encodeDirPage, encodeLeaf, encodeIndex, encodeEntry, buildDirectory } from './dirpage.js'
export { CINDEX_MAGIC, decodeChunkIndex, encodeChunkIndex, buildFileBody } from './chunkindex.js'
export { CODECS, CODEC_ID, CODEC_ENCRYPTED_BIT } from './codec-names.js'
export { fsinfoMessage, decodeFsinfo, encodeFsinfo } from './fsinfo.js'
// format version 2 (FORMAT.md §12)
export {
  HEX64, HEX128, MAX_SIGNATURES, MAX_ROLE_KEYS, NAME_RE, parseObject, object, hex64, publicKey, safeInt, isoTime, isoString,
  treeName, signatures, keyList, dec, jsonText
} from './signed-doc.js'
export { TRUST_TYPE, MAX_TRUST_DOC, MAX_WITNESSES, ROLES, trustMessage, decodeTrustDoc, encodeTrustDoc, witnessList } from './trust-doc.js'
export { MAX_FSINFO_V2, releaseMessage, fsinfoV2Message, decodeRelease, fsinfoVersion, decodeFsinfoV2, encodeFsinfoV2 } from './fsinfo-v2.js'
export { weakKeyReason } from './public-key.js'
// private trees (FORMAT.md §12.8)
export { TAG_LEN, NONCE, padme, MAX_SEALED, sealedSize, pad, unpad, blobKey, openSealed, sealBlob } from './seal.js'
export {
  MLEAF_MAGIC, MINDEX_MAGIC, decodeManifestPage, encodeManifestLeaf, encodeManifestIndex, buildManifest,
  checkManifestPlacement, manifestChildExpectation
} from './manifest.js'

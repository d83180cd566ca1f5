// rotree-client/internal: what the rest of this repository (builder, gateway,
// mirror, CLI, tests) uses from inside the package, in one place, so no
// caller reaches into src/ by file name. Not a stable API for other
// projects: names here follow the code. Node and browsers alike (the
// platform-specific pieces come through #platform and #sha256).

// the wire format (FORMAT.md), encode and decode
export * from './format/limits.js'
export * as limits from './format/limits.js'
export { Reader, Writer, toHex, fromHex, utf8, decodeUtf8, compareBytes, equalBytes, concat } from './format/bytes.js'
export { fsinfoMessage, decodeFsinfo, encodeFsinfo } from './format/fsinfo.js'
export { decodeDirPage, encodeDirPage, buildDirectory, encodeLeaf, encodeIndex, encodeEntry, LEAF_MAGIC, INDEX_MAGIC } from './format/dirpage.js'
export { decodeChunkIndex, encodeChunkIndex, buildFileBody, CINDEX_MAGIC } from './format/chunkindex.js'
export { readRef, writeRef, refOf, refOfReleaseRoot, VERSIONS } from './format/ref.js'
export { readEntry, writeEntry, entryRefs, checkName, KIND } from './format/entry.js'
export { groupByContent, hashCut } from './format/group.js'
export { nextCut, chunkLengths } from './format/cdc.js'
export { GEAR } from './format/gear.js'
// format version 2 (FORMAT.md §12)
export { MAX_FSINFO_V2, releaseMessage, fsinfoV2Message, decodeRelease, fsinfoVersion, decodeFsinfoV2, encodeFsinfoV2 } from './format/fsinfo-v2.js'
export { TRUST_TYPE, MAX_TRUST_DOC, ROLES, trustMessage, decodeTrustDoc, encodeTrustDoc } from './format/trust-doc.js'
export { CODECS, CODEC_ID, CODEC_ENCRYPTED_BIT } from './format/codec-names.js'
export * as roles from './trust/roles.js'
// a version-2 blob's stored bytes decoded by its codec (builders pack blobs
// with packBlob from rotree-client/src/codec-node.js, Node only)
export { decodeBlob } from '#codec'

// keys and hashes
export { generateKeyPair, publicKeyOf, sign, verifySignature } from '#ed25519'
export { sha256Sync, sha256HexSync, sha256Hex, createSha256 } from '#sha256'

// the reader's machinery
export { LRU, limiter } from './cache.js'
export { walkTree } from './walk.js'
export { Mirrors } from './mirrors.js'
export { SeqStore, checkRecord } from './state.js'
export { parseAddress, mirrorUrl } from './address.js'
export { createTransport, defaultStateDir, stateLocation } from '#platform'

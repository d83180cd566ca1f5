// rotree-client/tlog: a transparency log as C2SP specifies it (tlog-tiles,
// tlog-checkpoint, signed-note, tlog-cosignature, tlog-witness, tlog-proof), on RFC 6962 / RFC 9162 Merkle trees. It
// depends on nothing of rotree but the platform's SHA-256 and Ed25519
// (package.json "imports"); rotree's use of it is docs/FORMAT.md §13.
export {
  HASH_SIZE, TlogError, leafHash, nodeHash, emptyHash, equalHash, storedHashIndex, splitStoredHashIndex,
  storedHashCount, storedHashes, storedHashesForLeafHash, arrayHashReader, treeHash, inclusionProof,
  consistencyProof, verifyInclusion, verifyConsistency
} from './hash.js'
export {
  TILE_HEIGHT, ENTRIES_LEVEL, MAX_ENTRY, tileForIndex, hashFromTile, newTiles, tilesForSize, readTileData,
  tilePath, bundleOf, parseTilePath, encodeBundle, decodeBundle, tileHashReader, treeHashFromTiles
} from './tile.js'
export {
  toHex, fromHex, encodeBase64, decodeBase64, isValidKeyName, noteKeyId, encodeVerifierKey, parseVerifierKey,
  verifierOf, signerOf, signNote, openNote
} from './note.js'
export { formatCheckpoint, parseCheckpoint } from './checkpoint.js'
export {
  ALG_COSIGNATURE_V1, cosignatureKeyId, cosignedMessage, encodeCosignatureVerifierKey, cosignatureVerifierOf,
  parseCosignatureVerifierKey, cosignerOf, cosignatureLine, cosignatureTime, verifyCosignatures
} from './cosignature.js'
export {
  MAX_PROOF_LINES, SIZE_CONTENT_TYPE, formatAddCheckpoint, parseAddCheckpoint, WitnessRefusal, checkAddCheckpoint
} from './witness.js'
export { TLOG_PROOF_HEADER, formatTlogProof, parseTlogProof, verifyTlogProof } from './proof.js'

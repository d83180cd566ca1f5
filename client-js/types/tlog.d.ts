// Hand-written declarations for rotree-client/tlog (src/tlog/index.js): a
// C2SP transparency log (tlog-tiles, tlog-checkpoint, signed-note) on
// RFC 6962 Merkle trees. Hashes are 32-byte Uint8Arrays; keys are hex as in
// rotree-client/crypto.

export type Hash = Uint8Array
/** Reads stored hashes by their stored hash index (storedHashIndex). */
export type HashReader = (indexes: number[]) => Hash[]
/** A tile of height H at level L (−1: entry bundle), index N, width W hashes. */
export interface Tile { H: number, L: number, N: number, W: number }
export interface Checkpoint { origin: string, size: number, hash: Hash, extensions: string[] }
export interface NoteVerifier { name: string, id: number, publicKey?: string, verify (msg: Uint8Array, sig: Uint8Array): boolean }
export interface NoteSigner { name: string, id: number, sign (msg: Uint8Array): Uint8Array }
export interface NoteSignature { name: string, id: number, base64: string }
export interface Note { text: string, sigs: NoteSignature[], unverified: NoteSignature[] }

export declare const HASH_SIZE: 32
export declare class TlogError extends Error { note?: Note }
export declare function leafHash (entry: Uint8Array): Hash
export declare function nodeHash (left: Hash, right: Hash): Hash
export declare function emptyHash (): Hash
export declare function equalHash (a: Uint8Array, b: Uint8Array): boolean
export declare function storedHashIndex (level: number, n: number): number
export declare function splitStoredHashIndex (index: number): { level: number, n: number }
export declare function storedHashCount (size: number): number
export declare function storedHashes (n: number, entry: Uint8Array, read: HashReader): Hash[]
export declare function storedHashesForLeafHash (n: number, leaf: Hash, read: HashReader): Hash[]
export declare function arrayHashReader (stored: Hash[]): HashReader
export declare function treeHash (size: number, read: HashReader): Hash
export declare function inclusionProof (size: number, index: number, read: HashReader): Hash[]
export declare function consistencyProof (size: number, oldSize: number, read: HashReader): Hash[]
/** Throws TlogError when the proof does not hold. */
export declare function verifyInclusion (proof: Hash[], size: number, index: number, leaf: Hash, root: Hash): void
/** Throws TlogError when the proof does not hold. */
export declare function verifyConsistency (proof: Hash[], size: number, oldSize: number, root: Hash, oldRoot: Hash): void

export declare const TILE_HEIGHT: 8
export declare const ENTRIES_LEVEL: -1
export declare const MAX_ENTRY: 65535
export declare function tileForIndex (h: number, index: number): { tile: Tile, start: number, end: number }
export declare function hashFromTile (t: Tile, data: Uint8Array, index: number): Hash
export declare function newTiles (h: number, oldSize: number, newSize: number): Tile[]
export declare function tilesForSize (h: number, size: number): Tile[]
export declare function readTileData (t: Tile, read: HashReader): Uint8Array
export declare function tilePath (t: Tile): string
export declare function bundleOf (t: Tile): Tile
export declare function parseTilePath (path: string, h?: number): Tile
export declare function encodeBundle (entries: Uint8Array[]): Uint8Array
export declare function decodeBundle (bytes: Uint8Array, count?: number): Uint8Array[]
export declare function tileHashReader (size: number, tiles: Map<string, Uint8Array>, h?: number): HashReader
export declare function treeHashFromTiles (size: number, tiles: Map<string, Uint8Array>, h?: number): Hash

export declare function toHex (bytes: Uint8Array): string
export declare function fromHex (hex: string): Uint8Array
export declare function encodeBase64 (bytes: Uint8Array): string
/** Canonical padded base64 only; null otherwise. */
export declare function decodeBase64 (text: string): Uint8Array | null
export declare function isValidKeyName (name: string): boolean
export declare function noteKeyId (name: string, publicKey: Uint8Array): number
export declare function encodeVerifierKey (name: string, publicKey: Uint8Array | string): string
export declare function parseVerifierKey (vkey: string): NoteVerifier & { publicKey: string }
export declare function verifierOf (name: string, publicKey: string): NoteVerifier & { publicKey: string }
export declare function signerOf (name: string, key: { secretKey: string, publicKey: string }): NoteSigner
export declare function signNote (text: string, signers: NoteSigner[]): string
export declare function openNote (msg: Uint8Array | string, verifiers: NoteVerifier[]): Note

export declare function formatCheckpoint (c: { origin: string, size: number, hash: Hash, extensions?: string[] }): string
export declare function parseCheckpoint (text: string): Checkpoint

/** C2SP tlog-cosignature, Ed25519 cosignature/v1 (key type 0x04). */
export declare const ALG_COSIGNATURE_V1: 4
export declare function cosignatureKeyId (name: string, publicKey: Uint8Array): number
export declare function cosignedMessage (text: string | Uint8Array, timestamp: number): Uint8Array
export declare function encodeCosignatureVerifierKey (name: string, publicKey: Uint8Array | string): string
export declare function cosignatureVerifierOf (name: string, publicKey: string): NoteVerifier & { publicKey: string }
export declare function parseCosignatureVerifierKey (vkey: string): NoteVerifier & { publicKey: string }
/** A note signer whose signature is timestamp ‖ Ed25519 signature; now() in seconds. */
export declare function cosignerOf (name: string, key: { secretKey: string, publicKey: string }, now?: () => number): NoteSigner
export declare function cosignatureLine (text: string, cosigner: NoteSigner): string
export declare function cosignatureTime (base64: string): number | null
export declare function verifyCosignatures (note: Uint8Array | string, cosigners: NoteVerifier[]): (NoteSignature & { time: number | null })[]

/** C2SP tlog-witness add-checkpoint. */
export declare const MAX_PROOF_LINES: 63
export declare const SIZE_CONTENT_TYPE: 'text/x.tlog.size'
export interface AddCheckpoint { oldSize: number, proof: Hash[], note: string }
export declare function formatAddCheckpoint (r: AddCheckpoint): string
export declare function parseAddCheckpoint (body: string | Uint8Array): AddCheckpoint
export declare class WitnessRefusal extends TlogError { status: number, size?: number }
export declare function checkAddCheckpoint (req: AddCheckpoint, verifiersFor: (origin: string) => NoteVerifier[] | null,
  latest: (origin: string) => { size: number, hash: Hash } | null): { origin: string, size: number, hash: Hash, text: string }
/** C2SP tlog-proof: an offline-verifiable proof of one entry's inclusion, with the checkpoint verbatim. */
export declare const TLOG_PROOF_HEADER: 'c2sp.org/tlog-proof@v1'
export interface TlogProof { extra: Uint8Array | null, index: number, proof: Hash[], checkpoint: string }
export declare function formatTlogProof (p: { index: number, proof: Hash[], checkpoint: Uint8Array | string, extra?: Uint8Array }): string
export declare function parseTlogProof (input: Uint8Array | string): TlogProof
export declare function verifyTlogProof (p: { index: number, proof: Hash[] }, leaf: Hash, checkpoint: { size: number, hash: Hash }): void

// Hand-written declarations for rotree-client/internal (src/internal.js):
// what the rest of the rotree repository uses from inside the package. Not a
// stable API; typed as far as the public declarations go, loosely beyond.
import type { Ref, DirPage, ChunkIndex, Entry } from './format.js'
import type { Transport } from './tree.js'

export {
  limits, decodeFsinfo, encodeFsinfo, fsinfoMessage, decodeDirPage, encodeDirPage, buildDirectory, encodeEntry, LEAF_MAGIC, INDEX_MAGIC,
  decodeChunkIndex, encodeChunkIndex, buildFileBody, CINDEX_MAGIC, readEntry, writeEntry, entryRefs, checkName, KIND,
  nextCut, chunkLengths, toHex, fromHex, compareBytes
} from './format.js'
export { parseAddress, mirrorUrl, walkTree, SeqStore } from './tree.js'

export declare const FORMAT_VERSION: number
export declare const HASH_LEN: number
export declare const MAX_BLOB: number
export declare const MAX_NAME: number
export declare const MAX_SYMLINK: number
export declare const MAX_PATH: number
export declare const MAX_DEPTH: number
export declare const MAX_SYMLINK_HOPS: number
export declare const MAX_DIRECT_CHUNKS: number
export declare const MAX_INDEX_FANOUT: number
export declare const MAX_INDEX_LEVELS: number
export declare const MAX_PAGE_ENTRIES: number
export declare const MAX_FILE_SIZE: number
export declare const MAX_FSINFO: number
export declare const CHUNK_MIN: number
export declare const CHUNK_AVG: number
export declare const CHUNK_MAX: number
export declare const INLINE_MAX: number
export declare const PAGE_MIN: number
export declare const PAGE_MAX: number
export declare const PAGE_CUT_BITS: number

export declare class Writer {
  constructor (size?: number)
  byte (v: number): void
  bytes (b: Uint8Array): void
  uint (v: number): void
  sint (v: number): void
  lbytes (b: Uint8Array): void
  readonly size: number
  result (): Uint8Array
}
export declare class Reader {
  constructor (buf: Uint8Array)
  pos: number
  readonly done: boolean
  byte (): number
  bytes (n: number): Uint8Array
  uint (max?: number): number
  sint (): number
  lbytes (max?: number): Uint8Array
  end (): void
  fail (what: string): never
}
export declare const utf8: { encode (s: string): Uint8Array }
export declare function decodeUtf8 (b: Uint8Array): string
export declare function equalBytes (a: Uint8Array, b: Uint8Array): boolean
export declare function concat (parts: Uint8Array[]): Uint8Array
export declare function encodeLeaf (encodedEntries: Uint8Array[], o?: { version?: 1 | 2 }): Uint8Array
export declare function encodeIndex (level: number, children: Array<Ref & { firstName: string, entries: number }>, o?: { version?: 1 | 2 }): Uint8Array
/** FORMAT.md §1.3, §12.6: one blob reference in a binary blob, read or written (src/format/ref.js). */
export declare function readRef (r: Reader, version: 1 | 2, max: number): Ref
export declare function writeRef (w: Writer, ref: Ref, version: 1 | 2): void
export declare function refOf (c: Ref): Ref
export declare function refOfReleaseRoot (root: { hash: string, size: number, codec: string, decodedSize: number }): Ref
export declare const VERSIONS: readonly number[]
export declare function groupByContent<T> (items: T[], o: { size: (t: T) => number, cut: (t: T) => boolean, min: number, max: number, maxCount: number }): T[][]
export declare function hashCut (hash: string, bits: number): boolean
export declare const GEAR: Uint32Array | number[]

// format version 2 (FORMAT.md §12): see src/format/fsinfo-v2.js, trust-doc.js and trust/roles.js
export declare const MAX_FSINFO_V2: number
export declare function releaseMessage (...args: any[]): Uint8Array
export declare function fsinfoV2Message (...args: any[]): Uint8Array
export declare function decodeRelease (...args: any[]): any
export declare function fsinfoVersion (input: Uint8Array | string): number
export declare function decodeFsinfoV2 (...args: any[]): any
export declare function encodeFsinfoV2 (...args: any[]): any
export declare const TRUST_TYPE: string
export declare const MAX_TRUST_DOC: number
export declare const ROLES: readonly string[]
export declare function trustMessage (...args: any[]): Uint8Array
export declare function decodeTrustDoc (...args: any[]): any
export declare function encodeTrustDoc (...args: any[]): any
export declare const roles: Record<string, any>
export declare const CODECS: readonly string[]
export declare const CODEC_ID: Readonly<Record<string, number>>
export declare const CODEC_ENCRYPTED_BIT: number
/** A version-2 blob's verified stored bytes decoded to exactly decodedSize bytes (FORMAT.md §12.6). */
export declare function decodeBlob (stored: Uint8Array, codec: string, decodedSize: number): Promise<Uint8Array>

export declare function generateKeyPair (): { secretKey: string, publicKey: string }
export declare function publicKeyOf (secretKey: string): string
export declare function sign (message: Uint8Array, secretKey: string): string
export declare function verifySignature (sig: string, message: Uint8Array, publicKey: string): boolean
export declare function sha256Sync (bytes: Uint8Array): Uint8Array
export declare function sha256HexSync (bytes: Uint8Array): string
export declare function sha256Hex (bytes: Uint8Array): Promise<string>
/** An incremental SHA-256. */
export declare function createSha256 (): { update (b: Uint8Array): unknown, hex (): string }

/** A byte-bounded LRU: set(key, value, bytes) charges `bytes`. */
export declare class LRU<V = unknown> {
  constructor (maxBytes: number)
  get (key: string): V | undefined
  set (key: string, value: V, size: number): void
  stats (): { entries: number, bytes: number, maxBytes: number, hits: number, misses: number }
}
/** At most n of the returned function's tasks run at once. */
export declare function limiter (n: number): <T>(fn: () => Promise<T>) => Promise<T>
/** Mirrors in turn (docs/TRUST.md rule 4); see src/mirrors.js. */
export declare class Mirrors {
  constructor (urls: string[], o: { transport: Transport, timeoutMs: number, penaltyMs?: number })
  list: Array<{ url: string }>
  fetch<T> (path: string, cap: number, check: (bytes: Uint8Array, mirror: string) => T | Promise<T>, signal?: unknown): Promise<T>
  fetchAll (path: string, cap: number, check: (bytes: Uint8Array, mirror: string) => unknown, o?: { settleMs?: number, signal?: unknown, onResult?: (r: object) => void }): Promise<Array<{ mirror: string, value?: any, error?: any }>>
  fault (m: object, err: Error): void
  health (): object[]
}
/** A persisted record as read back, checked: null, { seq, root } or a version-2 record; anything else throws ROTREE_STATE. */
export declare function checkRecord (rec: unknown, where: string): import('./verify.js').SeenRecord | null
export declare function createTransport (o?: { maxSockets?: number }): Transport
export declare function defaultStateDir (env?: Record<string, string | undefined>): string
export declare function stateLocation (dir: string): string
export type { Ref, DirPage, ChunkIndex, Entry }

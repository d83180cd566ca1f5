// Hand-written declarations for rotree-client/format (src/format/index.js):
// the wire format of docs/FORMAT.md, encode and decode side by side. Readers
// should go through rotree-client/verify, which decodes only verified bytes.

/**
 * A blob reference: 64 lowercase hex SHA-256 of the blob, and its exact size in bytes.
 * Format version 2 (FORMAT.md §12.6): `size` is the decoded size; the blob is stored as
 * `storedSize` bytes under `codec` (the handle is the hash of the stored bytes).
 */
export interface Ref { hash: string, size: number, storedSize?: number, codec?: Codec }

/** How a version-2 blob is stored (FORMAT.md §12.6). */
export type Codec = 'none' | 'deflate-raw'

/** The format version an encoder writes or a decoder expects (default 1). */
export interface VersionOption { version?: 1 | 2 }

/** A decoded directory entry (FORMAT.md §4). */
export interface Entry {
  name: string
  nameBytes?: Uint8Array
  type: 'file' | 'dir' | 'symlink'
  /** file: bytes; dir: entries; symlink: target bytes */
  size: number
  /** ms since the epoch */
  mtime: number
  exec: boolean
  /** a small file's bytes, kept in its directory page */
  inline?: Uint8Array
  /** a chunked file's chunks, in order */
  chunks?: Ref[]
  /** a large file's chunk-index tree */
  index?: Ref & { levels: number }
  /** a directory's top page */
  dir?: Ref
  /** a symlink's target */
  target?: string
  /** format version 2: the whole file's SHA-256 (null for an inline file: that of its bytes) */
  sha256?: string | null
}

export interface IndexChild extends Ref { firstName: string, firstNameBytes: Uint8Array, entries: number }
export type DirPage =
  | { kind: 'leaf', entries: Array<Entry & { nameBytes: Uint8Array }> }
  | { kind: 'index', level: number, children: IndexChild[] }

export interface ChunkIndex { level: number, bytes: number, children: Array<Ref & { bytes: number }> }

/** fsinfo.json fields as signed (FORMAT.md §6). */
export interface FsinfoFields {
  key: string
  seq: number
  issued: string
  expires: string
  root: string
  rootSize: number
  rootMtime: number
}

/** fsinfo.json decoded (shape checked, signature not yet). */
export interface DecodedFsinfo {
  version: number
  key: string
  seq: number
  issued: string
  expires: string
  issuedMs: number
  expiresMs: number
  root: Ref
  rootMtime: number
  sig: string
  /** the exact bytes the signature covers */
  message: Uint8Array
}

export type PutBlob = (bytes: Uint8Array) => Promise<Ref>

/** Opaque encoder and decoder cursors of the format module. */
export interface Writer { result (): Uint8Array }
export interface Reader { pos: number, end (): void }

export declare namespace limits {
  const FORMAT_VERSION: number
  const HASH_LEN: number
  const MAX_BLOB: number
  const MAX_NAME: number
  const MAX_SYMLINK: number
  const MAX_PATH: number
  const MAX_DEPTH: number
  const MAX_SYMLINK_HOPS: number
  const MAX_DIRECT_CHUNKS: number
  const MAX_INDEX_FANOUT: number
  const MAX_INDEX_LEVELS: number
  const MAX_PAGE_ENTRIES: number
  const MAX_FILE_SIZE: number
  const MAX_FSINFO: number
  const CHUNK_MIN: number
  const CHUNK_AVG: number
  const CHUNK_MAX: number
  const INLINE_MAX: number
  const PAGE_MIN: number
  const PAGE_MAX: number
  const PAGE_CUT_BITS: number
}

export declare function decodeFsinfo (input: Uint8Array | string): DecodedFsinfo
export declare function encodeFsinfo (f: FsinfoFields & { sig: string }): string
export declare function fsinfoMessage (f: FsinfoFields): Uint8Array

export declare function decodeDirPage (bytes: Uint8Array, o?: VersionOption): DirPage
export declare function encodeDirPage (page: DirPage | { kind: 'leaf', entries: Array<Entry | Uint8Array> } | { kind: 'index', level: number, children: Array<Ref & { firstName: string, entries: number }> }, o?: VersionOption): Uint8Array
export declare function buildDirectory (entries: Entry[], put: PutBlob, o?: VersionOption): Promise<Ref & { entries: number }>
export declare function encodeEntry (e: Entry, o?: VersionOption): Uint8Array
export declare const LEAF_MAGIC: Uint8Array
export declare const INDEX_MAGIC: Uint8Array

export declare function decodeChunkIndex (bytes: Uint8Array, o?: VersionOption): ChunkIndex
export declare function encodeChunkIndex (idx: { level: number, children: Array<Ref & { bytes: number }> }, o?: VersionOption): Uint8Array
export declare function buildFileBody (chunks: Ref[], put: PutBlob, o?: VersionOption): Promise<{ chunks: Ref[] } | { index: Ref & { levels: number } }>
export declare const CINDEX_MAGIC: Uint8Array

export declare function readEntry (r: Reader, o?: VersionOption): Entry & { nameBytes: Uint8Array }
export declare function writeEntry (w: Writer, e: Entry, o?: VersionOption): void
export declare function entryRefs (e: Entry): Ref[]
export declare function checkName (name: string, bytes?: Uint8Array): boolean
export declare const KIND: { readonly INLINE: 1, readonly CHUNKS: 2, readonly INDEX: 3, readonly DIR: 4, readonly SYMLINK: 5 }

/** FastCDC: the length of the next chunk of buf[start, end), or 0 when more data is needed. */
export declare function nextCut (buf: Uint8Array, start: number, end: number, final: boolean): number
export declare function chunkLengths (buf: Uint8Array): number[]

export declare function toHex (b: Uint8Array): string
export declare function fromHex (s: string): Uint8Array
export declare function compareBytes (a: Uint8Array, b: Uint8Array): number

/**
 * Why a 64-lowercase-hex ed25519 public key is refused (FORMAT.md §1.4: not
 * canonical, or a point of small order under which anyone can sign), or null.
 */
export declare function weakKeyReason (hex: string): string | null

/** The most bytes of fsinfo.json a reader takes (FORMAT.md §12.4: 16 KiB; a version-1 one is at most 4 KiB). */
export declare const MAX_FSINFO_V2: number

// Hand-written declarations for rotree-client/format (src/format/index.js):
// the wire format of docs/FORMAT.md, encode and decode side by side. Readers
// should go through rotree-client/verify, which decodes only verified bytes.
// The codecs of version-2 blobs differ by platform: codec.d.ts.

/**
 * A blob reference: 64 lowercase hex SHA-256 of the blob, and its exact size in bytes.
 * Format version 2 (FORMAT.md §12.6): `size` is the decoded size; the blob is stored as
 * `storedSize` bytes under `codec` (the handle is the hash of the stored bytes).
 */
export interface Ref { hash: string, size: number, storedSize?: number, codec?: Codec, /** a private tree's sealed blob: its AES-256-GCM key, 64 hex (FORMAT.md §12.8) */ key?: string }

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
  /** format version 2, a file under a chunk index: its first chunk, named beside the index (FORMAT.md §12.6) */
  lead?: Ref
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

/** One entry of a signed document's signature list (FORMAT.md §12). */
export interface Signature { key: string, sig: string }

/** The roles of a format-version-2 tree family (FORMAT.md §12.2). */
export type RoleName = 'root' | 'release' | 'timestamp'
/** Which keys hold a role, sorted and distinct, and how many of them must sign. */
export interface Role { threshold: number, keys: string[] }
export type Roles = Record<RoleName, Role>

/** A trust document's signed fields (FORMAT.md §12.2). */
export interface TrustDocFields {
  seq: number
  /** the hash of document seq − 1; null in document 1 */
  prev: string | null
  expires: string
  roles: Roles
  /** FORMAT.md §13.1: who cosigns the log's checkpoint; null or absent: no witnesses */
  witnesses?: Witnesses | null
}
/** A trust document's witnesses (FORMAT.md §12.2, §13.1): sorted by name, 1 ≤ threshold ≤ list.length. */
export interface Witnesses { threshold: number, list: { name: string, url: string, key: string }[] }
/** trust/<seq>.json decoded (shape checked, signatures not yet). */
export interface TrustDoc extends TrustDocFields {
  expiresMs: number
  signatures: Signature[]
  /** the exact bytes each root key signs */
  message: Uint8Array
}

/** A release's root as its JSON spells it (FORMAT.md §12.3): `size` is the stored size. */
export interface ReleaseRoot { hash: string, size: number, codec: Codec, decodedSize: number, mtime: number }
/** What the release role signs (FORMAT.md §12.3). */
export interface ReleaseFields { anchor: string, name: string, seq: number, expires: string, root: ReleaseRoot }
export interface Release extends ReleaseFields {
  expiresMs: number
  signatures: Signature[]
  /** the exact bytes each release key signs */
  message: Uint8Array
}
/** The trust document an fsinfo.json is signed under: its seq and the SHA-256 of its message. */
export interface TrustRef { seq: number, hash: string }
/** What the timestamp role signs, besides the release's hash (FORMAT.md §12.4). */
export interface FsinfoV2Fields {
  /** the family: a key, or 't' + the hash of trust document 1 (FORMAT.md §12.5) */
  anchor: string
  /** '' for an unnamed tree */
  name: string
  /** null for a single-key tree */
  trust: TrustRef | null
  seq: number
  issued: string
  expires: string
}
/** A version-2 fsinfo.json decoded (shape checked, signatures not yet). */
export interface DecodedFsinfoV2 extends FsinfoV2Fields {
  version: 2
  issuedMs: number
  expiresMs: number
  release: Release
  signatures: Signature[]
  /** SHA-256 of the release's message, hex */
  releaseHash: string
  /** the exact bytes each timestamp key signs */
  message: Uint8Array
}

export type PutBlob = (bytes: Uint8Array) => Promise<Ref>

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
  const INLINE_MAX_V2: number
  function inlineMax (version: 1 | 2): number
  const PAGE_MIN: number
  const PAGE_MAX: number
  const PAGE_CUT_BITS: number
}
// FORMAT.md §2: the same bounds, one by one
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
/** FORMAT.md §12.6: version 2 inlines files up to this size */
export declare const INLINE_MAX_V2: number
export declare function inlineMax (version: 1 | 2): number
export declare const PAGE_MIN: number
export declare const PAGE_MAX: number
export declare const PAGE_CUT_BITS: number

// bytes.js
export declare function toHex (b: Uint8Array): string
/** Lowercase hex only; anything else is ROTREE_BAD_FORMAT. */
export declare function fromHex (s: string): Uint8Array
export declare const utf8: { encode (s: string): Uint8Array }
/** Strict UTF-8 (FORMAT.md §3): invalid sequences are ROTREE_BAD_FORMAT. */
export declare function decodeUtf8 (b: Uint8Array): string
export declare function concat (parts: Uint8Array[]): Uint8Array
/** Bytewise comparison: the sort order of FORMAT.md §4. */
export declare function compareBytes (a: Uint8Array, b: Uint8Array): number
export declare function equalBytes (a: Uint8Array, b: Uint8Array): boolean
/** Growable writer for encoders (FORMAT.md §3.1: LEB128 uint, zig-zag sint). */
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
/** Strict decoding cursor: every read is bounds-checked, varints must be minimal. */
export declare class Reader {
  constructor (buf: Uint8Array)
  pos: number
  readonly done: boolean
  byte (): number
  bytes (n: number): Uint8Array
  uint (max?: number): number
  sint (): number
  lbytes (max?: number): Uint8Array
  /** ROTREE_BAD_FORMAT unless every byte was read */
  end (): void
  fail (what: string): never
}

// cdc.js: FastCDC (FORMAT.md §5)
/** The length of the next chunk of buf[start, end), or 0 when more data is needed. */
export declare function nextCut (buf: Uint8Array, start: number, end: number, final: boolean): number
/** FORMAT.md §5.1: version 2 cuts a file of LEAD_MIN_FILE bytes or more after its first LEAD_CHUNK bytes. */
export declare const LEAD_CHUNK: number
export declare const LEAD_MIN_FILE: number
/** The lead chunk's length for a file of `size` bytes, or 0 for none. */
export declare function leadCut (size: number, version?: number): number
/** A whole buffer's chunk lengths (version 2: with a lead chunk). */
export declare function chunkLengths (buf: Uint8Array, o?: { version?: number }): number[]
export declare const GEAR: Uint32Array

// group.js: FORMAT.md §4.5, how a builder cuts a sorted list into pages
export declare function groupByContent<T> (items: T[], o: { size: (t: T) => number, cut: (t: T) => boolean, min: number, max: number, maxCount: number }): T[][]
/** True with chance 2^-bits, by the top bits of a 32-byte hash (hex or bytes). */
export declare function hashCut (hash: string | Uint8Array, bits: number): boolean

// ref.js: FORMAT.md §1.3, §12.6, one blob reference inside a binary blob
export declare const VERSIONS: readonly [1, 2]
/** A `{ version }` option's format version (default 1); RangeError for any other. */
export declare function versionOf (o?: { version?: number }): 1 | 2
export declare function readRef (r: Reader, version: 1 | 2, max: number): Ref
export declare function writeRef (w: Writer, ref: Ref, version: 1 | 2): void
/** The fields of a ref as a reader uses them (drops bytes, entries, names…). */
export declare function refOf (c: Ref): Ref
/** A version-2 release's root (FORMAT.md §12.3) as a decoded ref. */
export declare function refOfReleaseRoot (root: Pick<ReleaseRoot, 'hash' | 'size' | 'codec' | 'decodedSize'>): Ref
/** A release's root as a tool without reader keys walks it: refOfReleaseRoot's, or a private release's manifest and keyring (FORMAT.md §12.8). */
export declare function keylessRoot (release: { root: object, manifest?: { hash: string, size: number } | null }, access?: { keyring: { hash: string, size: number } } | null): Ref | { hash: string, size: number, manifest: true, keyring: { hash: string, size: number } | null }

// entry.js: FORMAT.md §4.2
export declare const KIND: { readonly INLINE: 1, readonly CHUNKS: 2, readonly INDEX: 3, readonly DIR: 4, readonly SYMLINK: 5 }
export declare function checkName (name: string, bytes?: Uint8Array): boolean
export declare function writeEntry (w: Writer, e: Entry, o?: VersionOption): void
export declare function readEntry (r: Reader, o?: VersionOption): Entry & { nameBytes: Uint8Array }
/** The blob references an entry holds, in file order. */
export declare function entryRefs (e: Entry): Ref[]

// dirpage.js: FORMAT.md §4.3, §4.4
export declare const LEAF_MAGIC: Uint8Array
export declare const INDEX_MAGIC: Uint8Array
export declare function decodeDirPage (bytes: Uint8Array, o?: VersionOption): DirPage
export declare function encodeDirPage (page: DirPage | { kind: 'leaf', entries: Array<Entry | Uint8Array> } | { kind: 'index', level: number, children: Array<Ref & { firstName: string, entries: number }> }, o?: VersionOption): Uint8Array
export declare function encodeLeaf (encodedEntries: Uint8Array[], o?: VersionOption): Uint8Array
export declare function encodeIndex (level: number, children: Array<Ref & { firstName: string, entries: number }>, o?: VersionOption): Uint8Array
export declare function encodeEntry (e: Entry, o?: VersionOption): Uint8Array
export declare function buildDirectory (entries: Entry[], put: PutBlob, o?: VersionOption): Promise<Ref & { entries: number }>

// chunkindex.js: FORMAT.md §4.5
export declare const CINDEX_MAGIC: Uint8Array
export declare function decodeChunkIndex (bytes: Uint8Array, o?: VersionOption): ChunkIndex
export declare function encodeChunkIndex (idx: { level: number, children: Array<Ref & { bytes: number }> }, o?: VersionOption): Uint8Array
export declare function buildFileBody (chunks: Ref[], put: PutBlob, o?: VersionOption): Promise<{ chunks: Ref[] } | { index: Ref & { levels: number } }>

// codec-names.js: FORMAT.md §12.6
export declare const CODECS: readonly Codec[]
export declare const CODEC_ID: Readonly<Record<Codec, number>>
/** A codec byte with this bit set is an encrypted blob (FORMAT.md §12.8): refused. */
export declare const CODEC_ENCRYPTED_BIT: number

// fsinfo.js: FORMAT.md §6
export declare function fsinfoMessage (f: FsinfoFields): Uint8Array
export declare function decodeFsinfo (input: Uint8Array | string): DecodedFsinfo
export declare function encodeFsinfo (f: FsinfoFields & { sig: string }): string

// signed-doc.js: what the signed JSON documents of format version 2 share
// (FORMAT.md §12). Each checker returns its value or throws ROTREE_BAD_FORMAT
// naming `what`.
export declare const HEX64: RegExp
export declare const HEX128: RegExp
export declare const MAX_SIGNATURES: number
export declare const MAX_ROLE_KEYS: number
/** FORMAT.md §12.1: a tree name ('' or [a-z0-9][a-z0-9._-]{0,63}) */
export declare const NAME_RE: RegExp
/** At most `max` bytes of UTF-8 JSON, which must be an object. */
export declare function parseObject (input: Uint8Array | string, max: number, what: string): Record<string, any>
/** A plain object whose members are all in `allowed` (when given). */
export declare function object (v: unknown, what: string, allowed?: readonly string[]): Record<string, any>
export declare function hex64 (v: unknown, what: string): string
/** An ed25519 public key: 64 lowercase hex, canonical and not of small order. */
export declare function publicKey (v: unknown, what: string): string
export declare function safeInt (v: unknown, what: string, min?: number, max?: number): number
/** An ISO-8601 UTC time in toISOString's one spelling; returns ms. */
export declare function isoTime (v: unknown, what: string): number
/** What Date.prototype.toISOString prints for `ms`. */
export declare function isoString (ms: number): string
export declare function treeName (v: unknown, what: string): string
export declare function signatures (v: unknown, what: string): Signature[]
/** Distinct public keys, sorted. */
export declare function keyList (v: unknown, what: string): string[]
/** A decimal integer as a signed message spells it. */
export declare function dec (n: number): string
/** JSON as the reference builder writes it: two-space indent, final newline. */
export declare function jsonText (o: unknown): string

// trust-doc.js: FORMAT.md §12.2
export declare const TRUST_TYPE: 'rotree-trust'
export declare const MAX_TRUST_DOC: number
export declare const ROLES: readonly RoleName[]
/** The exact bytes each root key signs. */
export declare function trustMessage (doc: TrustDocFields): Uint8Array
export declare function decodeTrustDoc (input: Uint8Array | string): TrustDoc
export declare const MAX_WITNESSES: 32
/** The `witnesses` member checked (FORMAT.md §12.2); null when absent. */
export declare function witnessList (v: unknown, what?: string): Witnesses | null
/** The JSON text of a trust document, with whatever signatures it has so far. */
export declare function encodeTrustDoc (doc: Omit<TrustDocFields, 'prev'> & { prev?: string | null, signatures?: Signature[] }): string

// fsinfo-v2.js: FORMAT.md §12.3, §12.4
/** The most bytes of fsinfo.json a reader takes (FORMAT.md §12.4: 16 KiB; a version-1 one is at most 4 KiB). */
export declare const MAX_FSINFO_V2: number
/** The exact bytes each release key signs. */
export declare function releaseMessage (release: ReleaseFields): Uint8Array
/** The exact bytes each timestamp key signs; `releaseHash` is SHA-256(releaseMessage) in hex. */
export declare function fsinfoV2Message (info: FsinfoV2Fields, releaseHash: string): Uint8Array
export declare function decodeRelease (v: unknown): Release
/** FORMAT.md §6.1: the format version of an fsinfo.json of any version. */
export declare function fsinfoVersion (input: Uint8Array | string): number
export declare function decodeFsinfoV2 (input: Uint8Array | string): DecodedFsinfoV2
/** The JSON text of a version-2 fsinfo.json. */
export declare function encodeFsinfoV2 (info: FsinfoV2Fields & { release: ReleaseFields & { signatures?: Signature[] }, signatures?: Signature[] }): string

/**
 * Why a 64-lowercase-hex ed25519 public key is refused (FORMAT.md §1.4: not
 * canonical, or a point of small order under which anyone can sign), or null.
 */
export declare function weakKeyReason (hex: string): string | null

// ---- private trees (FORMAT.md §12.8) ----
export declare const MAX_KEYRING: number
export declare const MAX_READERS: number
export declare const TAG_LEN: number
export declare const NONCE: Uint8Array
/** Padmé: `L` rounded up to end in E − S zero bits (at most 12% more). */
export declare function padme (L: number): number
export declare const MAX_SEALED: number
export declare function sealedSize (innerLength: number): number
export declare function pad (inner: Uint8Array): Uint8Array
export declare function unpad (padded: Uint8Array): Uint8Array
export declare function blobKey (hmac: (key: Uint8Array, data: Uint8Array) => Uint8Array, secret: Uint8Array, innerHash: Uint8Array): Uint8Array
/** The inner bytes of a sealed blob (stored bytes already verified by hash). */
export declare function openSealed (stored: Uint8Array, keyHex: string): Promise<Uint8Array>
export declare function sealBlob (inner: Uint8Array, secret: Uint8Array, c: { hmac: (key: Uint8Array, data: Uint8Array) => Uint8Array, sha256: (b: Uint8Array) => Uint8Array, seal: (key: Uint8Array, nonce: Uint8Array, plain: Uint8Array) => Uint8Array }): { stored: Uint8Array, key: string }
export type ManifestPage =
  | { kind: 'leaf', blobs: Array<{ hash: string, size: number }> }
  | { kind: 'index', level: number, children: Array<{ firstHash: string, hash: string, size: number, blobs: number }> }
export interface ManifestExpectation { level?: number, firstHash?: string, nextHash?: string | null, blobs?: number }
export declare const MLEAF_MAGIC: Uint8Array
export declare const MINDEX_MAGIC: Uint8Array
export declare function decodeManifestPage (bytes: Uint8Array): ManifestPage
export declare function encodeManifestLeaf (blobs: Array<{ hash: string, size: number }>): Uint8Array
export declare function encodeManifestIndex (level: number, children: Array<{ firstHash: string, hash: string, size: number, blobs: number }>): Uint8Array
export declare function buildManifest (blobs: Array<{ hash: string, size: number }>, put: (bytes: Uint8Array) => Promise<{ hash: string, size: number }>): Promise<{ hash: string, size: number, blobs: number }>
export declare function checkManifestPlacement (page: ManifestPage, expect?: ManifestExpectation): void
export declare function manifestChildExpectation (page: ManifestPage & { kind: 'index' }, i: number, expect?: ManifestExpectation): ManifestExpectation

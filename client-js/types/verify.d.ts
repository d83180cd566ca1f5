// Hand-written declarations for rotree-client/verify (src/trust/verify.js): the
// trust rules (docs/TRUST.md) as pure functions over bytes, with no I/O.
import type { Ref, DecodedFsinfo, DirPage, ChunkIndex } from './format.js'

export declare const DEFAULT_SKEW_MS: number

export interface VerifyFsinfoOptions {
  /** the 64-hex key the user gave (never one from a mirror); null when the address names a trust document */
  publicKey: string | null
  /** the tree name the address gives (a version-1 tree has none: anything but '' is ROTREE_WRONG_NAME) */
  name?: string
  /** the reader's clock, ms (default Date.now()) */
  now?: number
  /** how far in the future fsinfo.json may be issued (default 5 min) */
  skewMs?: number
  /** how long past expiry it is still accepted (default 0) */
  graceMs?: number
}

/** A verified fsinfo.json. */
export interface VerifiedFsinfo extends DecodedFsinfo {
  /** the exact bytes that verified */
  raw: Uint8Array | string
}

/** Format version 2's persisted state for an address (state.js, trust/roles.js advanceState). */
export interface SeenRecordV2 {
  v: 2
  /** the newest trusted trust document (seq, hash) and its JSON text; null for a single-key tree */
  trust: { seq: number, hash: string } | null
  trustDoc?: string
  /**
   * per role: the keys whose signatures counted, its highest sequence and what it was
   * seen with; null until one is accepted. A sequence holds while one of its signers
   * is still in the role (docs/TRUST.md rule 13).
   */
  release: { signers: string[], seq: number, root: string } | null
  timestamp: { signers: string[], seq: number, release: string } | null
}

/** The highest accepted sequence number for a key, and the root it was signed over (or a version-2 record). */
export type SeenRecord = { seq: number, root: string } | SeenRecordV2

/** docs/TRUST.md rules 1 and 2 (key, signature, expiry, clock skew). Throws a typed RotreeError. */
export declare function verifyFsinfo (bytes: Uint8Array | string, opts: VerifyFsinfoOptions): VerifiedFsinfo
/** docs/TRUST.md rule 2 (rollback, fork). True when `info` is newer than `seen`. */
export declare function checkRollback (info: { seq: number, root: Ref }, seen: SeenRecord | null | undefined): boolean
/** docs/TRUST.md rule 3: exact stored size (storedSizeOf) and SHA-256. Resolves to the same bytes. */
export declare function verifyBlob (bytes: Uint8Array, ref: Ref): Promise<Uint8Array>
/** docs/TRUST.md rule 3, then a version-2 blob decoded by its codec to exactly ref.size bytes (FORMAT.md §12.6). */
export declare function verifyDecoded (bytes: Uint8Array, ref: Ref): Promise<Uint8Array>
/** docs/TRUST.md rule 3: a data chunk's bytes, decoded when compressed. */
export declare function verifyChunk (bytes: Uint8Array, ref: Ref): Promise<Uint8Array>
/** The bytes a blob takes on the wire and on disk: ref.storedSize for a version-2 ref, else ref.size. */
export declare function storedSizeOf (ref: Ref): number
/** Which verified root is newer: by format version, trust document, sequence (negative: `a` is older). */
export declare function compareRoots (a: { version?: number, trust?: { seq: number } | null, seq: number }, b: { version?: number, trust?: { seq: number } | null, seq: number }): number
export declare function verifyDirPage (bytes: Uint8Array, ref: Ref): Promise<DirPage>
export declare function verifyChunkIndex (bytes: Uint8Array, ref: Ref): Promise<ChunkIndex>

export interface PagePlacement { level?: number, firstNameBytes?: Uint8Array, nextNameBytes?: Uint8Array, entries?: number }
/** FORMAT.md §4.4: a page holds exactly the names its index promised. Throws ROTREE_BAD_FORMAT. */
export declare function checkPagePlacement (page: DirPage, expect?: PagePlacement): void
/** FORMAT.md §4.3: a chunk index has the level and byte count its parent promised. */
export declare function checkChunkIndexPlacement (idx: ChunkIndex, expect: { level: number, bytes: number }): void
/**
 * docs/TRUST.md rule 3, FORMAT.md §5.1: a version-2 file's lead ref (its first chunk, named
 * beside the chunk index) is the index's first leaf child, the same blob stored the same way
 * (`first`: null when the index has none at offset 0). Throws ROTREE_BAD_FORMAT.
 */
export declare function checkLeadRef (lead: Ref, first: Ref | null): void

/** docs/TRUST.md rules 1 and 2 without the clock (history tools; never to pick the root a reader serves). */
export declare function verifyFsinfoSignature (bytes: Uint8Array | string, opts: { publicKey: string | null, name?: string }): VerifiedFsinfo
/** docs/TRUST.md rule 17: an entry of history/ (rotree log), signed by the key and filed under its own seq; never adopted. */
export declare function verifyHistoryEntry (bytes: Uint8Array | string, opts: { publicKey: string, seq: number }): VerifiedFsinfo
/** FORMAT.md §12.7: throws ROTREE_HASH_MISMATCH unless `got` (hex) is the SHA-256 the file's entry signs. */
export declare function checkFileHash (entry: { sha256: string }, got: string, what?: string): void
/**
 * FORMAT.md §12.7 without a second pass: true when the file is one chunk stored as it is
 * (codec 'none') whose handle is the signed SHA-256, so verifying that chunk proves it.
 */
export declare function fileHashImplied (entry: { sha256?: string | null, size: number, chunks?: object[] }): boolean
/**
 * FORMAT.md §12.7, once per file: whole-file checks that passed, remembered for the entry's exact
 * signed hash, size and refs (bounded; a failed check is never remembered).
 */
export declare class FileHashVerdicts {
  constructor (max?: number)
  has (entry: object): boolean
  /** checkFileHash(entry, got, what), then add(entry); throws on a mismatch and remembers nothing */
  check (entry: object, got: string, what?: string): void
  add (entry: object): void
}
/** docs/TRUST.md rule 2, time: not expired (plus grace), not issued beyond the skew. Throws. */
export declare function checkFreshness (info: { issued: string, expires: string, issuedMs: number, expiresMs: number }, o?: { now?: number, skewMs?: number, graceMs?: number }): void
/** docs/TRUST.md rule 2: is an accepted root past its expiry (plus grace) by this clock? */
export declare function isExpired (info: { expiresMs: number, untilMs?: number }, o?: { now?: number, graceMs?: number }): boolean
/** The verifier for each kind of blob. */
export declare const VERIFIERS: Readonly<{
  data: (bytes: Uint8Array, ref: Ref) => Promise<Uint8Array>
  dir: (bytes: Uint8Array, ref: Ref) => Promise<DirPage>
  cindex: (bytes: Uint8Array, ref: Ref) => Promise<ChunkIndex>
  /** a private release's manifest page (FORMAT.md §12.8): a plain blob, by hash and size */
  manifest: (bytes: Uint8Array, ref: Ref) => Promise<Uint8Array>
}>
/** docs/TRUST.md rule 5: what a directory's top page must hold, from the entry naming it. */
export declare function dirExpectation (dirEntry?: { size?: number }): PagePlacement
/** docs/TRUST.md rule 5: what child `i` of a verified index page must hold. */
export declare function childPageExpectation (page: DirPage, i: number, parentExpect: PagePlacement): PagePlacement
/** docs/TRUST.md rule 3 for a chunk on this machine: null when its size is right, else the typed error. */
export declare function localChunkFault (localSize: number, ref: Ref): Error | null
export interface MirrorAnswer { mirror: string, value: VerifiedFsinfo }
/** docs/TRUST.md rules 2 and 4 across mirrors: candidates newest first, and the mirrors caught in a fork. */
export declare function rankRoots (answers: MirrorAnswer[], seen: SeenRecord | null): { candidates: MirrorAnswer[], forks: Array<{ mirror: string, err: Error }> }
/** Do verified answers disagree about a root at one sequence number? */
export declare function hasFork (answers: MirrorAnswer[]): boolean
/** docs/TRUST.md rule 4: the mirrors behind `chosen`, each with its RollbackError. */
export declare function staleMirrors (answers: MirrorAnswer[], chosen: MirrorAnswer): Array<{ mirror: string, err: Error }>

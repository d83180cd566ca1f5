// Hand-written declarations for rotree-client/verify (src/verify.js): the
// trust rules as pure functions over bytes, with no I/O.
import type { Ref, DecodedFsinfo, DirPage, ChunkIndex } from './format.js'

export declare const DEFAULT_SKEW_MS: number

export interface VerifyFsinfoOptions {
  /** the 64-hex key the user gave (never one from a mirror) */
  publicKey: string
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

/** The highest accepted sequence number for a key, and the root it was signed over. */
export interface SeenRecord { seq: number, root: string }

/** Trust rule 2 (signature, key, expiry, clock skew). Throws a typed RotreeError. */
export declare function verifyFsinfo (bytes: Uint8Array | string, opts: VerifyFsinfoOptions): VerifiedFsinfo
/** Trust rule 2 (rollback, fork). True when `info` is newer than `seen`. */
export declare function checkRollback (info: { seq: number, root: Ref }, seen: SeenRecord | null | undefined): boolean
/** Trust rule 3: exact size and SHA-256. Resolves to the same bytes. */
export declare function verifyBlob (bytes: Uint8Array, ref: Ref): Promise<Uint8Array>
export declare function verifyDirPage (bytes: Uint8Array, ref: Ref): Promise<DirPage>
export declare function verifyChunkIndex (bytes: Uint8Array, ref: Ref): Promise<ChunkIndex>

export interface PagePlacement { level?: number, firstNameBytes?: Uint8Array, nextNameBytes?: Uint8Array, entries?: number }
/** FORMAT.md §4.4: a page holds exactly the names its index promised. Throws ROTREE_BAD_FORMAT. */
export declare function checkPagePlacement (page: DirPage, expect?: PagePlacement): void
/** FORMAT.md §4.3: a chunk index has the level and byte count its parent promised. */
export declare function checkChunkIndexPlacement (idx: ChunkIndex, expect: { level: number, bytes: number }): void

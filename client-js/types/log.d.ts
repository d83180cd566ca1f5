// Hand-written declarations for rotree-client/log (src/tree/log.js): a
// tree's transparency log as a reader fetches and audits it
// (docs/FORMAT.md §13).
import type { Checkpoint, NoteSignature } from './tlog.js'

export declare const LOG_DIR: 'log'
export declare const CHECKPOINT_PATH: 'log/checkpoint'
export declare const MAX_CHECKPOINT: number
/** `rotree/<anchor>[:<name>]`. */
export declare function logOrigin (anchor: string, name?: string): string
/** The checkpoint's origin and the keys (64 hex) that may sign it, for a root record or decoded fsinfo.json. */
export declare function logSignersOf (rec: object): { origin: string, keys: string[] }
export interface SignedCheckpoint extends Checkpoint { signedBy: NoteSignature[], bytes: Uint8Array }
export declare function readCheckpoint (bytes: Uint8Array, o: { origin: string, keys: string[] }): SignedCheckpoint
export type LogFetch = <T>(path: string, cap: number, check: (bytes: Uint8Array) => T) => Promise<T>
export declare function fetchLog (fetch: LogFetch, o: {
  origin: string, keys: string[],
  /** a tile or bundle already held, by its path under log/ (checked like a fetched one) */
  local?: (path: string) => Promise<Uint8Array | null>,
  /** stop after the checkpoint */
  unchanged?: (checkpoint: SignedCheckpoint) => boolean
}): Promise<{
  checkpoint: SignedCheckpoint, entries: Uint8Array[], tiles: Map<string, Uint8Array>, bundles: Map<string, Uint8Array>, unchanged?: true
}>
export interface LogProblem { code: string, message: string, index?: number, seq?: number }
export interface LogAudit {
  origin: string, size: number, root: string, signedBy: NoteSignature[],
  leaves: Array<{ index: number, seq: number, ok: boolean, root?: string | null, release?: number, code?: string, message?: string }>,
  current: { seq: number, logged: boolean },
  problems: LogProblem[]
}
export declare function auditLog (tree: object): Promise<LogAudit>
/** The log part of a proof bundle (FORMAT.md §13.2): a C2SP tlog-proof of fsinfoBytes from log/checkpoint and a few tiles. */
export declare function proveLogged (fetch: LogFetch, o: { fsinfoBytes: Uint8Array, origin: string, keys: string[] }): Promise<{ text: string, index: number, size: number }>
/** Check a tlog-proof offline as a reader at nowMs: the log's signature, the witnesses' threshold of fresh cosignatures (when given), the inclusion. */
export declare function checkLogProof (text: string | Uint8Array, o: {
  fsinfoBytes: Uint8Array, origin: string, keys: string[],
  witnesses?: { threshold: number, list: Array<{ name: string, key: string }> } | null, nowMs: number, skewMs?: number
}): { index: number, size: number, hash: string, cosigned: Array<{ name: string, time: number }> }

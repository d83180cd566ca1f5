// Hand-written declarations for the tree layer (src/tree/index.js) besides
// the Tree itself, the same on every platform: paths resolved with a work
// budget (resolve.js), byte ranges as verified chunks (read-pipeline.js),
// every blob a root reaches (walk.js), and the roots a tree published
// (history.js). rotree-client/tree is these and the platform's Tree:
// tree-layer.d.ts (browsers and bundlers), tree-layer-node.d.ts (Node).
import type { Ref, Entry, ChunkIndex } from './format.js'
import type { TreeApi } from './tree.js'
import type { VerifiedFsinfo } from './verify.js'
import type { RootRecordV2 } from './trust.js'

export { toStat, walkTree } from './tree.js'

// resolve.js: FORMAT.md §4.6 within docs/TRUST.md rule 9's budget
/** Components one resolve may process, counting those symlink targets add. */
export declare const MAX_WALK_COMPONENTS: number
/** Bytes of symlink targets one resolve may follow. */
export declare const MAX_WALK_TARGET_BYTES: number
/** How long a walk or listing runs before it lets other work in, ms. */
export declare const SLICE_MS: number
/** A function to await often in a long loop: a promise once sliceMs have passed since the last yield, else null. */
export declare function slicer (sliceMs?: number): () => Promise<void> | null
/** `path` to its entry, following symlinks inside the tree; lookup resolves null for a name proven absent. */
export declare function resolvePath (rootEntry: Entry, path: string, follow: boolean, lookup: (dirEntry: Entry, name: string) => Promise<Entry | null>): Promise<{ entry: Entry, path: string }>

// read-pipeline.js
/** What the read pipeline needs from a tree: verified chunks and placed chunk-index pages. */
export interface ChunkSource {
  chunk (ref: Ref, o?: { cache?: boolean, lend?: boolean }): Promise<Uint8Array>
  chunkIndex (ref: Ref, expect: { level: number, bytes: number }): Promise<ChunkIndex>
  /** the fetch scheduler's read-ahead budget (a Tree's Mirrors) */
  sched?: ReadAheadBudget
}
export interface ReadAheadBudget {
  readAheadBytes (): number
  readonly held: number
  readonly maxInflightBytes: number
  reserve (n: number): void
  release (n: number): void
}
/** One chunk of a range; a version-2 file's lead chunk settles `confirmed` once its index agrees. */
export interface ChunkSpan { ref: Ref, offset: number, confirmed?: Promise<void> }
/** Verified bytes of file `entry` in [start, end), in order, with read-ahead. */
export declare function readChunks (source: ChunkSource, entry: Entry, start: number, end: number, o?: { cache?: boolean, lend?: boolean, readAhead?: number, sched?: ReadAheadBudget }): AsyncGenerator<Uint8Array, void, undefined>
/** The chunks of `entry` that overlap [start, end). */
export declare function chunkSpans (source: ChunkSource, entry: Entry, start: number, end: number): AsyncGenerator<ChunkSpan, void, undefined>

// path.js
/** A user path's components, '.' and '..' resolved lexically, never above the root (ROTREE_BAD_PATH). */
export declare function splitPath (path: string): string[]
export declare function joinPath (parts: string[]): string

// history.js: docs/TRUST.md rule 17, shown and never adopted
/** Bytes of history/index.json a reader takes. */
export declare const MAX_HISTORY_INDEX: number
/** One entry of a tree's history: verified, or why not. */
export type HistoryEntry =
  | { seq: number, ok: true, info: VerifiedFsinfo | RootRecordV2 }
  | { seq: number, ok: false, code: string, message: string }
/** The newest `limit` (default 20) entries of a tree's history, newest first; total: entries the index lists. */
export declare function treeHistory (tree: TreeApi<unknown>, o?: { limit?: number }): Promise<{ total: number, entries: HistoryEntry[] }>
/** history/index.json: distinct whole numbers, newest first. */
export declare function parseIndex (bytes: Uint8Array): number[]
/** A read-only view of `tree` at the root history/<seq>.json holds; the tree's own root and state are unchanged. */
export declare function openHistoric<T extends TreeApi<unknown>> (tree: T, seq: number): Promise<T>

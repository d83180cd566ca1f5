// Hand-written declarations for the tree layer (src/tree/index.js) besides
// the Tree itself, the same on every platform: paths resolved with a work
// budget (resolve.js), byte ranges as verified chunks (read-pipeline.js),
// the look-ahead walk (walk-ahead.js) and every blob a root reaches on it
// (walk.js), the byte gate of what a reader has in flight (byte-gate.js),
// and the roots a tree published (history.js). rotree-client/tree is these and the platform's Tree:
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

// walk-ahead.js: depth first in pre-order, the next nodes expanded ahead (docs/TRUST.md rules 3, 5: the source verifies)
/** What a node's listing costs held in memory per entry, roughly (bytes). */
export declare const ENTRY_COST: number
/** What an entry of a tree held in memory costs, roughly: ENTRY_COST and its inline bytes. */
export declare function entryCost (e: Entry): number
/** What a node is, for walkAhead: how to expand it and which of its entries lead to children. */
export interface WalkSource<N, E> {
  /** its verified listing, and what holding it costs in bytes (default: ENTRY_COST per entry) */
  expand (node: N): Promise<{ entries: E[], cost?: number }>
  /** the node an entry leads to, or null: a leaf, or a child not worth entering (never expanded) */
  child (node: N, entry: E): N | null
  /** entries the node holds, when known before it is expanded */
  count? (node: N): number | undefined
  /** the entries of a node too big to hold (count above bigNode, or unknown), streamed when the walk reaches it */
  stream? (node: N): AsyncIterable<E>
}
/** What takes the walk: each call may return a promise the walk waits for. */
export interface WalkVisitor<N, E> {
  /** in pre-order, with the node's listing (null: streamed) */
  enter? (node: N, entries: E[] | null): void | Promise<void>
  /** each entry in order; a child's enter follows its entry */
  entry? (node: N, entry: E, child: N | null): void | Promise<void>
  /** after the node's last entry and every child's leave */
  leave? (node: N): void | Promise<void>
}
export interface WalkAheadOptions {
  /** expansions ahead at once (default 64; the walk's own come on top) */
  breadth?: number
  /** estimated bytes of listings expanded and not yet left before no more are started (default 16 MiB) */
  aheadBytes?: number
  /** entries of those listings likewise (default 65,536) */
  aheadEntries?: number
  /** a node of more entries is streamed, never held (default 16,384) */
  bigNode?: number
  /** entries of a streamed node read ahead of the walk (default 256) */
  window?: number
  /** nodes deeper than this are never expanded ahead (the root is 0; default unbounded) */
  maxDepth?: number
}
/** Walk from `root` depth first in pre-order, expanding the nodes the visitor reaches next ahead of it. */
export declare function walkAhead<N, E> (root: N, source: WalkSource<N, E>, visitor: WalkVisitor<N, E>, o?: WalkAheadOptions): Promise<void>
/** The directories of one tree as walkAhead nodes; `make` makes a subdirectory's node (its entry carries `entries`, the count to check its pages against). */
export declare function treeDirs<N extends { entry: Entry, count?: number }> (tree: { entriesOf (dirEntry: Entry): AsyncIterable<Entry> }, make: (parent: N, dirEntry: Entry & { entries: number }) => N | null): WalkSource<N, Entry>

// byte-gate.js
/** Pieces of work in flight at most, by default. */
export declare const GATE_COUNT: number
/** Bytes a reader's gate allows before the scheduler has measured more. */
export declare const GATE_FLOOR: number
/** Admission by bytes, in the order asked, with a count as a second bound; one piece is always let in when none is. */
export declare class ByteGate {
  constructor (o: { limit: () => number, count?: number })
  /** what work of `size` bytes charges: all of it, or half the limit for work that streams */
  charge (size: number): number
  /** resolves once `n` more bytes fit (at once after stop()); they are then charged */
  enter (n: number): Promise<void>
  leave (n: number): void
  stop (): void
}
/** The gate of a reader fetching through `sched`: its read-ahead for one reader, within its memory budget, at least `floor`. */
export declare function readAheadGate (sched: Pick<ReadAheadBudget, 'readAheadBytes' | 'maxInflightBytes'>, o?: { count?: number, floor?: number }): ByteGate

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

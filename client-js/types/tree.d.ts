// Hand-written declarations for the reader (src/tree/tree.js, address.js, state.js,
// walk.js), shared by the browser (index.d.ts) and Node (node.d.ts) entries,
// which differ only in what createReadStream() returns.
import type { Ref, Entry, DirPage, ChunkIndex, FsinfoFields, TrustDoc } from './format.js'
import type { SeenRecord, SeenRecordV2 } from './verify.js'
import type { RotreeErrorCode } from './errors.js'

/** An AbortSignal (described structurally: these types need neither the DOM lib nor @types/node). */
export interface AbortSignalLike {
  readonly aborted: boolean
  addEventListener (type: 'abort', listener: () => void): void
  removeEventListener (type: 'abort', listener: () => void): void
}

/** How mirrors are fetched from: rotree-client brings one per platform; tests and embedders may pass their own. */
export interface Transport {
  /** GET url; resolves to the body, never more than `cap` bytes; rejects with a typed RotreeError. */
  get (url: string, o: { cap: number, timeoutMs: number, signal?: AbortSignalLike }): Promise<Uint8Array>
  close (): void
  stats: { requests: number, bytes: number }
  /** Open the connection a first request to `url` will use; only a head start (Node's transport has it). */
  preconnect? (url: string, o: { timeoutMs: number }): void
  /** The round trip to `url`'s origin as its first handshake measured it, ms; null when unknown. */
  rtt? (url: string): Promise<number | null>
  /** POST `body` (a gated edge's token exchange); the answer of any status, at most `cap` bytes; no redirect followed. Node's transport has it, with the mirrors' TLS trust. */
  post? (url: string, body: Uint8Array | string, o: { cap: number, timeoutMs: number, contentType?: string }): Promise<{ status: number, body: Uint8Array }>
}

/** A local store of blobs tried before the mirrors; what it returns is verified again. */
export interface BlobCache {
  /**
   * With `releases`, a lent read passes the Tree's buffer pool: the store may read into
   * `pool.take(size)` (a buffer at least that long, claimed once) and return a view of it;
   * the Tree gives it back. Without a pool, or for a buffer of its own, it returns any bytes.
   */
  get (hash: string, pool?: BlobPool | null): Promise<Uint8Array | null | undefined> | Uint8Array | null | undefined
  /** with `releases`, done() once the store no longer holds `bytes` (a lent read may then reuse the buffer) */
  put (hash: string, bytes: Uint8Array, done?: () => void): Promise<void> | void
  delete? (hash: string): Promise<void> | void
  /** put() calls done(): lent reads may store pooled buffers in it */
  releases?: boolean
}

/** What a BlobCache may do with the Tree's buffer pool. */
export interface BlobPool {
  /** a free buffer of at least n bytes, claimed once; null when n is outside the pooled sizes */
  take (n: number): Uint8Array | null
  /** pass a taken buffer's claim on to `holders` holders; 0 gives it back now */
  lend (bytes: Uint8Array, holders: number): void
}

export interface TreeOptions {
  /** more mirror base URLs of the same tree, tried in turn */
  mirrors?: string[]
  /** where the highest sequence number per key persists: a directory in Node, an IndexedDB name prefix in browsers; null keeps it in memory */
  stateDir?: string | null
  /** per-request deadline, ms (default 30000) */
  timeoutMs?: number
  /** how long a mirror that failed is asked last, after the healthy ones, ms (default 30000) */
  mirrorPenaltyMs?: number
  /** the most blob fetches in flight to one mirror, and its HTTP/1.1 connections (default 64); how many are used follows the measured bandwidth × delay */
  concurrency?: number
  /** chunks a streaming read always keeps requested ahead (default 8) */
  readAhead?: number
  /** bytes in flight plus bytes read ahead, every read of the tree together (default 64 MiB) */
  maxInflightBytes?: number
  /** Node: answers one HTTP/1.1 connection to an http: mirror may have outstanding once the mirror kept a connection alive (default 8); 1 turns pipelining off */
  pipeline?: number
  /** Node: the most HTTP/1.1 connections to one http: mirror (default: concurrency); requests beyond them are pipelined, or wait for one */
  connections?: number
  /** Node: offer HTTP/2 to https: mirrors and read over it those that choose it (default false: HTTP/1.1 over TLS, and HTTP/2 only with a mirror that refuses HTTP/1.1) */
  http2?: boolean
  /** Node: PEM certificates trusted for https: mirrors, besides the usual ones */
  ca?: string | Uint8Array | Array<string | Uint8Array>
  /** origins a mirror may redirect to (default: its own only) */
  allowRedirectOrigins?: string[]
  /** a mirror may redirect anywhere, never from https to http (default false) */
  crossOriginRedirects?: boolean
  /** bytes of the verified-blob cache (default 32 MiB) */
  cacheBytes?: number
  /** how far in the future fsinfo.json may be issued, ms (default 300000) */
  skewMs?: number
  /** how long past expiry fsinfo.json is still accepted, ms (default 0) */
  graceMs?: number
  /** after one mirror's fsinfo.json verifies, how long to wait for the others, ms (default 2000) */
  fsinfoSettleMs?: number
  /** ask for the root page as soon as a root verifies (default true); false for a reader that copies blobs raw or reads an old root */
  prefetchRoot?: boolean
  /** A private tree's reader: the text of an age identity file (AGE-SECRET-KEY-1… lines), or several; kept in memory only. */
  identity?: string | string[]
  /** a reader that copies blobs raw (pull): a private tree's root is not opened, no identity needed */
  keyless?: boolean
  /** an offline reader: when the trust document names witnesses, this checks the fsinfo.json's log proof (rotree-client/log checkLogProof over a tlog-proof it holds) instead of fetching the mirror's log/, and returns the checkpoint (FORMAT.md §13.2) */
  logProof?: (record: { raw: Uint8Array }, trust: { witnesses: object }, nowMs: number, skewMs: number) => { size: number, hash: string }
  /** the clock, ms (tests) */
  now?: () => number
  transport?: Transport
  /** wrap the transport the tree made (or was given): a gated tree's edge tokens, rotree-client/net gatedTransport */
  wrapTransport?: (t: Transport, tree: { id: string }) => Transport
  blobCache?: BlobCache
}

/** The accepted fsinfo.json: its signed fields (root is the root directory's handle), and where it came from. */
export interface TreeInfo extends Omit<FsinfoFields, 'key'> {
  /** the address's key; null when the address certifies a trust document (format version 2) */
  key: string | null
  /** the mirror whose fsinfo.json was accepted */
  mirror: string
  /** format version 2 only (FORMAT.md §12) */
  version?: 2
  /** the address's anchor: a key, or 't' + a trust document hash */
  anchor?: string
  /** the tree's name ('' for an unnamed tree) */
  name?: string
  /** the release's sequence number and expiry */
  releaseSeq?: number
  releaseExpires?: string
  /** the trust document fsinfo.json is signed under; null for a single-key tree */
  trustSeq?: number | null
  /** a private tree (FORMAT.md §12.8): its epoch, the root opened with this reader's identity */
  private?: boolean
  epoch?: number
}

/** The accepted fsinfo.json as verified, with the mirror it came from. */
export interface RootRecord {
  /** format version 2 records also carry name, release, trust and untilMs (root-store.js rootRecordV2) */
  version?: 2
  key: string | null
  seq: number
  issued: string
  expires: string
  issuedMs: number
  expiresMs: number
  root: Ref
  rootMtime: number
  /** the exact bytes that verified */
  raw: Uint8Array | string
  mirror: string
}

/** Metadata of one path, as fs.Stats would give it. */
export interface Stat {
  name: string
  type: 'file' | 'dir' | 'symlink'
  /** file: bytes; dir: number of entries; symlink: bytes of the target */
  size: number
  mtimeMs: number
  mtime: Date
  exec: boolean
  mode: number
  /** symlinks */
  target?: string
  /** directories: number of entries */
  entries?: number
  /**
   * A directory's top page; a file's content hash in format version 2 (its SHA-256);
   * for a version-1 file its one chunk or its chunk index (null for inline and multi-chunk files)
   */
  hash?: string | null
  /**
   * Files: the SHA-256 of the whole file. Format version 2: the signed value (FORMAT.md §12.7).
   * Version 1: the chunk's handle for a file stored as one chunk, else null.
   */
  sha256?: string | null
}

export interface MirrorHealth {
  url: string
  ok: number
  failed: number
  /** failures that were faults (bad bytes, errors, stalls), not late answers a faster mirror beat */
  faults: number
  lastError: { code: RotreeErrorCode | string, message: string, at: string } | null
  lastFault: { code: RotreeErrorCode | string, message: string, at: string } | null
  healthy: boolean
}

export interface TreeStats {
  requests: number
  bytes: number
  cache: { entries: number, bytes: number, maxBytes: number, hits: number, misses: number }
  /** blobs from opts.blobCache that failed verification */
  localFaults: number
  mirrors: MirrorHealth[]
}

/** Byte range of a read, both ends inclusive (as fs.createReadStream). */
export interface ReadRange { start?: number, end?: number }

/** The Tree API; `S` is what createReadStream() returns on this platform (index.d.ts, node.d.ts). */
export interface TreeApi<S> {
  /** the address's key; null when it certifies a trust document (FORMAT.md §12.5) */
  readonly publicKey: string | null
  /** the address's anchor and name: what the reader's state is kept under */
  readonly id: string
  /** the accepted fsinfo.json; null before the first refresh() */
  readonly info: TreeInfo | null
  /** the exact bytes of the accepted fsinfo.json */
  readonly fsinfoBytes: Uint8Array | undefined
  /**
   * The accepted fsinfo.json record: a new object whenever a new root is
   * adopted (compare by identity); a snapshot's is the one it pinned. null before the first refresh().
   */
  readonly rootRecord: RootRecord | null
  /** @deprecated the old name of rootRecord */
  readonly current: RootRecord | null
  readonly stats: TreeStats
  /** the address's anchor (FORMAT.md §12.5) */
  readonly anchor: { kind: 'key', key: string } | { kind: 'trust', hash: string }
  /** the address's tree name ('' for none) */
  readonly name: string
  /** the newest trust document this reader trusts, walked from the anchor (docs/TRUST.md rule 10); null for a single-key or version-1 tree, and before the first refresh() */
  readonly trustDocument: TrustDoc | null
  /** A file of the published folder that is not a blob (a log tile, a trust document), from the mirrors in turn: the first answer `check` accepts; `check` throws a typed error for one it refuses. Nothing here verifies it. */
  fetchFile<T> (path: string, cap: number, check: (bytes: Uint8Array, mirror: string) => T | Promise<T>): Promise<T>
  /** The same file from every mirror at once, one result per mirror; a mirror without it (404) is no fault. */
  fetchFromEveryMirror<T> (path: string, cap: number, check: (bytes: Uint8Array, mirror: string) => T | Promise<T>): Promise<Array<{ mirror: string, value: T } | { mirror: string, error: Error & { code?: string } } | { mirror: string, absent: true }>>
  /** A root is accepted and not expired by this tree's clock and grace period. */
  isFresh (): boolean
  /**
   * Adopt the newest fsinfo.json that verifies on any mirror. True when the root changed.
   * A newer one that a slower mirror sends afterwards is adopted when it arrives.
   */
  refresh (): Promise<boolean>
  /** Verified bytes of one data chunk, exactly ref.size long (cache: false for big streaming reads). */
  readChunk (ref: Ref, o?: { cache?: boolean }): Promise<Uint8Array>
  /** The verified, decoded entry of a path under the current root (toStat() gives the public shape). */
  resolve (path: string, o?: { follow?: boolean }): Promise<Entry>
  /** Verified bytes of a file entry in [start, end), in order (lend: as readRange). */
  readEntry (entry: Entry, start?: number, end?: number, o?: { lend?: boolean }): AsyncGenerator<Uint8Array, void, undefined>
  /** A directory entry's entries (decoded, verified) in name order; admit(ref) is called before each page is read and may throw to end the walk. */
  entriesOf (dirEntry: Entry, o?: { admit?: (ref: Ref) => void }): AsyncGenerator<Entry, void, undefined>
  /** A view pinned to the current root (or to `root`, an accepted or historic root record): every call on it reads that root. */
  snapshot (root?: RootRecord): this
  /** Metadata, following symlinks. */
  stat (path: string): Promise<Stat>
  /** Metadata; a final symlink is described, not followed. */
  lstat (path: string): Promise<Stat>
  readdir (path: string, opts?: { withFileTypes?: false }): Promise<string[]>
  readdir (path: string, opts: { withFileTypes: true }): Promise<Stat[]>
  /** A directory's entries in name order, one verified page at a time. */
  list (path: string): AsyncGenerator<Stat, void, undefined>
  /** A whole file's verified bytes. */
  readFile (path: string): Promise<Uint8Array>
  /**
   * Verified bytes of a range, in order. With lend: true a big read's pieces
   * lie in buffers the reader gives back with release() once it is done with
   * them, so later chunks reuse that memory.
   */
  readRange (path: string, range?: ReadRange & { lend?: boolean }): AsyncGenerator<Uint8Array, void, undefined>
  /**
   * A piece from a { lend: true } read is done with (after its last use: a
   * write's callback, not its call). Once per piece; a piece never given back
   * is garbage-collected as usual; anything not lent is ignored.
   */
  release (piece: Uint8Array): void
  /** Verified bytes as a stream: only verified bytes are pushed; a failure ends it with the typed error. */
  createReadStream (path: string, range?: ReadRange): S
  close (): void
}

/** Parse '<mirror-url>#<anchor>[:<name>]' (FORMAT.md §1.4, §12.5); url is normalised to end in '/'. */
export declare function parseAddress (address: string): {
  url: string
  /** the anchor's key; null for a trust-document anchor ('t' + hash) */
  publicKey: string | null
  anchor: { kind: 'key', key: string } | { kind: 'trust', hash: string }
  name: string
  /** anchor and name as one string */
  id: string
}
/** Normalise a mirror base URL: http(s) only, no query or fragment, trailing '/'. */
export declare function mirrorUrl (s: string): string

/** The one byte range a Range header asks for (src/net/http-range.js, declared in http.d.ts). */
export { parseRange } from './http.js'
export { parseIdentities } from './access.js'

/** The public shape of a decoded entry. */
export declare function toStat (e: Entry): Stat

/** The highest { seq, root } accepted per public key, persisted in level (classic-level or IndexedDB). */
export declare class SeqStore {
  constructor (location: string | null)
  readonly location: string | null
  get (key: string): Promise<SeenRecord | null>
  /** Check against the highest seen and record if newer; throws ROTREE_ROLLBACK / ROTREE_FORK. */
  accept (key: string, info: { seq: number, root: Ref }): Promise<void>
  /** Format version 2: check-and-write with next(seen) (null: nothing to write), atomically across processes. */
  update (key: string, next: (seen: SeenRecord | null) => SeenRecordV2 | null): Promise<SeenRecordV2 | null>
}

export type BlobKind = 'dir' | 'cindex' | 'data'
/** Every blob reachable from a root, each directory page and chunk index loaded (and verified by `load`) once. */
export declare function walkTree (
  root: Ref,
  load: (ref: Ref, kind: 'dir' | 'cindex') => Promise<DirPage | ChunkIndex>,
  onRef: (ref: Ref, kind: BlobKind, path: string) => void | Promise<void>,
  o?: {
    /** page loads at once (default 64) */
    concurrency?: number
    /** page keys ('d'/'c' + hash) whose subtree is known: shared between calls, each subtree is walked once */
    walked?: Set<string>
    /** a page that cannot be loaded is reported here and its subtree skipped, instead of ending the walk */
    onLoadError?: (ref: Ref, kind: 'dir' | 'cindex', path: string, err: Error) => void
  }
): Promise<void>

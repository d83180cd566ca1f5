// Hand-written declarations for rotree-client/fetch (src/fetch/index.js):
// which mirror answers each request and how much is in flight (mirrors.js,
// sched.js, window.js), verified blobs with one fetch per blob in flight and
// an LRU charged by decoded size (blobs.js, cache.js, heap-cost.js), and the
// buffers lent reads give back (buffer-pool.js). Nothing here decides what is
// valid: the caller's `check` (trust.d.ts) does.
import type { Ref, DirPage, ChunkIndex } from './format.js'
import type { Transport, AbortSignalLike, BlobCache, BlobPool, BlobKind, MirrorHealth } from './tree.js'
import type { RotreeErrorCode } from './errors.js'

/** Verifies bytes a mirror sent and makes something of them; throws a typed error on bad data. */
export type Check<T> = (bytes: Uint8Array, mirror: string) => T | Promise<T>

/** What a failure says about a mirror: a typed error's code and message. */
export interface MirrorFault { code: RotreeErrorCode | string, message: string }

/** One mirror as Mirrors keeps it (the scheduler adds its window and counts). */
export interface MirrorEntry {
  /** reported: without userinfo */
  url: string
  /** requested: as given */
  href: string
  ok: number
  failed: number
  lastError: { code: RotreeErrorCode | string, message: string, at: string } | null
  penaltyUntil: number
  win: MirrorWindow
  counts: { requests: number, bytes: number, hedges: number, probes: number, late: number }
}

/** A mirror's health with the scheduler's view of it. */
export interface MirrorLoad extends MirrorHealth {
  requests: number
  bytes: number
  hedges: number
  late: number
  probes: number
  inflight: number
  windowBytes: number
  /** median request time, ms; null before the first */
  medianMs: number | null
}

/** One mirror's answer in fetchAll. */
export type MirrorResult<T> =
  | { mirror: string, value: T }
  | { mirror: string, error: MirrorFault & { mirror: string, err: Error } }
  | { mirror: string, absent: true }

export interface SchedulerTuning {
  /** bytes in flight plus bytes read ahead, every read together */
  maxInflightBytes: number
  /** requests in flight to one mirror */
  maxRequests: number
  initialWindow: number
  minWindow: number
  /** requests always allowed in flight to a mirror, whatever their size */
  minRequests: number
  /** a request is hedged after hedgeFactor × its mirror's median time + this */
  hedgeFloorMs: number
  hedgeFactor: number
  /** slower than the best mirror's median by this factor (and slowFloorMs): probes only */
  slowFactor: number
  slowFloorMs: number
  probeEveryMs: number
}

/** How long a failed mirror is asked last, ms (docs/TRUST.md rule 4). */
export declare const PENALTY_MS: number
/** What fetchAll adds to a mirror's measured round trips before it stops waiting for it, ms. */
export declare const SETTLE_FLOOR_MS: number
export declare const SCHED_DEFAULTS: Readonly<SchedulerTuning>
/** A message with any `scheme://user:pass@` in it shown without the userinfo. */
export declare function scrubMessage (text: unknown): string

/** Mirrors in turn (docs/TRUST.md rule 4): a mirror that fails is skipped for the next and reported. */
export declare class Mirrors {
  constructor (urls: string[], o: {
    transport: Transport
    timeoutMs: number
    penaltyMs?: number
    maxInflightBytes?: number
    maxRequests?: number
    minRequests?: number
    hedgeFloorMs?: number
  })
  readonly list: MirrorEntry[]
  readonly transport: Transport
  readonly timeoutMs: number
  readonly sched: FetchScheduler
  /** The first answer that passes `check`; pages (`urgent`) go ahead of data. */
  fetch<T> (path: string, cap: number, check: Check<T>, signal?: AbortSignalLike, o?: { urgent?: boolean, pool?: BufferPool | null }): Promise<T>
  /** Bytes one reader should keep requested ahead of what it consumes. */
  readAheadBytes (): number
  readonly maxInflightBytes: number
  readonly held: number
  reserve (n: number): void
  release (n: number): void
  /**
   * Every mirror at once (fsinfo.json), settled once each mirror still out has had the time its
   * distance explains. absentOk: a 404 is `{ mirror, absent: true }`, not a fault; until: resolve
   * as soon as one result satisfies it; onResult: each result as it arrives, late ones too.
   */
  fetchAll<T> (path: string, cap: number, check: Check<T>, o?: {
    settleMs?: number
    signal?: AbortSignalLike
    onResult?: (r: MirrorResult<T>) => void
    absentOk?: boolean
    until?: (r: MirrorResult<T>) => boolean
  }): Promise<Array<MirrorResult<T>>>
  /** What is in flight, and every later fetch, fails with ROTREE_ABORTED. */
  close (): void
  /** A mirror (an entry of `list`, or its url) failed: reported, and asked last for penaltyMs. */
  fault (m: MirrorEntry | string, err: MirrorFault): void
  health (): MirrorLoad[]
  schedStats (): { hedges: number, probes: number, peakInflight: number, peakInflightBytes: number, inflightBytes: number, held: number }
}

/** One Tree's fetch scheduler: every blob request waits here for room in a mirror's window. */
export declare class FetchScheduler {
  constructor (mirrors: Array<Pick<MirrorEntry, 'url' | 'href'>>, o: Partial<SchedulerTuning> & {
    transport: Transport
    timeoutMs: number
    penalised: (m: MirrorEntry) => boolean
    onFault: (m: MirrorEntry, err: Error) => void
    onLate: (m: MirrorEntry, path: string, winner: MirrorEntry, ms: number) => void
    onOk: (m: MirrorEntry) => void
    scrub?: (text: unknown) => string
  })
  readonly o: SchedulerTuning
  readonly maxInflightBytes: number
  held: number
  inflightBytes: number
  stats: { hedges: number, probes: number, peakInflight: number, peakInflightBytes: number }
  readAheadBytes (): number
  reserve (n: number): void
  release (n: number): void
  fetch<T> (path: string, cap: number, check: Check<T>, signal?: AbortSignalLike, o?: { urgent?: boolean, pool?: BufferPool | null }): Promise<T>
  close (): void
}

/** A ticket for one request in a window (MirrorWindow.sent). */
export interface WindowTicket { size: number, at: number, round: number, quiet: boolean }

/** One mirror as the reader measures it, and the bytes to keep in flight to it (BBR-like). */
export declare class MirrorWindow {
  constructor (o: { initial: number, min: number, max: number, minRequests?: number, now?: () => number })
  /** the window, bytes */
  bytes: number
  readonly min: number
  readonly max: number
  readonly minRequests: number
  inflight: number
  inflightBytes: number
  /** Room for one more request of `size` bytes. */
  fits (size: number): boolean
  /** The reader wanted more than the window allowed. */
  full (): void
  sent (size: number): WindowTicket
  done (t: WindowTicket, bytes?: number): void
  dropped (t: WindowTicket, o?: { fault?: boolean }): void
  lateness (late: boolean): void
  sample (ms: number, quiet?: boolean): void
  /** Median of recent request times (ms), or null before the first. */
  p50 (): number | null
  /** Bytes per ms at the best recent full round (0 before one). */
  rate (): number
}

/** Verified blobs for one tree: a local store, then the mirrors; shared in flight; an LRU by heap cost. */
export declare class VerifiedBlobs {
  constructor (o: { mirrors: Mirrors, cacheBytes: number, concurrency: number, local?: BlobCache, counters: { localFaults: number }, pool?: BufferPool | null })
  readonly cache: LRU
  readonly pool: BufferPool | null
  get (ref: Ref, kind: 'data', cache?: boolean, lend?: boolean): Promise<Uint8Array>
  get (ref: Ref, kind: 'dir', cache?: boolean): Promise<DirPage>
  get (ref: Ref, kind: 'cindex', cache?: boolean): Promise<ChunkIndex>
  /** Verified bytes of one data chunk, exactly ref.size long. */
  chunk (ref: Ref, cache?: boolean, lend?: boolean): Promise<Uint8Array>
}

/** Chunk buffers a reader gives back, reused for the next chunks (claims counted per buffer). */
export declare class BufferPool implements BlobPool {
  constructor (o?: { maxBytes?: number, alloc?: (n: number) => Uint8Array })
  readonly maxBytes: number
  freeBytes: number
  stats: { made: number, reused: number }
  take (n: number): Uint8Array | null
  owns (bytes: Uint8Array | null | undefined): boolean
  lend (bytes: Uint8Array, holders: number): void
  hold (bytes: Uint8Array): void
  drop (bytes: Uint8Array): void
  mark (piece: Uint8Array): void
  give (piece: Uint8Array | null | undefined): void
}
/** The process's pool of chunk buffers: one in Node, null in browsers. */
export declare function bufferPool (): BufferPool | null

/** A byte-bounded LRU: set(key, value, bytes) charges `bytes`. */
export declare class LRU<V = unknown> {
  constructor (maxBytes: number)
  get (key: string): V | undefined
  set (key: string, value: V, size: number): void
  stats (): { entries: number, bytes: number, maxBytes: number, hits: number, misses: number }
}
/** At most n of the returned function's tasks run at once. */
export declare function limiter (n: number): <T>(fn: () => Promise<T>) => Promise<T>
/** Bytes of memory a verified, decoded blob holds (docs/TRUST.md rule 9). */
export declare function heapCost (kind: BlobKind, value: unknown, size: number): number

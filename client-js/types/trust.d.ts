// Hand-written declarations for rotree-client/trust (src/trust/index.js):
// every decision about whether bytes are trusted (docs/TRUST.md). The pure
// rules of verify.js (verify.d.ts) and roles.js, the reader's state, the
// trust chain and the root store that apply them to what mirrors serve, and
// the address the user typed.
import type { Ref, Roles, Role, TrustDoc, TrustRef, DecodedFsinfoV2, Signature } from './format.js'
import type { SeenRecord, SeenRecordV2, checkFreshness } from './verify.js'
import type { RootRecord, TreeInfo, SeqStore } from './tree.js'
import type { Mirrors } from './fetch.js'

export {
  DEFAULT_SKEW_MS, verifyFsinfo, verifyFsinfoSignature, verifyHistoryEntry, checkFileHash, FileHashVerdicts, fileHashImplied,
  checkFreshness, isExpired, checkRollback, storedSizeOf, verifyBlob, verifyDecoded, verifyChunk, verifyDirPage, verifyChunkIndex,
  checkChunkIndexPlacement, checkPagePlacement, checkLeadRef, VERIFIERS, dirExpectation, childPageExpectation, localChunkFault, compareRoots,
  rankRoots, hasFork, staleMirrors,
  VerifyFsinfoOptions, VerifiedFsinfo, SeenRecord, SeenRecordV2, PagePlacement, MirrorAnswer
} from './verify.js'
export { parseAddress, mirrorUrl, SeqStore } from './tree.js'

/** An address's anchor (FORMAT.md §12.5): a public key, or the hash of trust document 1. */
export type Anchor = { kind: 'key', key: string } | { kind: 'trust', hash: string }

/** The keys whose signatures counted, by role (docs/TRUST.md rule 11). */
export interface Signers { release: Set<string>, timestamp: Set<string> }

/**
 * A trust document accepted as a step of the chain, with its JSON text (and, as
 * fetched, its bytes; firstTrustSource: the index of the source that gave it).
 */
export type AcceptedTrustDoc = TrustDoc & { text: string, bytes?: Uint8Array, source?: number }

// roles.js: docs/TRUST.md rules 10–14 and 17, pure
/** How many trust documents one refresh may walk (docs/TRUST.md rule 10). */
export declare const MAX_TRUST_STEPS: number
/** FORMAT.md §12.5: `<anchor>[:<name>]`; id is the two as one string, the key of the persisted state. */
export declare function parseFragment (fragment: string): { anchor: Anchor, name: string, id: string }
/** The anchor as an address spells it: the key, or 't' and the trust hash. */
export declare function anchorText (anchor: Anchor): string
/** The anchor of a family whose first trust document is `doc1`: 't' + SHA-256 of its message. */
export declare function trustAnchorOf (doc1: { message: Uint8Array }): string
/** SHA-256 of a trust document's message: what fsinfo.json's `trust.hash` names. */
export declare function trustHash (doc: { message: Uint8Array }): string
/** The distinct keys of `role` with a valid signature over `message` (rule 11). */
export declare function validSigners (message: Uint8Array, sigs: Signature[], role: Pick<Role, 'keys'>): Set<string>
/** ROTREE_THRESHOLD unless at least role.threshold distinct role keys signed; returns them. */
export declare function requireThreshold (message: Uint8Array, sigs: Signature[], role: Role, what: string): Set<string>
/** Rule 10: accept trust document `next` after `prev` (null: `next` is document 1, certified by the anchor). */
export declare function acceptTrustStep<D extends TrustDoc> (prev: TrustDoc | null, next: D, anchor: Anchor): D
/** Rule 10 over consecutive documents, oldest first: the newest trusted one. */
export declare function walkTrust (trusted: TrustDoc | null, docs: TrustDoc[], anchor: Anchor): TrustDoc | null
/** The roles of a tree that never adopted a trust document: its key holds every role alone. */
export declare function singleKeyRoles (key: string): Roles
/** Rules 1 and 12: fsinfo.json and its release are for the address's family and name. */
export declare function checkAddress (info: DecodedFsinfoV2, anchor: Anchor, name: string): void
/** Rule 17: the address key alone is believed only while `newest` still lists it in a role. */
export declare function checkLoneKey (anchor: Anchor, newest: TrustDoc | null, what: string): void
/** Rule 13: whether `other` is the very document `known` is; two documents with one number are ROTREE_FORK. */
export declare function sameTrustDocument (known: TrustRef | null | undefined, other: TrustRef): boolean
/** The document an fsinfo.json names ({ seq, hash }) is the one the chain reached (ROTREE_BAD_FORMAT, or a fork). */
export declare function checkNamedTrust (trust: TrustDoc | null, named: TrustRef, what: string): void
/** Rule 14: ROTREE_RETIRED when the newest trust document has no release keys. */
export declare function checkNotRetired (trust: TrustDoc | null | undefined): void
/** Rules 12, 14, 11 and 2 for a version-2 fsinfo.json; the sequences are advanceState's. */
export declare function verifyFsinfoV2 (info: DecodedFsinfoV2, o: {
  anchor: Anchor
  name: string
  /** the newest trusted document (walkTrust); null for a single-key tree */
  trust: TrustDoc | null
  now: number
  skewMs: number
  graceMs: number
  checkFreshness: typeof checkFreshness
}): { roles: Roles, signers: Signers }
/** Rule 11 for both signed parts of an fsinfo.json. */
export declare function countSigners (info: DecodedFsinfoV2, roles: Roles): Signers
/** Rule 17: an old version-2 fsinfo.json from history/, without the clock and the rollback state. */
export declare function verifyHistoryEntryV2 (info: DecodedFsinfoV2, o: { anchor: Anchor, name: string, trust: TrustDoc | null, newest?: TrustDoc | null }): { roles: Roles, signers: Signers }
/** Rule 13: the state after accepting `info`, or ROTREE_ROLLBACK / ROTREE_FORK. */
export declare function advanceState (seen: SeenRecordV2 | null, info: DecodedFsinfoV2, roles: Roles, signers?: { release: Iterable<string>, timestamp: Iterable<string> }): { state: SeenRecordV2, newer: boolean }

// state.js
/** A persisted record as read back: null, { seq, root } or a version-2 record; anything else throws ROTREE_STATE. */
export declare function checkRecord (rec: unknown, where: string): SeenRecord | null
/** Where a reader keeps its state by default: $ROTREE_STATE, $XDG_STATE_HOME/rotree, ~/.local/state/rotree (Node); 'rotree' in browsers. */
export declare function defaultStateDir (env?: Record<string, string | undefined>): string
/** The database inside a state directory (Node), or its IndexedDB name (browsers). */
export declare function stateLocation (dir: string): string

// trust-chain.js: rule 10 against what serves trust documents
/**
 * Where trust documents come from. get(n, accept) resolves to trust/<n>.json as
 * `accept` returns it (accept throws a typed error for a document it refuses),
 * or to null when the source has no document n.
 */
export interface TrustSource {
  get (n: number, accept: (bytes: Uint8Array | string) => AcceptedTrustDoc): Promise<AcceptedTrustDoc | null>
}
/** The mirrors in turn: a refused document is a fault, and so is having none. */
export declare function mirrorTrustSource (mirrors: Mirrors): TrustSource
/** Every mirror at once, for the document after the newest trusted one: a 404 is no fault; none: null. */
export declare function probeTrustSource (mirrors: Mirrors): TrustSource
/** Each document from the first source that has one it accepts (a folder's own copy, then the mirrors). */
export declare function firstTrustSource (...sources: TrustSource[]): TrustSource
/**
 * Rule 10, one document at a time from `from` (null: the anchor) up to document `to`, or while
 * the source has a next one, at most `maxSteps`; onStep(doc) runs for each before the next is
 * asked for. The newest document reached (`from` when none was).
 */
export declare function walkChain<F extends TrustDoc | null = null> (source: TrustSource, o: {
  anchor: Anchor
  from?: F
  to?: number
  maxSteps?: number
  onStep?: (doc: AcceptedTrustDoc) => unknown
}): Promise<AcceptedTrustDoc | F>
/** The trust documents of one address as this reader knows them, each persisted once accepted. */
export declare class TrustChain {
  constructor (o: { anchor: Anchor, id: string, mirrors: Mirrors, state: SeqStore })
  readonly anchor: Anchor
  readonly id: string
  /** the newest trusted document, or null */
  readonly doc: AcceptedTrustDoc | null
  /** Take up the persisted newest document when it is newer (ROTREE_STATE when it is damaged). */
  load (): Promise<AcceptedTrustDoc | null>
  /** Walk on to document `target` (at most MAX_TRUST_STEPS per call). */
  reach (target: number): Promise<AcceptedTrustDoc>
  /** Ask every mirror for the documents after the newest trusted one (TUF's "update the root first"). */
  probe (): Promise<AcceptedTrustDoc | null>
}

// root-store.js: which signed root a tree reads
/** A verified version-2 fsinfo.json as a root record (without the mirror it came from). */
export interface RootRecordV2 {
  version: 2
  key: string | null
  anchor: string
  name: string
  seq: number
  issued: string
  expires: string
  issuedMs: number
  expiresMs: number
  /** the first of fsinfo.json's, the release's and the trust document's expiry */
  untilMs: number
  root: Ref
  rootMtime: number
  release: { seq: number, expires: string, expiresMs: number, hash: string }
  trust: TrustRef | null
  trustText: string | undefined
  raw: Uint8Array | string
  info: DecodedFsinfoV2
  roles: Roles
  signers: Signers
}
export declare function rootRecordV2 (info: DecodedFsinfoV2, o: { roles: Roles, signers: Signers, trust: TrustDoc | null, key: string | null, anchor: string, raw: Uint8Array | string }): RootRecordV2
/** A private tree's root record with its root opened by `openPrivate` (ROTREE_NO_ACCESS without one). */
export declare function openPrivateRecord (record: RootRecordV2, openPrivate?: (info: object) => Promise<{ ref: object, mtime: number }>): Promise<RootRecordV2>
/** The public shape of an accepted record (Tree.info). */
export declare function infoOf (r: RootRecord): TreeInfo
export declare function infoOf (r: RootRecord | null | undefined): TreeInfo | null | undefined
/** Asks every mirror for fsinfo.json, accepts answers only through the trust rules, adopts the newest. */
export declare class RootStore {
  constructor (o: {
    publicKey: string | null
    anchor?: Anchor
    name?: string
    id?: string
    mirrors: Mirrors
    state: SeqStore
    now: () => number
    skewMs: number
    graceMs: number
    settleMs: number
    /** told the root page's ref of each answer that verified and is newer than the accepted root */
    prefetch?: (rootRef: Ref) => void
  })
  readonly publicKey: string | null
  readonly anchor: Anchor
  readonly name: string
  readonly id: string
  readonly trust: TrustChain
  /** the accepted record; a new object per adopted root */
  readonly record: RootRecord | null
  /** the last failure while adopting a late answer */
  readonly lateError: { code: string, message: string } | null
  isFresh (record?: RootRecord | null): boolean
  /** The root for one operation; an absent or expired one is refreshed first. */
  root (): Promise<RootRecord | null>
  /** True when the accepted root changed. Concurrent calls share one round. */
  refresh (): Promise<boolean>
}

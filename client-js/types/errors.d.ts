// Hand-written declarations for rotree-client/errors (src/errors.js).
// Every error has a fixed `name` and a stable `code`; docs/ERRORS.md lists them.

export type RotreeErrorCode =
  | 'ROTREE_ERR'
  | 'ROTREE_BAD_ADDRESS' | 'ROTREE_BAD_KEY' | 'ROTREE_BAD_FORMAT' | 'ROTREE_UNSUPPORTED_VERSION'
  | 'ROTREE_BAD_SIGNATURE' | 'ROTREE_WRONG_KEY' | 'ROTREE_EXPIRED' | 'ROTREE_NOT_YET_VALID'
  | 'ROTREE_ROLLBACK' | 'ROTREE_FORK' | 'ROTREE_THRESHOLD' | 'ROTREE_WRONG_NAME' | 'ROTREE_RETIRED' | 'ROTREE_NO_ACCESS' | 'ROTREE_HASH_MISMATCH' | 'ROTREE_TOO_LARGE' | 'ROTREE_TRUNCATED'
  | 'ROTREE_MIRROR_HTTP' | 'ROTREE_MIRROR_NETWORK' | 'ROTREE_TIMEOUT' | 'ROTREE_ALL_MIRRORS_FAILED'
  | 'ROTREE_NOT_FOUND' | 'ROTREE_NOT_A_DIRECTORY' | 'ROTREE_IS_A_DIRECTORY' | 'ROTREE_SYMLINK_LOOP'
  | 'ROTREE_BAD_PATH' | 'ROTREE_BAD_RANGE' | 'ROTREE_STATE' | 'ROTREE_BUILD_INPUT' | 'ROTREE_ABORTED'
  | 'ROTREE_USAGE' | 'ROTREE_LOCKED' | 'ROTREE_PUSH_FAILED' | 'ROTREE_SPLIT_VIEW'

/** What one mirror did, on errors that name every mirror (docs/TRUST.md rule 4). */
export interface MirrorFailure {
  mirror: string
  code: RotreeErrorCode | string
  message: string
}

export interface RotreeErrorOptions {
  cause?: unknown
  /** copied onto the error (e.g. { status }, { errors }) */
  details?: object
}

export declare class RotreeError extends Error {
  constructor (message: string, opts?: RotreeErrorOptions)
  code: RotreeErrorCode
  /** ROTREE_ALL_MIRRORS_FAILED: each mirror and what it did (its own code) */
  errors?: MirrorFailure[]
  /** ROTREE_MIRROR_HTTP: the HTTP status */
  status?: number
  /** ROTREE_HASH_MISMATCH: the handle asked for and what the bytes hashed to */
  expected?: string
  actual?: string
  /** ROTREE_NOT_FOUND: the path proven absent */
  path?: string
  /** ROTREE_ROLLBACK / ROTREE_FORK: the offered and the already-seen sequence numbers */
  seq?: number
  seen?: number
  /** ROTREE_EXPIRED / ROTREE_NOT_YET_VALID: the times compared */
  expires?: string
  issued?: string
  now?: number
}

type Coded<C extends RotreeErrorCode> = new (message: string, opts?: RotreeErrorOptions) => RotreeError & { code: C }

export declare const BadAddressError: Coded<'ROTREE_BAD_ADDRESS'>
export declare const BadKeyError: Coded<'ROTREE_BAD_KEY'>
export declare const BadFormatError: Coded<'ROTREE_BAD_FORMAT'>
export declare const UnsupportedVersionError: Coded<'ROTREE_UNSUPPORTED_VERSION'>
export declare const BadSignatureError: Coded<'ROTREE_BAD_SIGNATURE'>
export declare const WrongKeyError: Coded<'ROTREE_WRONG_KEY'>
export declare const ExpiredError: Coded<'ROTREE_EXPIRED'>
export declare const NotYetValidError: Coded<'ROTREE_NOT_YET_VALID'>
export declare const RollbackError: Coded<'ROTREE_ROLLBACK'>
export declare const ForkError: Coded<'ROTREE_FORK'>
export declare const ThresholdError: Coded<'ROTREE_THRESHOLD'>
export declare const WrongNameError: Coded<'ROTREE_WRONG_NAME'>
export declare const RetiredError: Coded<'ROTREE_RETIRED'>
export declare const NoAccessError: Coded<'ROTREE_NO_ACCESS'>
export declare const HashMismatchError: Coded<'ROTREE_HASH_MISMATCH'>
export declare const TooLargeError: Coded<'ROTREE_TOO_LARGE'>
export declare const TruncatedError: Coded<'ROTREE_TRUNCATED'>
export declare const MirrorHttpError: Coded<'ROTREE_MIRROR_HTTP'>
export declare const MirrorNetworkError: Coded<'ROTREE_MIRROR_NETWORK'>
export declare const TimeoutError: Coded<'ROTREE_TIMEOUT'>
export declare const AllMirrorsFailedError: Coded<'ROTREE_ALL_MIRRORS_FAILED'>
export declare const NotFoundError: Coded<'ROTREE_NOT_FOUND'>
export declare const NotADirectoryError: Coded<'ROTREE_NOT_A_DIRECTORY'>
export declare const IsADirectoryError: Coded<'ROTREE_IS_A_DIRECTORY'>
export declare const SymlinkLoopError: Coded<'ROTREE_SYMLINK_LOOP'>
export declare const BadPathError: Coded<'ROTREE_BAD_PATH'>
export declare const BadRangeError: Coded<'ROTREE_BAD_RANGE'>
export declare const StateError: Coded<'ROTREE_STATE'>
export declare const BuildInputError: Coded<'ROTREE_BUILD_INPUT'>
export declare const AbortedError: Coded<'ROTREE_ABORTED'>
export declare const UsageError: Coded<'ROTREE_USAGE'>
export declare const LockedError: Coded<'ROTREE_LOCKED'>
export declare const PushError: Coded<'ROTREE_PUSH_FAILED'>
export declare const SplitViewError: Coded<'ROTREE_SPLIT_VIEW'>

/** One row per error: [code, class name, HTTP status, flags ('fault', 'damage', 'absent', space-separated), one-line meaning]; docs/ERRORS.md is checked against it. */
export declare const ERROR_TABLE: ReadonlyArray<readonly [RotreeErrorCode, string, number, string, string]>

/** Codes that mean "this mirror misbehaved, try the next one" (docs/TRUST.md rule 4). */
export declare const MIRROR_FAULT_CODES: ReadonlySet<RotreeErrorCode>
/** Codes that mean "these bytes are not the blob their handle names". */
export declare const DAMAGE_CODES: ReadonlySet<RotreeErrorCode>
/** Codes a verified directory proved (docs/TRUST.md rule 5). */
export declare const ABSENT_CODES: ReadonlySet<RotreeErrorCode>

/** The HTTP status for an error (the gateway's and the Service Worker's); 500 for anything not ours. */
export declare function statusOf (err: unknown): number

/** ROTREE_ALL_MIRRORS_FAILED for `path`, each mirror's failure in `errors`. */
export declare function allFailed (path: string, errors: Array<MirrorFailure & { err?: unknown }>): RotreeError & { code: 'ROTREE_ALL_MIRRORS_FAILED', errors: MirrorFailure[] }
/** The verdict itself when every mirror gave the same verdict on signed data (a wrong key, an expired tree), else allFailed. */
export declare function unanimousOrAllFailed (path: string, errors: Array<MirrorFailure & { err?: unknown }>): RotreeError & { errors: MirrorFailure[] }


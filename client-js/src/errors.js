// Every error rotree throws, in one place. Each has a fixed
// `name`, a stable `code` that scripts and the gateway rely on, and an optional
// `cause`. docs/ERRORS.md lists every code; test/errors.test.js keeps it true.

export class RotreeError extends Error {
  /** @param {string} message @param {{ cause?: unknown, details?: object }} [opts] */
  constructor (message, opts = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause })
    this.name = 'RotreeError'
    this.code = 'ROTREE_ERR'
    if (opts.details) Object.assign(this, opts.details)
  }
}

/**
 * One row per error: code, class name, HTTP status, flags, one-line meaning.
 * docs/ERRORS.md is checked against this table in both directions
 * (test/errors.test.js). The flags:
 *   fault   the mirror that answered misbehaved: skip it for the next one
 *           (docs/TRUST.md rule 4); a reader never hands out its bytes
 *   damage  a blob's bytes are not the blob its handle names (a local disk,
 *           cache or mirror holds a bad copy: drop it, fetch another)
 *   absent  a verified, sorted directory proves the path is not there
 *           (docs/TRUST.md rule 5)
 * The status is what the gateway and the Service Worker answer (statusOf).
 */
export const ERROR_TABLE = [
  ['ROTREE_BAD_ADDRESS', 'BadAddressError', 400, '', 'the tree address is not `<url>#<anchor>[:<name>]` (anchor: a 64-hex public key, or `t` and a 64-hex trust document hash)'],
  ['ROTREE_BAD_KEY', 'BadKeyError', 500, '', 'a key or key file is malformed'],
  ['ROTREE_BAD_FORMAT', 'BadFormatError', 502, 'fault damage', 'bytes that verified by hash (or fsinfo.json) do not decode under the format rules'],
  ['ROTREE_UNSUPPORTED_VERSION', 'UnsupportedVersionError', 502, 'fault', 'fsinfo.json names a format major version this reader does not know'],
  ['ROTREE_BAD_SIGNATURE', 'BadSignatureError', 502, 'fault', 'fsinfo.json is not signed by the public key in the address'],
  ['ROTREE_WRONG_KEY', 'WrongKeyError', 502, 'fault', 'fsinfo.json names a different public key or tree family (anchor) than the address, or a trust document belongs to another family'],
  ['ROTREE_EXPIRED', 'ExpiredError', 502, 'fault', 'fsinfo.json has expired by the reader\'s clock'],
  ['ROTREE_NOT_YET_VALID', 'NotYetValidError', 502, 'fault', 'fsinfo.json is issued further in the future than the clock-skew allowance'],
  ['ROTREE_ROLLBACK', 'RollbackError', 502, 'fault', 'fsinfo.json has a lower sequence number than one this reader already accepted'],
  ['ROTREE_FORK', 'ForkError', 502, 'fault', 'fsinfo.json has the same sequence number as an accepted one but a different root'],
  ['ROTREE_THRESHOLD', 'ThresholdError', 502, 'fault', 'a version-2 document has fewer valid signatures from distinct keys of its role than the role\'s threshold'],
  ['ROTREE_WRONG_NAME', 'WrongNameError', 502, 'fault', 'fsinfo.json or its release names another tree than the address'],
  ['ROTREE_RETIRED', 'RetiredError', 410, '', 'the tree\'s trust document has no release keys: its publisher retired it'],
  ['ROTREE_NO_ACCESS', 'NoAccessError', 403, '', 'the tree is private and no identity given to this reader is one of its readers (FORMAT.md §12.8), or a gated edge refuses the reader\'s grant (FORMAT.md §12.10–12.11)'],
  ['ROTREE_HASH_MISMATCH', 'HashMismatchError', 502, 'fault damage', 'a blob\'s bytes do not hash to the handle that referenced it'],
  ['ROTREE_TOO_LARGE', 'TooLargeError', 502, 'fault damage', 'a mirror sent more bytes than the referencing entry allows'],
  ['ROTREE_TRUNCATED', 'TruncatedError', 502, 'fault damage', 'a mirror sent fewer bytes than the referencing entry says'],
  ['ROTREE_MIRROR_HTTP', 'MirrorHttpError', 502, 'fault', 'a mirror answered with an HTTP error status'],
  ['ROTREE_MIRROR_NETWORK', 'MirrorNetworkError', 502, 'fault', 'a mirror could not be reached or dropped the connection'],
  ['ROTREE_TIMEOUT', 'TimeoutError', 504, 'fault', 'a mirror stalled past the per-request timeout'],
  ['ROTREE_ALL_MIRRORS_FAILED', 'AllMirrorsFailedError', 502, '', 'every mirror failed (even all alike); `errors` holds each mirror\'s own `code`; 504 when all stalled'],
  ['ROTREE_NOT_FOUND', 'NotFoundError', 404, 'absent', 'a verified directory proves the path does not exist'],
  ['ROTREE_NOT_A_DIRECTORY', 'NotADirectoryError', 404, 'absent', 'a path component is a file where a directory was needed'],
  ['ROTREE_IS_A_DIRECTORY', 'IsADirectoryError', 409, '', 'a file operation was given a directory'],
  ['ROTREE_SYMLINK_LOOP', 'SymlinkLoopError', 508, '', 'resolving a path took more than 40 symlinks, 4,096 components or 32 KiB of targets, or left the tree'],
  ['ROTREE_BAD_PATH', 'BadPathError', 400, '', 'a path is malformed (empty component, NUL, too long, too deep)'],
  ['ROTREE_BAD_RANGE', 'BadRangeError', 416, '', 'a byte range is outside the file or malformed'],
  ['ROTREE_STATE', 'StateError', 503, '', 'the persisted reader state (highest sequence per key) cannot be read or written, lost its tables, or holds an invalid record'],
  ['ROTREE_BUILD_INPUT', 'BuildInputError', 500, '', 'the builder met input it cannot publish (special file, bad name, escaping symlink, file changed while read)'],
  ['ROTREE_ABORTED', 'AbortedError', 499, '', 'the caller aborted the operation'],
  ['ROTREE_USAGE', 'UsageError', 400, '', 'a command was called with bad arguments'],
  ['ROTREE_PUSH_FAILED', 'PushError', 500, '', 'rotree push could not upload to the remote (rclone missing or failed); the remote keeps its previous tree'],
  ['ROTREE_LOCKED', 'LockedError', 503, '', 'another rotree process is writing to the same folder (build, gc, sign --publish, resign; pull, fsck --repair-from)'],
  ['ROTREE_SPLIT_VIEW', 'SplitViewError', 502, 'fault', 'the tree\'s transparency log holds two different signed roots (or releases) for one sequence number, or a mirror serves a fsinfo.json other than the one the log holds for its sequence']
]

const classes = {}
for (const [code, name] of ERROR_TABLE) {
  classes[name] = class extends RotreeError {
    constructor (message, opts) {
      super(message, opts)
      this.name = name
      this.code = code
    }
  }
  Object.defineProperty(classes[name], 'name', { value: name })
}

export const {
  BadAddressError, BadKeyError, BadFormatError, UnsupportedVersionError, BadSignatureError,
  WrongKeyError, ExpiredError, NotYetValidError, RollbackError, ForkError, HashMismatchError,
  TooLargeError, TruncatedError, MirrorHttpError, MirrorNetworkError, TimeoutError,
  AllMirrorsFailedError, NotFoundError, NotADirectoryError, IsADirectoryError, SymlinkLoopError,
  BadPathError, BadRangeError, StateError, BuildInputError, AbortedError, UsageError,
  LockedError, ThresholdError, WrongNameError, RetiredError, NoAccessError, PushError, SplitViewError
} = classes

const withFlag = flag => new Set(ERROR_TABLE.filter(r => r[3].split(' ').includes(flag)).map(r => r[0]))

/** Errors that mean "this mirror misbehaved, try the next one" (docs/TRUST.md rule 4). */
export const MIRROR_FAULT_CODES = withFlag('fault')

/** Errors that mean "these bytes are not the blob their handle names". */
export const DAMAGE_CODES = withFlag('damage')

/** Errors that a verified directory proved (docs/TRUST.md rule 5). */
export const ABSENT_CODES = withFlag('absent')

const STATUS = new Map(ERROR_TABLE.map(r => [r[0], r[2]]))

/**
 * The one mapping from an error to an HTTP status, for the gateway and the
 * Service Worker alike: 404 only for a verified absence, 502 for a mirror that
 * lied or failed, 504 when every mirror stalled, 4xx for what the client sent,
 * 500 for anything that is not ours (a bug).
 * @param {any} err @returns {number}
 */
export function statusOf (err) {
  if (err?.code === 'ROTREE_BAD_PATH' && err.status === 414) return 414
  if (err?.code === 'ROTREE_ALL_MIRRORS_FAILED' && err.errors?.length && err.errors.every(e => e.code === 'ROTREE_TIMEOUT')) return 504
  return STATUS.get(err?.code) ?? 500
}

// Verdicts of the publisher's signed data, or of the address against it: when
// every mirror gives the same one, it is reported as itself (a wrong key is
// the address's problem, not the mirrors'), with each mirror's answer kept.
const VERDICT_CODES = new Set(['ROTREE_WRONG_KEY', 'ROTREE_WRONG_NAME', 'ROTREE_EXPIRED', 'ROTREE_NOT_YET_VALID', 'ROTREE_UNSUPPORTED_VERSION', 'ROTREE_BAD_SIGNATURE', 'ROTREE_THRESHOLD', 'ROTREE_SPLIT_VIEW'])

/**
 * The error for fsinfo.json when no mirror gave an answer to accept: the
 * verdict itself when every mirror gave the same verdict on signed data (all
 * say the tree is another key's, or expired), else allFailed.
 * @param {string} path @param {{ mirror: string, code: string, message: string, err?: Error }[]} errors
 */
export function unanimousOrAllFailed (path, errors) {
  const codes = new Set(errors.map(e => e.code))
  if (errors.length === 0 || codes.size !== 1 || !VERDICT_CODES.has(errors[0].code)) return allFailed(path, errors)
  const first = errors[0]
  const E = first.err?.constructor && first.err instanceof RotreeError ? first.err.constructor : classes[ERROR_TABLE.find(r => r[0] === first.code)[1]]
  const list = errors.map(({ mirror, code, message }) => ({ mirror, code, message }))
  const who = errors.length === 1 ? `the mirror (${first.mirror})` : `all ${errors.length} mirrors`
  return new E(`${first.message} (${who} said so)`, { cause: first.err, details: { errors: list } })
}

/**
 * The error for "no mirror gave a good answer": always
 * ROTREE_ALL_MIRRORS_FAILED, even when every mirror failed the same way (one
 * mirror that stalled, or all serving an expired root), so a script matches
 * one code for "the mirrors let me down". `errors` lists each mirror with its
 * own code and message (docs/TRUST.md rule 4); `cause` is the first mirror's
 * error.
 * @param {string} path what was fetched ('fsinfo.json', 'h/<hex>')
 * @param {{ mirror: string, code: string, message: string, err?: Error }[]} errors
 */
export function allFailed (path, errors) {
  const what = errors.map(e => `${e.mirror}: ${e.code} (${e.message})`).join('; ')
  const list = errors.map(({ mirror, code, message }) => ({ mirror, code, message }))
  const cause = errors[0]?.err
  const message = errors.length === 0 ? `no mirror to ask for ${path}` : `every mirror failed for ${path}: ${what}`
  return new AllMirrorsFailedError(message, { cause, details: { errors: list } })
}

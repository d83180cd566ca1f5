// Every error rotree throws, in one place (STYLE.md habit 4). Each has a fixed
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

/** code, class name, one-line meaning: the table docs/ERRORS.md is checked against. */
export const ERROR_TABLE = [
  ['ROTREE_BAD_ADDRESS', 'BadAddressError', 'the tree address is not <url>#<64-hex public key>'],
  ['ROTREE_BAD_KEY', 'BadKeyError', 'a key or key file is malformed'],
  ['ROTREE_BAD_FORMAT', 'BadFormatError', 'bytes that verified by hash (or fsinfo.json) do not decode under the format rules'],
  ['ROTREE_UNSUPPORTED_VERSION', 'UnsupportedVersionError', 'fsinfo.json names a format major version this reader does not know'],
  ['ROTREE_BAD_SIGNATURE', 'BadSignatureError', 'fsinfo.json is not signed by the public key in the address'],
  ['ROTREE_WRONG_KEY', 'WrongKeyError', 'fsinfo.json names a different public key than the address'],
  ['ROTREE_EXPIRED', 'ExpiredError', 'fsinfo.json has expired by the reader\'s clock'],
  ['ROTREE_NOT_YET_VALID', 'NotYetValidError', 'fsinfo.json is issued further in the future than the clock-skew allowance'],
  ['ROTREE_ROLLBACK', 'RollbackError', 'fsinfo.json has a lower sequence number than one this reader already accepted'],
  ['ROTREE_FORK', 'ForkError', 'fsinfo.json has the same sequence number as an accepted one but a different root'],
  ['ROTREE_HASH_MISMATCH', 'HashMismatchError', 'a blob\'s bytes do not hash to the handle that referenced it'],
  ['ROTREE_TOO_LARGE', 'TooLargeError', 'a mirror sent more bytes than the referencing entry allows'],
  ['ROTREE_TRUNCATED', 'TruncatedError', 'a mirror sent fewer bytes than the referencing entry says'],
  ['ROTREE_MIRROR_HTTP', 'MirrorHttpError', 'a mirror answered with an HTTP error status'],
  ['ROTREE_MIRROR_NETWORK', 'MirrorNetworkError', 'a mirror could not be reached or dropped the connection'],
  ['ROTREE_TIMEOUT', 'TimeoutError', 'a mirror stalled past the per-request timeout'],
  ['ROTREE_ALL_MIRRORS_FAILED', 'AllMirrorsFailedError', 'every mirror failed; `errors` holds what each one did'],
  ['ROTREE_NOT_FOUND', 'NotFoundError', 'a verified directory proves the path does not exist'],
  ['ROTREE_NOT_A_DIRECTORY', 'NotADirectoryError', 'a path component is a file where a directory was needed'],
  ['ROTREE_IS_A_DIRECTORY', 'IsADirectoryError', 'a file operation was given a directory'],
  ['ROTREE_SYMLINK_LOOP', 'SymlinkLoopError', 'resolving symlinks took more than the loop limit, or left the tree'],
  ['ROTREE_BAD_PATH', 'BadPathError', 'a path is malformed (empty component, NUL, too long, too deep)'],
  ['ROTREE_BAD_RANGE', 'BadRangeError', 'a byte range is outside the file or malformed'],
  ['ROTREE_STATE', 'StateError', 'the persisted reader state (highest sequence per key) could not be read or written'],
  ['ROTREE_BUILD_INPUT', 'BuildInputError', 'the builder met input it cannot publish (special file, bad name, escaping symlink, file changed while read)'],
  ['ROTREE_ABORTED', 'AbortedError', 'the caller aborted the operation'],
  ['ROTREE_USAGE', 'UsageError', 'a command was called with bad arguments'],
  ['ROTREE_LOCKED', 'LockedError', 'another rotree process is writing to the same folder (build, gc, sign --publish, resign; pull, fsck --repair-from)']
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
  LockedError
} = classes

/** Errors that mean "this mirror misbehaved, try the next one" (trust rule 4). */
export const MIRROR_FAULT_CODES = new Set([
  'ROTREE_BAD_FORMAT', 'ROTREE_UNSUPPORTED_VERSION', 'ROTREE_BAD_SIGNATURE', 'ROTREE_WRONG_KEY',
  'ROTREE_EXPIRED', 'ROTREE_NOT_YET_VALID', 'ROTREE_ROLLBACK', 'ROTREE_FORK', 'ROTREE_HASH_MISMATCH',
  'ROTREE_TOO_LARGE', 'ROTREE_TRUNCATED', 'ROTREE_MIRROR_HTTP', 'ROTREE_MIRROR_NETWORK', 'ROTREE_TIMEOUT'
])

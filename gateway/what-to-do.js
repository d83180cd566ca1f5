// What a person who got an error page from the gateway can do about it, by
// the error's stable code (docs/ERRORS.md): the last line of every error
// response (http-status.js). Said to the gateway's users, curl, wget and
// WebDAV clients and browsers, who cannot pass a reader's options: where
// the fix is the operator's (another mirror, an identity, the address), the
// sentence says whom to tell. The command line's sentences are
// cli/what-to-do.js's; the web app's are web/explain.js's.

const OPERATOR = 'tell whoever runs this gateway (its log names each mirror\'s fault)'

const TEXT = {
  ROTREE_NOT_FOUND: 'The signed tree has no such path: check the URL; the listing of its folder (?listing) shows what is there.',
  ROTREE_NOT_A_DIRECTORY: 'A part of this path is a file: open the folder above it.',
  ROTREE_IS_A_DIRECTORY: 'This path is a folder: ask for it with a trailing / for its listing.',
  ROTREE_SYMLINK_LOOP: 'The path goes through too many links, or a link that leaves the tree: open the folder that holds the link.',
  ROTREE_BAD_PATH: 'Fix the path: no NUL, no control characters, and percent-encoding that decodes to UTF-8.',
  ROTREE_BAD_RANGE: 'Ask for a range within the file (a HEAD request gives its size).',
  ROTREE_EXPIRED: `The tree's signature has expired: the publisher must re-sign it (rotree resign), or the mirrors serve a stale copy; try again later, or ${OPERATOR}.`,
  ROTREE_NOT_YET_VALID: 'The tree claims to be signed later than the gateway\'s clock allows: whoever runs this gateway should check its clock.',
  ROTREE_WRONG_KEY: `The mirrors serve a tree not signed by the key this gateway was given: ${OPERATOR}, who should check the address after #.`,
  ROTREE_WRONG_NAME: `The mirrors serve a tree of another name than this gateway was given: ${OPERATOR}.`,
  ROTREE_BAD_SIGNATURE: `The mirrors serve a forged or damaged fsinfo.json, or the gateway has the wrong key: ${OPERATOR}.`,
  ROTREE_THRESHOLD: `Too few valid signatures: a forgery, the wrong key, or a release the publisher has not finished signing; try again later, or ${OPERATOR}.`,
  ROTREE_ROLLBACK: `The mirrors serve an older tree than the gateway already saw: wait for them to catch up, or ${OPERATOR}.`,
  ROTREE_SPLIT_VIEW: 'The tree\'s log holds two different releases under one sequence number: tell the publisher (a key may be stolen) and trust neither.',
  ROTREE_FORK: 'Two different trees were signed under one sequence number: tell the publisher (a key may be stolen) and trust neither.',
  ROTREE_RETIRED: 'The publisher retired this tree: ask them for its new address.',
  ROTREE_UNSUPPORTED_VERSION: 'The tree uses a newer format than this gateway knows: whoever runs it should update rotree.',
  ROTREE_NO_ACCESS: 'This tree is private and the gateway holds no identity that opens it: whoever runs it gives one (rotree gateway --identity FILE), or asks the publisher to add its recipient.',
  ROTREE_ALL_MIRRORS_FAILED: `No mirror gave bytes that verify (each one is listed above): try again later; if it persists, ${OPERATOR}.`,
  ROTREE_TIMEOUT: `The mirrors stalled: try again later; if it persists, ${OPERATOR}.`
}
for (const c of ['ROTREE_HASH_MISMATCH', 'ROTREE_TOO_LARGE', 'ROTREE_TRUNCATED', 'ROTREE_BAD_FORMAT', 'ROTREE_MIRROR_HTTP', 'ROTREE_MIRROR_NETWORK']) {
  TEXT[c] = `A mirror sent bytes that do not verify, or failed; nothing it sent was passed on: try again; if it persists, ${OPERATOR}.`
}

/** The sentence for `code`, or null (a request the client got wrong says so in its message). */
export function gatewayWhatToDo (code) { return TEXT[code] ?? null }

/** Every code with a sentence (test/gateway/what-to-do.test.js holds them to the error table). */
export const GATEWAY_WHAT_TO_DO_CODES = Object.freeze(Object.keys(TEXT))

// What to do about an error, for a person at the command line.
/**
 * What a person at a terminal can do about each error, in one plain
 * sentence: the CLI's last line (cli/main.js). The web app says it in a
 * browser's terms (web/explain.js; test/errors.test.js holds the two to the
 * same codes).
 * No sentence for ROTREE_BAD_PATH (local paths and tree paths alike: each
 * message says what is wrong with which) and ROTREE_ABORTED (the person
 * interrupted it; the message says how to resume).
 */
export const WHAT_TO_DO = Object.freeze({
  ROTREE_BAD_ADDRESS: 'An address is <mirror-url>#<key> (or #t<hash>, then :<name> for a named tree), as the last line of rotree build printed it.',
  ROTREE_BAD_KEY: 'Check the key file: rotree keygen writes one, and a sealed one needs its passphrase ($ROTREE_PASSPHRASE).',
  ROTREE_BAD_FORMAT: 'A mirror sent data that does not decode: try another mirror (--mirror URL); if every mirror does, tell the publisher.',
  ROTREE_UNSUPPORTED_VERSION: 'The tree uses a newer format than this reader knows: update rotree.',
  ROTREE_BAD_SIGNATURE: 'Check the key in the address; if it is right, the mirror serves a forged or damaged fsinfo.json: use another mirror.',
  ROTREE_WRONG_KEY: 'Check the address: the part after # must be the publisher\'s key, as rotree build printed it; if it is, this mirror serves another tree.',
  ROTREE_EXPIRED: 'Ask the publisher to re-sign the tree (rotree resign), or use a mirror with the current fsinfo.json; check this computer\'s clock.',
  ROTREE_NOT_YET_VALID: 'Check this computer\'s clock: the tree says it was signed later than now.',
  ROTREE_ROLLBACK: 'The mirror is behind what this reader saw before: use another mirror, or wait for it to catch up.',
  ROTREE_FORK: 'Two different trees were signed with one sequence number: tell the publisher (a key may be stolen) and trust neither.',
  ROTREE_SPLIT_VIEW: 'The tree\'s log shows two different roots under one sequence number: tell the publisher (a key may be stolen), keep the audit output, and trust neither root.',
  ROTREE_THRESHOLD: 'Too few valid signatures: check the address; if it is right, the mirror serves a forged document, or the publisher has not finished signing (rotree sign).',
  ROTREE_WRONG_NAME: 'Check the tree name after the key in the address (#<key>:<name>).',
  ROTREE_RETIRED: 'The publisher retired this tree: ask them for its new address.',
  ROTREE_NO_ACCESS: 'Give your identity file (--identity FILE or $ROTREE_IDENTITY), or ask the publisher to add your age1… recipient (rotree access add); a gated mirror needs a current grant (--grant FILE --grant-key KEYFILE).',
  ROTREE_HASH_MISMATCH: 'A mirror or disk holds damaged or tampered data: try another mirror (--mirror URL); for your own folder, run rotree fsck.',
  ROTREE_TOO_LARGE: 'A mirror sent more than the signed tree allows: try another mirror (--mirror URL).',
  ROTREE_TRUNCATED: 'A mirror sent less than the signed tree says: try again, or another mirror (--mirror URL); for your own folder, run rotree fsck.',
  ROTREE_MIRROR_HTTP: 'Check the mirror URL (the part before #): the mirror answered with an HTTP error.',
  ROTREE_MIRROR_NETWORK: 'Check the mirror URL and the network, or add another mirror (--mirror URL).',
  ROTREE_TIMEOUT: 'The mirror stalled: try again, another mirror (--mirror URL), or a longer --timeout.',
  ROTREE_ALL_MIRRORS_FAILED: 'Each mirror\'s reason is listed: fix the address, or add a mirror that works (--mirror URL).',
  ROTREE_NOT_FOUND: 'The signed tree has no such path: list its folder (rotree ls ADDR DIR).',
  ROTREE_NOT_A_DIRECTORY: 'A part of the path is a file: list its folder (rotree ls ADDR DIR).',
  ROTREE_IS_A_DIRECTORY: 'This is a folder: list it (rotree ls) or download it (rotree get ADDR DIR -o DEST).',
  ROTREE_SYMLINK_LOOP: 'The path goes through too many links, or leaves the tree: look at the link itself (rotree stat).',
  ROTREE_BAD_RANGE: 'Ask for bytes within the file (rotree stat gives its size).',
  ROTREE_STATE: 'The reader state folder ($ROTREE_STATE or --state-dir) cannot be used: check its permissions and free space.',
  ROTREE_BUILD_INPUT: 'Fix or remove the named entry, or build with --skip-bad to leave such entries out.',
  ROTREE_USAGE: 'Run rotree help COMMAND for its options.',
  ROTREE_PUSH_FAILED: 'Check rclone (Debian package rclone) and the remote; the remote keeps its previous tree, and a rerun resumes.',
  ROTREE_LOCKED: 'Another rotree process is working in that folder: wait for it to finish (a dead process\'s lock is taken over by the next run).'
})

// The operating system's errors a person meets first (errno codes; the CLI
// prints them as ROTREE_SYSTEM_<errno>)
const SYSTEM_TO_DO = Object.freeze({
  EADDRINUSE: 'Another program listens on that port: pick another with --port (--port 0 takes a free one).',
  EACCES: 'Permission denied: check the permissions of the file or folder named (a port below 1024 needs root).',
  EPERM: 'Not permitted: check who owns the file or folder named.',
  ENOSPC: 'The disk is full: free some space and run the command again (a rerun resumes).',
  ENOENT: 'No such file or folder: check the path.',
  EROFS: 'The file system is read-only: write somewhere else.'
})

/**
 * What to do about `err`: its own `todo`, else its code's sentence, or, when every mirror failed
 * the same way, that way's (the mirrors are not the problem then).
 * @param {any} err @returns {string|null}
 */
export function whatToDo (err) {
  if (typeof err?.todo === 'string') return err.todo // an error that knows better than its code
  let code = err?.code
  if (code === 'ROTREE_ALL_MIRRORS_FAILED' && err.errors?.length) {
    const codes = new Set(err.errors.map(e => e.code))
    if (codes.size === 1) code = [...codes][0]
  }
  return WHAT_TO_DO[code] ?? SYSTEM_TO_DO[code] ?? null
}

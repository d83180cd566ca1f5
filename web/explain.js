// What a rotree error means to a person reading the page: a title and one
// sentence, by the error's stable code (docs/ERRORS.md). Shared by the app and
// the Service Worker's error pages.

const TEXT = {
  ROTREE_HASH_MISMATCH: ['Tampered or corrupted data', 'A mirror sent bytes that do not match the signed tree. Nothing it sent was shown or saved.'],
  ROTREE_TOO_LARGE: ['Tampered or corrupted data', 'A mirror sent more bytes than the signed tree allows. Nothing it sent was shown or saved.'],
  ROTREE_TRUNCATED: ['Incomplete data', 'A mirror sent fewer bytes than the signed tree says. Nothing it sent was shown or saved.'],
  ROTREE_BAD_FORMAT: ['Malformed data', 'A mirror sent data that does not decode under the rotree format. Nothing it sent was shown.'],
  ROTREE_BAD_SIGNATURE: ['Bad signature', 'fsinfo.json is not signed by the public key in the address: a forgery, or the wrong key.'],
  ROTREE_WRONG_KEY: ['Wrong key', 'The mirror serves a tree signed by a different key than the one in the address.'],
  ROTREE_EXPIRED: ['Expired tree', 'The signed tree has expired by this computer\'s clock. A mirror may be serving a stale copy (a freeze attack), or the publisher has not re-signed it.'],
  ROTREE_NOT_YET_VALID: ['Tree from the future', 'fsinfo.json claims to be issued later than this computer\'s clock allows. Check the clock.'],
  ROTREE_ROLLBACK: ['Rollback', 'A mirror serves an older version of this tree than this browser has already seen (a rollback attack, or a stale mirror).'],
  ROTREE_RETIRED: ['Retired tree', 'The publisher has retired this tree: its trust document has no release keys, so nothing published under it is shown any more.'],
  ROTREE_FORK: ['Forked tree', 'Two different trees are signed under one sequence number: the publisher\'s key may be compromised.'],
  ROTREE_UNSUPPORTED_VERSION: ['Unsupported format', 'This tree uses a format version this reader does not know.'],
  ROTREE_MIRROR_HTTP: ['Mirror error', 'The mirror answered with an HTTP error.'],
  ROTREE_MIRROR_NETWORK: ['Mirror unreachable', 'The mirror could not be reached (network, CORS, or it dropped the connection).'],
  ROTREE_TIMEOUT: ['Mirror timed out', 'The mirror did not answer in time.'],
  ROTREE_ALL_MIRRORS_FAILED: ['Every mirror failed', 'No mirror gave an answer that verifies; each one is listed below.'],
  ROTREE_NO_ACCESS: ['Private tree', 'This tree is private: only its readers open it, each with their own identity file (from rotree keygen --reader or age-keygen).'],
  ROTREE_NOT_FOUND: ['Not found', 'The signed tree proves this path does not exist.'],
  ROTREE_NOT_A_DIRECTORY: ['Not a directory', 'A part of this path is a file.'],
  ROTREE_IS_A_DIRECTORY: ['Is a directory', 'This path is a directory.'],
  ROTREE_SYMLINK_LOOP: ['Symlink loop', 'Resolving this path took too many symlinks, or left the tree.'],
  ROTREE_BAD_PATH: ['Bad path', 'This path is malformed.'],
  ROTREE_BAD_ADDRESS: ['Bad address', 'The address must be <url>#<64-hex public key>.'],
  ROTREE_STATE: ['Browser storage failed', 'The highest version seen (rollback protection) could not be read or stored in IndexedDB.']
}

/**
 * When every mirror failed the same way (one mirror, or all serving the same
 * lie), that way is what the reader needs to know: the tampering, the expiry,
 * the rollback; the mirrors are listed beside it (mirrorErrors).
 * @param {any} err @returns {{ code: string, title: string, text: string }}
 */
export function explain (err) {
  let code = typeof err?.code === 'string' ? err.code : 'ERROR'
  if (code === 'ROTREE_ALL_MIRRORS_FAILED') {
    const codes = new Set(mirrorErrors(err).map(e => e.code))
    const [only] = codes
    if (codes.size === 1 && TEXT[only]) code = only
  }
  const [title, text] = TEXT[code] ?? ['Error', 'Something went wrong.']
  return { code, title, text }
}

/**
 * What to tell the reader about an identity file that does not open a
 * private tree (FORMAT.md §12.8): not one of its readers, or not usable here
 * at all (not an identity, a post-quantum one in a browser, too large).
 * @param {string} name the file's name @param {any} err
 */
export function identityRefusal (name, err) {
  return err?.code === 'ROTREE_NO_ACCESS'
    ? `The identity in ${name} is not one of this tree's readers (ROTREE_NO_ACCESS): choose another identity file.`
    : `${name} cannot be used here (${err?.code ?? 'ERROR'}): ${err?.message ?? err}`
}

/** Per-mirror failures carried by an error (trust rule 4), or []. */
export function mirrorErrors (err) {
  return Array.isArray(err?.errors) ? err.errors.map(e => ({ mirror: e.mirror, code: e.code, message: e.message })) : []
}

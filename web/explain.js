// What a rotree error means to a person reading the page, by the error's
// stable code (docs/ERRORS.md): a title, one sentence saying what happened,
// and one saying what to do about it. The one place these texts live: the
// app, the bar of a verified site and the Service Worker's error pages all
// read them from here. (The command line has its own wording of what to do,
// with its flags: cli/what-to-do.js.) Imports nothing: a key's
// own origin serves it as it is (docs/WEB.md "One origin per site").

// a mirror is added to the address with ?mirror=URL, in the app and in site.html
const ANOTHER_MIRROR = 'add another mirror to the address (?mirror=URL)'

/** code: [title, what happened, what to do] */
const TEXT = {
  ROTREE_HASH_MISMATCH: ['Tampered or corrupted data', 'A mirror sent bytes that do not match the signed tree. Nothing it sent was shown or saved.',
    `Try again later, or ${ANOTHER_MIRROR}; tell whoever runs this mirror that its copy is damaged or altered.`],
  ROTREE_TOO_LARGE: ['Tampered or corrupted data', 'A mirror sent more bytes than the signed tree allows. Nothing it sent was shown or saved.',
    `Try again later, or ${ANOTHER_MIRROR}.`],
  ROTREE_TRUNCATED: ['Incomplete data', 'A mirror sent fewer bytes than the signed tree says. Nothing it sent was shown or saved.',
    `Reload to try again; if it keeps happening, ${ANOTHER_MIRROR}.`],
  ROTREE_BAD_FORMAT: ['Malformed data', 'A mirror sent data that does not decode under the rotree format. Nothing it sent was shown.',
    `${cap(ANOTHER_MIRROR)}; if every mirror does this, tell the publisher.`],
  ROTREE_BAD_SIGNATURE: ['Bad signature', 'fsinfo.json is not signed by the public key in the address: a forgery, or the wrong key.',
    `Compare the key in the address with the one the publisher gave you; if they match, this mirror serves a forgery: ${ANOTHER_MIRROR}.`],
  ROTREE_WRONG_KEY: ['Wrong key', 'The mirror serves a tree signed by a different key than the one in the address.',
    `Check the address: the part after # must be the publisher's key. If it is, this mirror serves another tree: ${ANOTHER_MIRROR}.`],
  ROTREE_WRONG_NAME: ['Wrong tree name', 'The mirror serves a tree of another name than the one in the address.',
    'Check the tree name after the key in the address (#<key>:<name>).'],
  ROTREE_THRESHOLD: ['Too few signatures', 'fsinfo.json or a trust document lacks enough valid signatures from the keys of its role.',
    `Check the address; if it is right, this mirror serves a forgery, or the publisher has not finished signing: try again later, or ${ANOTHER_MIRROR}.`],
  ROTREE_EXPIRED: ['Expired tree', 'The signed tree has expired by this computer\'s clock. A mirror may be serving a stale copy (a freeze attack), or the publisher has not re-signed it.',
    'Ask the publisher to re-sign (rotree resign), or try again later; check this computer\'s clock too.'],
  ROTREE_NOT_YET_VALID: ['Tree from the future', 'fsinfo.json claims to be issued later than this computer\'s clock allows. Check the clock.',
    'Set this computer\'s clock right (date, time and time zone), then reload.'],
  ROTREE_ROLLBACK: ['Rollback', 'A mirror serves an older version of this tree than this browser has already seen (a rollback attack, or a stale mirror).',
    `Wait until the mirror catches up and reload, or ${ANOTHER_MIRROR}. Do not clear this site's data to get past it: that accepts the old version.`],
  ROTREE_RETIRED: ['Retired tree', 'The publisher has retired this tree: its trust document has no release keys, so nothing published under it is shown any more.',
    'Ask the publisher for the tree\'s new address.'],
  ROTREE_FORK: ['Forked tree', 'Two different trees are signed under one sequence number: the publisher\'s key may be compromised.',
    'Trust neither version, and tell the publisher: a key of theirs may be stolen.'],
  ROTREE_SPLIT_VIEW: ['Split view', 'The tree\'s public log holds two different releases under one sequence number, or this mirror serves one the log does not hold: someone may be showing different readers different trees.',
    'Trust neither version, and tell the publisher: a key of theirs may be stolen.'],
  ROTREE_UNSUPPORTED_VERSION: ['Unsupported format', 'This tree uses a format version this reader does not know.',
    'Open it with a newer rotree (the command line, or an updated copy of this app).'],
  ROTREE_MIRROR_HTTP: ['Mirror error', 'The mirror answered with an HTTP error.',
    'Check the mirror\'s address (the part before #, or ?mirror=): it may not hold this tree. Or try again later.'],
  ROTREE_MIRROR_NETWORK: ['Mirror unreachable', 'The mirror could not be reached (network, CORS, or it dropped the connection).',
    'Check your connection and the mirror\'s address; a mirror on another site must allow cross-origin reads (CORS).'],
  ROTREE_TIMEOUT: ['Mirror timed out', 'The mirror did not answer in time.',
    `Reload to try again, or ${ANOTHER_MIRROR}.`],
  ROTREE_ALL_MIRRORS_FAILED: ['Every mirror failed', 'No mirror gave an answer that verifies; each one is listed below.',
    `Read each mirror's reason below: fix the address, or ${ANOTHER_MIRROR} that works.`],
  ROTREE_NO_ACCESS: ['Private tree', 'This tree is private: only its readers open it, each with their own identity file (from rotree keygen --reader or age-keygen).',
    'Choose your identity file, or ask the publisher to add your age1… recipient.'],
  ROTREE_NOT_FOUND: ['Not found', 'The signed tree proves this path does not exist.',
    'Check the link or the address for a typo.'],
  ROTREE_NOT_A_DIRECTORY: ['Not a directory', 'A part of this path is a file.',
    'Go up to the folder and open the file from there.'],
  ROTREE_IS_A_DIRECTORY: ['Is a directory', 'This path is a directory.',
    'Open it as a folder.'],
  ROTREE_SYMLINK_LOOP: ['Symlink loop', 'Resolving this path took too many symlinks, or left the tree.',
    'Open the folder that holds the link and look at its target; the publisher can fix the link.'],
  ROTREE_BAD_PATH: ['Bad path', 'This path is malformed.',
    'Write the path as /folder/file: no empty parts, not too long or deep.'],
  ROTREE_BAD_RANGE: ['Bad range', 'The bytes asked for are not within the file.',
    'Reload the page; ask for bytes within the file.'],
  ROTREE_BAD_ADDRESS: ['Bad address', 'The address must be <url>#<64-hex public key>.',
    'Use the address the publisher gave: the part after # is their key (64 hex digits, or t and 64 for a trust anchor).'],
  ROTREE_STATE: ['Browser storage failed', 'The highest version seen (rollback protection) could not be read or stored in IndexedDB.',
    'Let this site store data (a private window or a full disk may refuse it), then reload.'],
  ROTREE_USAGE: ['Cannot run here', 'This page was opened in a way it does not support.',
    'Do what the message below says, then reload.'],
  ROTREE_ABORTED: ['Stopped', 'The operation was stopped before it finished.',
    'Start it again.']
}

const UNKNOWN = ['Error', 'Something went wrong.', 'Reload to try again; the details below say what failed.']

function cap (s) { return s[0].toUpperCase() + s.slice(1) }

/** Every code with its texts (for tests and docs). */
export const CODES = Object.freeze(Object.keys(TEXT))

/**
 * When every mirror failed the same way (one mirror, or all serving the same
 * lie), that way is what the reader needs to know: the tampering, the expiry,
 * the rollback; the mirrors are listed beside it (mirrorErrors).
 * @param {any} err @returns {{ code: string, title: string, text: string, todo: string }}
 *   todo: what to do about it, one sentence
 */
export function explain (err) {
  let code = typeof err?.code === 'string' ? err.code : 'ERROR'
  if (code === 'ROTREE_ALL_MIRRORS_FAILED') {
    const codes = new Set(mirrorErrors(err).map(e => e.code))
    const [only] = codes
    if (codes.size === 1 && TEXT[only]) code = only
  }
  const [title, text, todo] = TEXT[code] ?? UNKNOWN
  return { code, title, text, todo }
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

/** What the gated-tree card and bar say (FORMAT.md §12.10–12.11, docs/WEB.md "Gated trees in the browser"). */
export const GATED_TEXT = 'This tree is gated: its mirrors send its files only to holders of a grant. Choose your grant file (rotree grant issue or delegate) and the key file it was given to (rotree keygen).'
export const GATED_TODO = 'Choose both files; if you have no grant, ask the tree\'s publisher for one to your public key.'

/**
 * What to tell the reader about a grant and key file that do not open a gated
 * tree: checked in the browser (another tree's grant, an expired one, a key
 * that is not its holder's, a file of the wrong kind or sealed with a
 * passphrase; web/grant.js sets `reason`), or refused by a mirror's token
 * exchange (ROTREE_NO_ACCESS with the edge's reason). Never a mirror's fault.
 * @param {{ grant?: string, key?: string }} names the files' names @param {any} err
 */
export function grantRefusal ({ grant = 'the grant file', key = 'the key file' }, err) {
  switch (err?.reason) {
    case 'tree': return `${grant} is a grant for another tree (${err.tree}), not this one: ask for a grant to this tree.`
    case 'expired': return `${grant} expired at ${err.expires}: ask whoever gave it to you for a new one.`
    case 'holder': return `${key} is not the key ${grant} was given to (its holder is ${err.holder}): choose that key's file.`
    case 'sealed': return `${key} is sealed with a passphrase, which this browser cannot open: use a key file without one (for example a key made for this browser, with a grant delegated to it by rotree grant delegate).`
    case 'not-grant': return `${grant} is not a rotree grant (${err.message}).`
    case 'not-key': return `${key} is not a rotree key file (${err.message}).`
  }
  if (err?.code === 'ROTREE_NO_ACCESS') return `The tree's mirror refuses ${grant} (ROTREE_NO_ACCESS): ${err.message}`
  return `${grant} cannot be used here (${err?.code ?? 'ERROR'}): ${err?.message ?? err}`
}

/** Per-mirror failures carried by an error (trust rule 4), or []. */
export function mirrorErrors (err) {
  return Array.isArray(err?.errors) ? err.errors.map(e => ({ mirror: e.mirror, code: e.code, message: e.message })) : []
}

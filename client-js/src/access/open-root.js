// How a reader opens a private tree's root (FORMAT.md §12.8), once the
// fsinfo.json that names it has verified (trust/roles.js): the keyring it
// names, fetched and checked by hash, opened with the reader's identity for
// the epoch key; the root ref unwrapped with that key and checked against
// the commitment the release keys signed. An identity that opens no stanza
// is ROTREE_NO_ACCESS: a decision of the publisher, never a mirror's fault.
import { bech32 } from '@scure/base'
import { NoAccessError, BadFormatError, UsageError } from '../errors.js'
// the ciphers, in Node loaded by the first private root only (ciphers-node.js)
import { ciphers } from '#access-ciphers'

const IDENTITY_RE = /^AGE-SECRET-KEY-(PQ-)?1[0-9A-Z]+$/

/**
 * The age identities a reader was given: an identity file's text (as
 * age-keygen writes it: # comments, one identity per line), one identity,
 * or a list of either.
 * @param {string|string[]|null|undefined} v
 * @returns {string[]}
 */
export function parseIdentities (v) {
  if (v === null || v === undefined) return []
  const out = []
  for (const text of Array.isArray(v) ? v : [v]) {
    if (typeof text !== 'string') throw new UsageError('an identity is the text of an age identity file (AGE-SECRET-KEY-1…)')
    for (const raw of text.split(/\r?\n/)) {
      const line = raw.trim()
      if (line === '' || line.startsWith('#')) continue
      if (!IDENTITY_RE.test(line)) throw new UsageError('not an age identity: a line that is neither a comment nor AGE-SECRET-KEY-1… (a recipient age1… is the public half: the identity file holds the secret one)')
      // decoded now: a damaged identity is the reader's mistake, never a mirror's fault later
      let key
      try { key = bech32.decodeToBytes(line.toLowerCase()) } catch { key = null }
      if (key === null || key.bytes.length !== 32 || key.prefix !== (line.startsWith('AGE-SECRET-KEY-PQ-') ? 'age-secret-key-pq-' : 'age-secret-key-')) {
        throw new UsageError(`not an age identity: ${line.slice(0, 18)}… does not decode (a character lost or changed?)`)
      }
      out.push(line)
    }
  }
  return out
}

/**
 * A reader's opener of private roots. Keyrings are opened once per handle
 * (every mirror's answer, every refresh, names the same one until the
 * readers change).
 * @param {{ identities: string[], fetchKeyring: (ref: { hash: string, size: number }) => Promise<Uint8Array> }} o
 *   fetchKeyring: the keyring blob, verified by hash and exact size
 * @returns {(info: object) => Promise<{ ref: object, mtime: number }>} info: a verified fsinfo.json v2 with `access`
 */
export function rootOpener ({ identities, fetchKeyring }) {
  const epochs = new Map() // keyring handle → Promise<{ epoch, key }>
  const epochOf = ref => {
    let p = epochs.get(ref.hash)
    if (p === undefined) {
      p = openWith(identities, fetchKeyring(ref))
      epochs.set(ref.hash, p)
      p.catch(() => { if (epochs.get(ref.hash) === p) epochs.delete(ref.hash) })
      if (epochs.size > 8) epochs.delete(epochs.keys().next().value)
    }
    return p
  }
  return async info => {
    const a = info.access
    if (identities.length === 0) throw new NoAccessError('the tree is private and no identity was given to read it with (--identity FILE, ROTREE_IDENTITY, or openTree(address, { identity }))')
    const { epoch, key } = await epochOf(a.keyring)
    if (epoch !== a.epoch) throw new BadFormatError(`the keyring holds the key of epoch ${epoch}, fsinfo.json names epoch ${a.epoch}`)
    const { unwrapRoot } = await ciphers()
    return unwrapRoot(key, a.root, info.release.root.private)
  }
}

// the first identity that opens the keyring; NO_ACCESS only when none does
async function openWith (identities, bytesP) {
  const [bytes, { openKeyring }] = await Promise.all([bytesP, ciphers()])
  let denied = null
  for (const id of identities) {
    try { return await openKeyring(bytes, id) } catch (err) {
      if (err.code !== 'ROTREE_NO_ACCESS') throw err
      denied = err
    }
  }
  throw denied
}

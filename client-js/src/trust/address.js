// FORMAT.md §1.4 and §12.5: a tree address is <mirror-url>#<anchor>[:<name>].
// The anchor makes the name self-certifying (SFS's self-certifying
// pathnames): a 64-hex public key (every address of format version 1, and
// version-2 trees that key publishes or hands its roles on from), or
// `t<64 hex>`, the hash of a version-2 family's first trust document. The
// name selects one tree of a family (docs/TRUST.md rule 12).
import { BadAddressError } from '../errors.js'
import { parseFragment } from './roles.js'

/**
 * @param {string} address
 * @returns {{ url: string, publicKey: string|null, anchor: { kind: 'key', key: string } | { kind: 'trust', hash: string }, name: string, id: string }}
 *   url ends in '/'; publicKey: the anchor's key, null for a trust-document anchor;
 *   id: anchor and name as one string (the key of the reader's persisted state)
 */
export function parseAddress (address) {
  if (typeof address !== 'string') throw new BadAddressError('tree address must be a string')
  const hash = address.lastIndexOf('#')
  if (hash < 0) throw new BadAddressError(`tree address ${JSON.stringify(address)} has no #<public-key>`)
  const { anchor, name, id } = parseFragment(address.slice(hash + 1))
  return { url: mirrorUrl(address.slice(0, hash)), publicKey: anchor.kind === 'key' ? anchor.key : null, anchor, name, id }
}

/** Normalise a mirror base URL: http(s) only, no query or fragment, trailing '/'. */
export function mirrorUrl (s) {
  let u
  try { u = new URL(s) } catch { throw new BadAddressError(`not a URL: ${JSON.stringify(s)}`) }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new BadAddressError(`mirror must be http or https: ${s}`)
  if (u.search || u.hash) throw new BadAddressError(`mirror URL must not have a query or fragment: ${s}`)
  if (!u.pathname.endsWith('/')) u.pathname += '/'
  return u.href
}

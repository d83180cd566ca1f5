// FORMAT.md §1.4: a tree address is <mirror-url>#<public-key>; the key in the
// address makes the name self-certifying (SFS's self-certifying pathnames).
import { BadAddressError } from './errors.js'

const KEY_RE = /^[0-9a-f]{64}$/

/** @param {string} address @returns {{ url: string, publicKey: string }} url ends in '/' */
export function parseAddress (address) {
  if (typeof address !== 'string') throw new BadAddressError('tree address must be a string')
  const hash = address.lastIndexOf('#')
  if (hash < 0) throw new BadAddressError(`tree address ${JSON.stringify(address)} has no #<public-key>`)
  const publicKey = address.slice(hash + 1).toLowerCase()
  if (!KEY_RE.test(publicKey)) throw new BadAddressError(`tree address key must be 64 hex digits, got ${JSON.stringify(address.slice(hash + 1))}`)
  return { url: mirrorUrl(address.slice(0, hash)), publicKey }
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

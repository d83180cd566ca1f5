// The URL rules both transports (transport-node.js, transport-web.js) apply,
// with no I/O and no Node built-in, so the browser bundle can take it:
//   - userinfo (`user:pass@`) in a mirror URL is a credential: it goes out as
//     an Authorization: Basic header to that URL's own origin only, and never
//     into an error message, a statistic or a reported URL (redactUrl);
//   - a redirect is the mirror's answer like any other (docs/TRUST.md rule 4):
//     it may lead only to the mirror's own origin unless the reader allowed
//     more, never from https to http, never to a non-http(s) scheme, and at
//     most MAX_REDIRECTS times. A mirror must not be able to point a gateway
//     at any host:port it likes (docs/SECURITY.md).
import { MirrorHttpError, BadAddressError, UsageError } from '../errors.js'

export const MAX_REDIRECTS = 5

const isHttp = u => u.protocol === 'http:' || u.protocol === 'https:'
const shown = url => JSON.stringify(redactUrl(url))

/**
 * A URL as it may be shown: without userinfo. Works on strings that do not
 * parse too (the userinfo part is cut by pattern), so it is safe in any message.
 * @param {string|URL} url @returns {string}
 */
export function redactUrl (url) {
  let u
  try { u = new URL(String(url)) } catch {
    return String(url).replace(/^([a-z][a-z0-9+.-]*:\/*)[^/?#]*@/i, '$1')
  }
  if (u.username || u.password) { u.username = ''; u.password = '' }
  return u.href
}

/**
 * Parse a URL to fetch: http(s) only. A bad one is the mirror's fault when it
 * came from a redirect, and the caller's otherwise; both are MirrorHttpError,
 * as before, so a bad --mirror fails like a dead one.
 * @param {string} url @returns {URL}
 */
export function parseTarget (url) {
  let u
  try { u = new URL(url) } catch {}
  if (!u || !isHttp(u)) throw new MirrorHttpError(`not an http(s) URL: ${shown(url)}`)
  return u
}

/**
 * The Authorization header for a URL's userinfo, as curl sends it:
 * percent-decoded `user:password`, UTF-8, base64. null when there is none.
 * @param {URL} u @returns {string|null}
 */
export function basicAuth (u) {
  if (!u.username && !u.password) return null
  let pair
  try { pair = decodeURIComponent(u.username) + ':' + decodeURIComponent(u.password) } catch {
    throw new BadAddressError(`the user:password in the mirror URL for ${u.origin} is not valid percent-encoding`)
  }
  const bytes = new TextEncoder().encode(pair)
  let bin = ''
  for (let i = 0; i < bytes.length; i++) bin += String.fromCharCode(bytes[i])
  return 'Basic ' + btoa(bin)
}

/**
 * Which origins a redirect may lead to, besides the mirror's own.
 * @param {{ allowRedirectOrigins?: string[], crossOriginRedirects?: boolean }} [o]
 *   allowRedirectOrigins: origins ('https://cdn.example.org') a mirror may send
 *   the reader to; crossOriginRedirects: any origin at all (still no downgrade)
 * @returns {{ any: boolean, origins: Set<string> }}
 */
export function redirectPolicy ({ allowRedirectOrigins = [], crossOriginRedirects = false } = {}) {
  const origins = new Set()
  for (const o of allowRedirectOrigins) {
    let u
    try { u = new URL(o) } catch {}
    if (!u || !isHttp(u)) throw new UsageError(`allowRedirectOrigins: not an http(s) origin: ${shown(o)}`)
    origins.add(u.origin)
  }
  return { any: crossOriginRedirects === true, origins }
}

/**
 * The next hop of a redirect, or a MirrorHttpError saying why not.
 * @param {URL} first the URL the reader asked for (the mirror's origin)
 * @param {URL} current the URL that answered with the redirect
 * @param {string} location its Location header
 * @param {number} hops redirects followed so far
 * @param {{ any: boolean, origins: Set<string> }} policy from redirectPolicy
 * @param {number} status
 * @returns {URL} without userinfo: a mirror never chooses credentials
 */
export function redirectTarget (first, current, location, hops, policy, status) {
  const details = { details: { status } }
  if (hops >= MAX_REDIRECTS) throw new MirrorHttpError(`${current.origin}: too many redirects`, details)
  let next
  try { next = new URL(location, current) } catch { throw new MirrorHttpError(`${current.origin}: bad redirect Location`, details) }
  if (!isHttp(next)) throw new MirrorHttpError(`${current.origin} redirected to ${shown(next)}, not an http(s) URL`, details)
  next.username = ''; next.password = ''
  if (current.protocol === 'https:' && next.protocol === 'http:') throw new MirrorHttpError(`${current.origin} redirected from https to http (${next.origin}): refused`, details)
  if (!sameMirror(first, next) && !policy.any && !policy.origins.has(next.origin)) {
    throw new MirrorHttpError(`${current.origin} redirected to another origin (${next.origin}): refused (allowRedirectOrigins)`, details)
  }
  return next
}

/**
 * A hop still on the mirror the reader named: the same origin, or the same
 * host moved from http on its default port to https on its default port (the
 * usual "always use https" redirect; the host is still the one the reader chose).
 */
function sameMirror (first, next) {
  if (next.origin === first.origin) return true
  return first.protocol === 'http:' && next.protocol === 'https:' && first.hostname === next.hostname && first.port === '' && next.port === ''
}

// Request paths: a URL path becomes a list of tree names, or a 4xx with a
// clear reason. Nothing here resolves '..': a path
// that holds a dot segment (raw or percent-encoded), NUL, a backslash or an
// encoded '/' is refused outright, so no spelling of a path can name anything
// but the entries it lists, and nothing can climb out of a tree or a mount.
import { BadPathError, NotADirectoryError } from 'rotree-client/errors'
import { MAX_PATH, MAX_DEPTH, MAX_NAME } from 'rotree-client/format'

// A URL path may be longer than the tree path it decodes to (every byte can be
// '%XX'), but not without bound; Node's 16 KiB header limit is the outer wall.
const MAX_URL_PATH = MAX_PATH * 3

/**
 * @param {string} url the request target as received (req.url)
 * @returns {{ segments: string[], slash: boolean, query: string }}
 *   segments: decoded names, none empty; slash: the path ended in '/'
 *   (or is the root); query: '' or '?…' as received
 * @throws {BadPathError} with `status` 400 or 414
 */
export function parseRequestPath (url) {
  if (typeof url !== 'string' || url[0] !== '/') throw bad('the request target must be a path starting with "/"')
  let end = url.length
  const q = url.indexOf('?')
  if (q !== -1) end = q
  const hash = url.indexOf('#')
  if (hash !== -1 && hash < end) end = hash
  const raw = end === url.length ? url : url.slice(0, end)
  if (raw.length > MAX_URL_PATH) throw bad(`path longer than ${MAX_URL_PATH} characters`, 414)
  if (raw.includes('\\')) throw bad('path contains a backslash')
  if (raw.includes('\0')) throw bad('path contains NUL')
  const parts = raw.split('/')
  const segments = []
  let bytes = 0
  for (let i = 1; i < parts.length; i++) {
    let s = parts[i]
    if (s === '') continue // '//' collapses, as in every static server
    if (s.includes('%')) s = decodeSegment(s)
    if (s === '.' || s === '..') throw bad('path contains a "." or ".." segment')
    bytes += Buffer.byteLength(s) + 1
    if (Buffer.byteLength(s) > MAX_NAME) throw bad(`a path component is longer than ${MAX_NAME} bytes`, 414)
    segments.push(s)
  }
  if (bytes > MAX_PATH) throw bad(`path longer than ${MAX_PATH} bytes`, 414)
  if (segments.length > MAX_DEPTH) throw bad(`path deeper than ${MAX_DEPTH} components`, 414)
  return { segments, slash: raw.endsWith('/'), query: q === -1 ? '' : url.slice(q) }
}

function decodeSegment (s) {
  let d
  try { d = decodeURIComponent(s) } catch { throw bad('path has a malformed %-escape or is not UTF-8') }
  if (d.includes('\0')) throw bad('path contains NUL')
  if (d.includes('/')) throw bad('path contains an encoded "/" (%2F)')
  if (d.includes('\\')) throw bad('path contains an encoded backslash (%5C)')
  return d
}

// statusOf (rotree-client/errors) reads `status`: 414 for what is too long, else 400
function bad (message, status = 400) {
  return new BadPathError(message, { details: { status } })
}

/** One name as a URL path segment. */
export function encodeSegment (name) { return encodeURIComponent(name) }

/** '/a/b' (or '/a/b/' with slash) from names, each percent-encoded. */
export function encodePath (segments, slash = false) {
  if (segments.length === 0) return '/'
  let s = ''
  for (const n of segments) s += '/' + encodeURIComponent(n)
  return slash ? s + '/' : s
}

/** The tree path ('/a/b') for names, as Tree methods take it. */
export function treePath (segments) { return '/' + segments.join('/') }

/** A request for 'name/' where name is a file (404, as the verified entry proves). */
export function notADir (segments) { return new NotADirectoryError(`/${segments.join('/')} is a file, not a directory`) }

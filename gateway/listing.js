// Directory listings: HTML a person (and `wget -r`) can use, or JSON when the
// request asks for application/json. Every name, target and path is escaped;
// links are relative ("./name", percent-encoded), so a listing works at any
// mount prefix and no name can turn into a scheme ("javascript:") or a path
// outside the directory.
//
// Where a directory's index.html is served in place of its listing (the
// default), a listing links each directory to its listing, "./name/?listing"
// (LISTING_QUERY): a client that walks the listings (`wget -r`) then reads
// every directory's listing, and every file, never only a site's index.html,
// which names what its author linked. A symlink to a directory on the
// listing's own path (".", "..", or one of the same content) is linked to
// that directory ("../"), never into an endless "a/up/a/up/…".
import { escapeMarkup as esc } from './body.js'
import { toStat } from './tree-access.js'

const STYLE = 'body{font:14px/1.4 system-ui,sans-serif;margin:2em}table{border-collapse:collapse}' +
  'td,th{padding:.15em 1.2em .15em 0;text-align:left}td.s{text-align:right;font-variant-numeric:tabular-nums}' +
  'th{border-bottom:1px solid #ccc}.m{color:#666;font-size:12px}'

/** The query that asks for a directory's listing even where it holds index.html (`DIR/?listing`). */
export const LISTING_QUERY = '?listing'

/** Does the query ('' or '?…', as received) ask for the listing (a `listing` parameter, any value)? */
export function asksListing (query) {
  return query.length > 1 && new URLSearchParams(query).has('listing')
}

/** Does the request prefer JSON over HTML? */
export function wantsJson (req) {
  const a = req.headers.accept
  return a !== undefined && a.includes('application/json') && !a.includes('text/html')
}

/**
 * @param {string} title the public path shown, e.g. "/downloads/docs/"
 * @param {string|null} parent the "../" row's link ("../", or "../?listing" to a listing above), or null for none
 * @param {AsyncIterable<{ entry: object, target: object|null|undefined, up?: number }>} entries raw verified entries,
 *   each with what it leads to (targets.js); up: a symlink whose directory is the one this many
 *   levels above the listed one (0: itself), linked there
 * @param {string} [note] a line under the heading (already plain text)
 * @param {{ dirQuery?: string }} [o] dirQuery: appended to every directory link ('' or LISTING_QUERY)
 * @returns {AsyncGenerator<string>}
 */
export async function * htmlListing (title, parent, entries, note = '', { dirQuery = '' } = {}) {
  yield `<!DOCTYPE html>\n<html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">` +
    `<title>Index of ${esc(title)}</title><style>${STYLE}</style></head>\n<body><h1>Index of ${esc(title)}</h1>\n` +
    (note ? `<p class="m">${esc(note)}</p>\n` : '') +
    '<table><thead><tr><th>Name</th><th>Size</th><th>Modified (UTC)</th></tr></thead><tbody>\n'
  if (parent !== null) yield `<tr><td><a href="${esc(parent)}">../</a></td><td></td><td></td></tr>\n`
  for await (const { entry, target, up } of entries) yield htmlRow(entry, target, up, dirQuery)
  yield '</tbody></table>\n</body></html>\n'
}

// t: what the entry leads to (targets.js): itself, a symlink's target, null
// (nowhere), or undefined (not resolved: the request's budget was spent)
function htmlRow (e, t, up, dirQuery) {
  const dir = t !== null && t !== undefined && t.type === 'dir'
  const href = !dir ? './' + encodeURIComponent(e.name)
    : (up === undefined ? './' + encodeURIComponent(e.name) + '/' : up === 0 ? './' : '../'.repeat(up)) + dirQuery
  let name = esc(e.name) + (dir ? '/' : '')
  if (e.type === 'symlink') name += ` → ${esc(e.target)}${t === null ? ' (broken)' : ''}`
  const size = t === null || t === undefined ? ''
    : dir ? (t.size === undefined ? '' : `${t.size} ${t.size === 1 ? 'entry' : 'entries'}`)
      : `<span title="${t.size} bytes">${human(t.size)}</span>`
  const row = `<td class="s">${size}</td><td>${time(e.mtime)}</td></tr>\n`
  // a symlink that leads nowhere gets no link: following it could only 404
  return t === null ? `<tr><td>${name}</td>${row}` : `<tr><td><a href="${esc(href)}">${name}</a></td>${row}`
}

/** @returns {AsyncGenerator<string>} `{"path":…,"entries":[…]}` */
export async function * jsonListing (path, entries) {
  yield `{"path":${JSON.stringify(path)},"entries":[`
  let first = true
  for await (const { entry } of entries) {
    yield (first ? '\n' : ',\n') + JSON.stringify(jsonEntry(entry))
    first = false
  }
  yield '\n]}\n'
}

function jsonEntry (e) {
  if (e.mount !== undefined) return { name: e.name, type: 'dir', mount: true, root: e.root, seq: e.seq }
  const s = toStat(e)
  const o = { name: s.name, type: s.type }
  if (s.type === 'dir') o.entries = s.entries
  else o.size = s.size
  o.mtime = isoTime(s.mtimeMs)
  if (s.type === 'file') o.exec = s.exec
  // the file's SHA-256 where the tree signs it (FORMAT.md §12.7; a version-1 file stored as one chunk)
  if (s.type === 'file' && typeof s.sha256 === 'string') o.sha256 = s.sha256
  if (s.type === 'symlink') o.target = s.target
  return o
}

function isoTime (ms) { const d = new Date(ms); return Number.isNaN(d.getTime()) ? null : d.toISOString() }

function time (ms) {
  const d = new Date(ms)
  return Number.isNaN(d.getTime()) ? '' : d.toISOString().slice(0, 19).replace('T', ' ')
}

function human (n) {
  if (n < 1024) return `${n} B`
  const units = ['KiB', 'MiB', 'GiB', 'TiB', 'PiB']
  let v = n / 1024; let i = 0
  while (v >= 1024 && i < units.length - 1) { v /= 1024; i++ }
  return `${v < 10 ? v.toFixed(1) : Math.round(v)} ${units[i]}`
}

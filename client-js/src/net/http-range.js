// Range requests and validators (RFC 9110 §13, §14) for every place rotree
// answers HTTP itself: `rotree serve` (server/blob-route.js), the gateway
// (gateway/files.js) and the Service Worker (web/sw.js, through the browser
// bundle, which exports parseRange). One module, so a
// malformed Range gets the same answer from all three. No I/O and no `node:`
// imports: browsers load this file as it is.
//
// The one behaviour (RFC 9110 §14.1.1, §14.2):
//   - an invalid ranges-specifier (bad syntax, last-pos below first-pos, a
//     range-spec with neither number, spaces inside a range-spec) is ignored:
//     the whole representation, 200;
//   - a unit other than `bytes` is ignored (§14.2: "MUST ignore");
//   - several ranges are ignored (a server may; we send one part, never multipart);
//   - an empty representation ignores every range (nothing to slice, as nginx);
//   - a valid single range that does not overlap the representation is
//     unsatisfiable, 416: a first-pos at or past the end, or a suffix of 0 bytes;
//   - a last-pos past the end is clipped, a suffix longer than the
//     representation means all of it. Numbers of any length are compared
//     exactly (BigInt), so a 30-digit position is "past the end", not NaN.

const UNIT = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+)=/
const SPEC = /^(\d*)-(\d*)$/
const LIST_SEP = /[ \t]*,[ \t]*/ // RFC 9110 §5.6.1: OWS only around the commas

/**
 * The one byte range a request asks for.
 * @param {string|undefined|null} header the Range field value
 * @param {number} size the representation's length in bytes
 * @returns {{ start: number, end: number } | 'unsatisfiable' | null}
 *   start and end inclusive (as in Content-Range); null: ignore the header, send 200
 */
export function parseRange (header, size) {
  if (typeof header !== 'string' || size === 0) return null
  const value = header.trim()
  const unit = UNIT.exec(value)
  if (unit === null || unit[1].toLowerCase() !== 'bytes') return null
  const specs = value.slice(unit[0].length).split(LIST_SEP).filter(s => s !== '') // empty list elements are allowed (§5.6.1.2)
  if (specs.length !== 1) return null
  const m = SPEC.exec(specs[0])
  if (m === null) return null
  const [, a, b] = m
  if (a === '' && b === '') return null
  const n = BigInt(size)
  if (a === '') { // suffix-range: the last b bytes
    const len = BigInt(b)
    if (len === 0n) return 'unsatisfiable'
    return { start: len >= n ? 0 : size - Number(len), end: size - 1 }
  }
  const first = BigInt(a)
  if (b !== '' && BigInt(b) < first) return null // invalid range-spec: ignored
  if (first >= n) return 'unsatisfiable'
  const last = b === '' || BigInt(b) >= n ? size - 1 : Number(b)
  return { start: Number(first), end: last }
}

/** `bytes A-B/SIZE` for a range from parseRange. */
export function contentRange ({ start, end }, size) { return `bytes ${start}-${end}/${size}` }

/** `bytes *\/SIZE`, the Content-Range of a 416. */
export function unsatisfiedRange (size) { return `bytes */${size}` }

/**
 * If-None-Match (RFC 9110 §13.1.2): weak comparison; `*` matches any
 * existing representation.
 * @param {string} ifNoneMatch the field value
 * @param {string} etag our entity-tag, quoted
 */
export function etagMatches (ifNoneMatch, etag) {
  if (ifNoneMatch === etag) return true // the common case: a client echoing our tag
  const weak = etag.startsWith('W/') ? etag.slice(2) : etag
  for (const raw of ifNoneMatch.split(',')) {
    const tag = raw.trim()
    if (tag === '*' || tag === weak || tag === 'W/' + weak) return true
  }
  return false
}

/**
 * If-Match (RFC 9110 §13.1.1): strong comparison; `*` matches.
 * @param {string} ifMatch @param {string} etag
 */
export function etagMatchesStrong (ifMatch, etag) {
  if (etag.startsWith('W/')) return ifMatch.split(',').some(t => t.trim() === '*')
  for (const raw of ifMatch.split(',')) {
    const tag = raw.trim()
    if (tag === '*' || tag === etag) return true
  }
  return false
}

/**
 * If-Range (RFC 9110 §13.1.5): does the range still apply? An entity-tag must
 * match strongly; a date must equal the Last-Modified we would send. Absent: yes.
 * @param {string|undefined|null} ifRange
 * @param {{ etag: string, lastModified?: string|null }} validators
 */
export function ifRangeHolds (ifRange, { etag, lastModified = null }) {
  if (ifRange === undefined || ifRange === null) return true
  const v = ifRange.trim()
  if (v.startsWith('"') || v.startsWith('W/')) return !etag.startsWith('W/') && v === etag
  return lastModified !== null && v === lastModified
}

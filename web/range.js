// The one Range header a request asks for (RFC 9110 §14.1.1, §14.2), for the
// Service Worker (sw.js). The same table as rotree-client's http-range.js,
// which `rotree serve` and the gateway use, so a malformed Range gets the
// same answer from all three; the browser bundle does not export that module
// yet, so this copy stands in for it (test/browser/web-units.test.js checks
// the two agree on every row). Imports nothing: served to browsers as it is.
//
//   - an invalid ranges-specifier (bad syntax, last-pos below first-pos, a
//     range-spec with neither number, spaces inside a range-spec) is ignored:
//     the whole representation, 200;
//   - a unit other than `bytes` is ignored, and so are several ranges (one
//     part or none, never multipart), and every range of an empty file;
//   - a valid single range that does not overlap the representation is
//     unsatisfiable, 416: a first-pos at or past the end, or a suffix of 0 bytes;
//   - a last-pos past the end is clipped, a suffix longer than the
//     representation means all of it. Numbers of any length compare exactly
//     (BigInt): a 30-digit position is "past the end", not NaN.

const UNIT = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+)=/
const SPEC = /^(\d*)-(\d*)$/
const LIST_SEP = /[ \t]*,[ \t]*/ // RFC 9110 §5.6.1: OWS only around the commas

/**
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

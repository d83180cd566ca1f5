// The Range table every rotree server must answer alike (`rotree serve` in
// test/server/serve.test.js, the gateway in test/gateway/ranges.test.js): one
// reading of RFC 9110 §14 from rotree-client/http. An invalid range is
// ignored (200, the whole body), an unsatisfiable one is 416, a valid one 206.

/**
 * @param {number} n the size of the file or blob asked for (at least 12 bytes)
 * @returns {[string, 200 | 416 | [number, number]][]} header → status, or the inclusive range of a 206
 */
export function rangeCases (n) {
  const huge = '99999999999999999999999' // past Number.MAX_SAFE_INTEGER
  return [
    // invalid: ignored, 200
    ['bytes=5-3', 200], // last-pos below first-pos
    ['bytes=abc', 200],
    ['bytes=-', 200],
    ['bytes=1-2-3', 200],
    ['bytes=0x10-20', 200],
    ['bytes=+1-2', 200],
    ['bytes=1.5-2', 200],
    ['bytes= 0-10', 200], // spaces inside the range-set but not around a comma
    ['bytes =0-10', 200],
    ['bytes=0 -10', 200],
    ['bytes=0- 10', 200],
    ['bytes 0-1', 200], // no "="
    ['items=0-1', 200], // another unit
    [`bytes=${huge}9-${huge}`, 200], // huge and last below first
    // several ranges: ignored, 200
    ['bytes=0-1,5-6', 200],
    ['bytes=0-1, 5-6', 200],
    [`bytes=${n}-,0-1`, 200],
    // unsatisfiable: 416
    ['bytes=-0', 416], // a suffix of no bytes
    [`bytes=${n}-`, 416],
    [`bytes=${n + 5}-${n + 9}`, 416],
    [`bytes=${huge}-`, 416],
    // satisfiable: 206
    ['bytes=0-0', [0, 0]],
    ['Bytes=1-2', [1, 2]], // the unit is case-insensitive
    ['bytes=0-10,', [0, 10]], // an empty list element is allowed (RFC 9110 §5.6.1.2)
    ['bytes=3-7 , ', [3, 7]],
    [`bytes=-${n + 10}`, [0, n - 1]], // a suffix longer than the file: all of it
    [`bytes=-${huge}`, [0, n - 1]],
    [`bytes=0-${huge}`, [0, n - 1]], // a last-pos past the end is clipped
    [`bytes=${n - 1}-`, [n - 1, n - 1]],
    ['bytes=007-010', [7, 10]]
  ]
}

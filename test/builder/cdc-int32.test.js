// client-js/src/format/cdc.js keeps FastCDC's fingerprint as an int32 for
// speed. FORMAT.md §5 defines it over uint32; the cut points must be the same.
// This is the loop as FORMAT.md §5 writes it, checked against nextCut.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { nextCut, chunkLengths, GEAR, CHUNK_MIN, CHUNK_AVG, CHUNK_MAX } from 'rotree-client/format'
import { prng } from '../helpers/fixtures.js'

const BITS = Math.log2(CHUNK_AVG)
const MASK_S = (~0 << (32 - (BITS + 2))) >>> 0
const MASK_L = (~0 << (32 - (BITS - 2))) >>> 0

/** FORMAT.md §5, in uint32 arithmetic: the length of the chunk at buf[0..), all of buf being the rest of the file */
function refCut (buf) {
  const n = buf.length
  if (n <= CHUNK_MIN) return n
  const end = Math.min(n, CHUNK_MAX); const normal = Math.min(end, CHUNK_AVG)
  let fp = 0
  for (let i = CHUNK_MIN; i < end; i++) {
    fp = ((fp << 1) + GEAR[buf[i]]) >>> 0
    if ((fp & (i < normal ? MASK_S : MASK_L)) >>> 0 === 0) return i + 1
  }
  return end
}

function refLengths (buf) {
  const out = []
  for (let p = 0; p < buf.length;) { const l = refCut(buf.subarray(p)); out.push(l); p += l }
  return out
}

test('int32 fingerprint: the same cut points as FORMAT.md §5\'s uint32 loop', () => {
  const inputs = [
    prng(24 << 20, 'cdc-int32'),
    new Uint8Array(3 * CHUNK_MAX + 1), // never cuts: every chunk CHUNK_MAX
    Uint8Array.from({ length: 5 << 20 }, (_, i) => (i * 2654435761) >>> 24), // structured, many high GEAR words
    Uint8Array.from({ length: 4 << 20 }, (_, i) => i % 251 === 0 ? 255 : (i & 1) * 128)
  ]
  for (const [k, buf] of inputs.entries()) assert.deepEqual(chunkLengths(buf), refLengths(buf), `input ${k}`)
})

test('with part of the data, nextCut gives the same cut, or 0 (more needed) when the cut is not yet certain', () => {
  const buf = prng(4 << 20, 'cdc-stream')
  const lens = refLengths(buf)
  let p = 0
  for (const l of lens.slice(0, -1)) {
    for (const have of [CHUNK_MIN, l - 1, l, l + 1, CHUNK_MAX - 1, CHUNK_MAX]) {
      if (p + have > buf.length) continue
      // a cut before the last byte held is certain; one on it or none yet needs more, unless CHUNK_MAX bytes are there
      const expected = have >= CHUNK_MAX || l < have ? l : 0
      assert.equal(nextCut(buf, p, p + have, false), expected, `chunk at ${p} (${l} bytes), ${have} bytes held`)
    }
    p += l
  }
})

test('the unrolled loop: the same cuts whatever the alignment of the data and of the window ends', () => {
  const buf = prng(6 << 20, 'cdc-unrolled')
  // starting 0-3 bytes in moves every cut to each of the four steps of the loop
  for (let k = 0; k < 4; k++) assert.deepEqual(chunkLengths(buf.subarray(k)), refLengths(buf.subarray(k)), `offset ${k}`)
  // windows that end at every remainder mod 4, before, at and after a cut
  const lens = refLengths(buf)
  let p = 0
  for (const l of lens.slice(0, 8)) {
    for (let extra = -5; extra <= 5; extra++) {
      const end = p + l + extra
      if (end - p <= CHUNK_MIN || end > buf.length) continue
      const want = refCut(buf.subarray(p, end))
      assert.equal(nextCut(buf, p, end, true), want, `chunk at ${p}, window of ${end - p}`)
    }
    p += l
  }
})

// FORMAT.md §5.1: format version 2's lead chunk (client-js/src/format/cdc.js leadCut).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { chunkLengths, leadCut, nextCut, LEAD_CHUNK, LEAD_MIN_FILE, CHUNK_MAX } from 'rotree-client/format'
import { prng } from '../helpers/fixtures.js'

const ends = lens => { let p = 0; return lens.map(l => (p += l)) }

test('a lead chunk only in version 2 and only for files of at least LEAD_MIN_FILE bytes', () => {
  assert.equal(leadCut(LEAD_MIN_FILE, 1), 0)
  assert.equal(leadCut(LEAD_MIN_FILE - 1, 2), 0)
  assert.equal(leadCut(LEAD_MIN_FILE, 2), LEAD_CHUNK)
  assert.equal(leadCut(1e9, 2), LEAD_CHUNK)
  // small enough for a new TCP connection's first window (10 segments of 1,448 bytes) with the response's headers
  assert.ok(LEAD_CHUNK + 1024 <= 10 * 1448)
})

test('version 2 cuts LEAD_CHUNK bytes, then FastCDC from there; version 1 is unchanged', () => {
  const buf = prng(3 * LEAD_MIN_FILE + 12345, 'lead')
  const v1 = chunkLengths(buf)
  const v2 = chunkLengths(buf, { version: 2 })
  assert.deepEqual(chunkLengths(buf, { version: 1 }), v1)
  assert.equal(v2[0], LEAD_CHUNK)
  assert.equal(v2.reduce((a, b) => a + b), buf.length)
  // the rest is the FastCDC chain from offset LEAD_CHUNK, cut by cut
  let p = LEAD_CHUNK
  for (const len of v2.slice(1)) { assert.equal(len, nextCut(buf, p, buf.length, true)); p += len }
  for (const len of v2.slice(1, -1)) assert.ok(len <= CHUNK_MAX)
})

test('the chain after a lead chunk meets the chain without one, so deduplication is kept past the first chunks', () => {
  for (const seed of ['a', 'b', 'c', 'd']) {
    const buf = prng(4 * LEAD_MIN_FILE, 'resync-' + seed)
    const e1 = ends(chunkLengths(buf)); const e2 = ends(chunkLengths(buf, { version: 2 }))
    const at = e2.findIndex(e => e1.includes(e))
    assert.ok(at >= 1 && at <= 3, `seed ${seed}: chains meet at cut ${at}`)
    // from the meeting point on, the cuts are the same
    assert.deepEqual(e2.slice(at), e1.slice(e1.indexOf(e2[at])))
  }
})

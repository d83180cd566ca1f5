// One answer per Range header, whoever serves it: `rotree serve` on a blob and
// the gateway on a one-chunk file made of exactly that blob (same bytes, same
// size) must give the same status and the same slice for every row of the
// shared table (range-cases.js), and the gateway the same for an inline, a
// many-chunk and a chunk-indexed file.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { serve } from '../helpers/fixtures.js'
import { rangeCases } from './range-cases.js'
import { makeFixture, fixtureFiles, entryOf, startGateway, raw, address } from './helpers.js'

const fx = {}
before(async () => {
  fx.files = fixtureFiles()
  Object.assign(fx, await makeFixture(fx.files))
  fx.mirror = await serve(fx.out)
  fx.addr = address(fx.mirror.url, fx.pk)
})
after(async () => { await fx.mirror?.close(); await fx.cleanup?.() })

const bytesOf = rel => Buffer.from(fx.files[rel].data ?? fx.files[rel])

function check (r, want, body, what) {
  const status = Array.isArray(want) ? 206 : want
  assert.equal(r.status, status, what)
  const n = body.length
  if (status === 200) assert.ok(r.body.equals(body), `${what}: the whole body`)
  if (status === 416) assert.equal(r.headers['content-range'], `bytes */${n}`, what)
  if (status === 206) {
    assert.equal(r.headers['content-range'], `bytes ${want[0]}-${want[1]}/${n}`, what)
    assert.ok(r.body.equals(body.subarray(want[0], want[1] + 1)), `${what}: the slice`)
  }
}

test('rotree serve and the gateway answer every row of the Range table alike', async t => {
  const gw = await startGateway(t, { tree: fx.addr })
  const medium = bytesOf('medium.bin')
  const [chunk] = (await entryOf(fx.out, 'medium.bin')).chunks
  assert.equal(chunk.size, medium.length, 'medium.bin is one chunk: the blob is the file')
  for (const [range, want] of rangeCases(medium.length)) {
    const s = await raw(fx.mirror.url, `/h/${chunk.hash}`, { headers: { range } })
    const g = await raw(gw.url, '/medium.bin', { headers: { range } })
    check(s, want, medium, `serve ${range}`)
    check(g, want, medium, `gateway ${range}`)
    assert.equal(g.status, s.status, `${range}: one answer`)
  }
})

test('the gateway answers the table alike for inline, many-chunk and chunk-indexed files', async t => {
  const gw = await startGateway(t, { tree: fx.addr })
  for (const rel of ['hello.txt', 'big.bin', 'huge.bin']) {
    const body = bytesOf(rel)
    for (const [range, want] of rangeCases(body.length)) {
      if (rel === 'huge.bin' && want === 200) continue // 12 MiB per row: the status is the same code path as big.bin's
      check(await raw(gw.url, '/' + rel, { headers: { range } }), want, body, `${rel} ${range}`)
    }
  }
})

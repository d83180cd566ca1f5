// lib/byte-ring.js, the allocator alone: slots never wrap and never overlap
// a slot not yet given back; giving back is in order; any slot of up to half
// the ring fits an empty ring wherever its head is (what lib/ring-worker.js's
// send() relies on to never wait forever).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ByteRing } from '../../lib/byte-ring.js'
import { prng } from '../helpers/fixtures.js'

test('an empty ring takes any slot of up to half its size, wherever its head is', () => {
  for (let head = 0; head < 64; head++) {
    for (let n = 1; n <= 16; n++) {
      const r = new ByteRing(32)
      r.head = r.tail = head // as after `head` bytes taken and given back
      const s = r.take(n)
      assert.ok(s !== null, `head ${head}, ${n} bytes`)
      assert.ok(s.off + n <= 32, 'never wraps')
    }
  }
})

test('live slots never overlap, and come back only in order', () => {
  const size = 1000
  const r = new ByteRing(size)
  const live = [] // slots taken and not given back, oldest first
  const rnd = prng(4000, 'ring')
  let taken = 0; let refused = 0
  for (let i = 0; i < rnd.length; i++) {
    if (rnd[i] & 1 || live.length === 0) {
      const n = 1 + (rnd[i] * 3) % 400
      const s = r.take(n)
      if (s === null) {
        assert.ok(live.length > 0, 'an empty ring refuses no slot of up to half its size')
        refused++
        continue
      }
      assert.ok(s.off >= 0 && s.off + n <= size, 'inside the ring')
      for (const o of live) assert.ok(s.off + n <= o.off || o.off + o.n <= s.off, `${s.off}+${n} overlaps ${o.off}+${o.n}`)
      live.push({ ...s, n })
      taken++
    } else {
      const k = rnd[i] % live.length // give back the k-th: it and every slot before it
      r.free(live[k].end)
      live.splice(0, k + 1)
    }
  }
  assert.ok(taken > 1000 && refused > 100, `${taken} taken, ${refused} refused: both paths walked`)
})

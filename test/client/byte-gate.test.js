// The byte gate of what a reader has in flight (client-js/src/tree/byte-gate.js):
// admission by bytes in the order asked, a count as a second bound, one piece
// always let in alone whatever it charges, the limit read each time it is
// asked (the scheduler's read-ahead, never under the floor), and stop()
// letting everything through.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ByteGate, readAheadGate, GATE_FLOOR } from 'rotree-client/tree'

const settled = async p => { let done = false; p.then(() => { done = true }); await new Promise(resolve => setImmediate(resolve)); return done }

test('admits in order while the bytes fit, and one piece alone whatever it charges', async () => {
  let limit = 100
  const g = new ByteGate({ limit: () => limit, count: 2 })
  assert.equal(g.charge(30), 30)
  assert.equal(g.charge(1000), 50, 'a piece that streams charges half the limit')
  assert.ok(await settled(g.enter(500)), 'alone, more than the limit goes in')
  const second = g.enter(10)
  assert.equal(await settled(second), false)
  g.leave(500)
  assert.ok(await settled(second))
  assert.ok(await settled(g.enter(60)))
  const big = g.enter(40) // 10 + 60 + 40 > 100
  const small = g.enter(1) // fits, but waits its turn behind big
  assert.equal(await settled(big), false)
  assert.equal(await settled(small), false)
  limit = 200 // read again when something leaves
  g.leave(10)
  assert.ok(await settled(big))
  assert.equal(await settled(small), false, 'the count bounds it: two in')
  g.stop()
  assert.ok(await settled(small))
  assert.ok(await settled(g.enter(1e9)), 'after stop() everything goes in at once')
})

test('readAheadGate: the scheduler\'s read-ahead within its memory budget, never under the floor', () => {
  const sched = { readAheadBytes: () => 1 << 20, maxInflightBytes: 64 << 20 }
  assert.equal(readAheadGate(sched).limit(), GATE_FLOOR)
  sched.readAheadBytes = () => 48 << 20
  assert.equal(readAheadGate(sched).limit(), 48 << 20)
  sched.readAheadBytes = () => 512 << 20
  assert.equal(readAheadGate(sched).limit(), 64 << 20)
  assert.equal(readAheadGate(sched, { floor: 1 << 30 }).limit(), 1 << 30)
  assert.equal(readAheadGate(sched, { count: 7 }).max, 7)
})

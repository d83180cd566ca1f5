// lib/ring-worker.js and its thread's half, lib/ring-worker-thread.js: a
// job's bytes reach the thread through the shared ring, in order, whether
// the slot is given back by the answer (send) or by its owner (take, post,
// free); a job's error comes back as its class with its code; a thread that
// dies fails every job it owed, once, with ThreadExitedError; close() fails
// what is owed with ROTREE_ABORTED; an idle thread keeps no process alive.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import fs from 'node:fs/promises'
import path from 'node:path'
import { promisify } from 'node:util'
import { createHash } from 'node:crypto'
import { BuildInputError, AbortedError } from 'rotree-client/errors'
import { RingWorker, ThreadExitedError } from '../../lib/ring-worker.js'
import { prng, tmpdir } from '../helpers/fixtures.js'

const THREAD = new URL('./ring-test-thread.js', import.meta.url)
const sha = b => createHash('sha256').update(b).digest('hex')
const settled = p => p.then(value => ({ value }), error => ({ error }))

function ringWorker (t, ringBytes = 64 << 10) {
  const w = new RingWorker(THREAD, { ringBytes, name: 'the test thread' })
  t.after(() => w.close())
  return w
}

test('send(): each job\'s bytes arrive whole and in order while the ring wraps and callers wait for room', async t => {
  const w = ringWorker(t)
  const order = [] // the thread's count of jobs run, as answers arrive
  const jobs = []
  const want = []
  for (let i = 0; i < 120; i++) {
    const data = prng(1 + (i * 7919) % 30_000, 'job' + i) // up to ~30 KiB in a 64 KiB ring: most wait for room
    const pieces = [data.subarray(0, 10), new Uint8Array(data).subarray(10)] // a Buffer and a plain Uint8Array
    want.push(data)
    jobs.push(w.send({ op: 'echo', seq: i }, pieces, data.length).then(r => { order.push(r.seen); return r }))
  }
  const got = await Promise.all(jobs)
  // a small job may get room before a larger one asked earlier: sent in the
  // order they got room, and answered in the order sent
  assert.deepEqual(order, want.map((_, i) => i + 1), 'answered in the order the thread ran them')
  got.forEach((r, i) => assert.deepEqual([r.seq, r.len, r.sha], [i, want[i].length, sha(want[i])], `job ${i}'s bytes`))
  assert.deepEqual(await w.post({ op: 'echo', seq: 'none' }), { seq: 'none', seen: 121, len: null, sha: null }, 'a job without bytes')
  await assert.rejects(w.send({ op: 'echo' }, [new Uint8Array(40 << 10)], 40 << 10), RangeError, 'more than half the ring could wait forever')
})

test('take() + post() + free(): a slot is the owner\'s until free(); a full ring refuses at once', async t => {
  const w = ringWorker(t)
  const a = prng(40_000, 'a'); const b = prng(30_000, 'b')
  const sa = w.take([a], a.length)
  assert.ok(sa !== null)
  assert.equal(w.take([b], b.length), null, 'no room: null at once, nothing waits')
  assert.deepEqual(w.read(sa), a)
  assert.equal((await w.post({ op: 'echo', seq: 0 }, sa)).sha, sha(a))
  assert.equal(w.take([b], b.length), null, 'answered but not freed: still taken')
  assert.deepEqual(w.read(sa), a, 'still readable after its job')
  w.free(sa)
  const sb = w.take([b], b.length)
  assert.ok(sb !== null, 'given back by free()')
  assert.equal((await w.post({ op: 'echo', seq: 1 }, sb)).sha, sha(b))
  assert.throws(() => w.take([a], a.length - 1), RangeError, 'a size that is not the bytes\'')
})

test('a failing job is rebuilt with its class and code; the thread goes on with the next', async t => {
  const w = ringWorker(t)
  const [rotree, system, string, after] = await Promise.all([
    settled(w.post({ op: 'rotree', message: '/x: changed while read', path: '/x' })),
    settled(w.post({ op: 'system', path: '/nonexistent/rotree-ring-test' })),
    settled(w.post({ op: 'string' })),
    w.post({ op: 'echo', seq: 'after' })
  ])
  assert.ok(rotree.error instanceof BuildInputError)
  assert.deepEqual([rotree.error.code, rotree.error.message, rotree.error.path, rotree.error.changed], ['ROTREE_BUILD_INPUT', '/x: changed while read', '/x', true])
  assert.equal(system.error.constructor, Error)
  assert.deepEqual([system.error.code, system.error.syscall, system.error.path, typeof system.error.errno], ['ENOENT', 'open', '/nonexistent/rotree-ring-test', 'number'])
  assert.equal(string.error.message, 'not an Error')
  assert.equal(after.seq, 'after')
  assert.equal(w.dead, null, 'a job\'s error is not the thread\'s')
})

test('a thread that exits fails every job it owed, and every later one, once, with ThreadExitedError', async t => {
  const w = ringWorker(t)
  const data = prng(1000, 'd')
  const first = w.post({ op: 'block', ms: 200 }) // still running when the rest arrive: they wait in its port
  await new Promise(resolve => setImmediate(resolve)) // sent: the rest go in a message of their own
  const owed = [
    first,
    w.post({ op: 'exit', code: 7 }),
    w.send({ op: 'echo', seq: 2 }, [data], data.length),
    w.post({ op: 'echo', seq: 3 })
  ]
  const outcomes = await Promise.all(owed.map(settled))
  assert.equal(outcomes[0].value, 'woke', 'answered before the thread exited')
  const err = outcomes[1].error
  assert.ok(err instanceof ThreadExitedError, String(err))
  assert.equal(err.code, 'ROTREE_INTERNAL')
  assert.match(err.message, /the test thread exited \(code 7\)/)
  assert.equal(outcomes[2].error, err, 'one error for every job owed')
  assert.equal(outcomes[3].error, err)
  assert.equal(w.dead, err)
  await assert.rejects(w.post({ op: 'echo' }), e => e === err, 'a later job fails at once')
  await assert.rejects(w.send({ op: 'echo' }, [data], data.length), e => e === err)
  assert.equal(w.take([data], data.length), null)
})

test('a thread that throws outside a job: its error is the one every owed job gets, not the exit after it', async t => {
  const w = ringWorker(t)
  // an answer that cannot be cloned: posting the batch's answers throws on
  // the thread, outside any job, and the thread dies with both jobs owed
  const owed = await Promise.all([w.post({ op: 'uncloneable' }), w.post({ op: 'echo' })].map(settled))
  const err = owed[0].error
  assert.ok(err instanceof ThreadExitedError, String(err))
  assert.match(err.message, /^the test thread failed: an answer could not be sent: .*could not be cloned/)
  assert.equal(err.cause?.constructor, Error)
  assert.equal(owed[1].error, err)
  await new Promise(resolve => setTimeout(resolve, 100)) // the 'exit' that follows the 'error'
  assert.equal(w.dead, err, 'the first failure stays the one')
})

test('close() with jobs owed: they fail with ROTREE_ABORTED at once, and the thread stops', async () => {
  const w = new RingWorker(THREAD, { ringBytes: 64 << 10, name: 'the test thread' })
  const data = prng(30_000, 'c')
  const owed = [
    w.post({ op: 'block', ms: 10_000 }),
    w.post({ op: 'echo' }),
    w.send({ op: 'echo' }, [data], data.length), // in the ring
    w.send({ op: 'echo' }, [data], data.length), // in the ring too
    w.send({ op: 'echo' }, [data], data.length) // waits for room
  ].map(settled)
  await new Promise(resolve => setTimeout(resolve, 50))
  const t0 = Date.now()
  await w.close()
  const outcomes = await Promise.all(owed)
  assert.ok(Date.now() - t0 < 5_000, 'not held by the job the thread is blocked in')
  for (const o of outcomes) {
    assert.ok(o.error instanceof AbortedError, String(o.error))
    assert.equal(o.error.code, 'ROTREE_ABORTED')
  }
  assert.ok(w.dead instanceof AbortedError)
  await w.close() // twice is fine
})

test('the thread keeps the process alive only while it owes answers', async t => {
  const script = `
    import { RingWorker } from ${JSON.stringify(new URL('../../lib/ring-worker.js', import.meta.url).href)}
    const w = new RingWorker(new URL(${JSON.stringify(THREAD.href)}), { ringBytes: 1 << 16, name: 'a thread' })
    // nothing awaits this: only the owed answer keeps the process alive until it comes
    w.post({ op: 'block', ms: 300 }).then(v => console.log('answered', v))
    // never closed: once answered, the idle thread must not keep the process alive
  `
  const dir = await tmpdir('rotree-ring-')
  t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const file = path.join(dir, 'idle.mjs')
  await fs.writeFile(file, script)
  const t0 = Date.now()
  const { stdout } = await promisify(execFile)(process.execPath, [file], { timeout: 20_000 })
  assert.equal(stdout.trim(), 'answered woke')
  assert.ok(Date.now() - t0 < 15_000)
})

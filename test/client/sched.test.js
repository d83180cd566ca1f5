// The fetch scheduler (client-js/src/fetch/sched.js) on its own: a made-up
// clock and a made-up transport, so hedging, penalties, stripes, the
// windows and the memory budget are checked by their rules, with no server and no real waiting.
// Each mirror is a link of its own: a request reaches it half a round trip
// after it leaves, answers leave one after another at the link's rate, and
// each arrives half a round trip later (as window.test.js's path).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { FetchScheduler, Mirrors } from 'rotree-client/fetch'
import { AbortedError, MirrorHttpError, MIRROR_FAULT_CODES } from 'rotree-client/errors'

const CHUNK = 256 * 1024
const ZEROS = new Uint8Array(4 * CHUNK)
const tick = () => new Promise(resolve => setImmediate(resolve))

/** Time that moves only when the test says so; timers run in time order as it does. */
class Clock {
  constructor () {
    this.t = 0
    this.events = []
    this.seq = 0
    this.now = () => this.t
  }

  // the scheduler's `timers`
  setTimeout (fn, ms) { return this.at(this.t + ms, fn) }
  clearTimeout (ev) { if (ev) ev.cancelled = true }

  at (t, fn) {
    const ev = { t, seq: this.seq++, fn, cancelled: false }
    let i = this.events.length
    while (i > 0 && (this.events[i - 1].t > t)) i--
    this.events.splice(i, 0, ev)
    return ev
  }

  /** Run what is due within `ms` from now, each event's promise callbacks before the next. */
  async advance (ms) {
    const end = this.t + ms
    await tick()
    while (this.events.length && this.events[0].t <= end) {
      const ev = this.events.shift()
      if (ev.cancelled) continue
      this.t = ev.t
      ev.fn()
      await tick()
    }
    this.t = end
    await tick()
  }

  /** Run every event until none is left (or the made-up clock reaches `limit`). */
  async drain (limit = 600_000) {
    await tick()
    while (this.events.length && this.events[0].t <= limit) await this.advance(this.events[0].t - this.t)
  }
}

/**
 * Mirrors behind links of their own, as a transport: get() as transport-node.js's.
 * spec per base URL: { rttMs, rate (bytes per ms; Infinity: no limit), answer?: (path, req) =>
 * 'ok' | 'stall' | Error }. It counts what each mirror has in flight, as the mirror sees it.
 */
class FakeLinks {
  constructor (clock, spec) {
    this.clock = clock
    this.mirrors = new Map(Object.entries(spec).map(([href, s]) => [href, { rttMs: 0, rate: Infinity, ...s, linkFree: 0, inflight: 0, inflightBytes: 0 }]))
    this.asked = [] // every request, in the order sent
    this.inflightBytes = 0 // all mirrors together
    this.onGet = null // (req) => void, once the request is counted
  }

  get (url, { cap, signal }) {
    const href = [...this.mirrors.keys()].find(h => url.startsWith(h))
    const m = this.mirrors.get(href)
    const req = { href, path: url.slice(href.length), cap, signal, at: this.clock.t, ended: null }
    this.asked.push(req)
    m.inflight++; m.inflightBytes += cap; this.inflightBytes += cap
    this.onGet?.(req)
    return new Promise((resolve, reject) => {
      const end = (how, fn) => {
        if (req.ended) return
        req.ended = how
        m.inflight--; m.inflightBytes -= cap; this.inflightBytes -= cap
        fn()
      }
      // the real transports fail an aborted request with ROTREE_ABORTED at once
      signal.addEventListener('abort', () => end('aborted', () => reject(new AbortedError('aborted'))), { once: true })
      const what = m.answer ? m.answer(req.path, req) : 'ok'
      if (what === 'stall') return
      if (what instanceof Error) { this.clock.at(this.clock.t + m.rttMs, () => end('failed', () => reject(what))); return }
      const start = Math.max(m.linkFree, this.clock.t + m.rttMs / 2)
      m.linkFree = start + cap / m.rate
      this.clock.at(m.linkFree + m.rttMs / 2, () => end('answered', () => resolve(ZEROS.subarray(0, cap))))
    })
  }

  to (href) { return this.asked.filter(r => r.href === href) }
}

const entry = href => ({ url: href, href, penaltyUntil: 0 })

/** A scheduler on the made-up clock, with hooks that record what it reports. */
function scheduler (clock, links, entries, o = {}) {
  const seen = { faults: [], late: [], ok: [] }
  const benched = new Set()
  const sched = new FetchScheduler(entries, {
    transport: links,
    timeoutMs: 30_000,
    penalised: m => benched.has(m),
    onFault: (m, err) => { seen.faults.push({ m, code: err.code }); if (MIRROR_FAULT_CODES.has(err.code)) benched.add(m) },
    onLate: (m, path, winner, hedgeMs) => seen.late.push({ m, path, winner, hedgeMs }),
    onOk: m => seen.ok.push(m),
    now: clock.now,
    timers: clock,
    ...o
  })
  return { sched, seen, benched }
}

const check = (bytes, mirror) => ({ mirror, n: bytes.length })

test('a request is hedged to the next mirror after 3 × its mirror\'s median + hedgeFloorMs; the loser is cancelled and reported late', async () => {
  const clock = new Clock()
  const A = entry('http://a/'); const B = entry('http://b/')
  let stall = false
  const links = new FakeLinks(clock, {
    'http://a/': { rttMs: 10, answer: () => stall ? 'stall' : 'ok' },
    'http://b/': { rttMs: 10 }
  })
  const { sched, seen } = scheduler(clock, links, [A, B], { hedgeFloorMs: 50 })
  // a run of answers from A, one at a time: its median is its round trip
  for (let i = 0; i < 5; i++) {
    const p = sched.fetch(`h/${i}`, 4096, check)
    await clock.advance(10)
    assert.deepEqual(await p, { mirror: A.url, n: 4096 })
  }
  assert.equal(sched.medianMs(A), 10)
  assert.equal(links.to('http://b/').length, 0, 'B was not needed')

  stall = true
  const t0 = clock.t
  const late = sched.fetch('h/late', 4096, check)
  await clock.advance(3 * 10 + 50 - 1)
  assert.equal(links.to('http://b/').length, 0, 'not hedged before 3 × 10 + 50 ms')
  await clock.advance(1)
  assert.equal(links.to('http://b/').length, 1, 'hedged at 3 × 10 + 50 ms')
  assert.equal(clock.t - t0, 80)
  await clock.advance(10)
  assert.deepEqual(await late, { mirror: B.url, n: 4096 }, 'the first answer wins')

  const lost = links.to('http://a/').at(-1)
  assert.equal(lost.path, 'h/late')
  assert.equal(lost.signal.aborted, true, 'the late request was cancelled')
  assert.equal(lost.ended, 'aborted')
  assert.deepEqual(seen.late, [{ m: A, path: 'h/late', winner: B, hedgeMs: 80 }])
  assert.deepEqual(seen.faults, [], 'late is not a fault')
  assert.equal(sched.mirrorStats(A).late, 1)
  assert.equal(sched.mirrorStats(A).inflight, 0)
  assert.equal(sched.mirrorStats(B).hedges, 1)
  assert.equal(sched.stats.hedges, 1)
  assert.equal(sched.inflightBytes, 0)
})

test('no hedge before anything is measured, nor when 3 × the median + floor reaches the timeout', async () => {
  const clock = new Clock()
  const A = entry('http://a/'); const B = entry('http://b/')
  const links = new FakeLinks(clock, { 'http://a/': { answer: () => 'stall' }, 'http://b/': {} })
  const { sched } = scheduler(clock, links, [A, B], { hedgeFloorMs: 50, timeoutMs: 1000 })
  sched.fetch('h/x', 4096, check).catch(() => {})
  await clock.advance(999)
  assert.equal(links.to('http://b/').length, 0, 'nothing measured: the timeout decides')
  sched.sample(A, 400) // 3 × 400 + 50 ≥ 1000
  sched.fetch('h/y', 4096, check).catch(() => {})
  await clock.advance(999)
  assert.equal(links.to('http://b/').length, 0)
  sched.close()
})

test('a failed mirror is reported, penalised and skipped; a penalised one is asked only when no other is left', async () => {
  const clock = new Clock()
  const A = entry('http://a/'); const B = entry('http://b/')
  let aFails = true; let bFails = false
  const links = new FakeLinks(clock, {
    'http://a/': { rttMs: 10, answer: () => aFails ? new MirrorHttpError('a answered 500', { details: { status: 500 } }) : 'ok' },
    'http://b/': { rttMs: 10, answer: () => bFails ? new MirrorHttpError('b answered 503', { details: { status: 503 } }) : 'ok' }
  })
  const { sched, seen, benched } = scheduler(clock, links, [A, B])
  const first = sched.fetch('h/1', 4096, check)
  await clock.drain()
  assert.deepEqual(await first, { mirror: B.url, n: 4096 }, 'the next mirror answered')
  assert.deepEqual(seen.faults, [{ m: A, code: 'ROTREE_MIRROR_HTTP' }])
  assert.ok(benched.has(A))

  // benched: every request goes to B, A is not asked
  const asked = links.to('http://a/').length
  const rest = Array.from({ length: 20 }, (_, i) => sched.fetch(`h/r${i}`, 4096, check))
  await clock.drain()
  for (const r of await Promise.all(rest)) assert.equal(r.mirror, B.url)
  assert.equal(links.to('http://a/').length, asked, 'the penalised mirror was skipped')

  // B fails too: A, penalised, is the only one left for that request, and answers
  aFails = false; bFails = true
  const last = sched.fetch('h/last', 4096, check)
  await clock.drain()
  assert.deepEqual(await last, { mirror: A.url, n: 4096 })

  // both fail: the error names each
  aFails = true
  const none = assert.rejects(sched.fetch('h/none', 4096, check), err => err.code === 'ROTREE_ALL_MIRRORS_FAILED' &&
    err.errors.map(e => `${e.mirror} ${e.code}`).sort().join(', ') === 'http://a/ ROTREE_MIRROR_HTTP, http://b/ ROTREE_MIRROR_HTTP')
  await clock.drain()
  await none
  assert.equal(sched.inflightBytes, 0)
})

/** A read of `n` chunks from two mirrors behind links of `rates` (bytes per ms), RTT 50 ms. */
async function stripedRead (rates, n = 600) {
  const clock = new Clock()
  const A = entry('http://a/'); const B = entry('http://b/')
  const links = new FakeLinks(clock, { 'http://a/': { rttMs: 50, rate: rates[0] }, 'http://b/': { rttMs: 50, rate: rates[1] } })
  // hedges off (a floor at the timeout), so every request is one the windows let out;
  // as many requests per mirror as a Tree allows (its `concurrency`)
  const { sched, seen } = scheduler(clock, links, [A, B], { hedgeFloorMs: 30_000, maxRequests: 64 })
  const minRequests = 8
  let requests = 0
  links.onGet = req => {
    const m = links.mirrors.get(req.href)
    const { windowBytes } = sched.mirrorStats(req.href === A.href ? A : B)
    assert.ok(m.inflight <= minRequests || m.inflightBytes <= windowBytes,
      `${req.href}: ${m.inflightBytes} bytes in ${m.inflight} requests in flight, window ${windowBytes}`)
    requests++
  }
  const reads = Array.from({ length: n }, (_, i) => sched.fetch(`h/${i}`, CHUNK, check))
  await clock.drain()
  assert.equal((await Promise.all(reads)).length, n)
  assert.equal(requests, n, 'one request per chunk: no hedge, no probe')
  assert.deepEqual(seen.faults, [])
  const a = sched.mirrorStats(A); const b = sched.mirrorStats(B)
  assert.equal(a.bytes + b.bytes, n * CHUNK)
  // both links kept busy: the read took little more than the bytes over both rates
  const ideal = n * CHUNK / (rates[0] + rates[1])
  assert.ok(clock.t < 1.3 * ideal + 500, `${clock.t} ms of made-up time, ${ideal.toFixed(0)} at best`)
  return { share: a.bytes / (a.bytes + b.bytes), windows: [a.windowBytes, b.windowBytes] }
}

test('stripes follow measured throughput, whichever mirror comes first; each one\'s bytes in flight stay within its window', async () => {
  // 1 Gbit/s and 600 Mbit/s: with both links kept full, the faster carries 5/8
  const fastFirst = await stripedRead([125_000, 75_000])
  assert.ok(fastFirst.share > 0.55 && fastFirst.share < 0.7, `the faster, first, carried ${(100 * fastFirst.share).toFixed(1)}% of the bytes`)
  const slowFirst = await stripedRead([75_000, 125_000])
  assert.ok(slowFirst.share > 0.3 && slowFirst.share < 0.45, `the slower, first, carried ${(100 * slowFirst.share).toFixed(1)}% of the bytes`)
  // each window grew past its first 8 chunks toward its own bandwidth × delay, the faster one's further
  for (const [w, fast] of [[fastFirst.windows, 0], [slowFirst.windows, 1]]) {
    assert.ok(w[0] > 8 * CHUNK && w[1] > 8 * CHUNK && w[fast] > w[1 - fast], `windows ${w}`)
  }
})

test('bytes in flight stay within the memory budget, all mirrors together', async () => {
  const clock = new Clock()
  const A = entry('http://a/'); const B = entry('http://b/')
  const links = new FakeLinks(clock, { 'http://a/': { rttMs: 50, rate: 125_000 }, 'http://b/': { rttMs: 50, rate: 125_000 } })
  const budget = 6 * CHUNK // less than the windows would let out (8 requests each, at least)
  const { sched } = scheduler(clock, links, [A, B], { maxInflightBytes: budget, hedgeFloorMs: 30_000 })
  let peak = 0
  links.onGet = () => {
    peak = Math.max(peak, links.inflightBytes)
    assert.ok(links.inflightBytes <= budget, `${links.inflightBytes} bytes in flight, budget ${budget}`)
  }
  const reads = Array.from({ length: 200 }, (_, i) => sched.fetch(`h/${i}`, CHUNK, check))
  await clock.drain()
  assert.equal((await Promise.all(reads)).length, 200)
  assert.equal(peak, budget, 'the budget was used')
  assert.ok(sched.stats.peakInflightBytes <= budget)
  assert.equal(sched.inflightBytes, 0)
  // and read-ahead is asked for within it
  assert.ok(sched.readAheadBytes() <= budget)
})

test('close() fails what is queued or in flight with ROTREE_ABORTED, cancels its requests and blames no mirror', async () => {
  const clock = new Clock()
  const A = entry('http://a/'); const B = entry('http://b/')
  const links = new FakeLinks(clock, { 'http://a/': { answer: () => 'stall' }, 'http://b/': { answer: () => 'stall' } })
  const { sched, seen } = scheduler(clock, links, [A, B], { maxRequests: 2, minRequests: 2 })
  const reads = Array.from({ length: 10 }, (_, i) => sched.fetch(`h/${i}`, CHUNK, check))
  await clock.advance(100)
  const sent = links.asked.length
  assert.ok(sent > 0 && sent < 10, `${sent} requests sent, the rest queued`)
  sched.close()
  for (const r of await Promise.allSettled(reads)) {
    assert.equal(r.status, 'rejected')
    assert.equal(r.reason.code, 'ROTREE_ABORTED')
  }
  assert.ok(links.asked.every(r => r.signal.aborted && r.ended === 'aborted'), 'every request was cancelled')
  assert.equal(links.asked.length, sent, 'nothing queued was sent')
  await clock.drain()
  assert.deepEqual(seen.faults, [], 'no mirror blamed')
  assert.equal(sched.inflightBytes, 0)
  assert.equal(sched.mirrorStats(A).inflight + sched.mirrorStats(B).inflight, 0)
  await assert.rejects(sched.fetch('h/after', CHUNK, check), err => err.code === 'ROTREE_ABORTED')
})

test('Mirrors.health(): its own fields and the scheduler\'s, and nothing written onto its entries', async () => {
  const transport = { get: async (url, { cap }) => ZEROS.subarray(0, cap) }
  const m = new Mirrors(['http://a/', 'http://b/'], { transport, timeoutMs: 1000 })
  const before = m.list.map(e => Object.keys(e))
  for (let i = 0; i < 3; i++) await m.fetch(`h/${i}`, 4096, check)
  await m.fetchAll('fsinfo.json', 4096, check)
  assert.deepEqual(m.list.map(e => Object.keys(e)), before, 'the scheduler added no field to the entries')
  const h = m.health()
  assert.deepEqual(Object.keys(h[0]), ['url', 'ok', 'failed', 'faults', 'lastError', 'lastFault', 'healthy', 'requests', 'bytes', 'hedges', 'late', 'probes', 'inflight', 'windowBytes', 'medianMs'])
  assert.equal(h[0].url, 'http://a/')
  assert.equal(h[0].ok, 4) // three blobs and fsinfo.json
  assert.equal(h[0].requests, 3)
  assert.equal(h[0].bytes, 3 * 4096)
  assert.equal(h[1].ok, 1)
  assert.equal(h[1].requests, 0)
  assert.equal(h[0].healthy, true)
  assert.equal(h[0].inflight, 0)
  assert.equal(typeof h[0].medianMs, 'number')
  m.close()
})

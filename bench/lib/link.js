#!/usr/bin/env node
// A network link on loopback: a TCP relay that gives every connection through
// it a fixed one-way delay per direction (RTT = 2 × delay) and shares ONE
// bandwidth cap among all of them, so the benchmarks can put a distance
// between a reader and its mirror without kernel netem.
//
// The model, per direction (client → server and server → client):
//   - one token bucket for the whole link: tokens accrue at the rate, so a
//     piece leaves when the link has carried every byte queued before it, from
//     any connection (a FIFO, as on a router); the bucket holds BURST_MS of the
//     rate (tc tbf's burst), so a relay that was not scheduled for a few
//     milliseconds catches up instead of losing that link time;
//   - then a fixed propagation delay: each piece is stamped with the time it
//     must come out (departure + delay) and put on a timestamped queue; one
//     timer serves the queue's head, so pieces come out in order and on time,
//     with no drift from one setTimeout per piece;
//   - TCP's sender behaviour, because a relay terminates TCP on both sides and
//     would otherwise hide it: a new connection carries no data for one RTT
//     (the handshake); a sender keeps at most cwnd bytes unacknowledged, cwnd
//     starts at 10 segments and grows by the bytes each ACK covers (slow start)
//     up to the receive window, falls back after an idle RTO (Linux's
//     tcp_slow_start_after_idle), and an ACK comes back one delay after its
//     bytes were delivered. Off with { tcp: false }: then only the delay and the
//     cap apply, and a connection sends at the link's rate from its first byte
//     (up to NO_TCP_WINDOW in flight, which bounds what the relay holds).
// No loss is modelled: the queue before the bucket is bounded by the windows.
//
//   import { startLink } from './link.js'
//   const link = await startLink({ target: '127.0.0.1:8080', rttMs: 50, mbit: 1000 })
//   link.port … link.stats() … await link.stop()
//
//   node bench/lib/link.js --target 127.0.0.1:8080 --rtt 50 --mbit 200 [--listen 127.0.0.1:0]
//   node bench/lib/link.js --self-check       relay at RTT 50 ms and 200 Mbit/s, checked with curl
import net from 'node:net'
import http from 'node:http'
import path from 'node:path'
import { fork, execFile, execFileSync } from 'node:child_process'
import { promisify } from 'node:util'
import { fileURLToPath, pathToFileURL } from 'node:url'

const SELF = fileURLToPath(import.meta.url)
export const MSS = 1448
export const IW = 10 * MSS // Linux's initial congestion window (RFC 6928)
// Linux's default net.ipv4.tcp_rmem maximum: the most receive window a stock
// Linux reader's autotuning advertises. At 1 Gbit/s it covers an RTT of ~50 ms.
export const DEFAULT_WINDOW = 6 << 20
const RTO_MIN_MS = 200 // Linux's TCP_RTO_MIN
const HWM = 1 << 20 // relay sockets buffer up to this much in user space before pushing back
export const BURST_MS = 5
export const NO_TCP_WINDOW = 64 << 20 // { tcp: false }: bytes in flight per connection and direction
// A timer fires on whole milliseconds, often most of one early: a piece due
// within this much (or half the delay, if less) goes out now. Measured here,
// that delivers ~0.6 ms early on average, which offsets the two extra process
// hops a relay adds: a round trip at RTT 10 and 50 ms measures 10.0 and 50.1 ms
// more than direct.
const SLACK_MS = 1

/** A FIFO with O(1) shift. */
class Queue {
  constructor () { this.a = []; this.h = 0 }
  get length () { return this.a.length - this.h }
  push (x) { this.a.push(x) }
  peek () { return this.a[this.h] }
  shift () {
    const x = this.a[this.h]; this.a[this.h++] = undefined
    if (this.h > 1024 && this.h * 2 > this.a.length) { this.a = this.a.slice(this.h); this.h = 0 }
    return x
  }
  replaceHead (x) { this.a[this.h] = x }
}

const FIN = Symbol('fin')

/**
 * The link itself, in this process.
 * @param {{ target: string, rttMs?: number, mbit?: number|null, window?: number, tcp?: boolean, listen?: string }} o
 *   mbit: the cap in Mbit/s (10^6 bit/s) per direction, shared by every connection; null or 0: uncapped
 */
export function createLink ({ target, rttMs = 0, mbit = null, window = DEFAULT_WINDOW, tcp = true }) {
  const [thost, tport] = splitHostPort(target)
  const delay = rttMs / 2
  const slack = Math.min(SLACK_MS, delay / 2)
  const bytesPerMs = mbit ? mbit * 1e6 / 8 / 1000 : Infinity
  const rto = RTO_MIN_MS + rttMs // srtt + max(4·rttvar, 200 ms) with a steady RTT
  if (!tcp) window = NO_TCP_WINDOW
  const clock = () => performance.now()
  const mkDir = name => ({ name, freeAt: 0, deliver: new Queue(), acks: new Queue(), lastAckAt: 0, bytes: 0 })
  const dirs = { up: mkDir('up'), down: mkDir('down') }
  const wakes = new Queue() // { at, flow }: connections whose handshake ends at `at`
  const stats = { connections: 0, open: 0, late: { n: 0, sumMs: 0, maxMs: 0 } }
  const conns = new Set()
  let timer = null; let timerAt = Infinity
  let running = false

  /**
   * The time the last byte of a piece of n bytes has crossed the link (no
   * earlier than now). freeAt is when the bucket has the tokens for what is
   * queued; it may lag now by up to BURST_MS, the bucket's depth.
   */
  function serialize (dir, n, now) {
    if (bytesPerMs === Infinity) return now
    dir.freeAt = Math.max(dir.freeAt, now - BURST_MS) + n / bytesPerMs
    return Math.max(dir.freeAt, now)
  }

  function makeFlow (dir, src, dst, conn) {
    return { dir, src, dst, conn, pending: new Queue(), pendingBytes: 0, inflight: 0, cwnd: tcp ? IW : window, lastSend: -Infinity, maxOut: 0, outSince: 0, openAt: 0, ready: false, blocked: 0, waitingDrain: false, paused: false }
  }

  function pump (f) {
    if (!f.ready || f.dst.destroyed) return
    const now = clock()
    if (now < f.openAt) return // its wake is queued
    while (f.pending.length) {
      const head = f.pending.peek()
      if (head === FIN) {
        f.pending.shift()
        f.dir.deliver.push({ f, fin: true, at: serialize(f.dir, 0, now) + delay })
        continue
      }
      if (tcp && f.inflight === 0 && now - f.lastSend > rto) {
        // Linux's tcp_cwnd_restart: halve per RTO idle, not below the initial window
        let c = f.cwnd; const restart = Math.min(IW, c)
        for (let d = now - f.lastSend - rto; d > 0 && c > restart; d -= rto) c = Math.floor(c / 2)
        f.cwnd = Math.max(c, restart)
      }
      const room = f.cwnd - f.inflight
      if (room <= 0) break
      let piece = head
      if (head.length > room) { piece = head.subarray(0, room); f.pending.replaceHead(head.subarray(room)) } else f.pending.shift()
      f.pendingBytes -= piece.length
      f.inflight += piece.length
      f.lastSend = now
      if (now - f.outSince > Math.max(rttMs, 1)) { f.maxOut = 0; f.outSince = now }
      f.maxOut = Math.max(f.maxOut, f.inflight)
      f.dir.bytes += piece.length
      f.dir.deliver.push({ f, buf: piece, at: serialize(f.dir, piece.length, now) + delay })
    }
    if (f.paused && f.pendingBytes < HWM) { f.paused = false; f.src.resume() }
  }

  function ack (f, n) {
    f.inflight -= n
    // slow start, while the sender fills its window (tcp_is_cwnd_limited)
    if (f.cwnd < window && f.cwnd < 2 * f.maxOut) f.cwnd = Math.min(window, f.cwnd + n)
    pump(f)
  }

  function pushAck (dir, f, n, at) {
    at = Math.max(at, dir.lastAckAt) // keep the queue in time order
    dir.lastAckAt = at
    dir.acks.push({ f, n, at })
  }

  function deliver (e, now) {
    const f = e.f
    const late = now - e.at
    stats.late.n++
    if (late > 0) { stats.late.sumMs += late; if (late > stats.late.maxMs) stats.late.maxMs = late }
    if (f.dst.destroyed || f.dst.writableEnded) return
    if (e.fin) { f.dst.end(); return }
    const ok = f.dst.write(e.buf)
    if (ok && !f.waitingDrain) { pushAck(f.dir, f, e.buf.length, e.at + delay); return }
    // the reader is not keeping up: its window closes until it drains
    f.blocked += e.buf.length
    if (!f.waitingDrain) {
      f.waitingDrain = true
      f.dst.once('drain', () => {
        f.waitingDrain = false
        const n = f.blocked; f.blocked = 0
        pushAck(f.dir, f, n, clock() + delay)
        run()
      })
    }
  }

  // Serve every queue whose head is due; then arm the one timer for the next head.
  function run () {
    if (running) return
    running = true
    try {
      for (;;) {
        const now = clock()
        const due = now + slack
        let moved = false
        for (const dir of [dirs.up, dirs.down]) {
          while (dir.deliver.length && dir.deliver.peek().at <= due) { deliver(dir.deliver.shift(), now); moved = true }
          while (dir.acks.length && dir.acks.peek().at <= due) { const a = dir.acks.shift(); ack(a.f, a.n); moved = true }
        }
        while (wakes.length && wakes.peek().at <= due) { const w = wakes.shift(); w.f.openAt = 0; pump(w.f); moved = true }
        if (!moved) break
      }
    } finally { running = false }
    arm()
  }

  function arm () {
    let next = Infinity
    for (const dir of [dirs.up, dirs.down]) {
      if (dir.deliver.length) next = Math.min(next, dir.deliver.peek().at)
      if (dir.acks.length) next = Math.min(next, dir.acks.peek().at)
    }
    if (wakes.length) next = Math.min(next, wakes.peek().at)
    if (next === Infinity) { if (timer) { clearTimeout(timer); timer = null; timerAt = Infinity } return }
    if (timer && timerAt <= next) return
    if (timer) clearTimeout(timer)
    timerAt = next
    timer = setTimeout(() => { timer = null; timerAt = Infinity; run() }, Math.max(0, Math.ceil(next - clock() - slack)))
  }

  const server = net.createServer({ allowHalfOpen: true, noDelay: true, highWaterMark: HWM }, c => {
    stats.connections++; stats.open++
    const s = net.connect({ host: thost, port: tport, allowHalfOpen: true, noDelay: true, highWaterMark: HWM })
    const conn = { c, s }
    conns.add(conn)
    const up = makeFlow(dirs.up, c, s, conn)
    const down = makeFlow(dirs.down, s, c, conn)
    // the handshake: the client's first byte leaves one RTT after it connected
    if (tcp && rttMs > 0) { up.openAt = clock() + rttMs; wakes.push({ at: up.openAt, f: up }) }
    down.ready = true
    s.on('connect', () => { up.ready = true; pump(up); run() })
    for (const f of [up, down]) {
      f.src.on('data', b => {
        f.pending.push(b); f.pendingBytes += b.length
        pump(f)
        if (f.pendingBytes >= HWM && !f.paused) { f.paused = true; f.src.pause() }
        run()
      })
      f.src.on('end', () => { f.pending.push(FIN); pump(f); run() })
    }
    let closed = 0
    const kill = () => { c.destroy(); s.destroy() }
    for (const sock of [c, s]) {
      sock.on('error', kill)
      sock.on('close', () => { if (++closed === 2) { conns.delete(conn); stats.open-- } else if (sock.destroyed && !sock.readableEnded) kill() })
    }
  })

  return {
    server,
    listen (host = '127.0.0.1', port = 0) {
      return new Promise((resolve, reject) => {
        server.once('error', reject)
        server.listen(port, host, () => resolve(server.address().port))
      })
    },
    stats: () => ({
      connections: stats.connections,
      open: stats.open,
      bytesUp: dirs.up.bytes,
      bytesDown: dirs.down.bytes,
      // how late pieces came out against their stamped time: the relay keeping up or not
      lateMeanMs: stats.late.n ? stats.late.sumMs / stats.late.n : 0,
      lateMaxMs: stats.late.maxMs,
      pieces: stats.late.n
    }),
    resetStats () { stats.late = { n: 0, sumMs: 0, maxMs: 0 }; dirs.up.bytes = dirs.down.bytes = 0; stats.connections = 0 },
    close () {
      for (const { c, s } of conns) { c.destroy(); s.destroy() }
      clearTimeout(timer)
      return new Promise(resolve => server.close(() => resolve()))
    }
  }
}

function splitHostPort (hp) {
  const m = /^(.*):(\d+)$/.exec(hp)
  if (!m) throw new RangeError(`expected HOST:PORT, got ${hp}`)
  return [m[1].replace(/^\[|\]$/g, ''), Number(m[2])]
}

/**
 * The link in its own process (so a busy reader in the bench process does not
 * delay its timers). Resolves once it listens.
 * @param {{ target: string, rttMs?: number, mbit?: number|null, window?: number, tcp?: boolean, host?: string, cpu?: string }} o
 *   cpu: a taskset CPU list to pin the relay to
 * @returns {Promise<{ port: number, host: string, pid: number, pids: number[], stats: () => Promise<object>, resetStats: () => Promise<void>, stop: () => Promise<void>, describe: string }>}
 */
export async function startLink ({ target, rttMs = 0, mbit = null, window = DEFAULT_WINDOW, tcp = true, host = '127.0.0.1' }) {
  const args = ['--target', target, '--rtt', String(rttMs), '--listen', `${host}:0`, '--window', String(window)]
  if (mbit) args.push('--mbit', String(mbit))
  if (!tcp) args.push('--no-tcp')
  const child = fork(SELF, args, { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] })
  const port = await new Promise((resolve, reject) => {
    child.once('message', m => m.port ? resolve(m.port) : reject(new Error(m.error)))
    child.once('exit', code => reject(new Error(`link exited with ${code}`)))
  })
  let seq = 0
  const ask = cmd => new Promise(resolve => {
    const id = ++seq
    const on = m => { if (m.id === id) { child.off('message', on); resolve(m.value) } }
    child.on('message', on)
    child.send({ id, cmd })
  })
  return {
    port,
    host,
    pid: child.pid,
    pids: [child.pid],
    describe: describeLink({ rttMs, mbit, window, tcp }),
    stats: () => ask('stats'),
    resetStats: () => ask('reset'),
    stop: () => new Promise(resolve => {
      if (child.exitCode !== null) return resolve()
      child.once('exit', resolve)
      child.kill('SIGTERM')
      setTimeout(() => child.kill('SIGKILL'), 3000).unref()
    })
  }
}

export function describeLink ({ rttMs = 0, mbit = null, window = DEFAULT_WINDOW, tcp = true }) {
  return `RTT ${rttMs} ms, ${mbit ? fmtRate(mbit) : 'uncapped'}${tcp ? `, TCP window ≤ ${window / 2 ** 20} MiB` : ', no TCP model'}`
}

export const fmtRate = mbit => mbit >= 1000 ? `${mbit / 1000} Gbit/s` : `${mbit} Mbit/s`

// ---- command line ------------------------------------------------------------

function parseArgs (argv) {
  const o = { tcp: true }
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]
    if (a === '--no-tcp') o.tcp = false
    else if (a === '--self-check') o.selfCheck = true
    else if (a.startsWith('--')) o[a.slice(2)] = argv[++i]
  }
  return o
}

async function serveMain (o) {
  const link = createLink({ target: o.target, rttMs: Number(o.rtt ?? 0), mbit: o.mbit ? Number(o.mbit) : null, window: o.window ? Number(o.window) : DEFAULT_WINDOW, tcp: o.tcp })
  const [host, port] = splitHostPort(o.listen ?? '127.0.0.1:0')
  const p = await link.listen(host, port)
  const stop = () => link.close().then(() => process.exit(0))
  process.on('SIGTERM', stop); process.on('SIGINT', stop)
  if (process.send) {
    process.send({ port: p })
    process.on('message', m => {
      if (m.cmd === 'stats') process.send({ id: m.id, value: link.stats() })
      else if (m.cmd === 'reset') { link.resetStats(); process.send({ id: m.id, value: true }) }
    })
    process.on('disconnect', stop) // the bench that started it is gone
  } else {
    console.log(`link ${host}:${p} → ${o.target}: ${describeLink({ rttMs: Number(o.rtt ?? 0), mbit: o.mbit ? Number(o.mbit) : null, window: o.window ? Number(o.window) : DEFAULT_WINDOW, tcp: o.tcp })}`)
  }
}

/** One HTTP request/response on a kept-alive connection, many times: the median round trip. */
async function roundTrips (port, n) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
  const get = () => new Promise((resolve, reject) => {
    const t = performance.now()
    http.get({ host: '127.0.0.1', port, path: '/tiny', agent }, res => { res.resume(); res.on('end', () => resolve(performance.now() - t)) }).on('error', reject)
  })
  const first = await get() // includes the emulated handshake
  const xs = []
  for (let i = 0; i < n; i++) xs.push(await get())
  agent.destroy()
  xs.sort((a, b) => a - b)
  return { first, median: xs[xs.length >> 1], min: xs[0], max: xs[xs.length - 1] }
}

async function curlRate (url) {
  // asynchronous: the server being measured runs in this process
  const { stdout } = await promisify(execFile)('curl', ['-s', '-o', '/dev/null', '--max-time', '30', '-w', '%{speed_download} %{time_total} %{size_download}', url])
  const out = stdout.trim().split(' ')
  return { mbit: Number(out[0]) * 8 / 1e6, s: Number(out[1]), bytes: Number(out[2]) }
}

/**
 * Seconds one download of `bytes` should take over a link with the TCP model,
 * from connect to last byte: a handshake RTT, the request's one-way trip, then
 * rounds of one RTT in which cwnd doubles until the link or the window is full.
 */
export function modelSeconds (bytes, { rttMs, mbit, window = DEFAULT_WINDOW }) {
  const rate = mbit * 1e6 / 8 / 1000 // bytes per ms
  let t = rttMs + rttMs / 2; let left = bytes; let cwnd = IW
  while (left > 0) {
    const perRound = Math.min(cwnd, window)
    if (perRound >= rate * rttMs || rttMs === 0) { t += left / rate; break } // the link is full from here on
    const n = Math.min(left, perRound)
    left -= n
    t += left > 0 ? rttMs : n / rate
    cwnd = Math.min(window, cwnd * 2)
  }
  return (t + rttMs / 2) / 1000
}

async function selfCheck () {
  const { cpuSeconds } = await import('./proc.js')
  const os = await import('node:os')
  const load = os.loadavg()[0]; const cores = os.cpus().length
  console.log(`load average ${load.toFixed(1)} on ${cores} cores${load > cores ? ': the machine is busy, and a relay that is not scheduled cannot be on time; expect failures' : ''}`)
  const big = Buffer.alloc(64 << 20, 7)
  const srv = http.createServer((req, res) => {
    const body = req.url === '/tiny' ? Buffer.from('x') : big
    res.writeHead(200, { 'content-length': body.length }); res.end(body)
  })
  await new Promise(resolve => srv.listen(0, '127.0.0.1', resolve))
  const target = `127.0.0.1:${srv.address().port}`
  let ok = true
  const check = (what, cond, text) => { ok &&= cond; console.log(`${cond ? 'ok  ' : 'FAIL'} ${what}: ${text}`) }
  let hasCurl = true
  try { execFileSync('curl', ['--version'], { stdio: 'ignore' }) } catch { hasCurl = false; console.log('skip throughput checks: curl not found (Debian package: curl)') }
  try {
    // 1. RTT 50 ms: a request/response on a kept-alive connection takes ~50 ms more than direct
    const direct0 = await roundTrips(srv.address().port, 20)
    let link = await startLink({ target, rttMs: 50 })
    const rt = await roundTrips(link.port, 20)
    const added = rt.median - direct0.median
    check('RTT 50 ms', added >= 49 && added <= 52, `median round trip ${rt.median.toFixed(1)} ms (min ${rt.min.toFixed(1)}, max ${rt.max.toFixed(1)}) against ${direct0.median.toFixed(1)} ms direct; the first request on a new connection ${rt.first.toFixed(1)} ms (handshake + request: 2 RTT)`)
    await link.stop()
    if (hasCurl) {
      // 2. a 200 Mbit/s cap: curl of 64 MiB measures ~200 Mbit/s (RTT 0, and RTT 50 ms with slow start)
      for (const rtt of [0, 50]) {
        link = await startLink({ target, rttMs: rtt, mbit: 200 })
        const r = await curlRate(`http://127.0.0.1:${link.port}/big`)
        const model = modelSeconds(r.bytes, { rttMs: rtt, mbit: 200 })
        check(`200 Mbit/s cap, RTT ${rtt} ms`, r.mbit <= 202 && Math.abs(r.s / model - 1) < 0.08, `curl ${r.mbit.toFixed(1)} Mbit/s over ${r.s.toFixed(2)} s; the model (handshake, request, slow start from 10 segments, then the cap) says ${model.toFixed(2)} s, ${(r.bytes * 8 / model / 1e6).toFixed(1)} Mbit/s`)
        await link.stop()
      }
      // 3. the relay is not the bottleneck: uncapped, RTT 0, against direct (at least 1.5× the fastest cap the figures use)
      const direct = await curlRate(`http://${target}/big`)
      link = await startLink({ target })
      const c0 = cpuSeconds(link.pid)
      const relayed = await curlRate(`http://127.0.0.1:${link.port}/big`)
      const cpu = cpuSeconds(link.pid) - c0
      check('relay, uncapped, RTT 0', relayed.mbit >= 1500, `${relayed.mbit.toFixed(0)} Mbit/s against ${direct.mbit.toFixed(0)} Mbit/s direct; the relay used ${(cpu / relayed.s * 100).toFixed(0)}% of a core, ${(cpu / (relayed.bytes * 8 / 1e9) * 1000).toFixed(0)} ms of CPU per Gbit`)
      await link.stop()
      link = await startLink({ target, mbit: 1000 })
      const g0 = cpuSeconds(link.pid)
      const gig = await curlRate(`http://127.0.0.1:${link.port}/big`)
      const gcpu = cpuSeconds(link.pid) - g0
      const st = await link.stats()
      check('1 Gbit/s cap, RTT 0', gig.mbit > 900 && gig.mbit <= 1010, `curl ${gig.mbit.toFixed(0)} Mbit/s; relay CPU ${(gcpu / gig.s * 100).toFixed(0)}% of a core; pieces out ${st.lateMeanMs.toFixed(2)} ms late on average (max ${st.lateMaxMs.toFixed(1)})`)
      await link.stop()
    }
  } finally { srv.close() }
  process.exitCode = ok ? 0 : 1
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const o = parseArgs(process.argv.slice(2))
  if (o.selfCheck) await selfCheck()
  else if (!o.target) { console.error(`usage: node ${path.relative(process.cwd(), SELF)} --target HOST:PORT [--rtt MS] [--mbit N] [--window BYTES] [--no-tcp] [--listen HOST:PORT] | --self-check`); process.exit(2) } else await serveMain(o)
}

// A mirror at a distance, for the scheduler's tests (mirrors*.test.js,
// window*.test.js): a real node:http server on 127.0.0.1:0 in front of a
// published folder that answers each request after a delay, sends bodies
// through one shared rate limit (a link: what it sends queues behind what it
// sent before), and counts what it was asked, including how many requests
// and bytes it was serving at once.
//
//   const m = await startMirror(out, { delayMs: 20, mbit: 200, blobDelayMs: 0, fsinfoBody })
//   m.url, m.stats: { requests, blobRequests, concurrent, peakConcurrent, peakBytes, auth }
//   m.set({ delayMs, blobDelayMs, fsinfoDelayMs, fsinfoBody })
import http from 'node:http'
import fs from 'node:fs/promises'
import path from 'node:path'

const HEX64 = /^[0-9a-f]{64}$/
const MAX_REQUESTS = 100_000

/**
 * @param {string} dir a published folder
 * @param {{ delayMs?: number, blobDelayMs?: number, fsinfoDelayMs?: number, mbit?: number, fsinfoBody?: Uint8Array }} [opts]
 *   delayMs: every answer; blobDelayMs / fsinfoDelayMs: added for blobs / fsinfo.json; mbit: shared rate limit
 */
export async function startMirror (dir, opts = {}) {
  let o = { delayMs: 0, blobDelayMs: 0, fsinfoDelayMs: 0, mbit: null, fsinfoBody: null, ...opts }
  const stats = { requests: 0, blobRequests: 0, blobBytes: 0, concurrent: 0, peakConcurrent: 0, bytes: 0, peakBytes: 0, auth: new Set() }
  const timers = new Set()
  const sockets = new Set()
  let busyUntil = 0 // the shared link: when it has sent everything queued so far
  let closed = false

  const later = (ms, fn) => {
    const t = setTimeout(() => { timers.delete(t); fn() }, Math.max(0, ms))
    timers.add(t)
  }

  const server = http.createServer(async (req, res) => {
    stats.requests++
    if (req.headers.authorization) stats.auth.add(req.headers.authorization)
    if (stats.requests > MAX_REQUESTS || closed) { res.writeHead(503).end(); return }
    const url = new URL(req.url, 'http://x')
    let body = null; let extra = 0
    if (url.pathname === '/fsinfo.json') {
      body = o.fsinfoBody ?? await fs.readFile(path.join(dir, 'fsinfo.json')).catch(() => null)
      extra = o.fsinfoDelayMs
    } else if (url.pathname.startsWith('/h/') && HEX64.test(url.pathname.slice(3))) {
      body = await fs.readFile(path.join(dir, 'h', url.pathname.slice(3))).catch(() => null)
      stats.blobRequests++
      if (body) stats.blobBytes += body.length
      extra = o.blobDelayMs
    }
    if (!body) { res.writeHead(404).end(); return }
    stats.concurrent++; stats.bytes += body.length
    stats.peakConcurrent = Math.max(stats.peakConcurrent, stats.concurrent)
    stats.peakBytes = Math.max(stats.peakBytes, stats.bytes)
    const now = performance.now()
    let at = now + o.delayMs + extra
    if (o.mbit) {
      // the body leaves when the link has carried everything before it
      busyUntil = Math.max(busyUntil, now) + body.length / (o.mbit * 1e6 / 8) * 1000
      at = Math.max(at, busyUntil + o.delayMs)
    }
    const finish = () => { stats.concurrent--; stats.bytes -= body.length }
    res.on('close', () => { if (!res.writableFinished) finish() })
    later(at - now, () => {
      if (res.destroyed) return
      res.writeHead(200, { 'content-length': String(body.length), 'content-type': 'application/octet-stream' })
      res.end(body, finish)
    })
  })
  server.keepAliveTimeout = 30_000
  server.on('connection', s => { sockets.add(s); s.on('close', () => sockets.delete(s)) })
  await new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => { server.off('error', reject); resolve() })
  })
  return {
    url: `http://127.0.0.1:${server.address().port}/`,
    port: server.address().port,
    stats,
    set (next) { o = { ...o, ...next } },
    async close () {
      if (closed) return
      closed = true
      for (const t of timers) clearTimeout(t)
      const done = new Promise(resolve => server.close(() => resolve()))
      server.closeAllConnections()
      for (const s of sockets) s.destroy()
      await done
    }
  }
}

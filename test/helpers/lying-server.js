// A hostile mirror for the adversarial suites: a real node:http server on
// 127.0.0.1:0 in front of a published folder, whose lies are chosen per test
// and may be changed while it runs (set()).
//
//   const liar = await startLyingServer(out, {
//     blob: (hash, bytes) => hash === victim ? 'truncate' : 'honest',
//     fsinfo: bytes => ({ body: otherFsinfo }),
//     trust: (seq, bytes) => seq === 2 ? { body: forgedDoc } : 'honest'
//   })
//   ... liar.url, liar.requests, liar.set({ blob: () => 'reset' }), await liar.close()
//
// `trust` answers trust/<seq>.json (format version 2, FORMAT.md §12.2); `bytes`
// is null when the folder has no such document, and then 'honest' is a 404.
// `log` answers log/checkpoint, log/fsinfo.proof and log/tile/… (FORMAT.md §13), called with
// the path under log/ and the bytes (null: absent, and 'honest' is a 404).
// An action is one of:
//   'honest' (or undefined/null)   the true bytes, with Content-Length
//   { body: Uint8Array, length?: false|number }
//                                   these bytes instead; length: false drops
//                                   Content-Length, a number announces that one
//   { status: 404|500|…, location?, body? }  an error (or redirect) status
//   { redirect: location }          302 to `location` (any string, even a bad URL)
//   { swapWith: hash }              the bytes of another blob of the folder
//   'truncate'                      the first half, no Content-Length: the body just ends
//   'truncate-cl'                   the full Content-Length announced, half sent, socket closed
//   'extend'                        the true bytes + 1 KiB more, no Content-Length
//   'extend-cl'                     the same with a Content-Length that announces them
//   'endless'                       random bytes without Content-Length until the client
//                                   disconnects (bounded: ENDLESS_MAX_BYTES / ENDLESS_MAX_MS)
//   'stall'                         headers, then nothing (bounded: STALL_MAX_MS)
//   'stall-silent'                  not even headers (bounded: STALL_MAX_MS)
//   'reset'                         the socket destroyed before any answer
//   'reset-mid'                     headers and half the body, then the socket destroyed
//   { drip: ms }                    the true bytes with Content-Length, one byte every `ms`
//                                   (a slow-loris mirror; bounded: STALL_MAX_MS)
//   { headerBytes: n }              the true bytes after an n-byte junk header
// `stats.endless` counts endless bodies: { started, open, bytes } (open drops to 0
// once every client hung up).
// `cors: true` (off by default; not changeable by set()) adds the CORS headers
// `rotree serve` and `rotree nginx-config` send to every answer, the lies
// included (a 404, a stall's headers, a reset-mid's half body), so a page on
// another origin sees the lie itself rather than an opaque network error; and
// answers an OPTIONS preflight. Only a lie that sends no headers at all
// ('reset', 'stall-silent') still looks like a network failure to a browser.
// A behaviour function may also throw or return an unknown action: the server
// answers 500 and records it in `problems` so a broken test shows up.
import http from 'node:http'
import fs from 'node:fs/promises'
import path from 'node:path'
import { randomBytes } from 'node:crypto'

export const ENDLESS_MAX_BYTES = 256 << 20
export const ENDLESS_MAX_MS = 20_000
export const STALL_MAX_MS = 20_000
const MAX_REQUESTS = 100_000
const HEX64 = /^[0-9a-f]{64}$/
const TRUST_PATH = /^\/trust\/([1-9][0-9]{0,8})\.json$/
// the tree's log (FORMAT.md §13): log/checkpoint, log/fsinfo.proof and C2SP tile paths
const LOG_PATH = /^\/log\/(checkpoint|fsinfo\.proof|tile\/(entries|[0-9]{1,2})(\/x[0-9]{3})*\/[0-9]{3}(\.p\/[0-9]{1,3})?)$/

// as server/blob-route.js CORS (and nginx-config's `always` headers)
const CORS_HEADERS = [
  ['access-control-allow-origin', '*'],
  ['access-control-expose-headers', 'Content-Length, Content-Range, ETag, Accept-Ranges']
]
const CORS_ALLOW = 'GET, HEAD, OPTIONS'

/**
 * @param {string} dir a published folder (fsinfo.json, h/<hex>)
 * @param {{ blob?: (hash: string, bytes: Uint8Array) => any, fsinfo?: (bytes: Uint8Array) => any,
 *   trust?: (seq: number, bytes: Uint8Array|null) => any, cors?: boolean }} [opts]
 * @returns {Promise<{ url: string, close: () => Promise<void>, requests: string[], problems: string[], stats: object, set: (opts: object) => void, server: http.Server }>}
 */
export async function startLyingServer (dir, opts = {}) {
  const { cors = false, ...lies } = opts
  let behaviour = { blob: undefined, fsinfo: undefined, trust: undefined, log: undefined, ...lies }
  const requests = []
  const problems = []
  const sockets = new Set()
  const timers = new Set()
  const stats = { endless: { started: 0, open: 0, bytes: 0 } }
  let closed = false

  const later = (ms, fn) => {
    const t = setTimeout(() => { timers.delete(t); fn() }, ms)
    t.unref?.()
    timers.add(t)
    return t
  }

  async function readBlob (hash) {
    if (!HEX64.test(hash)) return null
    try { return new Uint8Array(await fs.readFile(path.join(dir, 'h', hash))) } catch { return null }
  }

  async function handle (req, res) {
    requests.push(req.url)
    // set before any lie runs: writeHead() merges these with the lie's own headers
    if (cors) for (const [name, value] of CORS_HEADERS) res.setHeader(name, value)
    if (requests.length > MAX_REQUESTS || closed) { res.writeHead(503).end(); return }
    if (cors && req.method === 'OPTIONS') {
      res.writeHead(204, { 'access-control-allow-methods': CORS_ALLOW, 'access-control-allow-headers': 'Range, If-None-Match', 'access-control-max-age': '86400', allow: CORS_ALLOW }).end()
      return
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') { res.writeHead(405).end(); return }
    const url = new URL(req.url, 'http://x')
    let bytes; let action
    if (url.pathname === '/fsinfo.json') {
      try { bytes = new Uint8Array(await fs.readFile(path.join(dir, 'fsinfo.json'))) } catch { bytes = null }
      if (!bytes) { res.writeHead(404).end('no fsinfo.json\n'); return }
      action = behaviour.fsinfo ? behaviour.fsinfo(bytes) : 'honest'
    } else if (url.pathname.startsWith('/h/')) {
      const hash = url.pathname.slice(3)
      bytes = await readBlob(hash)
      if (!bytes) { res.writeHead(404).end('no such blob\n'); return }
      action = behaviour.blob ? behaviour.blob(hash, bytes) : 'honest'
    } else if (TRUST_PATH.test(url.pathname)) {
      const seq = Number(TRUST_PATH.exec(url.pathname)[1])
      try { bytes = new Uint8Array(await fs.readFile(path.join(dir, 'trust', `${seq}.json`))) } catch { bytes = null }
      action = (behaviour.trust ? behaviour.trust(seq, bytes) : 'honest') ?? 'honest'
      if (!bytes && action === 'honest') { res.writeHead(404).end('no such trust document\n'); return }
    } else if (LOG_PATH.test(url.pathname)) {
      const rel = url.pathname.slice(5) // 'checkpoint', 'tile/0/000.p/3', …
      try { bytes = new Uint8Array(await fs.readFile(path.join(dir, 'log', rel))) } catch { bytes = null }
      action = (behaviour.log ? behaviour.log(rel, bytes) : 'honest') ?? 'honest'
      if (!bytes && action === 'honest') { res.writeHead(404).end('no such log file\n'); return }
    } else {
      res.writeHead(404).end('not found\n'); return
    }
    await act(req, res, action ?? 'honest', bytes)
  }

  function send (res, body, length = body.length) {
    const headers = { 'content-type': 'application/octet-stream' }
    if (length !== false) headers['content-length'] = String(length)
    res.writeHead(200, headers)
    res.end(Buffer.from(body.buffer, body.byteOffset, body.length))
  }

  async function act (req, res, action, bytes) {
    const sock = req.socket
    if (action === 'honest') return send(res, bytes)
    if (action === 'truncate') return send(res, bytes.subarray(0, bytes.length >> 1), false)
    if (action === 'truncate-cl') {
      res.writeHead(200, { 'content-length': String(bytes.length) })
      res.write(Buffer.from(bytes.subarray(0, bytes.length >> 1)), () => sock.destroy())
      return
    }
    if (action === 'extend' || action === 'extend-cl') {
      const more = new Uint8Array(bytes.length + 1024)
      more.set(bytes); more.set(randomBytes(1024), bytes.length)
      return send(res, more, action === 'extend' ? false : more.length)
    }
    if (action === 'endless') return endless(res)
    if (action === 'stall') {
      res.writeHead(200, { 'content-length': String(bytes.length) })
      res.flushHeaders()
      later(STALL_MAX_MS, () => sock.destroy())
      return
    }
    if (action === 'stall-silent') { later(STALL_MAX_MS, () => sock.destroy()); return }
    if (action === 'reset') { sock.destroy(); return }
    if (action === 'reset-mid') {
      res.writeHead(200, { 'content-length': String(bytes.length) })
      res.write(Buffer.from(bytes.subarray(0, bytes.length >> 1)), () => sock.destroy())
      return
    }
    if (action && typeof action === 'object') {
      if (action.body !== undefined) return send(res, action.body, action.length ?? action.body.length)
      if (action.swapWith !== undefined) {
        const other = await readBlob(action.swapWith)
        if (!other) { problems.push(`swapWith: no blob ${action.swapWith}`); res.writeHead(500).end(); return }
        return send(res, other)
      }
      if (action.drip !== undefined) return drip(res, bytes, action.drip)
      if (action.headerBytes !== undefined) {
        res.writeHead(200, { 'content-length': String(bytes.length), 'x-junk': 'j'.repeat(action.headerBytes) })
        res.end(Buffer.from(bytes))
        return
      }
      if (action.redirect !== undefined) {
        res.writeHead(302, { location: action.redirect }).end()
        return
      }
      if (action.status !== undefined) {
        const headers = action.location ? { location: action.location } : {}
        res.writeHead(action.status, headers).end(action.body ?? `status ${action.status}\n`)
        return
      }
    }
    problems.push(`unknown action ${JSON.stringify(action)}`)
    res.writeHead(500).end()
  }

  function endless (res) {
    res.writeHead(200, { 'content-type': 'application/octet-stream' }) // no Content-Length: chunked, no end
    const block = randomBytes(64 * 1024)
    let sent = 0
    let stopped = false
    stats.endless.started++; stats.endless.open++
    const stop = () => {
      if (stopped) return
      stopped = true; stats.endless.open--
      clearTimeout(deadline); timers.delete(deadline)
    }
    const deadline = later(ENDLESS_MAX_MS, () => { stop(); res.destroy() })
    res.on('close', stop)
    const pump = () => {
      while (!stopped && !res.destroyed && !res.writableEnded) {
        if (sent >= ENDLESS_MAX_BYTES) { stop(); res.destroy(); return }
        sent += block.length; stats.endless.bytes += block.length
        if (!res.write(block)) { res.once('drain', pump); return }
      }
    }
    pump()
  }

  function drip (res, bytes, ms) {
    res.writeHead(200, { 'content-length': String(bytes.length) })
    res.flushHeaders()
    let i = 0
    const started = Date.now()
    const tick = () => {
      if (res.destroyed || closed) return
      if (i >= bytes.length) { res.end(); return }
      if (Date.now() - started > STALL_MAX_MS) { res.destroy(); return }
      res.write(Buffer.from(bytes.subarray(i, i + 1))); i++
      later(ms, tick)
    }
    tick()
  }

  const server = http.createServer((req, res) => {
    handle(req, res).catch(err => {
      problems.push(String(err?.stack ?? err))
      if (!res.headersSent) res.writeHead(500).end(); else res.destroy()
    })
  })
  server.on('connection', s => { sockets.add(s); s.on('close', () => sockets.delete(s)) })
  // a client that hangs up on a lie (ECONNRESET, EPIPE) is the point, not a problem
  server.on('clientError', (err, s) => {
    if (err.code !== 'ECONNRESET' && err.code !== 'EPIPE') problems.push('clientError ' + err.message)
    s.destroy()
  })
  // A client that never finishes is not our problem for longer than a stall.
  server.requestTimeout = STALL_MAX_MS + 5_000
  server.headersTimeout = STALL_MAX_MS + 5_000

  await new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => { server.off('error', reject); resolve() })
  })
  const { port } = server.address()

  return {
    url: `http://127.0.0.1:${port}/`,
    requests,
    problems,
    stats,
    server,
    /** Replace some behaviours (the others stay). */
    set (next) { behaviour = { ...behaviour, ...next } },
    async close () {
      if (closed) return
      closed = true
      for (const t of timers) clearTimeout(t)
      timers.clear()
      const done = new Promise(resolve => server.close(() => resolve()))
      server.closeAllConnections()
      for (const s of sockets) s.destroy()
      await done
    }
  }
}

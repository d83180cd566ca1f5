// The listening socket of `rotree serve`: a lean HTTP/1.1 front for its
// hottest answer, a GET of a blob already in the memory cache (blob-route.js)
// with no validator and no range (on a gated tree, with a valid edge token in
// its query, as readers send it: gate.js fastAdmit), written from bytes made
// once per blob: a precomputed head, a shared Date line, the cached body, in
// one writev. node:http's per-request machinery (llhttp, an IncomingMessage,
// a ServerResponse and their streams, header objects) costs about as much CPU
// as nginx's whole answer does (docs/BENCHMARKS.md P1h: bare node:http
// answering one constant buffer took 1.5-2.5x nginx's CPU per request, this
// front 0.9-1.4x).
//
// Everything else is node:http's, with every rule about bad input: at the
// first request of a connection that is not exactly such a GET (another
// path, method or version, a query (gated: other than the token), a Range
// or conditional, a body, a `Connection` other than keep-alive, a blob not
// cached yet, a head with any byte outside printable ASCII, a folded or
// unnamed line), the connection is handed to the node:http server with that
// request's bytes, and stays there. A request this front answers is one
// node:http would have answered the same way: same status, headers (Date
// and Keep-Alive included) and body.
import { TOKEN_HEADER, TOKEN_QUERY } from './edge-token.js'

const MAX_HEAD = 16 * 1024 // a head not ended within this is node:http's to refuse (431)
const PREFIX = Buffer.from('GET /h/', 'latin1')
const VERSION = Buffer.from(' HTTP/1.1\r\n', 'latin1')
const TOKEN_ARG = Buffer.from(`?${TOKEN_QUERY}=`, 'latin1') // docs/FORMAT.md §12.11
const MAX_TOKEN = 64
const LINE_AT = PREFIX.length + 64 + VERSION.length // where the header lines start
const HEAD_END = Buffer.from('\r\n\r\n', 'latin1')
const HIGH_WATER = 1 << 20 // bytes queued to a client before its requests wait for it to read
const HEAD_WAIT_MS = 10_000 // a head split over reads that is still not whole after this goes to node:http

// header names whose presence changes the answer (or the framing): such a
// request goes to node:http; any other header is one node:http ignores too
const HANDOFF_NAMES = new Set(['range', 'if-range', 'if-none-match', 'if-match', 'if-modified-since',
  'if-unmodified-since', 'content-length', 'transfer-encoding', 'expect', 'upgrade', 'te', 'trailer'])

/**
 * Put the front on `server` (a node:http server, before it listens): its
 * connections start here, and those handed off go on to node:http's own
 * connection handling, so the server's listening, address() and close()
 * are as they were.
 * @param {import('node:http').Server} server
 * @param {object} o
 * @param {(hex: string) => { buf: Buffer, h200: string[], raw?: Buffer } | undefined} o.cached
 *   a verified, cached blob by its name (blob-route.js), or undefined
 * @param {{ admit: (token: string, sock: import('node:net').Socket, hex: string) => boolean, headers: (h: string[]) => string[] } | null} [o.gate]
 *   a gated tree: admit() checks a request's token and logs it (gate.js
 *   fastAdmit); headers() makes a blob's headers those of a gated answer
 *   (gate.js privately)
 * @returns {{ close: (timeoutMs: number) => void }} close: the connections still
 *   here end (at once when idle, after their answers otherwise; all by the deadline)
 */
export function installFastFront (server, { cached, gate = null }) {
  // node:http's own 'connection' listener (set in http.Server's constructor): where a handed-off connection goes
  const [httpConnection] = server.listeners('connection')
  if (typeof httpConnection !== 'function') throw new Error('fast front: node:http has no connection listener to hand off to')
  server.removeListener('connection', httpConnection)
  const conns = new Set()
  const dateLine = dateLines(server.keepAliveTimeout)
  const state = { closing: false }
  server.on('connection', sock => {
    sock.setNoDelay(true)
    conns.add(sock)
    sock.on('close', () => conns.delete(sock))
    serveConn(sock, {
      cached,
      gate,
      dateLine,
      state,
      keepAliveMs: server.keepAliveTimeout,
      handOff: () => { conns.delete(sock); httpConnection.call(server, sock) }
    })
  })
  server.on('close', () => dateLine.stop())
  return {
    close (timeoutMs) {
      state.closing = true
      dateLine.stop()
      const left = [...conns]
      for (const s of left) { if (s.writableLength === 0) s.destroy(); else s.end() }
      setTimeout(() => { for (const s of left) s.destroy() }, timeoutMs).unref()
    }
  }
}

function serveConn (sock, { cached, gate, dateLine, state, keepAliveMs, handOff: toHttp }) {
  let pending = null // bytes of a request not complete yet
  let waiting = false // paused until the client reads what it was sent
  let headTimer = null // a head left incomplete goes to node:http (and its headersTimeout) after HEAD_WAIT_MS
  let corked = false
  sock.setTimeout(keepAliveMs)
  const onTimeout = () => sock.destroy()
  const onError = () => {} // a reset client: 'close' follows
  const onDrain = () => {
    if (!waiting) return
    waiting = false
    const rest = pending
    pending = null
    sock.resume()
    if (rest !== null) onData(rest)
  }
  const onData = d => {
    if (state.closing) return sock.end()
    if (pending !== null) { d = Buffer.concat([pending, d]); pending = null }
    let at = 0
    sock.cork()
    corked = true
    try {
      while (at < d.length) {
        const end = d.indexOf(HEAD_END, at)
        if (end === -1) {
          if (d.length - at > MAX_HEAD) return handOff(d.subarray(at))
          pending = d.subarray(at)
          // from the head's first bytes, however slowly the rest trickles in
          if (headTimer === null) {
            headTimer = setTimeout(() => { headTimer = null; const p = pending; pending = null; if (p !== null) handOff(p) }, HEAD_WAIT_MS)
            headTimer.unref()
          }
          return
        }
        if (headTimer !== null) { clearTimeout(headTimer); headTimer = null } // the head that was split is whole
        const r = fastRequest(d, at, end, gate !== null)
        const e = r === null ? undefined : cached(r.hex)
        if (e === undefined) return handOff(d.subarray(at))
        if (gate !== null && !gate.admit(r.token, sock, r.hex)) return handOff(d.subarray(at))
        if (gate === null) e.raw ??= rawHead(e.h200)
        else e.rawGated ??= rawHead(gate.headers(e.h200))
        sock.write(gate === null ? e.raw : e.rawGated)
        sock.write(dateLine.bytes)
        sock.write(e.buf)
        at = end + 4
        if (sock.writableLength > HIGH_WATER) {
          // the client is not reading: the rest waits, and the socket is not read, until it does
          if (at < d.length) pending = d.subarray(at)
          waiting = true
          sock.pause()
          return
        }
      }
    } finally { if (corked) { corked = false; sock.uncork() } }
  }
  function handOff (rest) {
    // what was answered here goes out before node:http writes (and it may destroy the socket right after)
    if (corked) { corked = false; sock.uncork() }
    if (headTimer !== null) { clearTimeout(headTimer); headTimer = null }
    sock.removeListener('data', onData)
    sock.removeListener('drain', onDrain)
    sock.removeListener('timeout', onTimeout)
    sock.removeListener('error', onError)
    sock.setTimeout(0)
    // bytes the socket read while paused come after `rest`, before anything it reads next
    const buffered = sock.readableLength > 0 ? sock.read() : null
    const bytes = buffered === null ? rest : Buffer.concat([rest, buffered])
    toHttp()
    sock.emit('data', bytes)
    sock.resume()
  }
  sock.on('data', onData)
  sock.on('drain', onDrain)
  sock.on('timeout', onTimeout)
  sock.on('error', onError)
}

/**
 * The blob name (and, gated, the token) of a head d[at, end) ("\r\n\r\n" at
 * end) that this front answers, or null: exactly `GET /h/<64 lowercase hex>
 * HTTP/1.1` (gated: `GET /h/<hex>?rotree_token=<token> HTTP/1.1`), one Host,
 * no header in HANDOFF_NAMES, Connection (if any) keep-alive, and every line
 * `name: value` of printable ASCII (tab allowed in values).
 * @returns {{ hex: string, token: string|null } | null}
 */
function fastRequest (d, at, end, gated) {
  if (end - at < LINE_AT - 2 || d.compare(PREFIX, 0, PREFIX.length, at, at + PREFIX.length) !== 0) return null
  const h = at + PREFIX.length
  for (let i = h; i < h + 64; i++) {
    const c = d[i]
    if (!((c >= 48 && c <= 57) || (c >= 97 && c <= 102))) return null
  }
  let v = h + 64 // where ' HTTP/1.1' is
  let token = null
  if (gated) {
    if (d.compare(TOKEN_ARG, 0, TOKEN_ARG.length, v, v + TOKEN_ARG.length) !== 0) return null
    const t = v + TOKEN_ARG.length
    v = t
    while (v < end && v - t <= MAX_TOKEN && isTokenChar(d[v])) v++
    if (v === t || v - t > MAX_TOKEN) return null
    token = d.latin1Slice(t, v)
  }
  if (d.compare(VERSION, 0, VERSION.length, v, v + VERSION.length) !== 0) return null
  let hosts = 0
  let i = v + VERSION.length
  while (i < end + 2) {
    const eol = d.indexOf(13, i)
    if (eol === -1 || eol > end + 2 || d[eol + 1] !== 10) return null
    // name: a token; then ':' and a value of visible ASCII, spaces and tabs
    let j = i
    while (j < eol && isTchar(d[j])) j++
    if (j === i || j === eol || d[j] !== 58) return null
    for (let k = j + 1; k < eol; k++) {
      const c = d[k]
      if (c < 32 ? c !== 9 : c > 126) return null
    }
    const name = d.latin1Slice(i, j).toLowerCase()
    // gated: a token in the header wins over the query's (gate.js tokenOf)
    if (HANDOFF_NAMES.has(name) || (gated && name === TOKEN_HEADER)) return null
    if (name === 'host') hosts++
    else if (name === 'connection' && d.latin1Slice(j + 1, eol).trim().toLowerCase() !== 'keep-alive') return null
    i = eol + 2
  }
  return hosts === 1 ? { hex: d.latin1Slice(h, h + 64), token } : null
}

// an edge token's characters: base64url and the comma before its expiry (edge-token.js)
function isTokenChar (c) {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 45 || c === 95 || c === 44
}

// RFC 9110 §5.6.2 tchar
function isTchar (c) {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) ||
    c === 45 || c === 33 || c === 35 || c === 36 || c === 37 || c === 38 || c === 39 || c === 42 ||
    c === 43 || c === 46 || c === 94 || c === 95 || c === 96 || c === 124 || c === 126
}

/** The status line and a blob's headers, as node:http writes them for writeHead(200, h200). */
function rawHead (h200) {
  let s = 'HTTP/1.1 200 OK\r\n'
  for (let i = 0; i < h200.length; i += 2) s += `${h200[i]}: ${h200[i + 1]}\r\n`
  return Buffer.from(s, 'latin1')
}

/** The Date and keep-alive lines that end every head, remade each second while the front listens. */
function dateLines (keepAliveMs) {
  const make = () => Buffer.from(`Date: ${new Date().toUTCString()}\r\nConnection: keep-alive\r\nKeep-Alive: timeout=${Math.floor(keepAliveMs / 1000)}\r\n\r\n`, 'latin1')
  const o = { bytes: make(), stop: () => clearInterval(timer) }
  const timer = setInterval(() => { o.bytes = make() }, 1000)
  timer.unref()
  return o
}

// GET with a hard byte cap and one deadline: over a lean, pipelined
// keep-alive HTTP/1.1 client (transport-h1.js), on TCP for http: mirrors and
// on TLS for https: mirrors; over node:http2 (transport-h2.js) when the
// reader asks for HTTP/2 (`http2: true`) and the mirror chooses h2 by ALPN,
// or when an https: mirror refuses HTTP/1.1 in the TLS handshake (an
// h2-only server: TLS alert no_application_protocol).
// HTTP/1.1 is the default on https: because it is the cheaper of the two
// here: node:http2 costs ~0.25 ms of JavaScript per stream (a session
// request, header objects, a Duplex per stream, an AsyncResource), and its
// body bytes arrive as chunks to copy, where the lean client has the kernel
// (and TLS) write each body into its own buffer. Measured on a 2-core AMD
// EPYC (BENCHMARKS.md P3w, P10): `rotree get` of /usr/share/doc over
// HTTPS at RTT 50 ms took ~0.85× the time and CPU of the same get over
// HTTP/2; `rotree cat` of 256 MiB, the same time and ~0.65× the CPU.
// Only I/O: whether the bytes are any good is verify.js's business. Not
// fetch(): it costs more per request (see BENCHMARKS.md P3).
//
// One deadline covers a request from the call to the last byte, across every
// redirect hop; redirects stay on the mirror's origin unless the reader allowed
// more, and a mirror URL's user:pass goes to its own origin only
// (transport-url.js, docs/TRUST.md rule 4). The two wire clients carry a
// request's hops and talk to it through one contract, request-handler.js.
//
//   createTransport({ maxSockets, ca, http2, allowRedirectOrigins, crossOriginRedirects, pipelineDepth })
//     -> { get(url, { cap, timeoutMs, signal, onTiming, into }) -> Promise<Uint8Array>, preconnect(url, { timeoutMs }), rtt(url) -> Promise<ms|null>,
//          post(url, body, { cap, timeoutMs, contentType }) -> Promise<{ status, body }>, close(), stats }
import http from 'node:http'
import https from 'node:https'
import tls from 'node:tls'
import { readFileSync } from 'node:fs'
import { TooLargeError, MirrorHttpError, TimeoutError, AbortedError } from '../errors.js'
import { parseTarget, basicAuth, redirectPolicy, redirectTarget } from './transport-url.js'
import { H2Origins } from './transport-h2.js'
import { H1Pool } from './transport-h1.js'
import { HandshakeTimes } from './handshake-times.js'
import { networkFault } from './request-handler.js'

/** @typedef {import('./request-handler.js').RequestHandler} RequestHandler */

/**
 * Did the server refuse our ALPN offer (http/1.1) with TLS alert 120,
 * no_application_protocol? Node names it by its code when the handshake
 * fails alone, and as EPROTO with OpenSSL's text when a request was already
 * written behind the handshake (as the lean client writes it).
 */
function refusedAlpn (err) {
  const c = err?.cause
  if (!c) return false
  return c.code === 'ERR_SSL_TLSV1_ALERT_NO_APPLICATION_PROTOCOL' || (c.code === 'EPROTO' && /alert number 120\b/.test(String(c.message)))
}

export { redactUrl } from './transport-url.js'

/**
 * @param {object} [o]
 * @param {number} [o.maxSockets=16] HTTP/1.1 connections per origin
 * @param {string|Buffer|Array<string|Buffer>} [o.ca] PEM certificates trusted
 *   besides the usual ones (and NODE_EXTRA_CA_CERTS): for private mirrors
 * @param {boolean} [o.http2=false] offer h2 to https: mirrors, and read over
 *   HTTP/2 those that choose it (one connection per mirror; more CPU per
 *   request than HTTP/1.1 here: see the top of this file)
 * @param {string[]} [o.allowRedirectOrigins] origins a mirror may redirect to
 * @param {boolean} [o.crossOriginRedirects=false] a mirror may redirect anywhere (never https → http)
 * @param {number} [o.pipelineDepth=8] answers an HTTP/1.1 connection (http: or https:) may have outstanding (transport-h1.js); 1: no pipelining
 */
export function createTransport ({ maxSockets = 16, ca, http2 = false, allowRedirectOrigins, crossOriginRedirects, pipelineDepth } = {}) {
  // TLS is set up on the first https: request: a reader of http: mirrors pays nothing for `ca`
  let secureContext
  const tlsContext = () => (secureContext ??= ca ? secureContextFor(ca) : undefined)
  // node:https, for the token exchange's POST only (postOnce)
  const agents = {
    get 'https:' () {
      const agent = new https.Agent({ keepAlive: true, maxSockets, secureContext: tlsContext() })
      Object.defineProperty(this, 'https:', { value: agent, enumerable: true })
      return agent
    }
  }
  /**
   * stats.origins[origin]: { protocol: 'h2'|'http/1.1'|null, requests, bytes, sessions?, sessionsUnanswered? }
   * (h2: sessions opened, and those that ended with requests asked and none answered)
   */
  const stats = { requests: 0, bytes: 0, origins: {} }
  const originStats = origin => (stats.origins[origin] ??= { protocol: null, requests: 0, bytes: 0 })
  const handshakes = new HandshakeTimes()
  const newH2 = () => new H2Origins({
    tlsContext,
    originStats,
    handshakes,
    // the lean client opens its own connections (it names the buffers a
    // socket reads into when the socket is made): the ALPN probe's closes
    onHttp1: (e, sock) => {
      originStats(e.origin).protocol = 'http/1.1'
      sock?.destroy()
    }
  })
  const ctx = {
    agents,
    h2: http2 ? newH2() : null,
    h1: new H1Pool({ maxSockets, pipelineDepth, handshakes, tlsContext }),
    stats,
    originStats,
    policy: redirectPolicy({ allowRedirectOrigins, crossOriginRedirects }),
    // https: origins that refused HTTP/1.1 in the TLS handshake (h2-only servers): read over HTTP/2
    h2Only: new Set(),
    /** Does a hop to this https: origin go over HTTP/2? */
    overH2 (origin) {
      if (this.h2 === null) return false
      return this.h2Only.has(origin) || (http2 && this.h2.protocolOf(origin) !== 'http/1.1')
    },
    /** An https: origin answered our ALPN offer of http/1.1 with no_application_protocol. */
    refusedHttp1 (origin) {
      this.h2 ??= newH2()
      this.h2Only.add(origin)
    }
  }

  /**
   * @param {string} url
   * @param {{ cap: number, timeoutMs: number, signal?: AbortSignal, onTiming?: (t: object) => void, into?: Uint8Array }} o
   *   onTiming, after a body arrived whole: { origin, protocol, redirects, bytes, headersMs, totalMs }
   *   into: a buffer the caller owns and gives to one request at a time; the
   *   body is read into it when it fits (the answer is then a view of it), so a
   *   caller that knows when bytes are no longer used can recycle its buffers
   * @returns {Promise<Uint8Array>} the body, never more than cap bytes
   */
  function get (url, o) {
    return new Promise((resolve, reject) => new Request(ctx, o, resolve, reject).start(url))
  }

  /**
   * Open the connection a first request to `url` will use (a TCP handshake,
   * or TLS and ALPN for https:), so it overlaps the caller's set-up. Only a
   * head start: nothing is sent, and a failure shows in the request that
   * would have used it.
   * @param {string} url @param {{ timeoutMs: number }} o
   */
  function preconnect (url, { timeoutMs }) {
    let u
    try { u = parseTarget(url) } catch { return } // the request reports a bad URL
    if (u.protocol === 'https:' && ctx.overH2(u.origin)) ctx.h2.preconnect(u, timeoutMs)
    else ctx.h1.preconnect(u)
  }

  /**
   * The round trip to `url`'s origin, measured by its first connection's
   * handshake (handshake-times.js): a promise of ms, or null when it failed.
   */
  function rtt (url) {
    let u
    try { u = parseTarget(url) } catch { return Promise.resolve(null) }
    return handshakes.rtt(u.origin)
  }

  /** One POST, with the mirrors' TLS trust (postOnce below). */
  const post = (url, body, o) => postOnce(agents, url, body, o)

  function close () {
    handshakes.close()
    ctx.h2?.close()
    ctx.h1.close()
    if (Object.getOwnPropertyDescriptor(agents, 'https:').value) agents['https:'].destroy()
  }
  return { get, post, preconnect, rtt, close, stats }
}

/**
 * One POST (a gated edge's token exchange, FORMAT.md §12.11) with the
 * mirrors' TLS trust (`ca`), one deadline, and a capped answer of any
 * status; no redirect is followed, and only the URL's own user:pass is sent. Not on the read
 * path: a plain node:http(s) request, no pooling beyond Node's agents.
 * @param {object} agents createTransport's (its https: agent holds the TLS context)
 * @param {string} url @param {Uint8Array|string} body
 * @param {{ cap: number, timeoutMs: number, contentType?: string }} o
 * @returns {Promise<{ status: number, body: Uint8Array }>}
 */
function postOnce (agents, url, body, { cap, timeoutMs, contentType = 'application/json' }) {
  return new Promise((resolve, reject) => {
    let u, auth
    try { u = parseTarget(url); auth = basicAuth(u) } catch (err) { return reject(err) }
    const mod = u.protocol === 'https:' ? https : http
    const parts = []
    let n = 0
    const req = mod.request({
      method: 'POST',
      host: u.hostname.charCodeAt(0) === 91 /* [ */ ? u.hostname.slice(1, -1) : u.hostname,
      port: Number(u.port) || (u.protocol === 'https:' ? 443 : 80),
      path: u.pathname + u.search,
      ...(u.protocol === 'https:' ? { agent: agents['https:'] } : {}),
      // a mirror URL's own user:pass goes to its own origin, as get() sends it (transport-url.js)
      headers: { 'content-type': contentType, 'accept-encoding': 'identity', ...(auth ? { authorization: auth } : {}) }
    }, res => {
      res.on('data', c => {
        n += c.length
        if (n > cap) { req.destroy(); done(new TooLargeError(`${u.origin} sent more than ${cap} bytes for POST ${u.pathname}`)) } else parts.push(c)
      })
      res.on('end', () => done(null, { status: res.statusCode, body: new Uint8Array(Buffer.concat(parts)) }))
      res.on('error', err => done(networkFault(u.origin, err)))
    })
    const timer = setTimeout(() => { req.destroy(); done(new TimeoutError(`no complete answer from ${u.origin} within ${timeoutMs} ms`)) }, timeoutMs)
    let settled = false
    function done (err, v) {
      if (settled) return
      settled = true
      clearTimeout(timer)
      if (err) reject(err); else resolve(v)
    }
    req.on('error', err => done(networkFault(u.origin, err)))
    req.end(body)
  })
}

/**
 * One get(): its deadline, its hops, its body buffer. The wire clients carry
 * its hops and talk to it only as the RequestHandler of request-handler.js;
 * the https: path over node:https (no h2) is its own.
 * @implements {RequestHandler}
 */
class Request {
  constructor (ctx, o, resolve, reject) {
    this.ctx = ctx
    this.o = o
    this.cap = o.cap
    this.timeoutMs = o.timeoutMs
    this.resolve = resolve
    this.reject = reject
    this.done = false
    this.first = null // the URL asked for: its origin is the mirror's
    this.u = null // the URL of the current hop
    this.hops = 0
    this.protocol = 'http/1.1' // of the current hop, for onTiming
    this.h2Tried = false // asked again over HTTP/2 after the origin refused HTTP/1.1 (onError)
    this.auth = null
    this.cancel = null // stops the current hop's I/O (onCancel)
    this.buf = null
    this.n = 0
    this.t0 = o.onTiming ? performance.now() : 0
    this.tHead = 0
    this.timer = setTimeout(onDeadline, o.timeoutMs, this)
    this.onAbort = null
    if (o.signal) {
      this.onAbort = () => this.fail(new AbortedError('aborted'))
      o.signal.addEventListener('abort', this.onAbort)
    }
  }

  start (url) {
    if (this.o.signal?.aborted) return this.fail(new AbortedError('aborted'))
    let u
    try {
      u = parseTarget(url)
      this.auth = basicAuth(u)
    } catch (err) { return this.fail(err) }
    if (this.auth !== null) { u.username = ''; u.password = '' } // from here on only this.auth carries them
    this.first = u
    this.hop(u)
  }

  hop (u) {
    this.u = u
    this.ctx.stats.requests++
    this.ctx.originStats(u.origin).requests++
    if (u.protocol === 'https:' && this.ctx.overH2(u.origin)) return this.sendOverH2()
    this.onHttp1()
  }

  /** The current hop over HTTP/2 (transport-h2.js). */
  sendOverH2 () {
    this.protocol = 'h2'
    this.ctx.h2.dispatch(this, this.u, this.authFor(this.u))
  }

  /** The Authorization value for u: the mirror URL's own credentials, to its own origin only. */
  authFor (u) { return this.auth !== null && u.origin === this.first.origin ? this.auth : null }

  /**
   * The current hop over HTTP/1.1, by the lean client: on TCP for http:, on
   * TLS for https: (also where transport-h2.js sends an origin that chose
   * http/1.1 by ALPN).
   */
  onHttp1 () {
    const u = this.u
    this.protocol = 'http/1.1'
    this.ctx.originStats(u.origin).protocol ??= 'http/1.1'
    this.ctx.h1.dispatch(this, u, this.authFor(u))
  }

  onCancel (fn) { this.cancel = fn }

  /**
   * The answer's status and size are in: decide. true: read the body; false:
   * this hop is over (a redirect went on to the next, or the request failed)
   * and the caller discards what the server still sends.
   */
  onHeaders (status, location, contentLength) {
    const u = this.u
    if (status >= 300 && status < 400 && location) {
      let next
      try { next = redirectTarget(this.first, u, location, this.hops, this.ctx.policy, status) } catch (err) { this.fail(err, true); return false }
      this.hops++
      this.cancel = null
      this.hop(next)
      return false
    }
    if (status !== 200) {
      this.fail(new MirrorHttpError(`${u.origin} answered ${status} for ${u.pathname}`, { details: { status } }), true)
      return false
    }
    const len = contentLength === undefined ? NaN : Number(contentLength)
    // trust rule 3: refuse before reading when the mirror announces too much
    if (len > this.o.cap) {
      this.fail(new TooLargeError(`${u.origin} announced ${len} bytes for ${u.pathname}, at most ${this.o.cap} expected`), true)
      return false
    }
    // one buffer of the expected size, filled in place: the caller's, when it gave one that fits
    const size = len >= 0 ? len : this.o.cap
    const into = this.o.into
    this.buf = into !== undefined && into.length >= size ? Buffer.from(into.buffer, into.byteOffset, size) : Buffer.allocUnsafe(size)
    if (this.t0) this.tHead = performance.now()
    return true
  }

  get bodyLeft () { return this.buf.length - this.n }
  bodyRoom () { return this.buf.subarray(this.n) }
  onBodyRead (n) { this.n += n }

  onData (chunk) {
    if (this.done) return
    const n = this.n + chunk.length
    if (n > this.buf.length) return this.fail(new TooLargeError(`${this.u.origin} sent more than ${this.buf.length} bytes for ${this.u.pathname}`))
    this.buf.set(chunk, this.n)
    this.n = n
  }

  onComplete () {
    if (this.done) return
    const n = this.n
    const buf = this.buf
    this.settle()
    this.ctx.stats.bytes += n
    this.ctx.originStats(this.u.origin).bytes += n
    this.resolve(new Uint8Array(buf.buffer, buf.byteOffset, n))
    if (this.t0) {
      const now = performance.now()
      this.o.onTiming({ origin: this.u.origin, protocol: this.protocol, redirects: this.hops, bytes: n, headersMs: this.tHead - this.t0, totalMs: now - this.t0 })
    }
  }

  onError (err) {
    // an h2-only server refuses HTTP/1.1 in the TLS handshake: this hop, and every later one to
    // its origin, goes over HTTP/2 instead (once per request: a server that then picks
    // http/1.1 by ALPN is reported as it failed)
    if (!this.done && !this.h2Tried && this.u.protocol === 'https:' && refusedAlpn(err)) {
      this.h2Tried = true
      this.cancel = null
      this.ctx.refusedHttp1(this.u.origin)
      return this.sendOverH2()
    }
    this.fail(err)
  }

  /**
   * @param {Error} err @param {boolean} [keepIo] the caller ends the hop's I/O itself
   * @param {boolean} [timedOut] the deadline passed (the wire client is told so)
   */
  fail (err, keepIo = false, timedOut = false) {
    if (this.done) return
    this.settle()
    if (!keepIo) this.cancel?.(timedOut)
    this.reject(err)
  }

  settle () {
    this.done = true
    clearTimeout(this.timer)
    if (this.onAbort) this.o.signal.removeEventListener('abort', this.onAbort)
  }
}

function onDeadline (r) {
  r.fail(new TimeoutError(`no complete answer from ${(r.u ?? r.first)?.origin ?? 'the mirror'} within ${r.timeoutMs} ms`), false, true)
}

/**
 * Node replaces its whole trust store when `ca` is given; a reader adding its
 * private mirror's certificate still wants the public CAs and NODE_EXTRA_CA_CERTS.
 * Parsing them all is a noticeable cost in CPU, so one context serves every
 * transport given the same `ca` (a gateway or `rotree get` makes many).
 */
const contexts = new Map()
function secureContextFor (ca) {
  const key = [].concat(ca).map(String).join('\n')
  let ctx = contexts.get(key)
  if (!ctx) {
    const list = [...tls.rootCertificates]
    const extra = process.env.NODE_EXTRA_CA_CERTS
    if (extra) { try { list.push(readFileSync(extra, 'latin1')) } catch {} } // Node warned about it at start-up
    for (const c of [].concat(ca)) list.push(c)
    ctx = tls.createSecureContext({ ca: list })
    contexts.set(key, ctx)
  }
  return ctx
}

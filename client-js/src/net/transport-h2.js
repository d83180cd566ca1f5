// HTTP/2 for https: mirrors (transport-node.js decides when). One TLS
// connection per origin offers ALPN h2 and http/1.1; on h2 it becomes one
// node:http2 session carrying every request to that origin as concurrent
// streams, never more than the server's SETTINGS_MAX_CONCURRENT_STREAMS; on
// http/1.1 the connection is handed to the keep-alive https.Agent and the
// origin is remembered as HTTP/1.1. The per-request rules (cap, deadline,
// redirects) stay in transport-node.js, which this module talks to only
// through the RequestHandler of request-handler.js. What it keeps of a
// request (its headers, how often it was asked again) and of a session
// (streams open, the server's limit, a PING out) are records of its own
// (Job, Session); node's session and stream objects carry none of it.
//
// Failure rules: a stalled stream is reset (RST_STREAM CANCEL) by its own
// deadline and its siblings go on; when a stream stalls, the session is
// PINGed, and a session that does not answer within that request's timeout is
// destroyed (its streams fail as network faults, docs/TRUST.md rule 4). A
// GOAWAY or a closed session sends new requests to a new session; a stream
// the server refused unprocessed (REFUSED_STREAM, or past a GOAWAY) is asked
// again, at most twice.
//
// Reconnecting is bounded per origin (the record in `entries`): a mirror that
// ends every new session before answering (a GOAWAY or a close on each
// connection) would otherwise have its refused requests asked again on a new
// session, and again, until their deadline, a TLS handshake each time. A
// session that ends with requests asked and none answered makes the next one
// wait (BACKOFF_MS, doubling with each such session in a row); after
// MAX_UNANSWERED of them within a request's deadline, the origin's requests
// fail at once as network faults, so the reader goes on to the next mirror
// (docs/TRUST.md rule 4). A session that answered anything (a graceful
// restart, nginx's keepalive_requests) is no such session: the next one opens
// at once, and any answer from the origin clears the count.
import http2 from 'node:http2'
import tls from 'node:tls'
import { MirrorNetworkError, TimeoutError } from '../errors.js'
import { networkFault } from './request-handler.js'

/** @typedef {import('./request-handler.js').RequestHandler} RequestHandler */
/**
 * One hop of a request, as this module keeps it (a redirect is a new hop: a new Job).
 * @typedef {{ handler: RequestHandler, headers: object, session: Session|null }} Job
 *   headers: the HTTP/2 request headers; session: where its last stream was opened
 *   (the one to check when its deadline passes)
 */

const { NGHTTP2_CANCEL, NGHTTP2_REFUSED_STREAM } = http2.constants
const ALPN = ['h2', 'http/1.1']
// Flow-control windows: one whole blob per stream (MAX_BLOB, FORMAT.md §2),
// and room for a full read window of them on the connection, so a distant
// mirror is never held back by WINDOW_UPDATE round trips.
const STREAM_WINDOW = 1 << 20
const SESSION_WINDOW = 32 << 20
const PEER_DEFAULT_STREAMS = 100 // until the server's SETTINGS arrive (RFC 9113 §6.5.2 suggests at least 100)
const MAX_RETRIES = 2 // per request (every hop of it): a refused stream asked again
const BACKOFF_MS = 25 // before the session after one that ended unanswered; doubled for each more in a row
const MAX_UNANSWERED = 4 // sessions in a row that ended unanswered, within a request's deadline: then give up

export class H2Origins {
  /**
   * @param {{ tlsContext: () => tls.SecureContext|undefined, onHttp1: (entry: object, socket: tls.TLSSocket|null) => void,
   *   originStats: (origin: string) => object, handshakes?: import('./handshake-times.js').HandshakeTimes }} o
   *   onHttp1: called once when an origin answers ALPN with http/1.1 (or nothing),
   *   with the connected socket for the HTTP/1.1 agent to use (null when no request waits);
   *   handshakes: where each connection's TCP + TLS handshake time goes
   */
  constructor ({ tlsContext, onHttp1, originStats, handshakes }) {
    this.tlsContext = tlsContext
    this.handshakes = handshakes
    this.onHttp1 = onHttp1
    this.originStats = originStats
    /** @type {Map<string, object>} */
    this.entries = new Map()
    /** @type {WeakMap<RequestHandler, number>} refused streams asked again, per request */
    this.retries = new WeakMap()
    this.closed = false
  }

  /** 'h2', 'http/1.1', or undefined while not known yet */
  protocolOf (origin) { return this.entries.get(origin)?.protocol }

  /**
   * Send one hop of a request to u's origin over HTTP/2.
   * @param {RequestHandler} handler (request-handler.js)
   * @param {URL} u an https: URL
   * @param {string|null} auth an Authorization value for this origin
   */
  dispatch (handler, u, auth) {
    const headers = { ':path': u.pathname + u.search, 'accept-encoding': 'identity' }
    if (auth) headers.authorization = auth
    this._send(this._entry(u), { handler, headers, session: null })
  }

  /** @param {Job} job */
  _send (e, job) {
    const s = e.session
    if (s && s.hasRoom()) return this._open(e, s, job)
    this._wait(e, job)
    this._dial(e, job.handler.timeoutMs)
  }

  _entry (u) {
    let e = this.entries.get(u.origin)
    if (!e) {
      // session: the current Session; waiting: Jobs for the next; redial: when the next session may open
      e = { origin: u.origin, host: u.hostname.replace(/^\[|\]$/g, ''), port: Number(u.port) || 443, protocol: undefined, session: null, connecting: null, waiting: [], redial: new Redial(), redialTimer: null }
      this.entries.set(u.origin, e)
    }
    return e
  }

  /**
   * Start the TLS handshake (and ALPN) with u's origin before its first
   * request, so it overlaps the caller's own set-up; nothing when a session
   * is open or opening, or the origin is known to speak HTTP/1.1.
   * @param {URL} u @param {number} timeoutMs bounds the handshake
   */
  preconnect (u, timeoutMs) {
    if (this.closed) return
    const e = this._entry(u)
    if (e.protocol === undefined && !e.session && !e.connecting) this._connect(e, timeoutMs)
  }

  _wait (e, job) {
    e.waiting.push(job)
    job.handler.onCancel(timedOut => {
      const i = e.waiting.indexOf(job)
      if (i >= 0) e.waiting.splice(i, 1)
      // waiting again after a refused stream: the session that refused it may be what stalled
      if (timedOut && job.session !== null) this._suspect(e, job.session, job.handler.timeoutMs)
    })
  }

  /**
   * A new session for the requests waiting: now, after the origin's backoff,
   * or, after MAX_UNANSWERED sessions in a row ended unanswered, none: they fail.
   */
  _dial (e, timeoutMs) {
    if (e.session || e.connecting || e.redialTimer) return
    const wait = this.closed ? 0 : e.redial.wait(performance.now(), timeoutMs) // closed: _connect fails them
    if (wait === 0) return this._connect(e, timeoutMs)
    if (wait === Infinity) return this._failWaiting(e, new MirrorNetworkError(`${e.origin}: ${MAX_UNANSWERED} HTTP/2 sessions in a row ended before answering a request`))
    e.redialTimer = setTimeout(() => {
      e.redialTimer = null
      if (e.waiting.length) this._dial(e, e.waiting[0].handler.timeoutMs)
    }, wait)
  }

  _connect (e, timeoutMs) {
    if (this.closed) return this._failWaiting(e, new MirrorNetworkError(`${e.origin}: transport closed`))
    const sock = tls.connect({ host: e.host, port: e.port, servername: isIp(e.host) ? undefined : e.host, ALPNProtocols: ALPN, secureContext: this.tlsContext() })
    e.connecting = sock
    const t0 = performance.now()
    // a handshake that stalls is bounded by the deadline of the request that asked for it
    const onError = err => {
      this.handshakes?.failed(e.origin)
      e.connecting = null
      this._failWaiting(e, new MirrorNetworkError(`${e.origin}: ${err.code || err.message}`, { cause: err }))
    }
    const onIdle = () => {
      sock.removeListener('error', onError)
      sock.on('error', () => {}) // destroyed on purpose: nothing left to report
      sock.destroy()
      e.connecting = null
      this._failWaiting(e, new TimeoutError(`${e.origin}: TLS handshake took longer than ${timeoutMs} ms`))
    }
    sock.setTimeout(timeoutMs)
    sock.on('timeout', onIdle)
    sock.once('error', onError)
    sock.once('secureConnect', () => {
      // TCP's round trip and TLS 1.3's: the mirror's distance before it answered anything
      this.handshakes?.measured(e.origin, performance.now() - t0, 2)
      sock.removeListener('error', onError)
      sock.removeListener('timeout', onIdle)
      sock.setTimeout(0)
      e.connecting = null
      if (this.closed) return sock.destroy()
      if (sock.alpnProtocol === 'h2') {
        e.protocol = 'h2'
        this._session(e, sock)
        this._drain(e)
        return
      }
      e.protocol = 'http/1.1'
      const jobs = e.waiting.splice(0)
      this.onHttp1(e, jobs.length ? sock : null)
      if (!jobs.length) sock.destroy()
      for (const job of jobs) job.handler.onHttp1()
    })
  }

  _session (e, sock) {
    const s = http2.connect(e.origin, {
      createConnection: () => sock,
      settings: { enablePush: false, initialWindowSize: STREAM_WINDOW },
      maxSessionMemory: 64 // MiB: the windows above, with room
    })
    const sess = e.session = new Session(s)
    const st = this.originStats(e.origin)
    st.protocol = 'h2'
    st.sessions = (st.sessions ?? 0) + 1
    s.unref() // refs held only while streams are open (_open)
    s.once('connect', () => { try { s.setLocalWindowSize(SESSION_WINDOW) } catch {} })
    s.on('remoteSettings', settings => {
      sess.limit = Math.max(1, settings.maxConcurrentStreams ?? PEER_DEFAULT_STREAMS)
      sess.settled = true
      if (e.session === sess) this._drain(e)
    })
    const retire = () => {
      if (e.session !== sess) return
      e.session = null
      if (e.waiting.length) this._dial(e, e.waiting[0].handler.timeoutMs)
    }
    s.on('goaway', (code, lastStreamID) => {
      sess.ended = true
      // streams up to lastStreamID are still to be answered (RFC 9113 §6.8): judged once none is open
      if (!(lastStreamID > 0) || sess.active === 0) this._judge(e, sess)
      retire()
    })
    s.on('close', () => { sess.ended = true; this._judge(e, sess); retire() })
    s.on('error', () => {}) // each stream reports its own failure to its request
  }

  /**
   * A session ended: did it end with requests asked and none answered? Once,
   * before any of its requests is asked again on another session.
   */
  _judge (e, sess) {
    if (sess.judged) return
    sess.judged = true
    if (!sess.asked || sess.answered) return
    e.redial.unanswered(performance.now())
    const st = this.originStats(e.origin)
    st.sessionsUnanswered = (st.sessionsUnanswered ?? 0) + 1
  }

  _drain (e) {
    const sess = e.session
    while (e.waiting.length && sess && sess.hasRoom()) this._open(e, sess, e.waiting.shift())
    if (e.waiting.length) this._dial(e, e.waiting[0].handler.timeoutMs)
  }

  /** Open a stream for `job` on `sess`, the origin's current session (_send, _drain). */
  _open (e, sess, job) {
    const handler = job.handler
    if (handler.done) return
    let stream
    try {
      stream = sess.s.request(job.headers, { endStream: true })
    } catch (err) {
      // the session went away between the check and the request: ask again on a new one
      if (e.session === sess) e.session = null
      if (this._retry(handler)) return this._send(e, job)
      return handler.onError(networkFault(e.origin, err))
    }
    job.session = sess
    // opened before the server said how many streams it takes: a refusal is our guess's fault
    const optimistic = !sess.settled
    sess.asked = true
    stream.once('response', () => { sess.answered = true; e.redial.answered() })
    if (sess.active++ === 0) sess.s.ref()
    // (before the request's own 'close' listener below, which may ask again elsewhere)
    stream.once('close', () => {
      if (--sess.active === 0) {
        sess.s.unref()
        if (sess.ended) this._judge(e, sess)
      }
      if (e.session === sess) this._drain(e)
    })
    this._stream(e, sess, job, stream, optimistic)
  }

  /** The request's side of a stream: its answer to the handler, its failure, its refusal asked again. */
  _stream (e, sess, job, stream, optimistic) {
    const handler = job.handler
    let answered = false
    let over = false // the head was refused (a redirect went on to a new hop): nothing more is this hop's
    let cause
    handler.onCancel(timedOut => {
      cancelStream(stream)
      // one stream stalled: find out whether its whole session did
      if (timedOut) this._suspect(e, sess, handler.timeoutMs)
    })
    stream.on('response', h => {
      answered = true
      if (handler.done) return cancelStream(stream)
      if (!handler.onHeaders(h[':status'], h.location, h['content-length'])) { over = true; return cancelStream(stream) }
      stream.on('data', chunk => handler.onData(chunk))
      stream.on('end', () => handler.onComplete())
    })
    stream.on('error', err => { cause = err })
    stream.on('close', () => {
      if (handler.done || over) return
      // refused unprocessed (RFC 9113 §8.7): safe to ask again, on this or a new session
      if (!answered && stream.rstCode === NGHTTP2_REFUSED_STREAM && this._retryRefused(e, job, optimistic)) return
      const why = cause?.code ?? `stream reset, code ${stream.rstCode}`
      handler.onError(new MirrorNetworkError(`${e.origin}: HTTP/2 stream ended before the answer did (${why})`, { cause }))
    })
  }

  /** A stream closed before any answer, refused unprocessed: ask again if the request may. */
  _retryRefused (e, job, optimistic) {
    if (!(optimistic && !job.handler.done && !this.closed) && !this._retry(job.handler)) return false
    this._send(e, job)
    return true
  }

  /** One more retry for this request, if it has any left (MAX_RETRIES across its hops). */
  _retry (handler) {
    const n = this.retries.get(handler) ?? 0
    if (handler.done || this.closed || n >= MAX_RETRIES) return false
    this.retries.set(handler, n + 1)
    return true
  }

  /**
   * A stream of `sess` missed its deadline: is the whole session stalled? PING it;
   * no answer within timeoutMs destroys it, and its other streams fail now
   * instead of one deadline each.
   */
  _suspect (e, sess, timeoutMs) {
    const s = sess.s
    if (sess.pinging || s.closed || s.destroyed) return
    sess.pinging = true
    const timer = setTimeout(() => {
      if (e.session === sess) e.session = null
      s.destroy(new MirrorNetworkError(`${e.origin}: HTTP/2 session did not answer a PING within ${timeoutMs} ms`))
    }, timeoutMs)
    timer.unref?.()
    try {
      s.ping(err => { clearTimeout(timer); sess.pinging = false; if (err && !s.destroyed) s.destroy() })
    } catch { clearTimeout(timer); if (e.session === sess) e.session = null; s.destroy() }
  }

  _failWaiting (e, err) {
    for (const job of e.waiting.splice(0)) job.handler.onError(err)
  }

  close () {
    this.closed = true
    for (const e of this.entries.values()) {
      e.connecting?.destroy()
      e.connecting = null
      clearTimeout(e.redialTimer)
      e.redialTimer = null
      e.session?.s.destroy()
      e.session = null
      this._failWaiting(e, new MirrorNetworkError(`${e.origin}: transport closed`))
    }
  }
}

/**
 * One HTTP/2 session to an origin, as this module counts it. `s` is node's
 * session, which carries none of this.
 */
class Session {
  /** @param {http2.ClientHttp2Session} s */
  constructor (s) {
    this.s = s
    this.active = 0 // streams open
    this.limit = PEER_DEFAULT_STREAMS // the server's SETTINGS_MAX_CONCURRENT_STREAMS
    this.settled = false // the server's SETTINGS arrived
    this.pinging = false // a PING is out (_suspect)
    // asked, answered: of this session's streams; ended: GOAWAY or closed; judged: by _judge
    this.asked = false
    this.answered = false
    this.ended = false
    this.judged = false
  }

  /** Open, and under the server's limit: a new stream may go here. */
  hasRoom () { return this.active < this.limit && !this.s.closed && !this.s.destroyed }
}

/**
 * One origin's sessions that ended with requests asked and none answered, in
 * a row: how long the next session waits, or whether to give up.
 */
class Redial {
  constructor () {
    this.count = 0
    this.last = 0 // performance.now() when the last of them ended
  }

  /** The origin answered a request: it serves, whatever came before. */
  answered () { this.count = 0 }

  unanswered (now) { this.count++; this.last = now }

  /**
   * How long from `now` before the next session may open, or Infinity: not
   * at all. A run whose last session ended windowMs (the deadline of the
   * request that asks) or more ago is forgotten.
   */
  wait (now, windowMs) {
    if (this.count > 0 && now - this.last >= windowMs) this.count = 0
    if (this.count === 0) return 0
    if (this.count >= MAX_UNANSWERED) return Infinity
    return Math.max(0, this.last + BACKOFF_MS * 2 ** (this.count - 1) - now)
  }
}

function cancelStream (stream) {
  if (!stream.closed && !stream.destroyed) stream.close(NGHTTP2_CANCEL)
}

function isIp (host) { return /^[\d.]+$/.test(host) || host.includes(':') }

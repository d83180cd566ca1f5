// HTTP/2 for https: mirrors (transport-node.js decides when). One TLS
// connection per origin offers ALPN h2 and http/1.1; on h2 it becomes one
// node:http2 session carrying every request to that origin as concurrent
// streams, never more than the server's SETTINGS_MAX_CONCURRENT_STREAMS; on
// http/1.1 the connection is handed to the keep-alive https.Agent and the
// origin is remembered as HTTP/1.1. The per-request rules (cap, deadline,
// redirects) stay in transport-node.js; a request talks to this module
// through the small interface documented at H2Origins.dispatch.
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

const { NGHTTP2_CANCEL, NGHTTP2_REFUSED_STREAM } = http2.constants
const ALPN = ['h2', 'http/1.1']
// Flow-control windows: one whole blob per stream (MAX_BLOB, FORMAT.md §2),
// and room for a full read window of them on the connection, so a distant
// mirror is never held back by WINDOW_UPDATE round trips.
const STREAM_WINDOW = 1 << 20
const SESSION_WINDOW = 32 << 20
const PEER_DEFAULT_STREAMS = 100 // until the server's SETTINGS arrive (RFC 9113 §6.5.2 suggests at least 100)
const MAX_RETRIES = 2
const BACKOFF_MS = 25 // before the session after one that ended unanswered; doubled for each more in a row
const MAX_UNANSWERED = 4 // sessions in a row that ended unanswered, within a request's deadline: then give up

export class H2Origins {
  /**
   * @param {{ tlsContext: () => tls.SecureContext|undefined, onHttp1: (entry: object, socket: tls.TLSSocket|null) => void, originStats: (origin: string) => object }} o
   *   onHttp1: called once when an origin answers ALPN with http/1.1 (or nothing),
   *   with the connected socket for the HTTP/1.1 agent to use (null when no request waits)
   */
  constructor ({ tlsContext, onHttp1, originStats, handshakes }) {
    this.tlsContext = tlsContext
    this.handshakes = handshakes
    this.onHttp1 = onHttp1
    this.originStats = originStats
    /** @type {Map<string, object>} */
    this.entries = new Map()
    this.closed = false
  }

  /** 'h2', 'http/1.1', or undefined while not known yet */
  protocolOf (origin) { return this.entries.get(origin)?.protocol }

  /**
   * Send `job` to u's origin over HTTP/2. The job provides:
   *   job.timeoutMs, job.done,
   *   job.setCancel(fn)         how to stop what it waits for now
   *   job.h2Stream(stream, session, entry)  a stream was opened for it
   *   job.h1()                  the origin speaks HTTP/1.1: go there instead
   *   job.fail(err)
   * @param {object} job @param {URL} u @param {object} headers HTTP/2 request headers
   */
  dispatch (job, u, headers) {
    const e = this._entry(u)
    job.h2Headers = headers
    const s = e.session
    if (s && s.active < s.limit && !s.closed && !s.destroyed) return this._open(e, s, job)
    this._wait(e, job)
    this._dial(e, job.timeoutMs)
  }

  _entry (u) {
    let e = this.entries.get(u.origin)
    if (!e) {
      // use: what the current session was asked and answered; redial: when the next session may open
      e = { origin: u.origin, host: u.hostname.replace(/^\[|\]$/g, ''), port: Number(u.port) || 443, protocol: undefined, session: null, connecting: null, waiting: [], use: null, redial: new Redial(), redialTimer: null }
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
    job.setCancel(() => { const i = e.waiting.indexOf(job); if (i >= 0) e.waiting.splice(i, 1) })
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
      if (e.waiting.length) this._dial(e, e.waiting[0].timeoutMs)
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
      for (const job of jobs) job.h1()
    })
  }

  _session (e, sock) {
    const s = http2.connect(e.origin, {
      createConnection: () => sock,
      settings: { enablePush: false, initialWindowSize: STREAM_WINDOW },
      maxSessionMemory: 64 // MiB: the windows above, with room
    })
    s.active = 0
    s.limit = PEER_DEFAULT_STREAMS
    s.pinging = false
    s.settled = false // the server's SETTINGS arrived
    e.session = s
    // asked, answered: of this session's streams; ended: GOAWAY or closed; judged: by _judge
    const use = e.use = { asked: false, answered: false, ended: false, judged: false }
    const st = this.originStats(e.origin)
    st.protocol = 'h2'
    st.sessions = (st.sessions ?? 0) + 1
    s.unref() // refs held only while streams are open (_open)
    s.once('connect', () => { try { s.setLocalWindowSize(SESSION_WINDOW) } catch {} })
    s.on('remoteSettings', settings => {
      s.limit = Math.max(1, settings.maxConcurrentStreams ?? PEER_DEFAULT_STREAMS)
      s.settled = true
      if (e.session === s) this._drain(e)
    })
    const retire = () => {
      if (e.session !== s) return
      e.session = null
      if (e.waiting.length) this._dial(e, e.waiting[0].timeoutMs)
    }
    s.on('goaway', (code, lastStreamID) => {
      use.ended = true
      // streams up to lastStreamID are still to be answered (RFC 9113 §6.8): judged once none is open
      if (!(lastStreamID > 0) || s.active === 0) this._judge(e, use)
      retire()
    })
    s.on('close', () => { use.ended = true; this._judge(e, use); retire() })
    s.on('error', () => {}) // each stream reports its own failure to its request
  }

  /**
   * A session ended: did it end with requests asked and none answered? Once,
   * before any of its requests is asked again on another session.
   */
  _judge (e, use) {
    if (use.judged) return
    use.judged = true
    if (!use.asked || use.answered) return
    e.redial.unanswered(performance.now())
    const st = this.originStats(e.origin)
    st.sessionsUnanswered = (st.sessionsUnanswered ?? 0) + 1
  }

  _drain (e) {
    const s = e.session
    while (e.waiting.length && s && !s.closed && !s.destroyed && s.active < s.limit) this._open(e, s, e.waiting.shift())
    if (e.waiting.length) this._dial(e, e.waiting[0].timeoutMs)
  }

  _open (e, s, job) {
    if (job.done) return
    let stream
    try {
      stream = s.request(job.h2Headers, { endStream: true })
    } catch (err) {
      // the session went away between the check and the request: ask again on a new one
      if (e.session === s) e.session = null
      if (this._retry(job)) return this.dispatch(job, job.u, job.h2Headers)
      return job.fail(new MirrorNetworkError(`${e.origin}: ${err.code || err.message}`, { cause: err }))
    }
    // opened before the server said how many streams it takes: a refusal is our guess's fault
    stream.optimistic = !s.settled
    const use = e.use // s is the current session (dispatch, _drain)
    use.asked = true
    stream.once('response', () => { use.answered = true; e.redial.answered() })
    if (s.active++ === 0) s.ref()
    // (before the request's own 'close' listener, which may ask again elsewhere)
    stream.once('close', () => {
      if (--s.active === 0) {
        s.unref()
        if (use.ended) this._judge(e, use)
      }
      if (e.session === s) this._drain(e)
    })
    job.h2Stream(stream, s, e)
  }

  /** A stream closed before any answer, refused unprocessed: ask again if the request may. */
  retryRefused (job, stream) {
    if (!(stream.optimistic && !job.done && !this.closed) && !this._retry(job)) return false
    this.dispatch(job, job.u, job.h2Headers)
    return true
  }

  _retry (job) {
    if (job.done || this.closed || (job.h2Retries ?? 0) >= MAX_RETRIES) return false
    job.h2Retries = (job.h2Retries ?? 0) + 1
    return true
  }

  /**
   * A stream of `s` missed its deadline: is the whole session stalled? PING it;
   * no answer within timeoutMs destroys it, and its other streams fail now
   * instead of one deadline each.
   */
  suspect (e, s, timeoutMs) {
    if (s.pinging || s.closed || s.destroyed) return
    s.pinging = true
    const timer = setTimeout(() => {
      if (e.session === s) e.session = null
      s.destroy(new MirrorNetworkError(`${e.origin}: HTTP/2 session did not answer a PING within ${timeoutMs} ms`))
    }, timeoutMs)
    timer.unref?.()
    try {
      s.ping(err => { clearTimeout(timer); s.pinging = false; if (err && !s.destroyed) s.destroy() })
    } catch { clearTimeout(timer); if (e.session === s) e.session = null; s.destroy() }
  }

  _failWaiting (e, err) {
    for (const job of e.waiting.splice(0)) job.fail(err)
  }

  close () {
    this.closed = true
    for (const e of this.entries.values()) {
      e.connecting?.destroy()
      e.connecting = null
      clearTimeout(e.redialTimer)
      e.redialTimer = null
      e.session?.destroy()
      e.session = null
      this._failWaiting(e, new MirrorNetworkError(`${e.origin}: transport closed`))
    }
  }
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

/** Is this stream's reset one that means "not processed, ask again"? (RFC 9113 §8.7) */
export function wasRefused (stream) {
  return stream.rstCode === NGHTTP2_REFUSED_STREAM
}

export function cancelStream (stream) {
  if (!stream.closed && !stream.destroyed) stream.close(NGHTTP2_CANCEL)
}

function isIp (host) { return /^[\d.]+$/.test(host) || host.includes(':') }

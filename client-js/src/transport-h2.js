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
import http2 from 'node:http2'
import tls from 'node:tls'
import { MirrorNetworkError, TimeoutError } from './errors.js'

const { NGHTTP2_CANCEL, NGHTTP2_REFUSED_STREAM } = http2.constants
const ALPN = ['h2', 'http/1.1']
// Flow-control windows: one whole blob per stream (MAX_BLOB, FORMAT.md §2),
// and room for a full read window of them on the connection, so a distant
// mirror is never held back by WINDOW_UPDATE round trips.
const STREAM_WINDOW = 1 << 20
const SESSION_WINDOW = 32 << 20
const PEER_DEFAULT_STREAMS = 100 // until the server's SETTINGS arrive (RFC 9113 §6.5.2 suggests at least 100)
const MAX_RETRIES = 2

export class H2Origins {
  /**
   * @param {{ tlsContext: () => tls.SecureContext|undefined, onHttp1: (entry: object, socket: tls.TLSSocket|null) => void, originStats: (origin: string) => object }} o
   *   onHttp1: called once when an origin answers ALPN with http/1.1 (or nothing),
   *   with the connected socket for the HTTP/1.1 agent to use (null when no request waits)
   */
  constructor ({ tlsContext, onHttp1, originStats }) {
    this.tlsContext = tlsContext
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
    if (!e.session && !e.connecting) this._connect(e, job.timeoutMs)
  }

  _entry (u) {
    let e = this.entries.get(u.origin)
    if (!e) {
      e = { origin: u.origin, host: u.hostname.replace(/^\[|\]$/g, ''), port: Number(u.port) || 443, protocol: undefined, session: null, connecting: null, waiting: [] }
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

  _connect (e, timeoutMs) {
    if (this.closed) return this._failWaiting(e, new MirrorNetworkError(`${e.origin}: transport closed`))
    const sock = tls.connect({ host: e.host, port: e.port, servername: isIp(e.host) ? undefined : e.host, ALPNProtocols: ALPN, secureContext: this.tlsContext() })
    e.connecting = sock
    // a handshake that stalls is bounded by the deadline of the request that asked for it
    const onError = err => {
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
      if (e.waiting.length && !e.connecting) this._connect(e, e.waiting[0].timeoutMs)
    }
    s.on('goaway', retire)
    s.on('close', retire)
    s.on('error', () => {}) // each stream reports its own failure to its request
  }

  _drain (e) {
    const s = e.session
    while (e.waiting.length && s && !s.closed && !s.destroyed && s.active < s.limit) this._open(e, s, e.waiting.shift())
    if (e.waiting.length && !e.session && !e.connecting) this._connect(e, e.waiting[0].timeoutMs)
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
    if (s.active++ === 0) s.ref()
    stream.once('close', () => {
      if (--s.active === 0) s.unref()
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
      e.session?.destroy()
      e.session = null
      this._failWaiting(e, new MirrorNetworkError(`${e.origin}: transport closed`))
    }
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

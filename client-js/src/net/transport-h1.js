// A lean HTTP/1.1 client for http: mirrors, and for https: mirrors over TLS
// (the default there: transport-node.js says why), where the client's CPU is
// the limit (BENCHMARKS.md P3, P10). node:http spends most of a request's CPU
// on machinery a mirror answer does not need (a ClientRequest and an
// IncomingMessage with their streams, llhttp, a 64 KiB buffer per socket
// read, a copy of every body byte); this makes one write per request, parses
// the head from one scratch buffer, and has the kernel (or TLS) read the body
// straight into the request's own buffer (the socket's `onread`), so no body
// byte is copied in JavaScript.
//
// Only GET, only what a mirror answer needs: Content-Length, chunked and
// close-delimited bodies, keep-alive, 1xx skipped. Anything malformed is a
// network fault of that mirror (docs/TRUST.md rule 4), as node:http's parser
// errors were.
//
// Pipelining (RFC 9112 §9.3): once an origin has kept a connection alive and
// `pipelineConns` connections to it are open, a request that finds none idle
// is written behind the answers outstanding on the least loaded one, up to
// `pipelineDepth` answers per connection; only when all are that deep does
// another connection open. Before that, a small request (a page, an index)
// waits behind a busy connection's answers when, with it, they come to at
// most SHORT_WAIT bytes, rather than pay a new connection's handshake round
// trip. A new connection starts in TCP slow start (ten segments), and an
// HTTP/1.1 connection without pipelining idles a round trip between answers,
// so at a distance a window of many requests spread over fresh connections
// fills the link later than the same requests queued on a few connections
// that never go idle (BENCHMARKS.md P3w). Requests written behind an answer
// that fails, or on a connection the server closes, have had no byte of
// answer: they are asked again on another connection (each at most
// MAX_REQUEUE times). An origin that closes a connection with requests queued
// on it without announcing it (Connection: close) is not pipelined to again.
//
// The per-request rules (cap, deadline, redirects) stay with the caller
// (transport-node.js), which this client talks to only through the
// RequestHandler of request-handler.js. What it keeps of a request is its
// own record, a Job: the handler, the request's bytes, how often it was
// asked again.
import { MirrorNetworkError } from '../errors.js'
import { Conn } from './h1-conn.js'

/** @typedef {import('./request-handler.js').RequestHandler} RequestHandler */
/**
 * One hop of a request, as this client keeps it (a redirect is a new hop: a new Job).
 * @typedef {{ handler: RequestHandler, head: string, requeued: number }} Job
 *   head: the request as written; requeued: times asked again after a connection closed under it
 */

const MAX_REQUEUE = 3 // a request written behind answers that never came is asked again at most this often
const SHORT_WAIT = 64 * 1024 // answers outstanding on a connection that a small request waits behind rather than open another

export class H1Pool {
  /**
   * @param {{ maxSockets: number, pipelineDepth?: number, pipelineConns?: number, handshakes?: import('./handshake-times.js').HandshakeTimes, tlsContext?: () => import('node:tls').SecureContext|undefined }} o
   *   per origin; pipelineDepth 1 turns pipelining off; handshakes: where each new connection's handshake time goes;
   *   tlsContext: the trust for https: origins (undefined: Node's default)
   */
  constructor ({ maxSockets, pipelineDepth = 8, pipelineConns = 8, handshakes, tlsContext }) {
    this.tlsContext = tlsContext
    this.maxSockets = maxSockets
    this.handshakes = handshakes
    this.pipelineDepth = Math.max(1, pipelineDepth)
    this.pipelineConns = Math.max(1, pipelineConns)
    /** @type {Map<string, { origin: string, idle: Conn[], live: Conn[], queue: Job[] }>} */
    this.origins = new Map()
    this.conns = new Set()
    this.closed = false
  }

  /**
   * @param {RequestHandler} handler one hop of a request (request-handler.js)
   * @param {URL} u an http: URL
   * @param {string|null} auth an Authorization value for this origin
   */
  dispatch (handler, u, auth) {
    if (this.closed) return handler.onError(new MirrorNetworkError(`${u.origin}: transport closed`))
    const o = this._origin(u)
    const head = `GET ${u.pathname}${u.search} HTTP/1.1\r\nHost: ${u.host}\r\nAccept-Encoding: identity\r\n${auth ? `Authorization: ${auth}\r\n` : ''}\r\n`
    this.start({ handler, head, requeued: 0 }, o)
  }

  _origin (u) {
    let o = this.origins.get(u.origin)
    if (!o) {
      // live: every connection open or opening (the idle ones too); persistent: some answer kept its
      // connection open (pipelining may start); noPipeline: it went wrong once
      o = { origin: u.origin, idle: [], queue: [], live: [], persistent: false, noPipeline: false, host: u.hostname.charCodeAt(0) === 91 ? u.hostname.slice(1, -1) : u.hostname, port: Number(u.port) || (u.protocol === 'https:' ? 443 : 80), tls: u.protocol === 'https:' }
      this.origins.set(u.origin, o)
    }
    return o
  }

  /**
   * Open a connection to u's origin before its first request, so the TCP
   * handshake overlaps the caller's own set-up; nothing when the origin has
   * one open or opening. It waits idle (unref'd) like a kept-alive one; a
   * request sent on it before it connects is written once it does.
   * @param {URL} u
   */
  preconnect (u) {
    if (this.closed) return
    const o = this._origin(u)
    if (o.live.length > 0) return
    const c = new Conn(this, o)
    c.ahead = true
    this.free(o, c)
  }

  /**
   * Send job's request on an idle connection, behind the answers of a busy
   * one (pipelining), on a new one, or when one is free.
   * @param {Job} job
   */
  start (job, o) {
    if (job.handler.done) return
    if (this.closed) return job.handler.onError(new MirrorNetworkError(`${o.origin}: transport closed`))
    const c = o.idle.pop()
    if (c) return c.send(job)
    const room = o.live.length < this.maxSockets
    const pipe = this.pipelineDepth > 1 && o.persistent && !o.noPipeline
    if (pipe) {
      // a short wait behind short answers beats a new connection's handshake round trip
      const near = this._shortWait(o, job.handler.cap)
      if (near) return near.pipe(job)
    }
    if (room && (!pipe || o.live.length < this.pipelineConns)) return new Conn(this, o).send(job)
    if (pipe) {
      const busy = this._leastLoaded(o)
      if (busy) return busy.pipe(job)
    }
    if (room) return new Conn(this, o).send(job)
    o.queue.push(job)
    job.handler.onCancel(() => { const i = o.queue.indexOf(job); if (i >= 0) o.queue.splice(i, 1) })
  }

  /** A connection whose outstanding answers, with one of `cap` bytes more, are at most SHORT_WAIT bytes, or null. */
  _shortWait (o, cap) {
    if (cap > SHORT_WAIT) return null
    for (const c of o.live) {
      if (c.canPipe(this.pipelineDepth) && c.outstanding() + cap <= SHORT_WAIT) return c
    }
    return null
  }

  /** The connection with the fewest answers outstanding that may take one more, or null. */
  _leastLoaded (o) {
    let best = null
    for (const c of o.live) {
      if (c.canPipe(this.pipelineDepth) && (best === null || c.queue.length < best.queue.length)) best = c
    }
    return best
  }

  /** A connection finished an answer and may carry another. */
  free (o, c) {
    if (this.closed) return c.destroy()
    while (o.queue.length) {
      const job = o.queue.shift()
      if (!job.handler.done) return c.send(job)
    }
    c.sock.unref() // an idle keep-alive connection does not hold the process open
    o.idle.push(c)
  }

  /**
   * A connection is gone: the requests written on it that had no byte of
   * answer are asked again, ahead of those waiting for a connection, and all
   * of them start again (start(): an idle, new or busy connection).
   * @param {Job[]} orphans requests written on it that had no byte of answer
   */
  gone (o, c, orphans) {
    this.conns.delete(c)
    const i = o.idle.indexOf(c)
    if (i >= 0) o.idle.splice(i, 1)
    o.live.splice(o.live.indexOf(c), 1)
    for (let k = orphans.length - 1; k >= 0; k--) {
      const job = orphans[k]
      if (job.handler.done) continue
      if (this.closed) { job.handler.onError(new MirrorNetworkError(`${o.origin}: transport closed`)); continue }
      if (++job.requeued > MAX_REQUEUE) { job.handler.onError(new MirrorNetworkError(`${o.origin} closed the connection before answering`)); continue }
      o.queue.unshift(job)
    }
    if (!this.closed) for (const job of o.queue.splice(0)) this.start(job, o)
  }

  /** Every connection ends; requests in flight or queued fail as network faults. */
  close () {
    this.closed = true
    for (const o of this.origins.values()) {
      for (const job of o.queue.splice(0)) job.handler.onError(new MirrorNetworkError(`${o.origin}: transport closed`))
    }
    for (const c of [...this.conns]) {
      const job = c.job
      c.destroy()
      job?.handler.onError(new MirrorNetworkError(`${c.o.origin}: transport closed`))
    }
  }
}
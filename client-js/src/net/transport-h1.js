// A lean HTTP/1.1 client for plain http: mirrors, the common case on a LAN
// and on loopback, where the client's CPU is the limit (BENCHMARKS.md P3).
// node:http spends most of a request's CPU on machinery a mirror answer does
// not need (a ClientRequest and an IncomingMessage with their streams,
// llhttp, a 64 KiB buffer per socket read, a copy of every body byte); this
// makes one write per request, parses the head from one scratch buffer, and
// has the kernel read the body straight into the request's own buffer
// (net.Socket's `onread`), so no body byte is copied in user space.
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
import net from 'node:net'
import { MirrorNetworkError } from '../errors.js'
import { DRAIN_MAX, networkFault } from './request-handler.js'

/** @typedef {import('./request-handler.js').RequestHandler} RequestHandler */
/**
 * One hop of a request, as this client keeps it (a redirect is a new hop: a new Job).
 * @typedef {{ handler: RequestHandler, head: string, requeued: number }} Job
 *   head: the request as written; requeued: times asked again after a connection closed under it
 */

const MAX_HEAD = 16 * 1024 // as node:http's default --max-http-header-size
const SCRATCH = 16 * 1024
const CRLF2 = Buffer.from('\r\n\r\n')
const MAX_REQUEUE = 3 // a request written behind answers that never came is asked again at most this often
const SHORT_WAIT = 64 * 1024 // answers outstanding on a connection that a small request waits behind rather than open another

export class H1Pool {
  /**
   * @param {{ maxSockets: number, pipelineDepth?: number, pipelineConns?: number, handshakes?: import('./handshake-times.js').HandshakeTimes }} o
   *   per origin; pipelineDepth 1 turns pipelining off; handshakes: where each new connection's TCP handshake time goes
   */
  constructor ({ maxSockets, pipelineDepth = 8, pipelineConns = 8, handshakes }) {
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
      o = { origin: u.origin, idle: [], queue: [], live: [], persistent: false, noPipeline: false, host: u.hostname.charCodeAt(0) === 91 ? u.hostname.slice(1, -1) : u.hostname, port: Number(u.port) || 80 }
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

// what a connection is reading now
const IDLE = 0; const HEAD = 1; const BODY = 2; const CHUNKED = 3; const DRAIN = 4; const UNTIL_CLOSE = 5

class Conn {
  constructor (pool, o) {
    this.pool = pool
    this.o = o
    /** @type {Job|null} the request whose answer is read now */
    this.job = null
    /** @type {Job[]} requests written behind it (pipelined), answered in this order */
    this.queue = []
    this.state = IDLE
    this.uses = 0
    this.ahead = false // opened by preconnect: idle before its first request, as a kept-alive one is
    this.gotBytes = false // of the current answer: before any, a reused connection the server closed may be retried
    this.scratch = Buffer.allocUnsafe(SCRATCH)
    this.headBuf = null // a head split over reads, gathered (allocated when first needed)
    this.headLen = 0
    this.remaining = 0 // BODY/DRAIN: bytes still to come
    this.keepAlive = true
    this.chunk = null // CHUNKED: decoder state
    this.dead = false
    pool.conns.add(this)
    o.live.push(this)
    this.sock = net.connect({
      host: o.host,
      port: o.port,
      noDelay: true,
      onread: { buffer: () => this.nextBuffer(), callback: (n, buf) => this.onRead(n, buf) }
    })
    const times = pool.handshakes
    if (times) {
      // a TCP handshake is one round trip: the mirror's distance before it answered anything
      const t0 = performance.now()
      this.sock.once('connect', () => times.measured(o.origin, performance.now() - t0, 1))
    }
    this.sock.on('error', err => this.onClose(err))
    this.sock.on('end', () => this.onClose(null))
    this.sock.on('close', () => this.onClose(null))
  }

  /** Where the kernel puts the next read: the body buffer itself while a body is read in place. */
  nextBuffer () {
    const job = this.job
    if (job !== null && (this.state === BODY || this.state === UNTIL_CLOSE) && job.handler.bodyLeft > 0) return job.handler.bodyRoom()
    return this.scratch
  }

  send (job) {
    if (job.handler.done) return this.pool.free(this.o, this)
    this.sock.ref()
    this.sock.write(job.head, 'latin1')
    this.begin(job)
  }

  /** job's answer is the next to read. */
  begin (job) {
    this.job = job
    this.state = HEAD
    this.gotBytes = false
    this.headLen = 0
    job.handler.onCancel(() => this.cancelCurrent(job))
  }

  /** Bytes still to come here, at most: the current answer's rest (its cap before its head) and the queued requests' caps. */
  outstanding () {
    let n = this.state === BODY ? this.job.handler.bodyLeft : this.job.handler.cap
    for (const job of this.queue) n += job.handler.cap
    return n
  }

  /** Room to write one more request behind the answers outstanding here, with at most `depth` in all. */
  canPipe (depth) { return !this.dead && this.job !== null && this.keepAlive && this.state !== UNTIL_CLOSE && this.queue.length + 1 < depth }

  /** Write job's request behind the answers outstanding here. */
  pipe (job) {
    this.queue.push(job)
    // cancelled while queued: its answer still comes, and is dropped when it does (onHead)
    job.handler.onCancel(() => {})
    this.sock.write(job.head, 'latin1')
  }

  /**
   * The request being answered was cancelled. Alone on the connection, or
   * with more of its body to come than is worth reading, the connection
   * ends (what is queued behind is asked again elsewhere). A short rest of
   * a framed body is still read, into the request's own buffer, so the
   * queued answers stay in order; its end does nothing, the request being
   * done. (Not read into the scratch buffer: the buffer of the socket's next
   * read was chosen when the last read ended, nextBuffer(), and this runs
   * between reads.)
   */
  cancelCurrent (job) {
    if (this.job !== job) return
    if (this.queue.length === 0 || this.state !== BODY || job.handler.bodyLeft > DRAIN_MAX) this.destroy()
  }

  onRead (n, buf) {
    if (this.dead) return
    const job = this.job
    if (!job && this.state !== DRAIN) return this.destroy() // bytes nobody asked for: the connection cannot be trusted to frame the next answer
    this.gotBytes = true
    if (buf !== this.scratch) {
      // read in place (BODY or UNTIL_CLOSE)
      job.handler.onBodyRead(n)
      if (this.state === BODY && job.handler.bodyLeft === 0) this.complete()
      return
    }
    this.feed(buf, 0, n)
  }

  /** Bytes in the scratch buffer, [from, to), in the current state. */
  feed (buf, from, to) {
    while (from < to && !this.dead) {
      const job = this.job
      switch (this.state) {
        case HEAD: {
          this.gotBytes = true // (begin() cleared it when the answer before ended in the same read)
          // a head is parsed where it lies in the scratch buffer; one split over
          // reads is gathered in headBuf (bounded: no quadratic re-copying for a
          // mirror that drips its head a byte at a time)
          const joined = this.headLen > 0
          let head = buf.subarray(from, to)
          let start = 0
          if (joined) {
            buf.copy(this.headBuf, this.headLen, from, to) // room: headLen <= MAX_HEAD, a read <= SCRATCH
            start = Math.max(0, this.headLen - 3) // (indexOf counts a negative start from the end)
            this.headLen += to - from
            head = this.headBuf.subarray(0, this.headLen)
          }
          const end = head.indexOf(CRLF2, start)
          if (end < 0) {
            if (head.length > MAX_HEAD) return this.protocolError(`answer head larger than ${MAX_HEAD} bytes`)
            if (!joined) {
              this.headBuf ??= Buffer.allocUnsafe(MAX_HEAD + SCRATCH)
              buf.copy(this.headBuf, 0, from, to) // out of the scratch buffer, which the next read overwrites
              this.headLen = to - from
            }
            return
          }
          if (end > MAX_HEAD) return this.protocolError(`answer head larger than ${MAX_HEAD} bytes`)
          this.headLen = 0
          const rest = end + 4
          if (!this.onHead(head.latin1Slice(0, end), rest < head.length)) return
          // the bytes after the head, in whatever state onHead chose
          if (rest >= head.length) return
          if (!joined) { from += rest; continue }
          buf = Buffer.from(head.subarray(rest)); from = 0; to = buf.length
          continue
        }
        case BODY: case UNTIL_CLOSE: {
          const h = job.handler
          const take = Math.min(h.bodyLeft, to - from)
          if (take > 0) { buf.copy(h.bodyRoom(), 0, from, from + take); h.onBodyRead(take); from += take }
          if (this.state === BODY && h.bodyLeft === 0) {
            // more than the answer, with nothing asked behind it: the framing is off
            if (from < to && this.queue.length === 0) this.keepAlive = false
            this.complete()
            break // what follows is the next answer's (or ends a connection now dead)
          }
          if (from < to) return h.onData(buf.subarray(from, to)) // past the buffer: onData refuses it (cap)
          return
        }
        case CHUNKED: from = this.chunked(buf, from, to); break
        case DRAIN: {
          const take = Math.min(this.remaining, to - from)
          this.remaining -= take; from += take
          if (this.remaining === 0) {
            if (from < to && this.queue.length === 0) return this.destroy()
            this.release()
          }
          break
        }
        default: return this.destroy()
      }
    }
  }

  /** Parse a head; pick the body's framing. false: nothing more to read here. */
  onHead (text, more) {
    const job = this.job
    const lines = text.split('\r\n')
    const m = /^HTTP\/1\.([01]) (\d{3})(?: |$)/.exec(lines[0])
    if (!m) return this.protocolError('not an HTTP/1.x answer')
    const status = Number(m[2])
    let length = null; let chunked = false; let transferEncoding = false; let location
    let keepAlive = m[1] === '1'
    for (let i = 1; i < lines.length; i++) {
      const line = lines[i]
      const colon = line.indexOf(':')
      if (colon <= 0 || line.charCodeAt(0) <= 32) return this.protocolError('malformed header line')
      const name = line.slice(0, colon).toLowerCase()
      if (name === 'content-length') {
        const v = line.slice(colon + 1).trim()
        if (!/^\d{1,15}$/.test(v) || (length !== null && length !== Number(v))) return this.protocolError('bad Content-Length')
        length = Number(v)
      } else if (name === 'transfer-encoding') {
        transferEncoding = true
        chunked = line.slice(colon + 1).split(',').pop().trim().toLowerCase() === 'chunked'
      } else if (name === 'connection') {
        const v = line.slice(colon + 1).toLowerCase()
        if (/(^|,)\s*close\s*(,|$)/.test(v)) keepAlive = false
        else if (/(^|,)\s*keep-alive\s*(,|$)/.test(v)) keepAlive = true
      } else if (name === 'location') location = line.slice(colon + 1).trim()
    }
    if (status >= 100 && status < 200) {
      if (status === 101) return this.protocolError('unexpected 101 Switching Protocols')
      return true // an interim answer: the real head follows
    }
    // RFC 9112 §6.3: Transfer-Encoding overrides Content-Length, and a client
    // closes the connection after an answer that had both
    this.keepAlive = keepAlive && !(transferEncoding && length !== null)
    if (transferEncoding) length = null
    const noBody = status === 204 || status === 304
    if (noBody) length = 0
    if (more && length === 0) this.keepAlive = false // bytes after an empty answer: the framing is off
    const framing = transferEncoding ? (chunked ? CHUNKED : UNTIL_CLOSE) : length !== null ? BODY : UNTIL_CLOSE
    if (framing === UNTIL_CLOSE) this.keepAlive = false
    if (job.handler.done || !job.handler.onHeaders(status, location, length === null ? undefined : length)) {
      // a redirect, an error status or a refused size: keep the connection only for a short, framed body
      if (this.dead) return false
      if (framing === BODY && length <= DRAIN_MAX && this.keepAlive) {
        this.job = null
        this.remaining = length
        if (length === 0) { this.release(); return false }
        this.state = DRAIN
        return true
      }
      this.destroy()
      return false
    }
    if (framing === BODY) {
      this.state = BODY
      if (length === 0) { this.complete(); return false }
    } else if (framing === CHUNKED) {
      this.state = CHUNKED
      this.chunk = { size: -1, line: '' }
    } else this.state = UNTIL_CLOSE
    return true
  }

  /** Decode chunked framing from buf[from, to); returns how far it got. */
  chunked (buf, from, to) {
    const c = this.chunk
    while (from < to) {
      if (c.size > 0) { // chunk data
        const take = Math.min(c.size, to - from)
        this.job.handler.onData(buf.subarray(from, from + take))
        if (this.dead) return to
        c.size -= take; from += take
        if (c.size === 0) c.size = -2 // its CRLF next
        continue
      }
      const nl = buf.indexOf(10, from)
      const end = nl < 0 || nl >= to ? to : nl + 1
      c.line += buf.latin1Slice(from, end)
      from = end
      if (c.line.length > 1024) { this.protocolError('chunked framing line too long'); return to }
      if (!c.line.endsWith('\r\n')) continue
      const line = c.line.slice(0, -2)
      c.line = ''
      if (c.size === -2) { // the CRLF after a chunk's data
        if (line !== '') { this.protocolError('bad chunked framing'); return to }
        c.size = -1
      } else if (c.size === -1) { // a size line
        const m = /^([0-9a-fA-F]{1,12})(?:[ \t]*;.*)?$/.exec(line)
        if (!m) { this.protocolError('bad chunk size'); return to }
        c.size = parseInt(m[1], 16)
        if (c.size === 0) c.size = -3 // trailers until an empty line
      } else if (line === '') { // c.size === -3: the end of the trailers
        if (from < to && this.queue.length === 0) this.keepAlive = false
        this.complete()
        return from
      }
    }
    return from
  }

  complete () {
    const job = this.job
    this.release()
    job.handler.onComplete()
  }

  /** The answer is read: carry the next request, or close when the framing said so. */
  release () {
    this.job = null
    this.state = IDLE
    this.uses++
    if (!this.keepAlive || this.dead) return this.destroy()
    this.o.persistent = true
    if (this.queue.length) return this.begin(this.queue.shift())
    this.pool.free(this.o, this)
  }

  protocolError (what) {
    const job = this.job
    this.destroy()
    job?.handler.onError(new MirrorNetworkError(`${this.o.origin}: ${what}`))
    return false
  }

  onClose (err) {
    if (this.dead) return
    if (this.sock.connecting) this.pool.handshakes?.failed(this.o.origin)
    const job = this.job
    const state = this.state
    // requests written behind an answer, and the server closed without saying it would: it does not take pipelining
    if (this.queue.length && this.keepAlive) this.o.noPipeline = true
    // a kept-alive (or preconnected) connection the server had closed before our request reached it,
    // or a request written behind answers: asked again on another connection, as what was queued behind it (gone())
    const again = job !== null && !job.handler.done && !this.gotBytes && (this.uses > 0 || this.ahead)
    if (again) this.queue.unshift(job)
    this.destroy()
    if (job === null || job.handler.done || again) return
    // a body that runs to the close of the connection ends here
    if (state === UNTIL_CLOSE && !err) return job.handler.onComplete()
    if (err) return job.handler.onError(networkFault(this.o.origin, err))
    job.handler.onError(new MirrorNetworkError(`${this.o.origin} closed the connection ${this.gotBytes ? 'mid-answer' : 'before answering'}`))
  }

  destroy () {
    if (this.dead) return
    this.dead = true
    this.job = null
    const orphans = this.queue.splice(0)
    this.sock.destroy()
    this.pool.gone(this.o, this, orphans)
  }
}

// One HTTP/1.1 connection of transport-h1.js's pool: it writes the
// requests it is given (pipelined behind outstanding answers when the pool
// says so), parses each answer's head from one scratch buffer and has the
// kernel read the body straight into the request's own buffer (net.Socket's
// `onread`; on an https: mirror TLS decrypts into it the same way).
// transport-h1.js says why, and keeps the pool.
import net from 'node:net'
import tls from 'node:tls'
import { MirrorNetworkError } from '../errors.js'
import { DRAIN_MAX, networkFault } from './request-handler.js'

/** @typedef {import('./transport-h1.js').Job} Job */

const MAX_HEAD = 16 * 1024 // as node:http's default --max-http-header-size
const SCRATCH = 16 * 1024
const CRLF2 = Buffer.from('\r\n\r\n')
// what a connection is reading now
const IDLE = 0; const HEAD = 1; const BODY = 2; const CHUNKED = 3; const DRAIN = 4; const UNTIL_CLOSE = 5

export class Conn {
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
    this.opened = false // its handshake (TCP's, and TLS's on https:) is done
    const onread = { buffer: () => this.nextBuffer(), callback: (n, buf) => this.onRead(n, buf) }
    this.sock = o.tls
      ? tls.connect({ host: o.host, port: o.port, servername: net.isIP(o.host) ? undefined : o.host, ALPNProtocols: ['http/1.1'], secureContext: pool.tlsContext?.(), noDelay: true, onread })
      : net.connect({ host: o.host, port: o.port, noDelay: true, onread })
    // a TCP handshake is one round trip, TCP's and TLS 1.3's two: the mirror's distance before it answered anything
    const t0 = performance.now()
    this.sock.once(o.tls ? 'secureConnect' : 'connect', () => {
      this.opened = true
      pool.handshakes?.measured(o.origin, performance.now() - t0, o.tls ? 2 : 1)
    })
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
    if (!this.opened) this.pool.handshakes?.failed(this.o.origin)
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

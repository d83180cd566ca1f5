// GET over node:http(s) with keep-alive, a hard byte cap and a deadline. Only
// I/O: whether the bytes are any good is verify.js's business. node:http is
// used instead of fetch() because it costs less per request (see BENCHMARKS.md P3).
import http from 'node:http'
import https from 'node:https'
import { TooLargeError, MirrorHttpError, MirrorNetworkError, TimeoutError, AbortedError } from './errors.js'

const MAX_REDIRECTS = 5

export function createTransport ({ maxSockets = 16 } = {}) {
  const agents = {
    'http:': new http.Agent({ keepAlive: true, maxSockets }),
    'https:': new https.Agent({ keepAlive: true, maxSockets })
  }
  const stats = { requests: 0, bytes: 0 }

  /**
   * @param {string} url
   * @param {{ cap: number, timeoutMs: number, signal?: AbortSignal }} o
   * @returns {Promise<Uint8Array>} the body, never more than cap bytes
   */
  function get (url, o, redirects = 0) {
    return new Promise((resolve, reject) => {
      if (o.signal?.aborted) return reject(new AbortedError('aborted'))
      let u
      try { u = new URL(url) } catch { return reject(new MirrorHttpError(`bad URL ${JSON.stringify(url)}`)) }
      // a mirror (or its redirect) may only send us to http(s)
      if (u.protocol !== 'http:' && u.protocol !== 'https:') return reject(new MirrorHttpError(`${JSON.stringify(url)} is not an http(s) URL`))
      const mod = u.protocol === 'https:' ? https : http
      stats.requests++
      let done = false
      let req = null
      const settle = () => {
        done = true
        clearTimeout(timer)
        o.signal?.removeEventListener('abort', onAbort)
      }
      const finish = (err, val) => {
        if (done) return
        settle()
        if (err) { req?.destroy(); reject(err) } else resolve(val)
      }
      const timer = setTimeout(() => finish(new TimeoutError(`no complete answer from ${u.origin} within ${o.timeoutMs} ms`)), o.timeoutMs)
      const onAbort = () => finish(new AbortedError('aborted'))
      o.signal?.addEventListener('abort', onAbort)
      try {
        req = mod.get(u, { agent: agents[u.protocol], headers: { 'accept-encoding': 'identity' } }, onResponse)
      } catch (err) {
        return finish(new MirrorNetworkError(`${u.origin}: ${err.code || err.message}`, { cause: err }))
      }
      req.on('error', err => finish(new MirrorNetworkError(`${u.origin}: ${err.code || err.message}`, { cause: err })))

      function onResponse (res) {
        const status = res.statusCode
        if (status >= 300 && status < 400 && res.headers.location) {
          res.resume()
          if (redirects >= MAX_REDIRECTS) return finish(new MirrorHttpError(`${u.origin}: too many redirects`, { details: { status } }))
          let next
          try { next = new URL(res.headers.location, u).href } catch { return finish(new MirrorHttpError(`${u.origin}: bad redirect Location`, { details: { status } })) }
          // hand over to the next hop: this request is done, its promise follows that one
          settle()
          get(next, o, redirects + 1).then(resolve, reject)
          return
        }
        if (status !== 200) {
          res.resume()
          return finish(new MirrorHttpError(`${u.origin} answered ${status} for ${u.pathname}`, { details: { status } }))
        }
        const len = Number(res.headers['content-length'])
        // trust rule 3: refuse before reading when the mirror announces too much
        if (len > o.cap) return finish(new TooLargeError(`${u.origin} announced ${len} bytes for ${u.pathname}, at most ${o.cap} expected`))
        const buf = Buffer.allocUnsafe(Number.isFinite(len) ? len : o.cap)
        let n = 0
        res.on('data', chunk => {
          if (done) return
          if (n + chunk.length > o.cap || n + chunk.length > buf.length) {
            return finish(new TooLargeError(`${u.origin} sent more than ${Number.isFinite(len) ? len : o.cap} bytes for ${u.pathname}`))
          }
          chunk.copy(buf, n); n += chunk.length
        })
        res.on('end', () => { stats.bytes += n; finish(null, new Uint8Array(buf.buffer, buf.byteOffset, n)) })
        res.on('error', err => finish(new MirrorNetworkError(`${u.origin}: ${err.message}`, { cause: err })))
        res.on('aborted', () => finish(new MirrorNetworkError(`${u.origin} closed the connection mid-body`)))
      }
    })
  }

  function close () { for (const a of Object.values(agents)) a.destroy() }
  return { get, close, stats }
}

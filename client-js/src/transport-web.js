// GET over fetch() with a hard byte cap and a deadline (browsers, Service
// Workers, Deno). Only I/O: whether the bytes are any good is verify.js's
// business. The body is read as a stream and counted as it arrives, so a mirror
// that sends endless data is cut off after cap + 1 bytes (trust rule 3).
import { RotreeError, TooLargeError, MirrorHttpError, MirrorNetworkError, TimeoutError, AbortedError } from './errors.js'

const FIRST_BUFFER = 64 * 1024

export function createTransport () {
  const stats = { requests: 0, bytes: 0 }

  /**
   * @param {string} url
   * @param {{ cap: number, timeoutMs: number, signal?: AbortSignal }} o
   * @returns {Promise<Uint8Array>} the body, never more than cap bytes
   */
  async function get (url, o) {
    if (o.signal?.aborted) throw new AbortedError('aborted')
    let u
    try { u = new URL(url) } catch { throw new MirrorHttpError(`bad URL ${JSON.stringify(url)}`) }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new MirrorHttpError(`${JSON.stringify(url)} is not an http(s) URL`)
    const origin = u.origin
    const ctl = new AbortController()
    let timedOut = false
    // one deadline for the whole answer, headers and body: a mirror that
    // drips one byte a second is as stalled as one that says nothing
    const timer = setTimeout(() => { timedOut = true; ctl.abort() }, o.timeoutMs)
    const onAbort = () => ctl.abort()
    o.signal?.addEventListener('abort', onAbort)
    const failed = err => {
      if (err instanceof RotreeError) return err
      if (timedOut) return new TimeoutError(`no complete answer from ${origin} within ${o.timeoutMs} ms`)
      if (o.signal?.aborted) return new AbortedError('aborted')
      return new MirrorNetworkError(`${origin}: ${err?.message ?? err}`, { cause: err })
    }
    stats.requests++
    try {
      let res
      try {
        res = await fetch(u.href, {
          signal: ctl.signal,
          // fsinfo.json changes with every publish: always ask the mirror. Blobs
          // never change, but a cached bad copy would fail the same way on every
          // retry, so the HTTP cache is not used for them either; the verified
          // LRU in tree.js is the cache.
          cache: 'no-store',
          credentials: 'omit',
          redirect: 'follow' // fetch() follows only http(s) redirects, at most 20
        })
      } catch (err) { throw failed(err) }
      if (res.status !== 200) {
        res.body?.cancel().catch(() => {})
        throw new MirrorHttpError(`${origin} answered ${res.status} for ${u.pathname}`, { details: { status: res.status } })
      }
      // trust rule 3: refuse before reading when the mirror announces too much.
      // Content-Length counts encoded bytes when the mirror compresses, so it
      // only sizes the first buffer; the decoded bytes are what is capped.
      const len = Number(res.headers.get('content-length') ?? NaN)
      if (len > o.cap) {
        res.body?.cancel().catch(() => {})
        throw new TooLargeError(`${origin} announced ${len} bytes for ${u.pathname}, at most ${o.cap} expected`)
      }
      let buf = new Uint8Array(Number.isFinite(len) && len > 0 ? len : Math.min(o.cap, FIRST_BUFFER))
      let n = 0
      if (res.body) {
        const reader = res.body.getReader()
        try {
          for (;;) {
            const { done, value } = await reader.read()
            if (done) break
            if (n + value.length > o.cap) throw new TooLargeError(`${origin} sent more than ${o.cap} bytes for ${u.pathname}`)
            if (n + value.length > buf.length) {
              const bigger = new Uint8Array(Math.min(o.cap, Math.max(buf.length * 2, n + value.length)))
              bigger.set(buf.subarray(0, n)); buf = bigger
            }
            buf.set(value, n); n += value.length
          }
        } catch (err) {
          reader.cancel().catch(() => {})
          throw failed(err)
        }
      }
      stats.bytes += n
      return n === buf.length ? buf : buf.subarray(0, n)
    } finally {
      clearTimeout(timer)
      o.signal?.removeEventListener('abort', onAbort)
    }
  }

  return { get, close () {}, stats }
}

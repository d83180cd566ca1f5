// GET over fetch() with a hard byte cap and one deadline (browsers, Service
// Workers, Deno). Only I/O: whether the bytes are any good is verify.js's
// business. The body is read as a stream and counted as it arrives, so a mirror
// that sends endless data is cut off after cap + 1 bytes (trust rule 3).
// Redirects and credentials follow the same rules as the Node transport
// (transport-url.js): one deadline across every hop, the mirror's own origin
// only unless allowed, never https to http, and a mirror URL's user:pass sent
// as Authorization: Basic to its own origin and never reported.
import { RotreeError, TooLargeError, MirrorHttpError, MirrorNetworkError, TimeoutError, AbortedError } from '../errors.js'
import { parseTarget, basicAuth, redirectPolicy, redirectTarget } from './transport-url.js'

export { redactUrl } from './transport-url.js'

const FIRST_BUFFER = 64 * 1024

/**
 * @param {{ allowRedirectOrigins?: string[], crossOriginRedirects?: boolean }} [opts] as transport-node.js
 */
export function createTransport ({ allowRedirectOrigins, crossOriginRedirects } = {}) {
  const stats = { requests: 0, bytes: 0 }
  const policy = redirectPolicy({ allowRedirectOrigins, crossOriginRedirects })

  /**
   * @param {string} url
   * @param {{ cap: number, timeoutMs: number, signal?: AbortSignal, onTiming?: (t: object) => void, into?: Uint8Array }} o
   *   onTiming, after a body arrived whole: { origin, protocol: null, redirects, bytes, headersMs, totalMs }
   *   into: a buffer the caller owns, used for the body when it fits (as transport-node.js)
   * @returns {Promise<Uint8Array>} the body, never more than cap bytes
   */
  async function get (url, o) {
    if (o.signal?.aborted) throw new AbortedError('aborted')
    const first = parseTarget(url)
    const auth = basicAuth(first)
    first.username = ''; first.password = '' // fetch() refuses them, and messages must not show them
    let u = first
    const t0 = o.onTiming ? performance.now() : 0
    const ctl = new AbortController()
    let timedOut = false
    // one deadline for the whole answer, every redirect hop, headers and body:
    // a mirror that drips one byte a second is as stalled as one that says nothing
    const timer = setTimeout(() => { timedOut = true; ctl.abort() }, o.timeoutMs)
    const onAbort = () => ctl.abort()
    o.signal?.addEventListener('abort', onAbort)
    const failed = err => {
      if (err instanceof RotreeError) return err
      if (timedOut) return new TimeoutError(`no complete answer from ${u.origin} within ${o.timeoutMs} ms`)
      if (o.signal?.aborted) return new AbortedError('aborted')
      return new MirrorNetworkError(`${u.origin}: ${err?.message ?? err}`, { cause: err })
    }
    const ask = redirect => {
      stats.requests++
      return fetch(u.href, {
        signal: ctl.signal,
        // fsinfo.json changes with every publish: always ask the mirror. Blobs
        // never change, but a cached bad copy would fail the same way on every
        // retry, so the HTTP cache is not used for them either; the verified
        // LRU of fetch/blobs.js is the cache.
        cache: 'no-store',
        credentials: 'omit',
        // the mirror's own user:pass, to its own origin only
        headers: auth && u.origin === first.origin ? { authorization: auth } : undefined,
        redirect
      })
    }
    try {
      let res
      let hops = 0
      try {
        for (;;) {
          // 'manual': each hop is checked before it is asked (Node's fetch and
          // Deno show the 3xx and its Location)
          res = await ask('manual')
          if (res.type === 'opaqueredirect') {
            // a browser hides where a redirect leads: let it follow (it drops
            // Authorization on a cross-origin hop), then check where it ended
            res = await ask('follow')
            if (res.redirected && res.url) {
              u = redirectTarget(first, u, res.url, hops++, policy, res.status)
            }
            break
          }
          const location = res.status >= 300 && res.status < 400 ? res.headers.get('location') : null
          if (!location) break
          res.body?.cancel().catch(() => {})
          u = redirectTarget(first, u, location, hops++, policy, res.status)
        }
      } catch (err) { throw failed(err) }
      const tHead = t0 ? performance.now() : 0
      if (res.status !== 200) throw new MirrorHttpError(`${u.origin} answered ${res.status} for ${u.pathname}`, { details: { status: res.status } })
      const body = await readCapped(res, o, u, failed)
      stats.bytes += body.length
      if (t0) o.onTiming({ origin: u.origin, protocol: null, redirects: hops, bytes: body.length, headersMs: tHead - t0, totalMs: performance.now() - t0 })
      return body
    } finally {
      clearTimeout(timer)
      o.signal?.removeEventListener('abort', onAbort)
      ctl.abort() // whatever body is left unread (an error page, a refused redirect, an overflow) is dropped
    }
  }

  return { get, close () {}, stats }
}

/**
 * An answer's body, read as it arrives and cut off past `o.cap` bytes (trust
 * rule 3), into `o.into` when it fits.
 * @returns {Promise<Uint8Array>}
 */
async function readCapped (res, o, u, failed) {
  // refuse before reading when the mirror announces too much. Content-Length
  // counts encoded bytes when the mirror compresses, so it only sizes the
  // first buffer; the decoded bytes are what is capped.
  const len = Number(res.headers.get('content-length') ?? NaN)
  if (len > o.cap) throw new TooLargeError(`${u.origin} announced ${len} bytes for ${u.pathname}, at most ${o.cap} expected`)
  const known = Number.isFinite(len)
  const want = known ? len : o.cap
  let buf = o.into?.length >= want ? o.into.subarray(0, want) : new Uint8Array(known && len > 0 ? len : Math.min(o.cap, FIRST_BUFFER))
  let n = 0
  if (res.body) {
    const reader = res.body.getReader()
    try {
      for (;;) {
        const { done, value } = await reader.read()
        if (done) break
        if (n + value.length > o.cap) throw new TooLargeError(`${u.origin} sent more than ${o.cap} bytes for ${u.pathname}`)
        if (n + value.length > buf.length) {
          const bigger = new Uint8Array(Math.min(o.cap, Math.max(buf.length * 2, n + value.length)))
          bigger.set(buf.subarray(0, n)); buf = bigger
        }
        buf.set(value, n); n += value.length
      }
    } catch (err) { throw failed(err) }
  }
  return n === buf.length ? buf : buf.subarray(0, n)
}

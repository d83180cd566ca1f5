// GET over fetch() with a hard byte cap and a deadline (browsers, Deno, workers).
import { TooLargeError, MirrorHttpError, MirrorNetworkError, TimeoutError, AbortedError } from './errors.js'

export function createTransport () {
  const stats = { requests: 0, bytes: 0 }
  async function get (url, o) {
    const ctl = new AbortController()
    let timedOut = false
    const timer = setTimeout(() => { timedOut = true; ctl.abort() }, o.timeoutMs)
    const onAbort = () => ctl.abort()
    o.signal?.addEventListener('abort', onAbort)
    const origin = new URL(url).origin
    stats.requests++
    try {
      let res
      try {
        res = await fetch(url, { signal: ctl.signal, cache: 'no-store', credentials: 'omit' })
      } catch (err) {
        throw timedOut ? new TimeoutError(`no answer from ${origin} within ${o.timeoutMs} ms`) : o.signal?.aborted ? new AbortedError('aborted') : new MirrorNetworkError(`${origin}: ${err.message}`, { cause: err })
      }
      if (res.status !== 200) { res.body?.cancel(); throw new MirrorHttpError(`${origin} answered ${res.status}`, { details: { status: res.status } }) }
      const len = Number(res.headers.get('content-length'))
      if (len > o.cap) { res.body?.cancel(); throw new TooLargeError(`${origin} announced ${len} bytes, at most ${o.cap} expected`) }
      const buf = new Uint8Array(Number.isFinite(len) && len > 0 ? len : o.cap)
      let n = 0
      const reader = res.body.getReader()
      try {
        for (;;) {
          const { done, value } = await reader.read()
          if (done) break
          if (n + value.length > buf.length) { reader.cancel(); throw new TooLargeError(`${origin} sent more than ${buf.length} bytes`) }
          buf.set(value, n); n += value.length
        }
      } catch (err) {
        if (err.code) throw err
        throw timedOut ? new TimeoutError(`${origin} stalled past ${o.timeoutMs} ms`) : new MirrorNetworkError(`${origin}: ${err.message}`, { cause: err })
      }
      stats.bytes += n
      return buf.subarray(0, n)
    } finally {
      clearTimeout(timer)
      o.signal?.removeEventListener('abort', onAbort)
    }
  }
  return { get, close () {}, stats }
}

// A reader of a gated tree (docs/FORMAT.md §12.11): wraps a transport so that
// every blob request (…/h/<hash>) carries an edge token, fetched from the
// mirror's POST <base>.rotree/token and renewed before it expires. The first
// exchange starts when the tree is opened (preconnect), while fsinfo.json is
// read, so the first blob does not wait for it (the POST's own connection
// costs two round trips, three over https). Whether a grant admits its
// holder is the edge's decision (rotree-client/grant's verifier runs there);
// here an edge's refusal becomes ROTREE_NO_ACCESS with its one line, never a
// mirror fault. A mirror that answers the token path with 404 is not gated:
// its blobs are asked for as they are.
//
// Not on the core read path: a caller that holds a grant wraps its transport
// (openTree's `wrapTransport`). The browser bundle exports it for the web app
// and its Service Worker (docs/WEB.md "Gated trees in the browser"), which
// wrap a Tree only once the reader has picked a grant. An edge's refusal
// carries `edge` (the edge's origin): a reader tells it apart from a private
// tree's ROTREE_NO_ACCESS by that.
import { NoAccessError, MirrorHttpError, MirrorNetworkError, TimeoutError, TooLargeError } from '../errors.js'
import { tokenRequest } from '../trust/grant.js'

/** Renew a token this long before it expires, or RENEW_FRACTION of its lifetime before, whichever is less. */
export const RENEW_BEFORE_MS = 60e3
/**
 * An eighth: a short token is renewed that much of its life early, so a long
 * read asks 8/7 tokens per lifetime (a quarter asked 4/3), and no request in
 * flight meets an expired token unless the edge's clock runs ahead of the
 * reader's by more than that (then the edge's 403 brings one fresh token).
 */
export const RENEW_FRACTION = 1 / 8
const TOKEN_RE = /^[A-Za-z0-9_-]{22},[0-9]{1,12}$/
const RETRY_MS = 5000 // a renewal that failed, while the held token is still good
const MAX_ANSWER = 16 * 1024 // bytes of a token exchange's answer read
const EXCHANGE_TIMEOUT_MS = 30_000 // when the request that needs a token names no deadline

/**
 * @param {{ get: Function, preconnect?: Function, rtt?: Function, close: Function, stats?: object }} inner
 * @param {{ grant: object | (() => Promise<object>), secretKey: string | (() => Promise<string>), fetch?: typeof fetch, now?: () => number }} o
 *   grant: decodeGrant()'s value; secretKey: its holder's, hex (either may be a function that reads it when first needed)
 */
export function gatedTransport (inner, { grant, secretKey, fetch: fetchImpl, now = Date.now }) {
  // mirror base → { token: the newest token, renewAt, pending: the one exchange in flight }
  const tokens = new Map()
  let held = null
  const credentials = () => (held ??= Promise.all([typeof grant === 'function' ? grant() : grant, typeof secretKey === 'function' ? secretKey() : secretKey]))

  /**
   * POST the token request: through the wrapped transport where it can (Node's:
   * the mirrors' TLS trust, `ca`, and its deadline), else fetch() with the same
   * deadline. `fetch` given to gatedTransport always wins (tests, counters).
   * @returns {Promise<{ status: number, text: string }>}
   */
  async function post (url, body, timeoutMs) {
    if (fetchImpl === undefined && typeof inner.post === 'function') {
      const r = await inner.post(url, body, { cap: MAX_ANSWER, timeoutMs, contentType: 'application/json' })
      return { status: r.status, text: new TextDecoder().decode(r.body) }
    }
    const res = await (fetchImpl ?? globalThis.fetch)(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body, signal: AbortSignal.timeout(timeoutMs) })
    return { status: res.status, text: await cappedText(res, url) }
  }

  async function exchange (base, timeoutMs) {
    const [g, sk] = await credentials()
    const url = base + '.rotree/token'
    const origin = new URL(base).origin
    const asked = now()
    let res
    try {
      res = await post(url, tokenRequest(g, sk, { now: asked }), timeoutMs)
    } catch (err) {
      if (err.code === 'ROTREE_TIMEOUT' || err.code === 'ROTREE_TOO_LARGE' || err.code === 'ROTREE_MIRROR_HTTP') throw err
      if (err.name === 'TimeoutError') throw new TimeoutError(`${origin}: no answer from the token exchange within ${timeoutMs} ms`, { cause: err })
      throw new MirrorNetworkError(`${origin}: the token exchange failed (${err.cause?.code ?? err.message})`, { cause: err })
    }
    return tokenOf(res, origin, asked)
  }

  /**
   * The token to send to `base`: the one held while it is not due, else the
   * one exchange in flight, shared by every request that waits for it (one
   * renewal per mirror, however many requests are in flight). A token due for
   * renewal but not expired is still sent while its successor is fetched.
   * `refused`: the token an edge just refused; a newer one is used if there is.
   */
  function tokenFor (base, timeoutMs, refused = null) {
    let s = tokens.get(base)
    if (s === undefined) tokens.set(base, (s = { token: null, pending: null }))
    const t = s.token
    const usable = t !== null && t !== refused && t.expiresMs > now()
    // a renewal that failed while the token still works is tried again after a pause, not by every request
    if (usable && (t.renewAt > now() || refused !== null || (s.retryAt ?? 0) > now())) return t
    if (s.pending === null) {
      s.pending = exchange(base, timeoutMs).then(next => { s.token = next; return next })
      s.pending.then(() => { s.pending = null; s.retryAt = 0 }, () => { s.pending = null; s.retryAt = now() + RETRY_MS })
    }
    return usable ? t : s.pending
  }

  async function get (url, o) {
    const at = url.lastIndexOf('/h/')
    if (at < 0) return inner.get(url, o)
    const base = url.slice(0, at + 1)
    const withToken = t => t.token === null ? url : `${url}${url.includes('?') ? '&' : '?'}rotree_token=${t.token}`
    const timeoutMs = o?.timeoutMs ?? EXCHANGE_TIMEOUT_MS
    let t = await tokenFor(base, timeoutMs)
    try {
      return await inner.get(withToken(t), o)
    } catch (err) {
      if (!(err.code === 'ROTREE_MIRROR_HTTP' && err.status === 403 && t.token !== null)) throw err
      // refused: the token expired on the way, or the edge's secret changed; one fresh token, once
      t = await tokenFor(base, timeoutMs, t)
      try {
        return await inner.get(withToken(t), o)
      } catch (e2) {
        if (e2.code === 'ROTREE_MIRROR_HTTP' && e2.status === 403) throw new NoAccessError(`${new URL(base).origin} refuses the edge token it just gave for this grant`, { cause: e2, details: { edge: new URL(base).origin } })
        throw e2
      }
    }
  }

  // the inner transport's head start, and the mirror's first token asked for beside it; a failure
  // is not reported here: the first blob request asks again (none is held) and reports what it gets
  function preconnect (url, o) {
    inner.preconnect?.(url, o)
    if (typeof url !== 'string' || !url.endsWith('/')) return // a tree's base (mirrorUrl); blob URLs hang off it
    tokenFor(url, o?.timeoutMs ?? EXCHANGE_TIMEOUT_MS) // its failure is handled where the exchange is kept (tokenFor)
  }

  return {
    get,
    preconnect,
    rtt: inner.rtt?.bind(inner),
    post: inner.post?.bind(inner),
    close: () => inner.close(),
    get stats () { return inner.stats }
  }
}

/**
 * What an exchange answered, asked at `asked` (the reader's clock): the token
 * and when to renew it; a mirror that is not gated (404) gives none.
 * @param {{ status: number, text: string }} res @param {string} origin @param {number} asked
 * @returns {{ token: string|null, expiresMs: number, renewAt: number }}
 */
function tokenOf (res, origin, asked) {
  if (res.status === 404) return { token: null, expiresMs: Infinity, renewAt: Infinity } // not gated
  let j = null
  try { j = JSON.parse(res.text) } catch {}
  if (res.status === 403) throw new NoAccessError(`${origin} refuses this grant: ${typeof j?.message === 'string' ? j.message.slice(0, 300) : 'no reason given'}`, { details: { edge: origin } })
  if (res.status !== 200 || typeof j?.token !== 'string' || !TOKEN_RE.test(j.token)) {
    throw new MirrorHttpError(`${origin}: the token exchange answered ${res.status}${res.status === 200 ? ' without a token' : ''}`, { details: { status: res.status } })
  }
  const expiresMs = Number(j.token.split(',')[1]) * 1000
  // a short-lived token (an edge's --token-ttl of seconds) is renewed an
  // eighth of its life early, not a minute: else every request would renew
  return { token: j.token, expiresMs, renewAt: expiresMs - Math.min(RENEW_BEFORE_MS, Math.max(0, expiresMs - asked) * RENEW_FRACTION) }
}

/** A fetch() answer's text, read no further than MAX_ANSWER bytes (an exchange that streams without end is cut off). */
async function cappedText (res, url) {
  const tooLarge = () => new TooLargeError(`${new URL(url).origin}: the token exchange answered more than ${MAX_ANSWER} bytes`)
  if (Number(res.headers?.get?.('content-length')) > MAX_ANSWER) throw tooLarge()
  if (!res.body?.getReader) return res.text()
  const reader = res.body.getReader()
  const parts = []
  let n = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    n += value.length
    if (n > MAX_ANSWER) { reader.cancel().catch(() => {}); throw tooLarge() }
    parts.push(value)
  }
  const all = new Uint8Array(n)
  let at = 0
  for (const p of parts) { all.set(p, at); at += p.length }
  return new TextDecoder().decode(all)
}

// A reader of a gated tree (docs/FORMAT.md §12.11): wraps a transport so that
// every blob request (…/h/<hash>) carries an edge token, fetched from the
// mirror's POST <base>.rotree/token before its first blob and renewed before
// it expires. Whether a grant admits its holder is the edge's decision
// (rotree-client/grant's verifier runs there); here an edge's refusal becomes
// ROTREE_NO_ACCESS with its one line, never a mirror fault. A mirror that
// answers the token path with 404 is not gated: its blobs are asked for as
// they are.
//
// Not on the core read path: a caller that holds a grant wraps its transport
// (openTree's `wrapTransport`), so the browser bundle carries none of this.
import { NoAccessError, MirrorHttpError, MirrorNetworkError } from '../errors.js'
import { tokenRequest } from '../trust/grant.js'

/** Renew a token this long before it expires. */
export const RENEW_BEFORE_MS = 60e3
const TOKEN_RE = /^[A-Za-z0-9_-]{22},[0-9]{1,12}$/

/**
 * @param {{ get: Function, preconnect?: Function, rtt?: Function, close: Function, stats?: object }} inner
 * @param {{ grant: object | (() => Promise<object>), secretKey: string | (() => Promise<string>), fetch?: typeof fetch, now?: () => number }} o
 *   grant: decodeGrant()'s value; secretKey: its holder's, hex (either may be a function that reads it when first needed)
 */
export function gatedTransport (inner, { grant, secretKey, fetch: fetchImpl = globalThis.fetch, now = Date.now }) {
  const tokens = new Map() // mirror base → Promise<{ token: string|null, expiresMs: number }>
  let held = null
  const credentials = () => (held ??= Promise.all([typeof grant === 'function' ? grant() : grant, typeof secretKey === 'function' ? secretKey() : secretKey]))

  async function exchange (base) {
    const [g, sk] = await credentials()
    const url = base + '.rotree/token'
    const origin = new URL(base).origin
    let res
    try {
      res = await fetchImpl(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: tokenRequest(g, sk, { now: now() }) })
    } catch (err) {
      throw new MirrorNetworkError(`${origin}: the token exchange failed (${err.cause?.code ?? err.message})`, { cause: err })
    }
    const text = await res.text()
    if (res.status === 404) return { token: null, expiresMs: Infinity } // not gated
    let j = null
    try { j = JSON.parse(text) } catch {}
    if (res.status === 403) throw new NoAccessError(`${origin} refuses this grant: ${typeof j?.message === 'string' ? j.message.slice(0, 300) : 'no reason given'}`)
    if (res.status !== 200 || typeof j?.token !== 'string' || !TOKEN_RE.test(j.token)) {
      throw new MirrorHttpError(`${origin}: the token exchange answered ${res.status}${res.status === 200 ? ' without a token' : ''}`, { details: { status: res.status } })
    }
    return { token: j.token, expiresMs: Number(j.token.split(',')[1]) * 1000 }
  }

  function tokenFor (base, { fresh = false } = {}) {
    let p = tokens.get(base)
    if (p && !fresh) {
      // renew ahead of expiry; a failed exchange is asked again next time
      p = p.then(t => t.expiresMs - RENEW_BEFORE_MS > now() ? t : null, () => null)
    }
    return (async () => {
      const t = p && !fresh ? await p : null
      if (t) return t
      const next = exchange(base)
      tokens.set(base, next)
      next.catch(() => tokens.delete(base))
      return next
    })()
  }

  async function get (url, o) {
    const at = url.lastIndexOf('/h/')
    if (at < 0) return inner.get(url, o)
    const base = url.slice(0, at + 1)
    const withToken = t => t.token === null ? url : `${url}${url.includes('?') ? '&' : '?'}rotree_token=${t.token}`
    let t = await tokenFor(base)
    try {
      return await inner.get(withToken(t), o)
    } catch (err) {
      if (!(err.code === 'ROTREE_MIRROR_HTTP' && err.status === 403 && t.token !== null)) throw err
      // refused: the token expired on the way, or the edge's secret changed; one fresh token, once
      t = await tokenFor(base, { fresh: true })
      try {
        return await inner.get(withToken(t), o)
      } catch (e2) {
        if (e2.code === 'ROTREE_MIRROR_HTTP' && e2.status === 403) throw new NoAccessError(`${new URL(base).origin} refuses the edge token it just gave for this grant`, { cause: e2 })
        throw e2
      }
    }
  }

  return {
    get,
    preconnect: inner.preconnect?.bind(inner),
    rtt: inner.rtt?.bind(inner),
    close: () => inner.close(),
    get stats () { return inner.stats }
  }
}

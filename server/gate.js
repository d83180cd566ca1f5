// A gated edge (docs/FORMAT.md §12.11): blobs only to requests with a valid
// edge token, and POST /.rotree/token, where a grant's holder trades its
// grant and a signed, fresh request for a token. Whether the grant and the
// request admit the holder is decided by rotree-client/grant's verifier
// alone; this module finds each tree's state, mints, and remembers which
// holder each token went to (for the access log).
//
// A tree is the one a published folder OUT publishes: the anchor and name
// its fsinfo.json names, with the trust documents in OUT/trust walked from
// that anchor as a reader walks them (the access role of the newest, or the
// single key). `rotree serve --grants` gates its one folder; `rotree
// token-server` exchanges for several and checks tokens for an edge that
// cannot (GET /.rotree/check, Caddy's forward_auth). `rotree gateway
// --grants` gates the trees it serves, each as its reader verified it from
// the mirrors (gateway/edge-gate.js), with this same exchange.
import path from 'node:path'
import { verifyTokenRequest, decodeTokenRequest, accessRoleOf, verifyRevoked, MAX_GRANT, MAX_REVOKED } from 'rotree-client/grant'
import { anchorText } from 'rotree-client/trust'
import { readFsinfoFile } from '../lib/published/publish.js'
import { decodeRoot, rootContext } from '../lib/published/signed-roots.js'
import { readRegular } from '../lib/open-regular.js'
import { CORS, IMMUTABLE, sendStatus } from './blob-route.js'
import { mintToken, checkToken, TOKEN_HEADER, TOKEN_QUERY, TOKEN_TTL_S } from './edge-token.js'

// a cache in front must not hand a gated blob to a request without a token
const PRIVATE = 'private, max-age=31536000, immutable'

/** A blob answer's header list (name, value, …) with its public Cache-Control made private (a new list when it changes). */
function privately (headers) {
  const i = headers.indexOf(IMMUTABLE)
  if (i < 0) return headers
  const h = [...headers]
  h[i] = PRIVATE
  return h
}
const MAX_BODY = MAX_GRANT + 1024
const TREE_RECHECK_MS = 60_000
const REFUSED = 'this tree is gated: an edge token is required (docs/FORMAT.md §12.11)\n'
const EXPIRED = 'edge token expired: ask for a new one at /.rotree/token\n'

/**
 * The tree OUT publishes, as the gate checks grants against it, with the
 * grants its access role revoked (OUT/trust/revoked.json, FORMAT.md §12.12;
 * a list that does not verify throws: the edge then gives no token).
 */
export async function gatedTree (dir) {
  const bytes = await readFsinfoFile(dir)
  if (bytes === null) throw new Error(`${dir} has no fsinfo.json`)
  const current = decodeRoot(bytes)
  const ctx = await rootContext(dir, { current })
  if (ctx.chain.fault) throw new Error(`${dir}/${ctx.chain.fault.message}`)
  const anchor = anchorText(ctx.anchor)
  const access = accessRoleOf(ctx.chain.docs.at(-1) ?? null, ctx.anchor)
  const list = await readRegular(path.join(dir, 'trust', 'revoked.json'), MAX_REVOKED)
  let revoked = null
  if (list !== null) {
    try { revoked = verifyRevoked(list, { anchor, name: ctx.name, access }) } catch (err) { throw new Error(`${dir}/trust/revoked.json: ${err.message}`) }
  }
  return { anchor, name: ctx.name, id: `${anchor}:${ctx.name}`, access, revoked: revoked?.hashes ?? null, revokedIssuedMs: revoked?.issuedMs ?? -Infinity }
}

const queryOf = url => { const q = url.indexOf('?'); return q < 0 ? null : new URLSearchParams(url.slice(q + 1)) }

/** The token a request carries: the header, else the query argument of `url`. */
function tokenOf (req, url = req.url) {
  const h = req.headers[TOKEN_HEADER]
  if (typeof h === 'string') return h
  return queryOf(url)?.get(TOKEN_QUERY) ?? undefined
}

function sendJson (res, status, value) {
  const buf = Buffer.from(JSON.stringify(value) + '\n')
  res.writeHead(status, ['Content-Type', 'application/json', 'Content-Length', String(buf.length), 'Cache-Control', 'no-store', ...CORS])
  res.end(buf)
}

/**
 * Which holder each token went to. A token is its tree and expiry second
 * under the secret, so two holders given tokens in the same second would get
 * the same one: the exchange gives the later one an earlier second instead
 * (at most a quarter of the lifetime earlier), so that an expiry names one
 * holder and a log line can say whose token a request carried.
 */
function holderBook () {
  const byExpiry = new Map() // `${tree} ${expires}` → Set of holders
  return {
    /** The expiry to mint for `holder`: `want`, or the nearest earlier second no other holder has. */
    take (tree, want, holder, floor, nowS) {
      for (const [k, v] of byExpiry) if (v.until < nowS) byExpiry.delete(k)
      for (let e = want; e >= floor; e--) {
        const s = byExpiry.get(`${tree} ${e}`)
        if (!s || (s.holders.size === 1 && s.holders.has(holder))) {
          byExpiry.set(`${tree} ${e}`, { holders: new Set([holder]), until: e })
          return e
        }
      }
      const k = `${tree} ${want}` // every second taken: shared, and the log says so
      if (!byExpiry.has(k)) byExpiry.set(k, { holders: new Set(), until: want })
      byExpiry.get(k).holders.add(holder)
      return want
    },
    /** The holders of a token of `tree` expiring at `expires` ('-' when unknown: minted elsewhere, or before a restart). */
    of (tree, expires) { const s = byExpiry.get(`${tree} ${expires}`); return s ? [...s.holders].join('|') : '-' }
  }
}

/** The tree a token request is for: the one its grant names, else (one tree) that one, for the verifier's own refusal. */
function entryFor (trees, body) {
  let g = null
  try { g = decodeTokenRequest(body).grant } catch {}
  const e = g && trees.get(`${g.anchor}:${g.name}`)
  return e ?? (trees.size === 1 || !g ? trees.values().next().value : null)
}

/**
 * Where the gate learns a tree's state: a published folder (gatedTree, read
 * at once: `rotree serve --grants`, `rotree token-server`), or anything that
 * loads the same state (`rotree gateway --grants`: the tree it verified from
 * its mirrors, gateway/edge-gate.js), read when a token is first asked for
 * and again at most a minute after, as a folder's is.
 * @typedef {{ key: string, label: string, load: () => Promise<object> }} TreeSource
 *   load: the tree's state as gatedTree gives it ({ anchor, name, id, access, revoked, revokedIssuedMs });
 *   key: what token(req, res, key) names it by
 */

/**
 * @param {{ dir?: string, dirs?: string[], sources?: TreeSource[], secret: string, ttlS?: number, log?: { error?: Function, info?: Function } | null,
 *   accessLog?: ((line: string) => void) | null, now?: () => number }} o
 *   dirs: the published folders whose trees this edge gates (dir: one); sources: other trees (TreeSource);
 *   accessLog: one line per gated request
 */
export async function createGate ({ dir, dirs = dir === undefined ? [] : [dir], sources = [], now = Date.now, ...o }) {
  const trees = new Map() // a folder's tree id, or a source's key → { label, load, tree, checkedAt, loading }
  for (const d of dirs) {
    const tree = await gatedTree(d)
    if (trees.has(tree.id)) throw new Error(`${d} publishes ${tree.id}, as ${trees.get(tree.id).label} does`)
    trees.set(tree.id, { label: d, load: () => gatedTree(d), tree, checkedAt: now(), loading: null })
  }
  return gateOver(trees, { sources, now, ...o })
}

/** createGate for sources only (rotree gateway --grants): nothing to read before the first token request. */
export function createSourceGate (o) { return gateOver(new Map(), o) }

function gateOver (trees, { sources = [], secret, ttlS = TOKEN_TTL_S, log = null, accessLog = null, now = Date.now }) {
  for (const s of sources) trees.set(s.key, { label: s.label, load: s.load, tree: null, checkedAt: -Infinity, loading: null })
  const first = trees.values().next().value
  const seen = new Map() // nonces of accepted token requests (verifyTokenRequest)
  const holders = holderBook()
  async function current (entry) {
    if (entry.tree === null || now() - entry.checkedAt > TREE_RECHECK_MS) {
      entry.loading ??= entry.load().finally(() => { entry.loading = null })
      const t = await entry.loading
      // a revocation list older than one already seen (or gone) would bring revoked grants back: no tokens until fixed
      if (entry.tree !== null && t.revokedIssuedMs < entry.tree.revokedIssuedMs) throw new Error(`${entry.label}/trust/revoked.json is older than the one this edge read before (or gone): refusing every token request until it is restored`)
      entry.tree = t
      entry.checkedAt = now()
    }
    return entry.tree
  }
  const tokenExpiry = t => t.slice(t.indexOf(',') + 1)

  /** One access-log line: time, client, method, path (never the query: it may hold a token), status, the token's holder. */
  const accessLine = (remote, method, path, status, tree, token, verdict) =>
    `${new Date(now()).toISOString()} ${remote ?? '-'} ${method} ${path} ${status} holder=${verdict === 'ok' ? holders.of(tree, tokenExpiry(token)) : '-'} token=${verdict}`

  /** The access-log line of `req`, written once its answer is out. */
  function logLine (req, res, tree, token, verdict) {
    if (!accessLog) return
    const path = req.url.split('?')[0]
    res.once('finish', () => accessLog(accessLine(req.socket.remoteAddress, req.method, path, res.statusCode, tree, token, verdict)))
  }

  /** GET|HEAD /h/… of the first tree: on to `next` with a valid token, a 403 without. */
  function blob (req, res, next) {
    const token = tokenOf(req)
    const verdict = checkToken(token, { secret, tree: first.tree.id, nowMs: now() })
    logLine(req, res, first.tree.id, token, verdict)
    if (verdict !== 'ok') return sendStatus(res, 403, verdict === 'expired' ? EXPIRED : REFUSED)
    const writeHead = res.writeHead
    res.writeHead = function (status, headers) {
      return writeHead.call(this, status, Array.isArray(headers) ? privately(headers) : headers)
    }
    next(req, res)
  }

  /**
   * GET /.rotree/check?tree=<anchor>:<name>: 204 when the request carries a
   * valid token for that tree, else 403. For an edge that cannot check the
   * MD5 itself and asks here per blob (Caddy's forward_auth, docs/DEPLOY.md):
   * the token from X-Rotree-Token, else from the query of X-Forwarded-Uri.
   */
  function check (req, res) {
    const id = queryOf(req.url)?.get('tree') ?? ''
    const fwd = req.headers['x-forwarded-uri']
    const token = tokenOf(req, typeof fwd === 'string' ? fwd : '')
    const verdict = trees.has(id) ? checkToken(token, { secret, tree: id, nowMs: now() }) : 'bad'
    logLine({ url: typeof fwd === 'string' ? fwd : req.url, method: req.headers['x-forwarded-method'] ?? req.method, socket: req.socket }, res, id, token, verdict)
    if (verdict !== 'ok') return sendStatus(res, 403, verdict === 'expired' ? EXPIRED : trees.has(id) ? REFUSED : `this edge gates no tree ${id.slice(0, 200)}\n`)
    res.writeHead(204, ['Cache-Control', 'no-store'])
    res.end()
  }

  /**
   * Does `req` carry a valid token for tree `id` (`<anchor>:<name>`)? Its
   * verdict, and when it does, the holder the exchange gave it to ('-' when
   * unknown: minted elsewhere, or before a restart). For an edge that logs
   * in its own format (rotree gateway --grants).
   * @returns {{ verdict: 'ok'|'expired'|'bad', holder: string }}
   */
  function admit (req, id) {
    const token = tokenOf(req)
    const verdict = checkToken(token, { secret, tree: id, nowMs: now() })
    return { verdict, holder: verdict === 'ok' ? holders.of(id, tokenExpiry(token)) : '-' }
  }

  /**
   * For serve's fast front (fast-front.js): does token `value` (from a blob
   * request's query) admit a request for the first tree? When it does, the
   * request's access-log line is written (status 200, as blob() writes it
   * once its answer is out) and true returned; otherwise false, and the
   * request goes to blob() for its refusal. `sock` and `hex` (the blob's
   * name) are read only for the log line.
   */
  function fastAdmit (value, sock, hex) {
    if (checkToken(value, { secret, tree: first.tree.id, nowMs: now() }) !== 'ok') return false
    if (accessLog) accessLog(accessLine(sock.remoteAddress, 'GET', '/h/' + hex, 200, first.tree.id, value, 'ok'))
    return true
  }

  const token = exchange({ trees, current, seen, holders, secret, ttlS, log, now })

  return { blob, check, token, admit, fastAdmit, privately, tree: () => first.tree, trees: () => [...trees.values()].map(e => e.tree).filter(t => t !== null) }
}

/**
 * POST /.rotree/token: a grant and a signed request in, a token out (or 403 ROTREE_NO_ACCESS).
 * `key`: the tree asked (a source's key); without it, the tree the grant names.
 */
function exchange ({ trees, current, seen, holders, secret, ttlS, log, now }) {
  return function token (req, res, key) {
    const parts = []
    let size = 0
    req.on('data', c => {
      size += c.length
      if (size > MAX_BODY) { sendJson(res, 413, { code: 'ROTREE_TOO_LARGE', message: `a token request is at most ${MAX_BODY} bytes` }); req.destroy() } else parts.push(c)
    })
    req.on('end', async () => {
      if (res.headersSent) return
      try {
        const body = Buffer.concat(parts)
        const entry = key === undefined ? entryFor(trees, body) : trees.get(key)
        if (!entry) return sendJson(res, 403, { code: 'ROTREE_NO_ACCESS', message: 'the grant is for a tree this edge does not gate' })
        const t = await current(entry)
        const nowMs = now()
        const v = verifyTokenRequest(body, { anchor: t.anchor, name: t.name, access: t.access, now: nowMs, seen, revoked: t.revoked })
        const nowS = Math.floor(nowMs / 1000)
        const want = Math.min(nowS + ttlS, Math.floor(v.expiresMs / 1000))
        const expires = holders.take(t.id, want, v.holder, Math.max(nowS + 1, want - Math.ceil(ttlS / 4)), nowS)
        log?.info?.(`rotree: token for ${t.id} to holder ${v.holder}, expires ${expires}`)
        sendJson(res, 200, { token: mintToken({ secret, tree: t.id, expires }), expires: new Date(expires * 1000).toISOString(), holder: v.holder, header: 'X-Rotree-Token', query: TOKEN_QUERY })
      } catch (err) {
        if (err.code === 'ROTREE_NO_ACCESS') return sendJson(res, 403, { code: err.code, message: err.message })
        log?.error?.(`rotree: token: ${err.message}`)
        sendJson(res, 500, { code: 'ROTREE_INTERNAL', message: 'the edge could not check the request' })
      }
    })
    req.on('error', () => res.destroy())
  }
}

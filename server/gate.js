// A gated `rotree serve` (docs/FORMAT.md §12.11): blobs only to requests with
// a valid edge token, and POST /.rotree/token, where a grant's holder trades
// its grant and a signed, fresh request for a token. Whether the grant and
// the request admit the holder is decided by rotree-client/grant's verifier
// alone; this module finds the tree's state and mints.
//
// The tree is the one OUT publishes: the anchor and name its fsinfo.json
// names, with the trust documents in OUT/trust walked from that anchor as a
// reader walks them (the access role of the newest, or the single key).
import { verifyTokenRequest, accessRoleOf, MAX_GRANT } from 'rotree-client/grant'
import { anchorText } from 'rotree-client/trust'
import { readFsinfoFile } from '../lib/published/publish.js'
import { decodeRoot, rootContext } from '../lib/published/signed-roots.js'
import { CORS, sendStatus } from './blob-route.js'
import { mintToken, checkToken, TOKEN_HEADER, TOKEN_QUERY, TOKEN_TTL_S } from './edge-token.js'

const IMMUTABLE = 'public, max-age=31536000, immutable'
// a cache in front must not hand a gated blob to a request without a token
const PRIVATE = 'private, max-age=31536000, immutable'
const MAX_BODY = MAX_GRANT + 1024
const TREE_RECHECK_MS = 60_000

/** The tree OUT publishes, as the gate checks grants against it. */
export async function gatedTree (dir) {
  const bytes = await readFsinfoFile(dir)
  if (bytes === null) throw new Error(`${dir} has no fsinfo.json`)
  const current = decodeRoot(bytes)
  const ctx = await rootContext(dir, { current })
  if (ctx.chain.fault) throw new Error(`${dir}/${ctx.chain.fault.message}`)
  const anchor = anchorText(ctx.anchor)
  return { anchor, name: ctx.name, id: `${anchor}:${ctx.name}`, access: accessRoleOf(ctx.chain.docs.at(-1) ?? null, ctx.anchor) }
}

/** The token a blob request carries: the header, else the query argument. */
function tokenOf (req) {
  const h = req.headers[TOKEN_HEADER]
  if (typeof h === 'string') return h
  const q = req.url.indexOf('?')
  if (q < 0) return undefined
  return new URLSearchParams(req.url.slice(q + 1)).get(TOKEN_QUERY) ?? undefined
}

function sendJson (res, status, value) {
  const buf = Buffer.from(JSON.stringify(value) + '\n')
  res.writeHead(status, ['Content-Type', 'application/json', 'Content-Length', String(buf.length), 'Cache-Control', 'no-store', ...CORS])
  res.end(buf)
}

/**
 * @param {{ dir: string, secret: string, ttlS?: number, log?: { error?: Function } | null, now?: () => number }} o
 */
export async function createGate ({ dir, secret, ttlS = TOKEN_TTL_S, log = null, now = Date.now }) {
  let tree = await gatedTree(dir)
  let checkedAt = now()
  const seen = new Map() // nonces of accepted token requests (verifyTokenRequest)
  async function current () {
    if (now() - checkedAt > TREE_RECHECK_MS) { tree = await gatedTree(dir); checkedAt = now() }
    return tree
  }

  /** GET|HEAD /h/…: on to `next` with a valid token, a 403 without. */
  function blob (req, res, next) {
    const verdict = checkToken(tokenOf(req), { secret, tree: tree.id, nowMs: now() })
    if (verdict !== 'ok') return sendStatus(res, 403, verdict === 'expired' ? 'edge token expired: ask for a new one at /.rotree/token\n' : 'this tree is gated: an edge token is required (docs/FORMAT.md §12.11)\n')
    const writeHead = res.writeHead
    res.writeHead = function (status, headers) {
      const i = Array.isArray(headers) ? headers.indexOf(IMMUTABLE) : -1
      if (i >= 0) { headers = [...headers]; headers[i] = PRIVATE }
      return writeHead.call(this, status, headers)
    }
    next(req, res)
  }

  /** POST /.rotree/token: a grant and a signed request in, a token out (or 403 ROTREE_NO_ACCESS). */
  function token (req, res) {
    const parts = []
    let size = 0
    req.on('data', c => {
      size += c.length
      if (size > MAX_BODY) { sendJson(res, 413, { code: 'ROTREE_TOO_LARGE', message: `a token request is at most ${MAX_BODY} bytes` }); req.destroy() } else parts.push(c)
    })
    req.on('end', async () => {
      if (res.headersSent) return
      try {
        const t = await current()
        const nowMs = now()
        const v = verifyTokenRequest(Buffer.concat(parts), { anchor: t.anchor, name: t.name, access: t.access, now: nowMs, seen })
        const expires = Math.min(Math.floor(nowMs / 1000) + ttlS, Math.floor(v.expiresMs / 1000))
        sendJson(res, 200, { token: mintToken({ secret, tree: t.id, expires }), expires: new Date(expires * 1000).toISOString(), holder: v.holder, header: 'X-Rotree-Token', query: TOKEN_QUERY })
      } catch (err) {
        if (err.code === 'ROTREE_NO_ACCESS') return sendJson(res, 403, { code: err.code, message: err.message })
        log?.error?.(`rotree serve: token: ${err.message}`)
        sendJson(res, 500, { code: 'ROTREE_INTERNAL', message: 'the edge could not check the request' })
      }
    })
    req.on('error', () => res.destroy())
  }

  return { blob, token, tree: () => tree }
}

// `rotree serve OUT`: a static server for a published folder. It does no
// cryptography; readers verify everything (docs/TRUST.md).
//
// One node:http listener dispatches on the URL before any framework runs:
// GET/HEAD /h/…, /fsinfo.json, /trust/<seq>.json, /history/(index|<seq>).json and the log
// (/log/checkpoint, /log/fsinfo.proof, /log/tile/…: docs/FORMAT.md §13) go to the hot handlers,
// the rest to Express. In front of node:http, a lean HTTP/1.1 front answers
// a plain GET of a cached blob itself (fast-front.js; on a gated tree, one
// with a valid edge token in its query).

import http from 'node:http'
import { listen as listenOn, gracefulClose } from './lifecycle.js'
import { stat } from 'node:fs/promises'
import { resolve } from 'node:path'
import { createApp } from './app.js'
import { createBlobRoute } from './blob-route.js'
import { createFsinfoRoute, createTrustRoute, createHistoryRoute } from './fsinfo-route.js'
import { createLogRoute } from './log-route.js'
import { TOKEN_PATH } from './edge-token.js'
import { installFastFront } from './fast-front.js'

/**
 * @param {object} opts
 * @param {string} opts.dir published folder holding fsinfo.json and h/
 * @param {string | null} [opts.webRoot] folder served at / (the web app), or null
 * @param {number} [opts.fsinfoMaxAge] seconds for fsinfo.json's Cache-Control max-age
 * @param {number} [opts.blobCacheBytes] bytes of small blobs kept in memory (0 disables)
 * @param {{ info?: Function, error?: Function } | null} [opts.log] e.g. console
 * @param {{ secret: string, ttlS?: number } | null} [opts.gate] a gated tree (FORMAT.md §12.11): blobs only with an edge token, and POST /.rotree/token
 */
export async function createRotreeServer ({
  dir,
  webRoot = null,
  fsinfoMaxAge = 30,
  blobCacheBytes = 64 * 1024 * 1024,
  log = null,
  gate = null
} = {}) {
  if (typeof dir !== 'string' || dir === '') throw new TypeError('createRotreeServer: dir is required')
  dir = resolve(dir)
  // Fail at start with a clear message rather than 404 on every request.
  if (!(await stat(dir)).isDirectory()) throw new Error(`rotree serve: ${dir} is not a directory`)
  if (webRoot !== null) webRoot = resolve(webRoot)

  const blob = createBlobRoute({ dir, cacheBytes: blobCacheBytes, log })
  const fsinfo = createFsinfoRoute({ dir, maxAge: fsinfoMaxAge, log })
  const trust = createTrustRoute({ dir, maxAge: fsinfoMaxAge, log })
  const history = createHistoryRoute({ dir, maxAge: fsinfoMaxAge, log })
  const tlog = createLogRoute({ dir, maxAge: fsinfoMaxAge, log })
  const app = createApp({ webRoot, log })
  const gated = gate === null ? null : await (await import('./gate.js')).createGate({ dir, ...gate, log })

  function handler (req, res) {
    const m = req.method
    if (m === 'GET' || m === 'HEAD') {
      const url = req.url
      if (url.startsWith('/h/')) return gated ? gated.blob(req, res, blob) : blob(req, res)
      if (url === '/fsinfo.json' || url.startsWith('/fsinfo.json?')) return fsinfo(req, res)
      if (url.startsWith('/trust/') && trust.matches(url)) return trust(req, res)
      if (url.startsWith('/history/') && history.matches(url)) return history(req, res)
      if (url.startsWith('/log/') && tlog.matches(url)) return tlog(req, res)
    }
    if (gated && m === 'POST' && req.url === TOKEN_PATH) return gated.token(req, res)
    app(req, res)
  }

  const server = http.createServer(handler)
  // Readers fetch many blobs in a row: keep their connections longer than
  // Node's 5 s default. headersTimeout (60 s) stays above it.
  server.keepAliveTimeout = 30_000
  // on a gated tree the front answers only requests whose query token the gate admits (and logs)
  const fast = installFastFront(server, {
    cached: blob.cached,
    gate: gated && { admit: gated.fastAdmit, headers: gated.privately }
  })

  async function listen ({ port = 8080, host = '127.0.0.1' } = {}) {
    const r = await listenOn(server, { port, host })
    log?.info?.(`rotree serve: ${dir} at ${r.url}`)
    return r
  }

  const closeHttp = gracefulClose(server)
  const close = ({ timeoutMs = 5000 } = {}) => {
    fast.close(timeoutMs)
    return closeHttp({ timeoutMs })
  }

  return { handler, app, listen, close, server }
}

// `rotree serve OUT`: a static server for a published folder. It does no
// cryptography; readers verify everything (DESIGN.md "Trust rules").
//
// One node:http listener dispatches on the URL before any framework runs:
// GET/HEAD /h/… and /fsinfo.json go to the hot handlers, the rest to Express.

import http from 'node:http'
import { stat } from 'node:fs/promises'
import { resolve } from 'node:path'
import { createApp } from './app.js'
import { createBlobRoute } from './blob-route.js'
import { createFsinfoRoute } from './fsinfo-route.js'

/**
 * @param {object} opts
 * @param {string} opts.dir published folder holding fsinfo.json and h/
 * @param {string | null} [opts.webRoot] folder served at / (the web app), or null
 * @param {number} [opts.fsinfoMaxAge] seconds for fsinfo.json's Cache-Control max-age
 * @param {number} [opts.blobCacheBytes] bytes of small blobs kept in memory (0 disables)
 * @param {{ info?: Function, error?: Function } | null} [opts.log] e.g. console
 */
export async function createRotreeServer ({
  dir,
  webRoot = null,
  fsinfoMaxAge = 30,
  blobCacheBytes = 64 * 1024 * 1024,
  log = null
} = {}) {
  if (typeof dir !== 'string' || dir === '') throw new TypeError('createRotreeServer: dir is required')
  dir = resolve(dir)
  // Fail at start with a clear message rather than 404 on every request.
  if (!(await stat(dir)).isDirectory()) throw new Error(`rotree serve: ${dir} is not a directory`)
  if (webRoot !== null) webRoot = resolve(webRoot)

  const blob = createBlobRoute({ dir, cacheBytes: blobCacheBytes, log })
  const fsinfo = createFsinfoRoute({ dir, maxAge: fsinfoMaxAge, log })
  const app = createApp({ webRoot, log })

  function handler (req, res) {
    const m = req.method
    if (m === 'GET' || m === 'HEAD') {
      const url = req.url
      if (url.startsWith('/h/')) return blob(req, res)
      if (url === '/fsinfo.json' || url.startsWith('/fsinfo.json?')) return fsinfo(req, res)
    }
    app(req, res)
  }

  const server = http.createServer(handler)
  // Readers fetch many blobs in a row: keep their connections longer than
  // Node's 5 s default. headersTimeout (60 s) stays above it.
  server.keepAliveTimeout = 30_000

  function listen ({ port = 8080, host = '127.0.0.1' } = {}) {
    return new Promise((resolve, reject) => {
      server.once('error', reject)
      server.listen(port, host, () => {
        server.off('error', reject)
        const a = server.address()
        const h = a.family === 'IPv6' || a.family === 6 ? `[${a.address}]` : a.address
        // The WHATWG form of an origin URL ends in '/', like a mirror URL does.
        const url = `http://${h}:${a.port}/`
        log?.info?.(`rotree serve: ${dir} at ${url}`)
        resolve({ url, port: a.port, host: a.address })
      })
    })
  }

  let closing = null
  function close ({ timeoutMs = 5000 } = {}) {
    closing ??= new Promise((resolve, reject) => {
      // Stop accepting; idle keep-alive sockets close now, busy ones as soon as
      // their response ends (the sweep), and whatever is left at the deadline
      // is cut so a stalled client cannot hold shutdown forever.
      const sweep = setInterval(() => server.closeIdleConnections(), 50)
      const deadline = setTimeout(() => server.closeAllConnections(), timeoutMs)
      server.close((err) => {
        clearInterval(sweep)
        clearTimeout(deadline)
        if (err && err.code !== 'ERR_SERVER_NOT_RUNNING') reject(err)
        else resolve()
      })
      server.closeIdleConnections()
    })
    return closing
  }

  return { handler, app, listen, close, server }
}

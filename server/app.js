// The Express app for everything off the hot path: CORS preflight, 405s on the
// blob and fsinfo paths, the optional web app, and 404. index.js sends GET and
// HEAD for /h/… and /fsinfo.json around this app (DESIGN.md P1: no per-request
// framework work there), so those never reach it.

import { STATUS_CODES } from 'node:http'
import express from 'express'

const BLOB_PATH = /^\/h\/[0-9a-f]{64}$/
const ALLOW = 'GET, HEAD, OPTIONS'

/**
 * @param {{ webRoot?: string | null, log?: { error?: Function } | null }} [opts]
 *   webRoot: a folder served at / (the browser app); null serves nothing there.
 */
export function createApp ({ webRoot = null, log = null } = {}) {
  const app = express()
  app.disable('x-powered-by')
  app.disable('etag') // our own bodies are tiny; express.static sets its own

  app.use((req, res, next) => {
    res.setHeader('Access-Control-Allow-Origin', '*')
    if (req.method !== 'OPTIONS') return next()
    // Preflight for cross-origin Range / conditional reads of any path.
    res.set({
      'Access-Control-Allow-Methods': ALLOW,
      'Access-Control-Allow-Headers': 'Range, If-None-Match',
      'Access-Control-Max-Age': '86400',
      Allow: ALLOW
    })
    res.status(204).end()
  })

  app.all([BLOB_PATH, '/fsinfo.json'], (req, res, next) => {
    if (req.method === 'GET' || req.method === 'HEAD') return next()
    res.set('Allow', ALLOW).status(405).type('text/plain').send('method not allowed')
  })

  if (webRoot !== null) app.use(express.static(webRoot, { dotfiles: 'ignore', fallthrough: true }))

  app.use((req, res) => {
    res.status(404).type('text/plain').send('not found')
  })

  // Express 5 hands errors here (a malformed %-escape in a static path, say):
  // a short text body and the error's own 4xx status, never a stack trace.
  app.use((err, req, res, next) => {
    const status = Number.isInteger(err.status) && err.status >= 400 && err.status < 600 ? err.status : 500
    if (status >= 500) log?.error?.(`rotree serve: ${req.method} ${req.url}: ${err.message}`)
    if (res.headersSent) return res.destroy()
    res.status(status).type('text/plain').send(STATUS_CODES[status]?.toLowerCase() ?? 'error')
  })

  return app
}

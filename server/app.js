// The Express app for everything off the hot path: CORS preflight, 405s on the
// blob and fsinfo paths, the optional web app, and 404. index.js sends GET and
// HEAD for /h/… and /fsinfo.json around this app (docs/BENCHMARKS.md P1: no per-request
// framework work there), so those never reach it. Every error answer here is
// Cache-Control: no-store.
//
// With a web root, a request whose Host is a key's own origin (docs/WEB.md)
// is given only the files that origin needs.

import { STATUS_CODES } from 'node:http'
import express from 'express'
import { keyOfHost } from '../web/origins.js'

const BLOB_PATH = /^\/h\/[0-9a-f]{64}$/
const ALLOW = 'GET, HEAD, OPTIONS'
// a gated tree's token exchange (FORMAT.md §12.11): a browser's JSON POST from another origin is preflighted
const TOKEN_PATH = '/.rotree/token'
const TOKEN_ALLOW = 'POST, OPTIONS'
// What a site's own origin <key label>.<host> is served (docs/WEB.md "One
// origin per site"): its bootstrap and the Service Worker with its imports.
// Not the app, not site.html: nothing there may act on another key's behalf.
const SITE_ORIGIN_FILES = new Set(['/site-boot.html', '/site-boot.js', '/register.js', '/sw.js', '/rotree-client.js',
  '/origins.js', '/mime.js', '/explain.js', '/redirects.js', '/grant.js', '/style.css', '/site.css', '/favicon.svg'])

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
    // Preflight for cross-origin Range / conditional reads of any path, and
    // for the token exchange's POST of a JSON body (answered here whether or
    // not this server gates its tree: without --grants the POST is a 404)
    const token = req.path === TOKEN_PATH
    res.set({
      'Access-Control-Allow-Methods': token ? TOKEN_ALLOW : ALLOW,
      'Access-Control-Allow-Headers': token ? 'Content-Type' : 'Range, If-None-Match, X-Rotree-Token', // the edge token of a gated tree (FORMAT.md §12.11)
      'Access-Control-Max-Age': '86400',
      Allow: token ? TOKEN_ALLOW : ALLOW
    })
    res.status(204).end()
  })

  app.all([BLOB_PATH, '/fsinfo.json'], (req, res, next) => {
    if (req.method === 'GET' || req.method === 'HEAD') return next()
    res.set({ Allow: ALLOW, 'Cache-Control': 'no-store' }).status(405).type('text/plain').send('method not allowed')
  })

  if (webRoot !== null) {
    const files = express.static(webRoot, { dotfiles: 'ignore', fallthrough: true })
    app.use((req, res, next) => {
      // each origin its own agent cluster: no document.domain to merge a site's origin with the app's
      res.setHeader('Origin-Agent-Cluster', '?1')
      res.setHeader('X-Content-Type-Options', 'nosniff')
      const host = String(req.headers.host ?? '')
      if (keyOfHost(host.replace(/:\d+$/, '')) === null) return files(req, res, next) // the app's origin
      if (!SITE_ORIGIN_FILES.has(req.path)) return next()
      // the bootstrap may be framed by the app's origin (the host without the key's label) only
      const appHost = host.slice(host.indexOf('.') + 1)
      if (req.path === '/site-boot.html' && /^[a-z0-9.-]+(:\d+)?$/i.test(appHost)) res.setHeader('Content-Security-Policy', `frame-ancestors ${appHost}`)
      // opened as a window (a private site's identity picker, docs/WEB.md), no other window keeps a handle on it
      if (req.path === '/site-boot.html') res.setHeader('Cross-Origin-Opener-Policy', 'same-origin')
      files(req, res, next)
    })
  }

  // a 404 is never stored by a cache in front (docs/DEPLOY.md "A CDN in front")
  app.use((req, res) => {
    res.set('Cache-Control', 'no-store').status(404).type('text/plain').send('not found')
  })

  // Express 5 hands errors here (a malformed %-escape in a static path, say):
  // a short text body and the error's own 4xx status, never a stack trace.
  app.use((err, req, res, next) => {
    const status = Number.isInteger(err.status) && err.status >= 400 && err.status < 600 ? err.status : 500
    if (status >= 500) log?.error?.(`rotree serve: ${req.method} ${req.url}: ${err.message}`)
    if (res.headersSent) return res.destroy()
    res.set('Cache-Control', 'no-store').status(status).type('text/plain').send(STATUS_CODES[status]?.toLowerCase() ?? 'error')
  })

  return app
}

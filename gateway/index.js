// The gateway: a verified view of one or more trees for plain HTTP clients,
// WebDAV clients and Express apps (issue 3). `gateway(opts)` is a middleware,
// `(req, res, next)`, that Express mounts with app.use('/prefix', gateway(…))
// and that `rotree gateway` runs directly under node:http (server.js), so the
// hot path pays for no framework. Every byte it sends went through verify.js;
// every status follows the trust rules (http-status.js).
//
//   GET|HEAD /path          file (ranges, 304s), or a directory: 301 to /path/,
//                           index.html, or an HTML/JSON listing
//   GET /.well-known/rotree/status   JSON: each tree's root, seq, expiry, mirrors, caches
//   OPTIONS, PROPFIND       read-only WebDAV (webdav.js); other methods 405
//   /NAME/…                 the tree mounted as NAME (opts.trees)
import { NotADirectoryError } from 'rotree-client/errors'
import { parseRequestPath, encodePath } from './paths.js'
import { sendError, sendText } from './http-status.js'
import { Mount } from './mount.js'
import { openDiskCache } from './disk-cache.js'
import { resolve, entriesOf, fileMeta, dirEtag } from './tree-access.js'
import { sendFile } from './files.js'
import { sendGenerated } from './body.js'
import { etagMatches } from '../server/blob-route.js'
import { wantsJson, htmlListing, jsonListing } from './listing.js'
import {
  DAV_HEADERS, DAV_ALLOW, depthOf, readBody, parsePropfind, davResponse,
  MULTISTATUS_OPEN, MULTISTATUS_CLOSE, XML_TYPE, FINITE_DEPTH_BODY
} from './webdav.js'

export { statusOf } from './http-status.js'
export { openDiskCache, DiskCache } from './disk-cache.js'
export { createGatewayServer } from './server.js'

const NAME_RE = /^[A-Za-z0-9_~-][A-Za-z0-9._~-]*$/
const STATUS_PATH = ['.well-known', 'rotree', 'status']
const ABSENT = new Set(['ROTREE_NOT_FOUND', 'ROTREE_NOT_A_DIRECTORY'])

/**
 * @param {object} opts
 * @param {string|import('rotree-client').Tree} [opts.tree] the tree served at the mount's root
 * @param {Record<string, string|import('rotree-client').Tree>} [opts.trees] more trees, each under /NAME/
 * @param {string[]} [opts.mirrors] more mirrors of opts.tree (address form)
 * @param {string|null} [opts.stateDir] reader state (rollback protection); default as the CLI's
 * @param {number} [opts.timeoutMs=30000] per upstream request
 * @param {number} [opts.concurrency=16] upstream blob fetches at once, per tree
 * @param {number} [opts.mirrorPenaltyMs=30000] how long a failed mirror is asked last
 * @param {number} [opts.cacheBytes=67108864] verified blobs kept in memory, per tree
 * @param {string|null} [opts.cacheDir=null] on-disk verified-blob cache (level); null: none
 * @param {number} [opts.cacheSize=1073741824] bytes the disk cache may hold
 * @param {number} [opts.refreshSeconds=60] re-check fsinfo.json this often (0: only on expiry)
 * @param {number} [opts.maxAge] upper bound of Cache-Control max-age (default refreshSeconds, at least 1)
 * @param {boolean} [opts.index=true] serve a directory's index.html instead of its listing
 * @param {object} [opts.treeOptions] anything else for new Tree() (graceMs, skewMs, readAhead, …)
 * @param {{ info?: Function, error?: Function } | null} [opts.log]
 * @returns {((req, res, next?) => void) & { ready: Promise<void>, close: () => Promise<void>, status: () => object, gateway: Gateway }}
 */
export function gateway (opts) {
  const gw = new Gateway(opts)
  const mw = (req, res, next) => gw.handle(req, res, next)
  mw.ready = gw.ready
  mw.close = () => gw.close()
  mw.status = () => gw.status()
  mw.gateway = gw
  return mw
}

export class Gateway {
  constructor ({
    tree, trees = {}, mirrors = [], stateDir, timeoutMs, mirrorPenaltyMs, concurrency = 16, cacheBytes = 64 << 20,
    cacheDir = null, cacheSize = 1 << 30, refreshSeconds = 60, maxAge, index = true, treeOptions = {}, log = null
  } = {}) {
    if (tree === undefined && Object.keys(trees).length === 0) throw new TypeError('gateway: give a tree (opts.tree) or named trees (opts.trees)')
    this.log = log
    this.index = index
    this.startedAt = new Date()
    this.disk = null
    const blobCache = cacheDir === null ? undefined : {
      get: h => this.disk === null ? undefined : this.disk.get(h),
      put: (h, b) => this.disk?.put(h, b),
      delete: h => this.disk?.delete(h)
    }
    const tOpts = { timeoutMs, mirrorPenaltyMs, concurrency, cacheBytes, blobCache, ...treeOptions }
    if (stateDir !== undefined) tOpts.stateDir = stateDir
    for (const k of Object.keys(tOpts)) if (tOpts[k] === undefined) delete tOpts[k]
    const mountOpts = { treeOptions: tOpts, refreshMs: refreshSeconds * 1000, maxAgeS: Math.max(1, maxAge ?? refreshSeconds), log }
    this.root = tree === undefined ? null : new Mount('', tree, { ...mountOpts, mirrors })
    this.named = new Map()
    for (const [name, t] of Object.entries(trees)) {
      if (!NAME_RE.test(name) || name === '.well-known') throw new TypeError(`gateway: bad tree name ${JSON.stringify(name)} (letters, digits, . _ ~ -)`)
      this.named.set(name, new Mount(name, t, mountOpts))
    }
    this.mounts = [...(this.root ? [this.root] : []), ...this.named.values()]
    this.ready = (async () => {
      if (cacheDir !== null) this.disk = await openDiskCache(cacheDir, { maxBytes: cacheSize, log })
      // a tree whose mirrors are down still starts: its requests answer 502/504 until one is back
      await Promise.allSettled(this.mounts.map(m => m.refresh()))
    })()
    this.ready.catch(() => {}) // reported by whoever awaits it, and by requests
    this.readyDone = false
    this.ready.then(() => { this.readyDone = true }, () => {})
  }

  handle (req, res, next) {
    const p = this.readyDone ? this._route(req, res) : this.ready.then(() => this._route(req, res))
    p.catch(err => sendError(res, err, { head: req.method === 'HEAD', log: this.log }))
  }

  async _route (req, res) {
    const method = req.method
    const head = method === 'HEAD'
    if (method === 'OPTIONS' && req.url === '*') { // RFC 9110 §9.3.7: the server as a whole
      res.writeHead(200, [...DAV_HEADERS, 'Content-Length', '0'])
      return res.end()
    }
    const p = parseRequestPath(req.url) // throws BadPathError: 400/414
    const segs = p.segments
    let slash = p.slash
    const base = typeof req.baseUrl === 'string' ? req.baseUrl : ''
    if (segs.length === 0 && base !== '') slash = originalEndsWithSlash(req) // Express: '/downloads' arrives as '/'
    let mount = this.root
    let rel = segs
    let mountSegs = []
    if (segs.length > 0 && this.named.has(segs[0])) {
      mount = this.named.get(segs[0]); rel = segs.slice(1); mountSegs = [segs[0]]
      if (rel.length === 0) slash = p.slash
    }
    const ctx = { req, res, head, mount, rel, mountSegs, base, slash, query: p.query, segs }

    if (method === 'GET' || head) {
      if (segs.length === 3 && segs[0] === STATUS_PATH[0] && segs[1] === STATUS_PATH[1] && segs[2] === STATUS_PATH[2]) return this._status(ctx)
      return mount === null ? this._mountList(ctx) : this._get(ctx)
    }
    if (method === 'PROPFIND') return this._propfind(ctx)
    if (method === 'OPTIONS') {
      res.writeHead(200, [...DAV_HEADERS, 'Content-Length', '0'])
      return res.end()
    }
    // a read-only tree: refuse, and do not read an upload we will never use
    const hasBody = req.headers['content-length'] > 0 || req.headers['transfer-encoding'] !== undefined
    sendText(res, 405, `405 Method Not Allowed\nthis gateway is read-only: ${String(method).slice(0, 20)} is not allowed\n`,
      { headers: ['Allow', DAV_ALLOW, ...(hasBody ? ['Connection', 'close'] : [])] })
  }

  /** The public URL path of names under this gateway (for Location and WebDAV hrefs). */
  _href (ctx, names, slash) {
    const p = ctx.base + encodePath(names, slash)
    return p.replace(/^\/{2,}/, '/') // never a protocol-relative "//host" Location
  }

  async _get (ctx) {
    const { req, res, head, mount, rel } = ctx
    const pin = await mount.current()
    let entry
    try {
      entry = await resolve(pin, rel)
    } catch (err) {
      return sendError(res, err, { head, headers: pin.headers, log: this.log })
    }
    if (entry.type !== 'dir') {
      if (ctx.slash && rel.length > 0) return sendError(res, notADir(rel), { head, headers: pin.headers })
      return sendFile(req, res, pin, entry, { log: this.log })
    }
    if (!ctx.slash) return this._redirect(ctx)
    const json = wantsJson(req)
    if (this.index && !json) {
      let idx = null
      try {
        idx = await resolve(pin, [...rel, 'index.html'])
      } catch (err) {
        if (!ABSENT.has(err.code) && err.code !== 'ROTREE_SYMLINK_LOOP') return sendError(res, err, { head, headers: pin.headers, log: this.log })
      }
      if (idx !== null && idx.type === 'file') return sendFile(req, res, pin, idx, { log: this.log, vary: true })
    }
    const etag = dirEtag(entry, json ? 'json' : 'html')
    const headers = [
      'Content-Type', json ? 'application/json; charset=utf-8' : 'text/html; charset=utf-8',
      'ETag', etag, 'Cache-Control', pin.cacheControl(), 'Vary', 'Accept', 'X-Content-Type-Options', 'nosniff', ...pin.headers
    ]
    const inm = req.headers['if-none-match']
    if (inm !== undefined && etagMatches(inm, etag)) { res.writeHead(304, headers.slice(2)); return res.end() }
    const title = this._title(ctx)
    const pieces = json ? jsonListing(title, withTargets(pin, rel, entry)) : htmlListing(title, ctx.segs.length > 0 || ctx.base !== '', withTargets(pin, rel, entry))
    return sendGenerated(req, res, 200, headers, pieces, { errorHeaders: pin.headers, log: this.log })
  }

  _title (ctx) {
    let base = ctx.base
    try { base = decodeURIComponent(base) } catch {}
    return (base + '/' + ctx.segs.map(s => s + '/').join('')).replace(/^\/{2,}/, '/')
  }

  _redirect (ctx) {
    const loc = this._href(ctx, ctx.segs, true) + ctx.query
    const body = `301 Moved Permanently\n${loc}\n`
    sendText(ctx.res, 301, body, { head: ctx.head, headers: ['Location', loc] })
  }

  /** The gateway's root when only named trees are mounted: a listing of them. */
  async _mountList (ctx) {
    const { req, res, segs } = ctx
    if (segs.length > 0) return sendText(res, 404, `404 Not Found\nno tree is mounted as ${JSON.stringify(segs[0])}\n`, { head: ctx.head })
    if (!ctx.slash) return this._redirect(ctx)
    const json = wantsJson(req)
    const items = this._mountItems()
    const headers = ['Content-Type', json ? 'application/json; charset=utf-8' : 'text/html; charset=utf-8', 'Cache-Control', 'no-cache', 'Vary', 'Accept', 'X-Content-Type-Options', 'nosniff']
    const pieces = json ? jsonListing(this._title(ctx), items) : htmlListing(this._title(ctx), ctx.base !== '', items, 'trees served by this gateway')
    return sendGenerated(req, res, 200, headers, pieces, { log: this.log })
  }

  async * _mountItems () {
    for (const [name, m] of this.named) {
      const c = m.tree.current
      const e = { name, type: 'dir', mount: true, mtime: c?.rootMtime ?? Date.now(), root: c?.root.hash ?? null, seq: c?.seq ?? null }
      yield { entry: e, target: e }
    }
  }

  async _propfind (ctx) {
    const { req, res, mount, rel } = ctx
    const depth = depthOf(req)
    if (depth === null) return sendText(res, 400, '400 Bad Request\nDepth must be 0, 1 or infinity\n')
    if (depth === 'infinity') {
      // RFC 4918 §9.1: a server may refuse; say so with the precondition element
      req.resume()
      const body = Buffer.from(FINITE_DEPTH_BODY)
      res.writeHead(403, ['Content-Type', XML_TYPE, 'Content-Length', String(body.length)])
      return res.end(body)
    }
    const text = await readBody(req)
    if (text === null) return sendText(res, 413, '413 Content Too Large\na PROPFIND body may be at most 64 KiB\n', { headers: ['Connection', 'close'] })
    const want = parsePropfind(text)
    if (want === null) return sendText(res, 400, '400 Bad Request\nthe PROPFIND body is not a DAV:propfind document this server can read\n')
    const selfName = ctx.segs.at(-1) ?? ''
    if (mount === null) {
      if (ctx.segs.length > 0) return sendText(res, 404, `404 Not Found\nno tree is mounted as ${JSON.stringify(ctx.segs[0])}\n`)
      const self = this
      const pieces = (async function * () {
        yield MULTISTATUS_OPEN
        yield davResponse(self._href(ctx, [], true), { dir: true, name: '', mtime: self.startedAt.getTime() }, want)
        if (depth === '1') {
          for await (const { entry: m } of self._mountItems()) yield davResponse(self._href(ctx, [m.name], true), { dir: true, name: m.name, mtime: m.mtime, etag: m.root && `"d-${m.root}-html"` }, want)
        }
        yield MULTISTATUS_CLOSE
      })()
      return sendGenerated(req, res, 207, ['Content-Type', XML_TYPE], pieces, { log: this.log })
    }
    const pin = await mount.current()
    let entry
    try {
      entry = await resolve(pin, rel)
    } catch (err) {
      return sendError(res, err, { headers: pin.headers, log: this.log })
    }
    const names = [...ctx.mountSegs, ...rel]
    const isDir = entry.type === 'dir'
    if (!isDir && ctx.slash && rel.length > 0) return sendError(res, notADir(rel), { headers: pin.headers })
    const self = this
    const pieces = (async function * () {
      yield MULTISTATUS_OPEN
      yield davResponse(self._href(ctx, names, isDir), davResource(entry, selfName), want)
      if (isDir && depth === '1') {
        const dirHref = self._href(ctx, names, true)
        for await (const { entry: e, target: t } of withTargets(pin, rel, entry)) {
          if (t === null) continue // WebDAV has no symlinks: leave out one that leads nowhere
          yield davResponse(dirHref + encodeURIComponent(e.name) + (t.type === 'dir' ? '/' : ''), davResource(t, e.name), want)
        }
      }
      yield MULTISTATUS_CLOSE
    })()
    return sendGenerated(req, res, 207, ['Content-Type', XML_TYPE, ...pin.headers], pieces, { errorHeaders: pin.headers, log: this.log })
  }

  _status ({ req, res, head }) {
    const body = Buffer.from(JSON.stringify(this.status(), null, 2) + '\n')
    res.writeHead(200, ['Content-Type', 'application/json; charset=utf-8', 'Cache-Control', 'no-store', 'Content-Length', String(body.length)])
    res.end(head ? undefined : body)
  }

  /** Each tree's root, sequence, expiry, mirror health and cache figures. */
  status () {
    return {
      startedAt: this.startedAt.toISOString(),
      trees: this.mounts.map(m => m.status()),
      diskCache: this.disk?.stats() ?? null
    }
  }

  async close () {
    for (const m of this.mounts) m.close()
    await this.ready.catch(() => {})
    await this.disk?.close()
  }
}

/**
 * A directory's entries with what each symlink leads to (null: nowhere, or
 * round in a loop), so a listing links a symlinked directory as "name/" and
 * WebDAV shows it as a collection.
 * @returns {AsyncGenerator<{ entry: object, target: object|null }>}
 */
async function * withTargets (pin, rel, dirEntry) {
  for await (const e of entriesOf(pin, dirEntry)) {
    if (e.type !== 'symlink') { yield { entry: e, target: e }; continue }
    let t = null
    try { t = await resolve(pin, [...rel, e.name]) } catch (err) {
      if (!ABSENT.has(err.code) && err.code !== 'ROTREE_SYMLINK_LOOP') throw err
    }
    yield { entry: e, target: t }
  }
}

function davResource (entry, name) {
  if (entry.type === 'dir') return { dir: true, name, mtime: entry.mtime, etag: dirEtag(entry, 'html') }
  const m = fileMeta(entry)
  return { dir: false, name, size: entry.size, mtime: entry.mtime, etag: m.etag, type: m.type }
}

function originalEndsWithSlash (req) {
  const u = typeof req.originalUrl === 'string' ? req.originalUrl : req.url
  const q = u.indexOf('?')
  return (q === -1 ? u : u.slice(0, q)).endsWith('/')
}

function notADir (rel) { return new NotADirectoryError(`/${rel.join('/')} is a file, not a directory`) }

// The gateway: a verified view of one or more trees for plain HTTP clients,
// WebDAV clients and Express apps. `gateway(opts)` is a middleware,
// `(req, res, next)`, that Express mounts with app.use('/prefix', gateway(…))
// and that `rotree gateway` runs directly under node:http (server.js), so the
// hot path pays for no framework. This file owns the options, the mounts and
// the routing; get.js answers GET/HEAD, webdav.js OPTIONS and PROPFIND.
//
//   GET|HEAD /path          file (ranges, 304s), or a directory: 301 to /path/,
//                           index.html, or an HTML/JSON listing (get.js)
//   GET /.well-known/rotree/status   JSON: each tree's root, seq, expiry, mirrors, caches
//   GET /.well-known/rotree/metrics  the same and the request counters, for Prometheus (metrics.js)
//   OPTIONS, PROPFIND       read-only WebDAV (webdav.js); other methods 405
//   /NAME/…                 the tree mounted as NAME (opts.trees)
//   POST [/NAME]/.rotree/token   a gated gateway (opts.grants): the tree's token exchange;
//                           its content then only with an edge token for it (edge-gate.js)
//
// Before any of it: the Host check (host-check.js, DNS rebinding). Trees do
// not wait for each other: a request waits only for the disk cache to open
// and for its own tree, never for another tree's first refresh.
import { parseRequestPath, encodePath } from './paths.js'
import { sendError, sendText } from './http-status.js'
import { Mount } from './mount.js'
import { openDiskCache } from './disk-cache.js'
import { rootRecord } from './tree-access.js'
import { serveGet } from './get.js'
import { propfind, DAV_HEADERS, DAV_ALLOW } from './webdav.js'
import { hostGuard } from './host-check.js'
import { redactDeep, redactingLog, redactText } from './redact.js'
import { Metrics, metricsText } from './metrics.js'
import { watchRequest, openAccessLog, noteTree, noteHolder } from './request-log.js'
import { gatewayGate, isTokenPath } from './edge-gate.js'

const NAME_RE = /^[A-Za-z0-9_~-][A-Za-z0-9._~-]*$/
const WELL_KNOWN = ['.well-known', 'rotree'] // + 'status' or 'metrics'

/** Can `name` be a named tree's mount (opts.trees, `--tree NAME=ADDR`)? Letters, digits, . _ ~ -, not starting with '.'. */
export function isTreeName (name) { return NAME_RE.test(name) && name !== '.well-known' }

/**
 * @param {object} opts
 * @param {string|import('rotree-client').Tree} [opts.tree] the tree served at the mount's root
 * @param {Record<string, string|import('rotree-client').Tree>} [opts.trees] more trees, each under /NAME/
 * @param {string[]} [opts.mirrors] more mirrors of opts.tree (address form)
 * @param {string|null} [opts.stateDir] reader state (rollback protection); default as the CLI's
 * @param {number} [opts.timeoutMs=30000] per upstream request
 * @param {number} [opts.concurrency=64] upstream blob fetches at once, per tree (the client library's default)
 * @param {number} [opts.mirrorPenaltyMs=30000] how long a failed mirror is asked last
 * @param {number} [opts.cacheBytes=67108864] verified blobs kept in memory, per tree
 * @param {string|null} [opts.cacheDir=null] on-disk verified-blob cache (level); null: none
 * @param {number} [opts.cacheSize=1073741824] bytes the disk cache may hold
 * @param {number} [opts.refreshSeconds=60] re-check fsinfo.json this often (0: only on expiry)
 * @param {number} [opts.maxAge] upper bound of Cache-Control max-age (default refreshSeconds, at least 1)
 * @param {boolean} [opts.index=true] serve a directory's index.html instead of its listing
 * @param {boolean} [opts.prefetch=true] after a listing, fetch what a client walking the listings asks for next
 *   (the directory's small files and next directories, readahead.js)
 * @param {boolean} [opts.sandbox=true] send HTML, SVG and XML with CSP sandbox (sandbox.js)
 * @param {string[]|null} [opts.allowHosts=null] Host names served besides the loopback ones (host-check.js); ['*']: any
 * @param {object} [opts.treeOptions] anything else for new Tree() (graceMs, skewMs, readAhead, …)
 * @param {{ info?: Function, error?: Function } | null} [opts.log] root changes, refresh failures and every mirror fault (mirror URL redacted, code, path)
 * @param {string|{ write: Function }|null} [opts.accessLog=null] one line per request (request-log.js): a file path (appended to), '-' for stderr, or a stream
 * @param {{ secret: string, ttlS?: number } | null} [opts.grants=null] gate every tree served (edge-gate.js, docs/FORMAT.md §12.11):
 *   its content only with an edge token, traded for a grant at the tree's .rotree/token; secret: the edge secret, 64 hex
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
    tree, trees = {}, mirrors = [], stateDir, timeoutMs, mirrorPenaltyMs, concurrency = 64, cacheBytes = 64 << 20,
    cacheDir = null, cacheSize = 1 << 30, refreshSeconds = 60, maxAge, index = true, sandbox = true, allowHosts = null,
    treeOptions = {}, log = null, accessLog = null, prefetch = true, grants = null
  } = {}) {
    if (tree === undefined && Object.keys(trees).length === 0) throw new TypeError('gateway: give a tree (opts.tree) or named trees (opts.trees)')
    this.log = redactingLog(log)
    this.metrics = new Metrics()
    this.accessLog = openAccessLog(accessLog)
    this.index = index
    this.sandbox = sandbox !== false
    this.hostCheck = hostGuard(allowHosts)
    this.startedAt = new Date()
    this.disk = null
    const tOpts = this._treeOptions({ timeoutMs, mirrorPenaltyMs, concurrency, cacheBytes, stateDir, useDisk: cacheDir !== null, treeOptions })
    // a gated tree's content is sent Cache-Control: private, so no shared cache in front hands it to a request without a token
    const mountOpts = { treeOptions: tOpts, refreshMs: refreshSeconds * 1000, maxAgeS: Math.max(1, maxAge ?? refreshSeconds), log: this.log, metrics: this.metrics, prefetch, privateCache: grants !== null }
    this.root = tree === undefined ? null : new Mount('', tree, { ...mountOpts, mirrors })
    this.named = new Map()
    for (const [name, t] of Object.entries(trees)) {
      if (!isTreeName(name)) throw new TypeError(`gateway: bad tree name ${JSON.stringify(name)} (letters, digits, . _ ~ -)`)
      this.named.set(name, new Mount(name, t, mountOpts))
    }
    this.mounts = [...(this.root ? [this.root] : []), ...this.named.values()]
    this.gate = grants === null ? null : gatewayGate(this.mounts, { ...grants, log: this.log })
    this._start(cacheDir, cacheSize)
  }

  _treeOptions ({ timeoutMs, mirrorPenaltyMs, concurrency, cacheBytes, stateDir, useDisk, treeOptions }) {
    const blobCache = !useDisk ? undefined : {
      get: (h, pool) => this.disk === null ? undefined : this.disk.get(h, pool),
      put: (h, b, done) => { if (this.disk === null) done?.(); else this.disk.put(h, b, done) },
      delete: h => this.disk?.delete(h),
      releases: true // put() calls done() once the disk cache no longer holds the bytes; get() reads into the pool it is given (disk-cache.js)
    }
    const o = { timeoutMs, mirrorPenaltyMs, concurrency, cacheBytes, blobCache, ...treeOptions }
    if (stateDir !== undefined) o.stateDir = stateDir
    for (const k of Object.keys(o)) if (o[k] === undefined) delete o[k]
    return o
  }

  /** diskReady: what every request waits for; ready: that, and each tree tried once. */
  _start (cacheDir, cacheSize) {
    this.diskReady = cacheDir === null ? Promise.resolve() : openDiskCache(cacheDir, { maxBytes: cacheSize, log: this.log }).then(d => { this.disk = d })
    this.diskDone = cacheDir === null
    this.diskReady.then(() => { this.diskDone = true }, () => {})
    // a tree whose mirrors are down still starts: its requests answer 502/504 until one is back
    this.ready = this.diskReady.then(() => Promise.allSettled(this.mounts.map(m => m.refresh()))).then(() => {})
    this.ready.catch(() => {}) // reported by whoever awaits it, and by requests
  }

  handle (req, res, next) {
    watchRequest(req, res, this)
    const p = this.diskDone ? this._route(req, res) : this.diskReady.then(() => this._route(req, res))
    p.catch(err => sendError(res, err, { head: req.method === 'HEAD', log: this.log }))
  }

  async _route (req, res) {
    const method = req.method
    const head = method === 'HEAD'
    const refused = this.hostCheck(req)
    if (refused !== null) return sendText(res, 421, `421 Misdirected Request\n${refused}\n`, { head })
    if (method === 'OPTIONS' && req.url === '*') return this._options(res) // RFC 9110 §9.3.7: the server as a whole
    const ctx = this._context(req, res) // throws BadPathError: 400/414
    if (method === 'GET' || head) {
      const s = ctx.segs
      if (s.length === 3 && s[0] === WELL_KNOWN[0] && s[1] === WELL_KNOWN[1]) {
        if (s[2] === 'status') return this._status(ctx)
        if (s[2] === 'metrics') return this._metrics(ctx)
      }
      if (this.gate !== null && !(await this._admit(ctx))) return
      return serveGet(this, ctx)
    }
    if (method === 'PROPFIND') {
      if (this.gate !== null && !(await this._admit(ctx))) return
      return propfind(this, ctx)
    }
    if (method === 'POST' && isTokenPath(ctx.rel)) return this._token(ctx)
    if (method === 'OPTIONS') return this._options(res)
    // a read-only tree: refuse, and do not read an upload we will never use
    const hasBody = req.headers['content-length'] > 0 || req.headers['transfer-encoding'] !== undefined
    sendText(res, 405, `405 Method Not Allowed\nthis gateway is read-only: ${String(method).slice(0, 20)} is not allowed\n`,
      { headers: ['Allow', DAV_ALLOW, ...(hasBody ? ['Connection', 'close'] : [])] })
  }

  /**
   * What one request is about: its mount, its names below that mount's root,
   * and how to spell public URLs for it.
   * @returns {{ req, res, head: boolean, mount: Mount|null, rel: string[], mountSegs: string[], base: string, slash: boolean, query: string, segs: string[] }}
   */
  _context (req, res) {
    const p = parseRequestPath(req.url)
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
    if (mount !== null) noteTree(res, mount.label)
    return { req, res, head: req.method === 'HEAD', mount, rel, mountSegs, base, slash, query: p.query, segs }
  }

  /**
   * A gated gateway: may this request have its tree's content? It must carry
   * a valid edge token for that tree (X-Rotree-Token, or rotree_token in the
   * query); otherwise 403 and what to do. The mount list of a gateway with
   * no tree at / is not content (the status document shows as much).
   */
  async _admit ({ req, res, mount, head, mountSegs }) {
    if (mount === null) return true
    const { verdict, holder } = await this.gate.admit(req, mount)
    if (verdict === 'ok') { noteHolder(res, holder); return true }
    const why = verdict === 'expired' ? 'the edge token sent has expired' : req.headers['x-rotree-token'] === undefined && !req.url.includes('rotree_token=') ? 'no edge token was sent' : 'the edge token sent is not one for this tree'
    const at = this.href({ base: typeof req.baseUrl === 'string' ? req.baseUrl : '' }, mountSegs, true)
    sendText(res, 403, `403 Forbidden\nROTREE_NO_ACCESS: this tree is gated and ${why} (docs/FORMAT.md §12.11)\n` +
      `What to do: trade your grant for a token at this tree's exchange, rotree grant token GRANT --grant-key KEYFILE <this gateway's URL>${at.slice(1)}, ` +
      'and send it as the header X-Rotree-Token (curl -H, wget --header, rclone --header) or as ?rotree_token= in the URL; a token lives minutes: ask again when it expires.\n',
    { head, headers: ['X-Rotree-Error', 'ROTREE_NO_ACCESS'] })
    return false
  }

  /** POST [/NAME]/.rotree/token: the tree's token exchange (server/gate.js); 404 where nothing is gated, as a mirror that is not gated answers. */
  _token ({ req, res, mount }) {
    if (this.gate !== null && mount !== null) return this.gate.token(req, res, mount)
    req.resume()
    sendText(res, 404, this.gate === null
      ? '404 Not Found\nthis gateway is not gated: its trees need no edge token\n'
      : '404 Not Found\nno tree is served at /: each tree\'s exchange is at /NAME/.rotree/token\n')
  }

  _options (res) {
    res.writeHead(200, [...DAV_HEADERS, 'Content-Length', '0'])
    res.end()
  }

  /** The public URL path of names under this gateway (for Location and WebDAV hrefs). */
  href (ctx, names, slash) {
    const p = ctx.base + encodePath(names, slash)
    return p.replace(/^\/{2,}/, '/') // never a protocol-relative "//host" Location
  }

  /** The named trees, as directory entries (the root listing when only named trees are mounted). */
  async * mountItems () {
    for (const [name, m] of this.named) {
      const c = rootRecord(m.tree)
      const e = { name, type: 'dir', mount: true, mtime: c?.rootMtime ?? Date.now(), root: c?.root.hash ?? null, seq: c?.seq ?? null }
      yield { entry: e, target: e }
    }
  }

  _status ({ res, head }) {
    const body = Buffer.from(JSON.stringify(this.status(), null, 2) + '\n')
    res.writeHead(200, ['Content-Type', 'application/json; charset=utf-8', 'Cache-Control', 'no-store', 'Content-Length', String(body.length)])
    res.end(head ? undefined : body)
  }

  _metrics ({ res, head }) {
    const body = Buffer.from(redactText(this.metricsText()))
    res.writeHead(200, ['Content-Type', 'text/plain; version=0.0.4; charset=utf-8', 'Cache-Control', 'no-store', 'Content-Length', String(body.length)])
    res.end(head ? undefined : body)
  }

  /** The Prometheus exposition (metrics.js): counters, and each tree's root age and time to expiry now. */
  metricsText () {
    const trees = this.mounts.map(m => {
      m.watchFaults()
      const rec = rootRecord(m.tree)
      const st = m.tree.stats
      return {
        tree: m.label,
        seq: rec?.seq ?? null,
        issuedMs: rec ? Date.parse(rec.issued) : null,
        expiresMs: rec ? (rec.untilMs ?? Date.parse(rec.expires)) : null, // version 2: the first of fsinfo.json, release and trust document to expire (FORMAT.md §12.9)
        upstreamRequests: st.requests ?? 0,
        upstreamBytes: st.bytes ?? 0,
        memory: { hits: st.cache?.hits ?? 0, misses: st.cache?.misses ?? 0, bytes: st.cache?.bytes ?? 0 },
        localFaults: st.localFaults ?? 0
      }
    })
    return metricsText(this.metrics, { trees, disk: this.disk?.stats() ?? null, nowMs: Date.now() })
  }

  /** Each tree's root, sequence, expiry, mirror health and cache figures; mirror credentials removed. */
  status () {
    return redactDeep({
      startedAt: this.startedAt.toISOString(),
      trees: this.mounts.map(m => m.status()),
      diskCache: this.disk?.stats() ?? null
    })
  }

  async close () {
    for (const m of this.mounts) m.close()
    await this.ready.catch(() => {})
    await this.disk?.close()
    await this.accessLog?.close()
  }
}

function originalEndsWithSlash (req) {
  const u = typeof req.originalUrl === 'string' ? req.originalUrl : req.url
  const q = u.indexOf('?')
  return (q === -1 ? u : u.slice(0, q)).endsWith('/')
}

// One tree served by the gateway: opening it, re-checking fsinfo.json on an
// interval, and pinning each request to one verified root (docs/TRUST.md rule 6).
//
// A Pin is a tree.snapshot() plus what every response from that root shares
// (the X-Rotree-* headers, the expiry); it is made once per root and reused by
// every request until refresh() adopts a newer one, so the hot path builds no
// per-request view.
import { Tree } from 'rotree-client'
import { rootRecord, isFresh } from './tree-access.js'
import { ReadAhead, listingBudget } from './readahead.js'

const RETRY_OPEN_MS = 1000 // a tree that failed to open is retried at most this often
const FAULT_WATCH_MS = 1000
// where a fault message names what was fetched (fsinfo.json, a blob or chunk handle)
const FAULT_PATH = /\b(?:fsinfo\.json|h\/([0-9a-f]{8,64})|(?:blob|chunk|page|index) ([0-9a-f]{8,64}))/

/** The path a fault message names: fsinfo.json, or h/<handle> (… when the message shortened it); '-' when it names none. */
function faultPath (msg) {
  const m = FAULT_PATH.exec(msg)
  if (m === null) return '-'
  const hex = m[1] ?? m[2]
  return hex === undefined ? 'fsinfo.json' : `h/${hex}${hex.length < 64 ? '…' : ''}`
}

export class Mount {
  /**
   * @param {string} name '' for the tree at the gateway's root, else its /NAME/
   * @param {string|Tree} tree an address, or a Tree the caller owns
   * @param {object} o
   * @param {string[]} [o.mirrors] more mirrors (address form only)
   * @param {object} [o.treeOptions] passed to new Tree()
   * @param {number} o.refreshMs interval between fsinfo.json checks (0: never)
   * @param {number} o.maxAgeS upper bound of Cache-Control max-age
   * @param {{ info?: Function, error?: Function } | null} [o.log]
   * @param {boolean} [o.privateCache=false] content is sent Cache-Control: private (a gated gateway: edge-gate.js)
   */
  constructor (name, tree, { mirrors = [], treeOptions = {}, refreshMs, maxAgeS, log = null, metrics = null, prefetch = true, privateCache = false }) {
    this.name = name
    this.metrics = metrics
    this.seenFailed = new Map() // mirror url → its `failed` count when last looked at (watchFaults)
    this.owned = !(tree instanceof Tree)
    this.tree = this.owned ? new Tree(tree, { ...treeOptions, mirrors }) : tree
    // what a client walking the listings asks for next (readahead.js), as much as the tree's caches can keep
    this.readAhead = prefetch ? new ReadAhead({ bytes: listingBudget({ disk: this.tree.blobs.local !== undefined, memoryBytes: this.tree.opts.cacheBytes }) }) : null
    this.maxAgeS = maxAgeS
    this.privateCache = privateCache
    this.log = log
    this.pin = null
    this.refreshing = null
    this.lastRefresh = null // { at, ok, changed?, code?, message? }
    this.lastFailAt = 0
    this.lastError = null
    this.timer = refreshMs > 0 ? setInterval(() => { this.refresh().catch(() => {}) }, refreshMs) : null
    this.timer?.unref()
    // mirror faults are logged within a second of happening (and at once when metrics or status are read)
    this.faultTimer = setInterval(() => this.watchFaults(), FAULT_WATCH_MS)
    this.faultTimer.unref()
  }

  /** Re-check fsinfo.json now (coalesced with one already running). */
  refresh () {
    this.refreshing ??= this.tree.refresh().then(changed => {
      this.lastRefresh = { at: new Date().toISOString(), ok: true, changed }
      this.lastError = null
      if (changed) {
        const i = this.tree.info
        this.log?.info?.(`rotree gateway: ${this.label}: root change: sequence ${i.seq}, root ${i.root}, expires ${i.expires} (from ${i.mirror})`)
        this.metrics?.rootChanges.inc({ tree: this.label })
      }
      this.watchFaults()
      return changed
    }, err => {
      this.lastRefresh = { at: new Date().toISOString(), ok: false, code: err.code, message: err.message }
      // every mirror failed: what each one did (the status document says why; credentials are redacted there)
      if (Array.isArray(err.errors)) this.lastRefresh.mirrors = err.errors.map(({ mirror, code }) => ({ mirror, code }))
      this.lastFailAt = Date.now()
      this.lastError = err
      this.log?.error?.(`rotree gateway: ${this.label}: refresh failed: ${err.code ?? ''} ${err.message}`)
      this.metrics?.refreshFailures.inc({ tree: this.label })
      this.watchFaults()
      throw err
    }).finally(() => { this.refreshing = null })
    return this.refreshing
  }

  get label () { return this.name === '' ? '/' : `/${this.name}/` }

  /**
   * The Pin for the current root, refreshing first when there is none yet or
   * it is no longer fresh by the tree's clock (a pinned snapshot never
   * refreshes on its own; docs/TRUST.md rule 2).
   * @returns {Pin|Promise<Pin>}
   */
  current () {
    const rec = rootRecord(this.tree)
    if (rec === null || !isFresh(this.tree)) return this._renew()
    return this.pin !== null && this.pin.root === rec ? this.pin : this._newPin()
  }

  _newPin () {
    this.pin = new Pin(this.tree, this.maxAgeS, this.privateCache)
    return this.pin
  }

  /** Cached blobs that failed verification (snapshot views count into their tree). */
  localFaults () { return this.tree.stats.localFaults }

  async _renew () {
    // a tree whose mirrors are all failing is not asked again for every request
    if (this.lastError && Date.now() - this.lastFailAt < RETRY_OPEN_MS && !this.refreshing) throw this.lastError
    await this.refresh()
    if (this.pin === null || this.pin.root !== rootRecord(this.tree)) return this._newPin()
    return this.pin
  }

  /**
   * Log and count the mirror faults since the last look, from the tree's
   * per-mirror health (trust rule 4: every fault is reported). The tree
   * keeps a count and the last error per mirror; several faults between two
   * looks are counted in full and attributed to the last one's code.
   */
  watchFaults () {
    let health
    try { health = this.tree.stats.mirrors } catch { return }
    for (const m of health ?? []) {
      const before = this.seenFailed.get(m.url) ?? 0
      if (m.failed <= before) { if (m.failed < before) this.seenFailed.set(m.url, m.failed); continue }
      this.seenFailed.set(m.url, m.failed)
      const n = m.failed - before
      const code = m.lastError?.code ?? 'ROTREE_MIRROR_NETWORK'
      this.metrics?.faults.inc({ tree: this.label, mirror: m.url, code }, n)
      const msg = String(m.lastError?.message ?? '').replace(/[\r\n]+\s*/g, ' ')
      const path = faultPath(msg)
      this.log?.error?.(`rotree gateway: ${this.label}: mirror fault: ${m.url} ${code} ${path}${n > 1 ? ` (${n} faults, the last: ${msg})` : `: ${msg}`}`)
    }
  }

  status () {
    this.watchFaults()
    const s = this.tree.stats
    // a version-2 tree's info names the tree as it was signed (FORMAT.md §12.5, `#<anchor>:<name>`):
    // that is `treeName` here, never `name`, which says where this gateway serves it
    const { name: treeName, ...info } = this.tree.info ?? { root: null }
    return {
      name: this.name,
      mount: this.label,
      ...(treeName !== undefined ? { treeName } : {}),
      ...info,
      lastRefresh: this.lastRefresh,
      mirrors: s.mirrors,
      upstream: { requests: s.requests, bytes: s.bytes },
      memoryCache: s.cache,
      localFaults: this.localFaults(),
      // the read-ahead after listings (readahead.js): listings seen, directories and blobs fetched ahead, jobs
      // dropped, bytes fetched ahead and of them taken by clients, and the credit left
      prefetch: this.readAhead === null ? null : { ...this.readAhead.counts, credit: this.readAhead.credit }
    }
  }

  close () {
    if (this.timer) clearInterval(this.timer)
    clearInterval(this.faultTimer)
    if (this.owned) this.tree.close()
  }
}

/** What every response served from one root shares. */
export class Pin {
  constructor (tree, maxAgeS, privateCache = false) {
    this.root = rootRecord(tree)
    this.view = tree.snapshot()
    this.info = tree.info
    // the root is usable until the first of fsinfo.json, its release and its
    // trust document expires (FORMAT.md §12.9 step 7; untilMs), not merely
    // until fsinfo.json's own expiry: a version-2 release can expire first
    this.expiresMs = this.root.untilMs ?? this.root.expiresMs
    this.maxAgeS = maxAgeS
    this.scope = privateCache ? 'private' : 'public'
    this.headers = ['X-Rotree-Root', this.info.root, 'X-Rotree-Seq', String(this.info.seq), 'X-Rotree-Expires', this.info.expires]
    this._ccSecond = -1
    this._cc = ''
  }

  /**
   * Cache-Control for content from this root: never past the fsinfo.json
   * expiry (after it, no reader may accept this root), and never longer than
   * the gateway's refresh interval, so caches pick up a new publish about as
   * soon as the gateway does. Recomputed at most once a second. This is a
   * lifetime for HTTP caches, which keep wall-clock time; whether the root
   * may still be served at all is the Tree's decision (isFresh).
   */
  cacheControl () {
    const s = Math.floor(Date.now() / 1000)
    if (s !== this._ccSecond) {
      this._ccSecond = s
      const left = Math.floor(this.expiresMs / 1000) - s
      const age = Math.min(this.maxAgeS, left)
      this._cc = age > 0 ? `${this.scope}, max-age=${age}` : 'no-cache'
    }
    return this._cc
  }
}

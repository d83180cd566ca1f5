// A verified view of one tree: resolves paths, lists directories and reads
// file bytes, fetching blobs through Mirrors and accepting them only through
// verify.js. Every public read pins one root for its whole duration (trust rule 6).
import {
  NotFoundError, NotADirectoryError, IsADirectoryError, SymlinkLoopError, BadRangeError,
  MIRROR_FAULT_CODES, allFailed
} from './errors.js'
import {
  verifyFsinfo, VERIFIERS, checkPagePlacement, checkChunkIndexPlacement, isExpired, rankRoots, hasFork, staleMirrors,
  childPageExpectation, dirExpectation, DEFAULT_SKEW_MS
} from './verify.js'
import { compareBytes, utf8 } from './format/bytes.js'
import { MAX_FSINFO, MAX_SYMLINK_HOPS } from './format/limits.js'
import { splitPath, joinPath } from './path.js'
import { Mirrors } from './mirrors.js'
import { LRU, limiter } from './cache.js'
import { readChunks, chunkSpans } from './read-pipeline.js'
import { SeqStore } from './state.js'
import { parseAddress, mirrorUrl } from './address.js'
import { createTransport, defaultStateDir, stateLocation, toStream } from '#platform'

/**
 * Open a tree and verify its current fsinfo.json.
 * @param {string} address '<mirror-url>#<64-hex public key>'
 * @param {object} [opts]
 * @param {string[]} [opts.mirrors] more mirror base URLs
 * @param {string|null} [opts.stateDir] where the highest sequence per key persists; null: memory only
 * @param {number} [opts.timeoutMs=30000] per request
 * @param {number} [opts.concurrency=8] parallel blob fetches
 * @param {number} [opts.readAhead=8] chunks fetched ahead of a streaming read
 * @param {number} [opts.cacheBytes=33554432] verified-blob cache
 * @param {number} [opts.skewMs=300000] how far in the future fsinfo.json may be issued
 * @param {number} [opts.graceMs=0] how long after expiry fsinfo.json is still accepted
 * @param {number} [opts.fsinfoSettleMs=2000] after one mirror's fsinfo.json verifies, how long to wait for the others
 * @param {() => number} [opts.now] clock, for tests
 */
export async function openTree (address, opts = {}) {
  const tree = new Tree(address, opts)
  await tree.refresh()
  return tree
}

export class Tree {
  constructor (address, opts = {}) {
    const { url, publicKey } = parseAddress(address)
    this.publicKey = publicKey
    this.opts = { timeoutMs: 30_000, concurrency: 8, readAhead: 8, cacheBytes: 32 << 20, skewMs: DEFAULT_SKEW_MS, graceMs: 0, fsinfoSettleMs: 2000, now: Date.now, ...opts }
    this.transport = opts.transport ?? createTransport({ maxSockets: this.opts.concurrency * 2 })
    const urls = [...new Set([url, ...(opts.mirrors ?? []).map(mirrorUrl)])]
    this.mirrors = new Mirrors(urls, { transport: this.transport, timeoutMs: this.opts.timeoutMs, penaltyMs: this.opts.mirrorPenaltyMs })
    const dir = opts.stateDir === undefined ? defaultStateDir() : opts.stateDir
    this.state = new SeqStore(dir === null ? null : stateLocation(dir))
    this.cache = new LRU(this.opts.cacheBytes)
    this.inflight = new Map()
    this.limit = limiter(this.opts.concurrency)
    this.current = null
    // shared with snapshot() views (they inherit this object, so counts land here)
    this.counters = { localFaults: 0 } // blobs in opts.blobCache that failed verification
    // what the read pipeline needs from a tree (read-pipeline.js): blob fetches do not depend on the root
    this._source = {
      chunk: (ref, { cache = true } = {}) => this._blob(ref, 'data', cache),
      chunkIndex: (ref, expect) => this._chunkIndex(ref, expect)
    }
  }

  /** The accepted fsinfo.json: { key, seq, issued, expires, root, mirror }. */
  get info () { return infoOf(this.current) }

  /** The exact bytes of the accepted fsinfo.json (Uint8Array). */
  get fsinfoBytes () { return this.current?.raw }

  get stats () { return { ...this.transport.stats, cache: this.cache.stats(), localFaults: this.counters.localFaults, mirrors: this.mirrors.health() } }

  /**
   * Fetch fsinfo.json from every mirror and adopt the newest one that verifies
   * (so one stale mirror cannot hold a reader back). Returns true when the root changed.
   */
  async refresh () {
    const now = this.opts.now()
    const check = bytes => verifyFsinfo(bytes, { publicKey: this.publicKey, now, skewMs: this.opts.skewMs, graceMs: this.opts.graceMs })
    const results = await this.mirrors.fetchAll('fsinfo.json', MAX_FSINFO, check, { settleMs: this.opts.fsinfoSettleMs })
    const errors = results.filter(r => r.error).map(r => r.error)
    const fault = (mirror, err) => {
      this.mirrors.fault(this.mirrors.list.find(x => x.url === mirror), err)
      errors.push({ mirror, code: err.code, message: err.message, err })
    }
    const answers = results.filter(r => r.value)
    const seen = hasFork(answers) ? await this.state.get(this.publicKey) : null
    const { candidates, forks } = rankRoots(answers, seen)
    for (const f of forks) fault(f.mirror, f.err)
    for (const chosen of candidates) {
      const { mirror, value } = chosen
      try {
        await this.state.accept(this.publicKey, value) // rollback / fork check against persisted state
      } catch (err) {
        if (err.code !== 'ROTREE_ROLLBACK' && err.code !== 'ROTREE_FORK') throw err
        fault(mirror, err) // behind what this reader saw: reported (Mirrors.fault); a fork: benched
        continue
      }
      for (const s of staleMirrors(candidates, chosen)) fault(s.mirror, s.err)
      const changed = !this.current || this.current.root.hash !== value.root.hash
      if (!this.current || value.seq >= this.current.seq) this.current = { ...value, mirror }
      return changed
    }
    throw allFailed('fsinfo.json', errors)
  }

  /** The root to use for one operation; an expired one is refreshed first. */
  async _root () {
    const c = this.current
    if (c && !isExpired(c, { now: this.opts.now(), graceMs: this.opts.graceMs })) return c
    await this.refresh()
    return this.current
  }

  // ---- blobs ------------------------------------------------------------

  /**
   * Fetch and verify one blob (decoded for 'dir' and 'cindex'), sharing in-flight
   * fetches and caching the result. The cache key carries the kind: one blob may
   * be both a file chunk and a directory page (a tree that holds a tree).
   */
  _blob (ref, kind, cache = true) {
    const key = kind + ref.hash
    const hit = this.cache.get(key)
    if (hit !== undefined) return Promise.resolve(hit)
    let p = this.inflight.get(key)
    if (p) return p
    const check = VERIFIERS[kind]
    p = this.limit(() => this._fetchVerified(ref, check))
      .then(v => { if (cache) this.cache.set(key, v, ref.size); return v })
      .finally(() => this.inflight.delete(key))
    this.inflight.set(key, p)
    return p
  }

  /**
   * A local blob cache (opts.blobCache: { get(hash), put(hash, bytes), delete?(hash) },
   * e.g. the gateway's on-disk store) is tried before the mirrors. What it returns
   * is verified again like mirror bytes: disks rot (seed 004), and a cache is
   * only as trustworthy as the check on the way out.
   */
  async _fetchVerified (ref, check) {
    const local = this.opts.blobCache
    if (local) {
      const bytes = await local.get(ref.hash)
      if (bytes) {
        try { return await check(bytes, ref) } catch (err) {
          if (!MIRROR_FAULT_CODES.has(err.code)) throw err
          this.counters.localFaults++
          await local.delete?.(ref.hash)
        }
      }
    }
    let raw
    const value = await this.mirrors.fetch('h/' + ref.hash, ref.size, async bytes => { const v = await check(bytes, ref); raw = bytes; return v })
    if (local) await local.put(ref.hash, raw)
    return value
  }

  /**
   * A view of this tree pinned to the current root: every call on it reads that
   * root, even if refresh() adopts a newer one meanwhile (a gateway serves each
   * request from one root). Caches and mirrors are shared.
   */
  snapshot () {
    const root = this.current
    const view = Object.create(this)
    view._root = async () => root
    Object.defineProperty(view, 'info', { get: () => infoOf(root) })
    return view
  }

  async _dirPage (ref, expect) {
    const page = await this._blob(ref, 'dir')
    checkPagePlacement(page, expect)
    return page
  }

  async _chunkIndex (ref, expect) {
    const idx = await this._blob(ref, 'cindex')
    checkChunkIndexPlacement(idx, expect)
    return idx
  }

  // ---- directories ------------------------------------------------------

  /** Find `name` in a directory entry; null when the verified pages prove it absent. */
  async _lookup (dirEntry, name) {
    const nameBytes = utf8.encode(name)
    let page = await this._dirPage(dirEntry.dir, dirExpectation({ size: dirEntry.entries }))
    let upper // names in this page are below it; the last child inherits its parent's bound
    for (;;) {
      if (page.kind === 'leaf') return bsearch(page.entries, nameBytes, e => e.nameBytes)
      // FORMAT.md §4.4: the child whose range [firstName, next firstName) holds the name
      const cs = page.children
      let lo = 0; let hi = cs.length - 1
      if (compareBytes(nameBytes, cs[0].firstNameBytes) < 0) return null
      while (lo < hi) {
        const mid = (lo + hi + 1) >> 1
        if (compareBytes(cs[mid].firstNameBytes, nameBytes) <= 0) lo = mid; else hi = mid - 1
      }
      const expect = childPageExpectation(page, lo, { nextNameBytes: upper })
      upper = expect.nextNameBytes
      page = await this._dirPage(cs[lo], expect)
    }
  }

  /** Every entry of a directory in name order, one verified page at a time. */
  async * _entries (dirEntry) {
    async function * walk (self, ref, expect) {
      const page = await self._dirPage(ref, expect)
      if (page.kind === 'leaf') { yield * page.entries; return }
      const cs = page.children
      for (let i = 0; i < cs.length; i++) {
        yield * walk(self, cs[i], childPageExpectation(page, i, expect))
      }
    }
    yield * walk(this, dirEntry.dir, dirExpectation({ size: dirEntry.entries }))
  }

  /**
   * Resolve a path to its entry under one root, following symlinks inside the tree.
   * @returns {Promise<{ entry: object, path: string }>}
   */
  async _resolve (root, path, follow) {
    const rootEntry = { name: '', type: 'dir', dir: root.root, entries: undefined, mtime: root.rootMtime, size: undefined }
    const queue = splitPath(path)
    const stack = [rootEntry]
    const names = []
    let hops = 0
    while (queue.length) {
      const c = queue.shift()
      if (c === '.' || c === '') continue
      if (c === '..') {
        if (stack.length === 1) throw new SymlinkLoopError(`symlink in ${path} leads above the tree root`)
        stack.pop(); names.pop(); continue
      }
      const dir = stack.at(-1)
      if (dir.type !== 'dir') throw new NotADirectoryError(`${joinPath(names)} is not a directory`)
      const e = await this._lookup(dir, c)
      if (!e) throw new NotFoundError(`${joinPath([...names, c])} does not exist`, { details: { path: joinPath([...names, c]) } })
      if (e.type === 'symlink' && (queue.length > 0 || follow)) {
        if (++hops > MAX_SYMLINK_HOPS) throw new SymlinkLoopError(`more than ${MAX_SYMLINK_HOPS} symlinks resolving ${path}`)
        // FORMAT.md §4.6: targets resolve inside the tree; a leading '/' means the tree root
        if (e.target.startsWith('/')) { stack.length = 1; names.length = 0 }
        queue.unshift(...e.target.split('/'))
        continue
      }
      stack.push(e.type === 'dir' ? { ...e, entries: e.size } : e); names.push(c)
    }
    return { entry: stack.at(-1), path: joinPath(names) }
  }

  // ---- public API -------------------------------------------------------

  // ---- entry-level API (the gateway resolves once, then lists or reads) ---

  /** The verified entry of a path (the raw decoded form; toStat() gives the public shape). */
  async resolve (path, { follow = true } = {}) {
    const r = await this._root()
    return (await this._resolve(r, path, follow)).entry
  }

  /** Verified bytes of a file entry in [start, end), in order, with read-ahead. */
  readEntry (entry, start = 0, end = entry.size) {
    return this._read(entry, start, end, end - start <= this.opts.cacheBytes / 8)
  }

  /** A directory entry's entries (raw, verified) in name order, one page at a time. */
  entriesOf (dirEntry) { return this._entries(dirEntry) }

  /** Metadata of a path, following symlinks. */
  async stat (path) { return this._stat(path, true) }

  /** Metadata of a path; a final symlink is described, not followed. */
  async lstat (path) { return this._stat(path, false) }

  async _stat (path, follow) {
    const r = await this._root()
    const { entry } = await this._resolve(r, path, follow)
    if (entry.type === 'dir' && entry.size === undefined) {
      // the root has no parent entry to carry its count: read it off its top page
      const top = await this._dirPage(entry.dir, {})
      entry.size = top.kind === 'leaf' ? top.entries.length : top.children.reduce((n, c) => n + c.entries, 0)
    }
    return toStat(entry)
  }

  /**
   * Names in a directory (as fs.readdir), or stat objects with { withFileTypes: true }.
   * For huge directories prefer list(), which streams page by page.
   */
  async readdir (path, { withFileTypes = false } = {}) {
    const out = []
    for await (const s of this.list(path)) out.push(withFileTypes ? s : s.name)
    return out
  }

  /** Stream a directory's entries (lstat objects) in name order. */
  async * list (path) {
    const r = await this._root()
    const { entry } = await this._resolve(r, path, true)
    if (entry.type !== 'dir') throw new NotADirectoryError(`${path} is not a directory`)
    for await (const e of this._entries(entry)) yield toStat(e)
  }

  /** A whole file's verified bytes. */
  async readFile (path) {
    const r = await this._root()
    const { entry } = await this._resolve(r, path, true)
    if (entry.type === 'dir') throw new IsADirectoryError(`${path} is a directory`)
    const out = new Uint8Array(entry.size)
    let o = 0
    for await (const b of this._read(entry, 0, entry.size, true)) { out.set(b, o); o += b.length }
    return out
  }

  /**
   * Verified bytes of a file, as fs.createReadStream: { start, end } inclusive.
   * A Node Readable in Node, a ReadableStream in browsers. Only verified bytes
   * are ever pushed; a failure ends the stream with the typed error.
   */
  createReadStream (path, opts = {}) { return toStream(this.readRange(path, opts)) }

  /** Async iterator of verified bytes for { start, end } (end inclusive). */
  async * readRange (path, { start = 0, end } = {}) {
    const r = await this._root() // pinned: the stream finishes on the root it started on
    const { entry } = await this._resolve(r, path, true)
    if (entry.type === 'dir') throw new IsADirectoryError(`${path} is a directory`)
    const last = end === undefined ? entry.size - 1 : Math.min(end, entry.size - 1)
    if (!Number.isSafeInteger(start) || start < 0 || (end !== undefined && (!Number.isSafeInteger(end) || end < start - 1))) {
      throw new BadRangeError(`bad range ${start}-${end} for ${path}`)
    }
    if (start > last) return
    // stream big reads past the cache, so one large file does not flush every directory
    yield * this._read(entry, start, last + 1, last + 1 - start <= this.opts.cacheBytes / 8)
  }

  /** Verified bytes of file `entry` in [start, end), through the read pipeline. */
  _read (entry, start, end, cache) {
    return readChunks(this._source, entry, start, end, { cache, readAhead: this.opts.readAhead })
  }

  /** @deprecated the chunks overlapping [start, end); see read-pipeline.js chunkSpans */
  _spans (entry, start, end) { return chunkSpans(this._source, entry, start, end) }

  close () { this.transport.close() }
}

function infoOf (i) {
  return i && { key: i.key, seq: i.seq, issued: i.issued, expires: i.expires, root: i.root.hash, rootSize: i.root.size, rootMtime: i.rootMtime, mirror: i.mirror }
}

function bsearch (arr, key, get) {
  let lo = 0; let hi = arr.length - 1
  while (lo <= hi) {
    const mid = (lo + hi) >> 1
    const c = compareBytes(get(arr[mid]), key)
    if (c === 0) return arr[mid]
    if (c < 0) lo = mid + 1; else hi = mid - 1
  }
  return null
}

/** The public shape of an entry. */
export function toStat (e) {
  const s = {
    name: e.name, type: e.type, size: e.size, mtimeMs: e.mtime, mtime: new Date(e.mtime), exec: !!e.exec,
    mode: e.type === 'dir' ? 0o755 : e.type === 'symlink' ? 0o777 : e.exec ? 0o755 : 0o644
  }
  if (e.type === 'symlink') s.target = e.target
  if (e.type === 'dir') { s.entries = e.size; s.hash = e.dir?.hash }
  if (e.type === 'file') s.hash = e.inline ? null : e.chunks?.length === 1 ? e.chunks[0].hash : e.index ? e.index.hash : null
  return s
}


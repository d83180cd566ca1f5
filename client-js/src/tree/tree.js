// A verified view of one tree: resolves paths, lists directories and reads
// file bytes. Which root it reads is the root store's business
// (root-store.js); blobs come through VerifiedBlobs (blobs.js), accepted only
// through verify.js; byte ranges become chunks in the read pipeline
// (read-pipeline.js). Every public read pins one root for its whole duration
// (docs/TRUST.md rule 6).
import { NotADirectoryError, IsADirectoryError, BadRangeError, TruncatedError, UsageError } from '../errors.js'
import { checkPagePlacement, checkChunkIndexPlacement, childPageExpectation, dirExpectation, DEFAULT_SKEW_MS, FileHashVerdicts } from '../trust/verify.js'
import { compareBytes, utf8 } from '../format/bytes.js'
import { Mirrors } from '../fetch/mirrors.js'
import { SeqStore } from '../trust/state.js'
import { parseAddress, mirrorUrl } from '../trust/address.js'
import { RootStore, infoOf } from '../trust/root-store.js'
import { VerifiedBlobs } from '../fetch/blobs.js'
import { rootOpener, parseIdentities } from '../access/open-root.js'
import { resolvePath, slicer } from './resolve.js'
import { readChunks, chunkSpans } from './read-pipeline.js'
import { bufferPool, createTransport, defaultStateDir, stateLocation, toStream } from '#platform'
import { sha256Hex, sha256HexSync, createFileSha256 } from '#sha256'

/**
 * Open a tree and verify its current fsinfo.json.
 * @param {string} address '<mirror-url>#<anchor>[:<name>]': the anchor is a
 *   64-hex public key, or 't' + the hash of a version-2 family's first trust document (FORMAT.md §12.5)
 * @param {object} [opts]
 * @param {string[]} [opts.mirrors] more mirror base URLs
 * @param {string|null} [opts.stateDir] where the highest sequence per key persists; null: memory only
 * @param {number} [opts.timeoutMs=30000] per request
 * @param {number} [opts.concurrency=64] the most requests in flight to one mirror (its HTTP/1.1 connections); the window (window.js) decides how many are used
 * @param {number} [opts.connections] Node: the most HTTP/1.1 connections to one mirror (default: concurrency); requests beyond them are pipelined, or wait
 * @param {number} [opts.readAhead=8] chunks a stream always keeps requested ahead, and requests always allowed to one mirror
 * @param {number} [opts.maxInflightBytes=67108864] bytes in flight plus bytes read ahead, all reads of the tree together
 * @param {number} [opts.cacheBytes=33554432] verified-blob cache
 * @param {number} [opts.skewMs=300000] how far in the future fsinfo.json may be issued
 * @param {number} [opts.graceMs=0] how long after expiry fsinfo.json is still accepted
 * @param {number} [opts.fsinfoSettleMs=2000] after one mirror's fsinfo.json verifies, how long to wait for the others
 * @param {boolean} [opts.prefetchRoot=true] ask for the root page as soon as a root verifies (root-store.js);
 *   false for a reader that never reads the current root through the tree (pull copies blobs raw, ADDR@SEQ reads an old root)
 * @param {() => number} [opts.now] clock, for tests
 * @param {string[]} [opts.allowRedirectOrigins] origins a mirror may redirect to (default: its own only)
 * @param {boolean} [opts.crossOriginRedirects=false] a mirror may redirect anywhere (never https to http)
 * @param {string|Uint8Array|Array<string|Uint8Array>} [opts.ca] PEM certificates trusted for https mirrors (Node)
 * @param {boolean} [opts.http2=false] offer HTTP/2 to https mirrors (Node; HTTP/1.1 over TLS costs less CPU here, transport-node.js)
 * @param {number} [opts.pipeline=8] answers one HTTP/1.1 connection to an http mirror may have
 *   outstanding (pipelining, once the mirror has kept a connection alive); 1: none (Node)
 * @param {string|string[]} [opts.identity] a private tree's reader (FORMAT.md §12.8): the text of an age
 *   identity file (AGE-SECRET-KEY-1… lines), or several; kept in memory only. Without one a private
 *   tree is ROTREE_NO_ACCESS
 * @param {boolean} [opts.keyless=false] a reader that copies blobs raw (rotree pull): a private tree's
 *   fsinfo.json is verified, its root not opened (rootRecord.root is null), no identity needed
 */
export async function openTree (address, opts = {}) {
  const tree = new Tree(address, opts)
  await tree.refresh()
  return tree
}

export class Tree {
  constructor (address, opts = {}) {
    const { url, publicKey, anchor, name, id } = parseAddress(address)
    this.publicKey = publicKey // null for a trust-document anchor
    this.id = id // anchor and name: what the reader's state is kept under
    this.opts = { timeoutMs: 30_000, concurrency: 64, readAhead: 8, maxInflightBytes: 64 << 20, cacheBytes: 32 << 20, skewMs: DEFAULT_SKEW_MS, graceMs: 0, fsinfoSettleMs: 2000, now: Date.now, ...opts }
    // a redirect may leave the mirror's origin only where the reader allows it (docs/TRUST.md rule 4)
    this.transport = opts.transport ?? createTransport({
      maxSockets: opts.connections ?? this.opts.concurrency, ca: opts.ca, http2: opts.http2, pipelineDepth: opts.pipeline,
      allowRedirectOrigins: opts.allowRedirectOrigins, crossOriginRedirects: opts.crossOriginRedirects
    })
    // e.g. a gated tree's edge tokens (net/gated-transport.js), kept off the core read path
    if (opts.wrapTransport) this.transport = opts.wrapTransport(this.transport, { id: this.id }) // id: which tree (<anchor>[:<name>]), for a wrapper that serves some trees only
    const urls = [...new Set([url, ...(opts.mirrors ?? []).map(mirrorUrl)])]
    // every mirror is asked for fsinfo.json first: their handshakes run while the rest is set up
    for (const u of urls) this.transport.preconnect?.(u, { timeoutMs: this.opts.timeoutMs })
    this.mirrors = new Mirrors(urls, {
      transport: this.transport,
      timeoutMs: this.opts.timeoutMs,
      penaltyMs: this.opts.mirrorPenaltyMs,
      maxInflightBytes: this.opts.maxInflightBytes,
      maxRequests: this.opts.concurrency,
      minRequests: this.opts.readAhead
    })
    const dir = opts.stateDir === undefined ? defaultStateDir() : opts.stateDir
    this.state = new SeqStore(dir === null ? null : stateLocation(dir))
    this.roots = new RootStore({
      publicKey, anchor, name, id, mirrors: this.mirrors, state: this.state, now: this.opts.now,
      skewMs: this.opts.skewMs, graceMs: this.opts.graceMs, settleMs: this.opts.fsinfoSettleMs,
      prefetch: opts.prefetchRoot === false ? undefined : ref => { this.blobs.get(ref, 'dir').catch(() => {}) }, // a failure shows when the page is read
      // a private tree's keyring: a plain blob, checked by hash and size, not kept in the cache
      keyless: opts.keyless === true,
      // an offline reader (rotree verify --offline): the witnesses' cosignatures come from a
      // proof it holds, checked by the same rule, instead of the mirror's log/ (FORMAT.md §13.2)
      logProof: typeof opts.logProof === 'function' ? opts.logProof : null,
      openPrivate: rootOpener({ identities: parseIdentities(opts.identity), fetchKeyring: ref => this.blobs.get({ hash: ref.hash, size: ref.size }, 'data', false) })
    })
    // shared with snapshot() views (they inherit this object, so counts land here)
    this.counters = { localFaults: 0 } // blobs in opts.blobCache that failed verification
    // the scheduler (sched.js) bounds what is in flight, by bytes and per mirror
    this.blobs = new VerifiedBlobs({ mirrors: this.mirrors, cacheBytes: this.opts.cacheBytes, concurrency: Infinity, local: opts.blobCache, counters: this.counters, pool: bufferPool() })
    this.cache = this.blobs.cache
    this.fileHashes = new FileHashVerdicts() // whole-file SHA-256 checks that passed (verify.js), shared with snapshots
    // what the read pipeline needs from a tree (read-pipeline.js): blob fetches do not depend on the root
    this._source = {
      chunk: (ref, { cache = true, lend = false } = {}) => this.blobs.chunk(ref, cache, lend),
      chunkIndex: (ref, expect) => this._chunkIndex(ref, expect),
      // the fetch scheduler's read-ahead budget, where Mirrors has one (read-pipeline.js)
      sched: typeof this.mirrors.readAheadBytes === 'function' ? this.mirrors : undefined
    }
  }

  /**
   * The accepted fsinfo.json record (verifyFsinfo's value and the mirror it
   * came from). A new object whenever a new root is adopted; a snapshot's is
   * the one it pinned.
   */
  get rootRecord () { return this.roots.record }

  /** @deprecated the old name of rootRecord */
  get current () { return this.rootRecord }

  /** A root is accepted and not expired by this tree's clock and grace period. */
  isFresh () { return this.roots.isFresh(this.rootRecord) }

  /**
   * The accepted fsinfo.json: { key, seq, issued, expires, root, rootSize, rootMtime, mirror };
   * for format version 2 also version, anchor, name, releaseSeq, releaseExpires, trustSeq
   * (root and rootSize: the root page's handle and stored size).
   */
  get info () { return infoOf(this.rootRecord) }

  /** The exact bytes of the accepted fsinfo.json (Uint8Array). */
  get fsinfoBytes () { return this.rootRecord?.raw }

  get stats () { return { ...this.transport.stats, cache: this.cache.stats(), localFaults: this.counters.localFaults, mirrors: this.mirrors.health() } }

  /** The address's anchor: { kind: 'key', key } or { kind: 'trust', hash } (FORMAT.md §12.5). */
  get anchor () { return this.roots.anchor }

  /** The address's tree name ('' for none, FORMAT.md §12.1). */
  get name () { return this.roots.name }

  /**
   * The newest trust document this reader trusts, walked from the address's
   * anchor (docs/TRUST.md rule 10): its roles, witnesses and sequence number.
   * null for a single-key or version-1 tree, and before the first refresh().
   */
  get trustDocument () { return this.roots.trust?.doc ?? null }

  /**
   * A file of the published folder that is not a blob (a log tile, a trust
   * document, a page a tool wants raw), from the mirrors in turn: the first
   * answer `check` accepts (it throws a typed error for one it refuses:
   * that mirror's fault, and the next is asked). Verifying it is the
   * caller's business; nothing here trusts it.
   * @template T
   * @param {string} path relative to the mirror's base @param {number} cap most bytes to accept
   * @param {(bytes: Uint8Array, mirror: string) => T|Promise<T>} check
   * @returns {Promise<T>}
   */
  fetchFile (path, cap, check) { return this.mirrors.fetch(path, cap, check) }

  /**
   * The same file from every mirror at once, each answer through `check`:
   * one result per mirror, { mirror, value }, { mirror, error } or, for a
   * mirror without it (404, no fault), { mirror, absent: true }. For files a
   * tool compares across mirrors (trust/revoked.json: the newest valid one).
   * @param {string} path @param {number} cap @param {(bytes: Uint8Array, mirror: string) => any} check
   */
  fetchFromEveryMirror (path, cap, check) { return this.mirrors.fetchAll(path, cap, check, { absentOk: true }) }

  /**
   * Fetch fsinfo.json from every mirror and adopt the newest one that verifies
   * (so one stale mirror cannot hold a reader back); a newer one that arrives
   * after this returns is adopted too (root-store.js). Returns true when the root changed.
   */
  refresh () { return this.roots.refresh() }

  /** The root to use for one operation; an expired one is refreshed first. */
  _root () { return this.roots.root() }

  // ---- blobs ------------------------------------------------------------

  /**
   * Verified bytes of one data chunk, exactly ref.size long, through the
   * cache and the in-flight map. `cache: false` for big streaming reads, so
   * one large file does not flush every directory page. A version-2 ref
   * (with storedSize and codec) gives the decoded bytes.
   * @param {{ hash: string, size: number, storedSize?: number, codec?: string }} ref
   */
  readChunk (ref, { cache = true } = {}) { return this.blobs.chunk(ref, cache) }

  /** @deprecated blobs.get(); kept for callers written against the old internals */
  _blob (ref, kind, cache = true) { return kind === 'data' ? this.blobs.chunk(ref, cache) : this.blobs.get(ref, kind, cache) }

  /**
   * A view of this tree pinned to the current root: every call on it reads that
   * root, even if refresh() adopts a newer one meanwhile (a gateway serves each
   * request from one root). Caches and mirrors are shared.
   */
  snapshot (root = this.rootRecord) {
    // a view pinned to `root`: the current one by default, or an old root from
    // history (history.js openHistoric), pinned the same way and never adopted
    const view = Object.create(this)
    view._root = async () => root
    Object.defineProperty(view, 'rootRecord', { get: () => root })
    return view
  }

  async _dirPage (ref, expect) {
    const page = await this.blobs.get(ref, 'dir')
    checkPagePlacement(page, expect)
    return page
  }

  async _chunkIndex (ref, expect) {
    const idx = await this.blobs.get(ref, 'cindex')
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

  /**
   * Every entry of a directory in name order, one verified page at a time,
   * yielding to the event loop now and then (docs/TRUST.md rule 9: a listing
   * of cached pages never lets the event loop turn otherwise).
   */
  async * _entries (dirEntry, admit) {
    const pause = slicer()
    async function * walk (self, ref, expect) {
      admit?.(ref) // may throw: a caller that pays for each page it reads ends the walk here (entriesOf)
      const page = await self._dirPage(ref, expect)
      if (page.kind === 'leaf') {
        for (const e of page.entries) { const p = pause(); if (p) await p; yield e }
        return
      }
      const cs = page.children
      for (let i = 0; i < cs.length; i++) {
        yield * walk(self, cs[i], childPageExpectation(page, i, expect))
      }
    }
    yield * walk(this, dirEntry.dir, dirExpectation({ size: dirEntry.entries }))
  }

  /**
   * Resolve a path to its entry under one root, following symlinks inside the
   * tree, with a bounded amount of work (resolve.js).
   * @returns {Promise<{ entry: object, path: string }>}
   */
  _resolve (root, path, follow) {
    const rootEntry = { name: '', type: 'dir', dir: root.root, entries: undefined, mtime: root.rootMtime, size: undefined }
    return resolvePath(rootEntry, path, follow, (dir, name) => this._lookup(dir, name))
  }

  // ---- public API -------------------------------------------------------

  // ---- entry-level API (the gateway resolves once, then lists or reads) ---

  /** The verified entry of a path (the raw decoded form; toStat() gives the public shape). */
  async resolve (path, { follow = true } = {}) {
    const r = await this._root()
    return (await this._resolve(r, path, follow)).entry
  }

  /** Verified bytes of a file entry in [start, end), in order, with read-ahead (lend: as readRange). */
  readEntry (entry, start = 0, end = entry.size, { lend = false } = {}) {
    return this._read(entry, start, end, end - start <= this.opts.cacheBytes / 8, true, lend)
  }

  /**
   * A piece read with { lend: true } is done with: its buffer may take the
   * next chunk. Call it once per piece, after the last use of its bytes (a
   * write's callback, not its call); a piece never given back is collected
   * as usual. Anything not lent is ignored.
   * @param {Uint8Array} piece
   */
  release (piece) { this.blobs.pool?.give(piece) }

  /**
   * A directory entry's entries (raw, verified) in name order, one page at a time.
   * admit(ref), when given, is called before each page is read (cached or not) and may
   * throw to end the walk there: the gateway's read-ahead pays for pages this way.
   */
  entriesOf (dirEntry, { admit } = {}) { return this._entries(dirEntry, admit) }

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

  /**
   * A whole file's verified bytes. A version-2 file's SHA-256 is checked at
   * the end too (FORMAT.md §12.7): every chunk verified already, so a
   * mismatch means the publisher signed a file hash its chunks do not make.
   */
  async readFile (path) {
    const r = await this._root()
    const { entry } = await this._resolve(r, path, true)
    if (entry.type === 'dir') throw new IsADirectoryError(`${path} is a directory`)
    const out = wholeFileBuffer(entry.size, path)
    let o = 0
    // each piece is copied out at once: a big file streams past the cache, in lent buffers
    const cache = entry.size <= this.opts.cacheBytes / 8
    for await (const b of this._read(entry, 0, entry.size, cache, false, !cache)) { out.set(b, o); o += b.length; this.release(b) }
    if (o !== entry.size) throw new TruncatedError(`${path}: ${o} bytes read, the entry says ${entry.size}`)
    if (typeof entry.sha256 === 'string' && !this.fileHashes.has(entry)) this.fileHashes.check(entry, await sha256Hex(out), path)
    return out
  }

  /**
   * Verified bytes of a file, as fs.createReadStream: { start, end } inclusive.
   * A Node Readable in Node, a ReadableStream in browsers. Only verified bytes
   * are ever pushed; a failure ends the stream with the typed error.
   */
  createReadStream (path, opts = {}) { return toStream(this.readRange(path, opts)) }

  /**
   * Async iterator of verified bytes for { start, end } (end inclusive).
   * lend: a big read's pieces lie in buffers the reader gives back with
   * release() once written, so the next chunks land in memory already in
   * use instead of new buffers each (bounded memory, fewer page faults).
   */
  async * readRange (path, { start = 0, end, lend = false } = {}) {
    const r = await this._root() // pinned: the stream finishes on the root it started on
    const { entry } = await this._resolve(r, path, true)
    if (entry.type === 'dir') throw new IsADirectoryError(`${path} is a directory`)
    const last = end === undefined ? entry.size - 1 : Math.min(end, entry.size - 1)
    if (!Number.isSafeInteger(start) || start < 0 || (end !== undefined && (!Number.isSafeInteger(end) || end < start - 1))) {
      throw new BadRangeError(`bad range ${start}-${end} for ${path}`)
    }
    if (start > last) return
    // stream big reads past the cache, so one large file does not flush every directory
    yield * this._read(entry, start, last + 1, last + 1 - start <= this.opts.cacheBytes / 8, true, lend)
  }

  /**
   * Verified bytes of file `entry` in [start, end), through the read pipeline,
   * never more than end - start of them (defence in depth: every chunk is
   * already exactly its ref's size, and the refs add up to the entry's size).
   * A read of a whole version-2 file checks its SHA-256 before it ends
   * (FORMAT.md §12.7): the last piece is held back until the hash matches,
   * so a stream that fails this check never looks complete.
   */
  async * _read (entry, start, end, cache, wholeHash = true, lend = false) {
    let left = Math.max(0, end - start)
    const pool = lend ? this.blobs.pool : null // each piece handed out is marked: release() counts it once
    const hasher = wholeHash && typeof entry.sha256 === 'string' && start === 0 && end >= entry.size && !this.fileHashes.has(entry) ? createFileSha256(entry.size) : null
    let held = null
    for await (const b of readChunks(this._source, entry, start, end, { cache, lend, readAhead: this.opts.readAhead })) {
      if (left === 0) break
      const piece = b.length > left ? b.subarray(0, left) : b
      left -= piece.length
      pool?.mark(piece)
      if (hasher === null) { yield piece; continue }
      hasher.update(piece)
      // only the last piece waits for the hash: holding each piece until the
      // next arrived made the first byte wait for the second chunk (5 more
      // round trips at a distance, a 12 KiB lead chunk held for a 256 KiB one)
      if (left > 0) yield piece; else held = piece
    }
    if (hasher === null) return
    if (left === 0) this.fileHashes.check(entry, await hasher.hex(), 'file')
    if (held !== null) yield held
  }

  /** @deprecated the chunks overlapping [start, end); see read-pipeline.js chunkSpans */
  _spans (entry, start, end) { return chunkSpans(this._source, entry, start, end) }

  /** Stop: reads still running, and any later one, fail with ROTREE_ABORTED; the connections close. */
  close () {
    this.mirrors.close()
    this.transport.close()
  }
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


/**
 * The public shape of an entry.
 *
 * `sha256`, for files: the SHA-256 of the whole file's bytes. In format
 * version 2 that is the signed value (FORMAT.md §12.7), computed for an
 * inline file from its bytes (on first use: a listing does not hash every
 * inline file). In version 1 the format records no file hash: it is the
 * chunk's handle for a file stored as one chunk (that blob is the file,
 * FORMAT.md §1.2), and null otherwise.
 *
 * `hash`: a directory's top page; for a version-1 file, its one chunk or its
 * chunk index (null for inline and multi-chunk files); for a version-2 file,
 * the file's SHA-256 (a version-2 blob handle names the stored, possibly
 * compressed, bytes, which are no content hash).
 */
export function toStat (e) {
  const s = {
    name: e.name, type: e.type, size: e.size, mtimeMs: e.mtime, mtime: new Date(e.mtime), exec: !!e.exec,
    mode: e.type === 'dir' ? 0o755 : e.type === 'symlink' ? 0o777 : e.exec ? 0o755 : 0o644
  }
  if (e.type === 'symlink') s.target = e.target
  if (e.type === 'dir') { s.entries = e.size; s.hash = e.dir?.hash }
  if (e.type !== 'file') return s
  if (typeof e.sha256 === 'string') { s.hash = s.sha256 = e.sha256; return s }
  if (e.sha256 === null) { // a version-2 inline file (format/entry.js)
    let h = null
    const get = () => (h ??= sha256HexSync(e.inline))
    Object.defineProperty(s, 'hash', { get, enumerable: true })
    Object.defineProperty(s, 'sha256', { get, enumerable: true })
    return s
  }
  s.hash = e.inline ? null : e.chunks?.length === 1 ? e.chunks[0].hash : e.index ? e.index.hash : null
  s.sha256 = e.chunks?.length === 1 ? e.chunks[0].hash : null
  return s
}


/**
 * One buffer for a whole file. A publisher signs any size (docs/TRUST.md rule
 * 9): one that no buffer here holds is a typed error before anything is
 * fetched, not the platform's RangeError.
 */
function wholeFileBuffer (size, path) {
  try {
    return new Uint8Array(size)
  } catch (err) {
    if (!(err instanceof RangeError)) throw err
    throw new UsageError(`${path} is ${size} bytes, more than one buffer holds here: read it with createReadStream or readRange`, { cause: err })
  }
}

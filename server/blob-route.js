// GET|HEAD /h/<64 hex>: the hot path (docs/BENCHMARKS.md, P1). Bare node:http, no framework.
//
// Blobs are immutable and named by the SHA-256 of their bytes, so the name is a
// strong validator: ETag = the name, cache forever, and a cached Buffer can never
// go stale. Small blobs (≤ SMALL_MAX) are kept in a byte-bounded LRU with their
// response headers precomputed, so a hit is one Map lookup and one writeHead.

import { createHash } from 'node:crypto'
import { join } from 'node:path'
import { pipeline } from 'node:stream'
// Range and If-None-Match: the one reading every rotree server shares (an
// invalid Range is ignored with a 200, an unsatisfiable one is a 416).
import { parseRange, etagMatches, ifRangeHolds, contentRange, unsatisfiedRange } from 'rotree-client/http'
import { openRegular } from '../lib/open-regular.js'

const BLOB_PATH = /^\/h\/[0-9a-f]{64}$/
export const SMALL_MAX = 1 << 20 // blobs up to 1 MiB are cacheable; bigger ones stream

// Headers every response from a hot route carries. CORS so browsers on other
// origins can read blobs (and see a 404 as a 404, not an opaque network error).
export const CORS = [
  'Access-Control-Allow-Origin', '*',
  'Access-Control-Expose-Headers', 'Content-Length, Content-Range, ETag, Accept-Ranges'
]
export const IMMUTABLE = 'public, max-age=31536000, immutable'
export const BLOB_COMMON = [
  'Cache-Control', IMMUTABLE,
  'Accept-Ranges', 'bytes',
  // octet-stream + nosniff: a browser never renders a hostile blob as HTML.
  'X-Content-Type-Options', 'nosniff',
  ...CORS
]

/**
 * Plain-text error response with CORS, used by both hot routes. Never
 * stored by a cache (no-store): a blob that is missing now (a publish or a
 * pull in progress) is served the moment it is there, also through a CDN.
 */
export function sendStatus (res, status, body) {
  const buf = Buffer.from(body)
  res.writeHead(status, [
    'Content-Type', 'text/plain; charset=utf-8',
    'Content-Length', String(buf.length),
    'Cache-Control', 'no-store',
    ...CORS
  ])
  res.end(buf)
}

// One cached blob: its bytes and the 200/304 header arrays, built once.
function _entry (hex, buf) {
  const etag = `"${hex}"`
  return {
    buf,
    etag,
    h200: ['Content-Type', 'application/octet-stream', 'Content-Length', String(buf.length), 'ETag', etag, ...BLOB_COMMON],
    h304: ['ETag', etag, ...BLOB_COMMON]
  }
}

/**
 * @param {{ dir: string, cacheBytes: number, log?: { error?: Function } | null }} opts
 *   dir: the published folder (absolute); blobs are read from dir/h/<hex> only.
 * @returns {((req, res) => void) & { cached: (hex: string) => object|undefined }}
 *   handler for GET/HEAD requests whose URL starts with /h/, and its cache's lookup
 */
export function createBlobRoute ({ dir, cacheBytes, log = null }) {
  const hdir = join(dir, 'h') + '/'
  const cache = new Map() // hex → entry; Map order = recency, oldest first
  let cached = 0 // bytes held by cache
  const loading = new Map() // hex → Promise of _openOrLoad: one open and read per miss burst

  function _remember (hex, entry) {
    if (entry.buf.length > cacheBytes) return
    cache.set(hex, entry)
    cached += entry.buf.length
    for (const [k, e] of cache) { // evict oldest until within budget
      if (cached <= cacheBytes) break
      cache.delete(k)
      cached -= e.buf.length
    }
  }

  // Only a regular file at h/<hex> (lib/open-regular.js: never through a symlink,
  // never blocking on a FIFO); the regex already keeps the name inside h/.
  // → { fh, size } or null.
  async function _open (hex) {
    const f = await openRegular(hdir + hex)
    return f === null ? null : { fh: f.fh, size: f.st.size }
  }

  // Read a small blob fully and cache it if its bytes match its name. A
  // corrupt blob is still served (readers verify; fsck reports it) but never
  // pinned in memory, so a repair on disk takes effect at once.
  async function _load (hex, fh, size) {
    let buf
    try { buf = await fh.readFile() } finally { await fh.close() }
    const entry = _entry(hex, buf)
    if (buf.length === size && createHash('sha256').update(buf).digest('hex') === hex) _remember(hex, entry)
    return entry
  }

  /** A verified blob in the cache by its name (made the most recent), or undefined: the fast front's lookup (fast-front.js). */
  blobRoute.cached = hex => {
    const hit = cache.get(hex)
    if (hit !== undefined) { cache.delete(hex); cache.set(hex, hit) }
    return hit
  }
  return blobRoute

  function blobRoute (req, res) {
    const url = req.url
    const q = url.indexOf('?')
    const path = q === -1 ? url : url.slice(0, q)
    if (!BLOB_PATH.test(path)) return sendStatus(res, 404, 'not found')
    const hex = path.slice(3)

    const hit = cache.get(hex)
    if (hit !== undefined) {
      cache.delete(hex) // move to the recent end
      cache.set(hex, hit)
      return _sendBuffer(req, res, hit)
    }
    _miss(req, res, hex).catch((err) => {
      log?.error?.(`rotree serve: ${hex}: ${err.message}`)
      if (!res.headersSent) sendStatus(res, 500, 'internal error')
      else res.destroy()
    })
  }

  // A burst of requests for a blob not yet cached (say, the root directory
  // right after a publish) shares one open and one read.
  async function _miss (req, res, hex) {
    let p = loading.get(hex)
    const joined = p !== undefined
    if (!joined) {
      p = _openOrLoad(hex)
      loading.set(hex, p)
      p.then(() => loading.delete(hex), () => loading.delete(hex))
    }
    let r = await p
    // A descriptor to stream from belongs to the request that opened it.
    if (joined && r !== null && r.fh !== undefined) r = await _open(hex)
    if (r === null) return sendStatus(res, 404, 'not found')
    if (r.fh === undefined) return _sendBuffer(req, res, r)
    if (res.destroyed) return r.fh.close()
    _sendStream(req, res, hex, r.fh, r.size, log)
  }

  // → a cache entry (small blob, read), { fh, size } (big: stream it), or null.
  async function _openOrLoad (hex) {
    const f = await _open(hex)
    if (f === null || f.size > SMALL_MAX || cacheBytes <= 0) return f
    return _load(hex, f.fh, f.size)
  }
}

// a cached blob: 304, 200, 206 or 416 from its buffer
function _sendBuffer (req, res, e) {
  const inm = req.headers['if-none-match']
  if (inm !== undefined && etagMatches(inm, e.etag)) return res.writeHead(304, e.h304).end()
  const range = _wantedRange(req, e.etag, e.buf.length)
  if (range === null) {
    res.writeHead(200, e.h200)
    return req.method === 'HEAD' ? res.end() : res.end(e.buf)
  }
  if (range === 'unsatisfiable') return _send416(res, e.buf.length)
  res.writeHead(206, _h206(e.etag, range, e.buf.length))
  req.method === 'HEAD' ? res.end() : res.end(e.buf.subarray(range.start, range.end + 1))
}

// a blob streamed from its descriptor (too big to cache), which this closes
function _sendStream (req, res, hex, fh, size, log) {
  const etag = `"${hex}"`
  const inm = req.headers['if-none-match']
  let status = 200
  let range = null
  let headers
  if (inm !== undefined && etagMatches(inm, etag)) {
    status = 304
    headers = ['ETag', etag, ...BLOB_COMMON]
  } else {
    range = _wantedRange(req, etag, size)
    if (range === 'unsatisfiable') { fh.close().catch(() => {}); return _send416(res, size) }
    status = range === null ? 200 : 206
    headers = range === null
      ? ['Content-Type', 'application/octet-stream', 'Content-Length', String(size), 'ETag', etag, ...BLOB_COMMON]
      : _h206(etag, range, size)
  }
  res.writeHead(status, headers)
  if (status === 304 || req.method === 'HEAD' || size === 0) {
    fh.close().catch(() => {})
    return res.end()
  }
  const { start, end } = range ?? { start: 0, end: size - 1 }
  // autoClose closes fh when the stream ends or is destroyed; pipeline destroys
  // it when the client goes away, so an aborted download leaks no descriptor.
  const rs = fh.createReadStream({ start, end, autoClose: true })
  pipeline(rs, res, (err) => {
    if (err && err.code !== 'ERR_STREAM_PREMATURE_CLOSE') log?.error?.(`rotree serve: ${hex}: ${err.message}`)
  })
}

// RFC 9110 §13.1.5: If-Range with anything but our exact (strong) ETag means
// "send it all". Blobs have no Last-Modified, so a date never matches.
function _wantedRange (req, etag, size) {
  const h = req.headers.range
  if (h === undefined || !ifRangeHolds(req.headers['if-range'], { etag })) return null
  return parseRange(h, size)
}

function _h206 (etag, range, size) {
  return [
    'Content-Type', 'application/octet-stream',
    'Content-Length', String(range.end - range.start + 1),
    'Content-Range', contentRange(range, size),
    'ETag', etag,
    ...BLOB_COMMON
  ]
}

function _send416 (res, size) {
  res.writeHead(416, ['Content-Range', unsatisfiedRange(size), 'Content-Length', '0', ...BLOB_COMMON])
  res.end()
}

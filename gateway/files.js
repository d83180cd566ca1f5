// GET/HEAD of a file: validators, conditional requests, one byte range, and a
// body of verified bytes only.
//
// The first piece of the body is fetched and verified before the status line
// is written, so a lie about a small file (or about the first chunk of a big
// one) is answered 502/504 with a body naming the error. Later chunks can only
// fail after a 200/206 with a Content-Length went out: then the socket is
// destroyed (http-status.js), and the client sees a short, broken transfer.
import { etagMatches, parseRange } from '../server/blob-route.js'
import { BadRangeError } from 'rotree-client/errors'
import { fileMeta, readEntry, readOneChunk } from './tree-access.js'
import { sendError, sendText, destroyAfterHeaders } from './http-status.js'

/**
 * @param {import('node:http').IncomingMessage} req
 * @param {import('node:http').ServerResponse} res
 * @param {import('./mount.js').Pin} pin
 * @param {object} entry a verified file entry
 * @param {{ log?: object, vary?: boolean }} o vary: the answer depends on Accept (a directory's index.html)
 */
export async function sendFile (req, res, pin, entry, o = {}) {
  const m = fileMeta(entry)
  const head = req.method === 'HEAD'
  const h = req.headers
  const common = ['ETag', m.etag, 'Cache-Control', pin.cacheControl(), 'Accept-Ranges', 'bytes']
  if (m.lastModified !== null) common.push('Last-Modified', m.lastModified)
  if (o.vary) common.push('Vary', 'Accept')
  common.push(...pin.headers)

  // RFC 9110 §13.2.2: preconditions in this order
  const pre = precondition(h, m)
  if (pre === 412) return sendText(res, 412, '412 Precondition Failed\nIf-Match / If-Unmodified-Since did not hold for this file\n', { head, headers: common })
  if (pre === 304) { res.writeHead(304, common); return res.end() }

  const size = m.size
  let start = 0
  let end = size // exclusive
  let status = 200
  const headers = ['Content-Type', m.type, 'X-Content-Type-Options', 'nosniff', ...common]
  const range = h.range === undefined ? null : wantedRange(h, m)
  if (range === 'unsatisfiable' || range === 'malformed') {
    const why = range === 'malformed'
      ? `malformed Range header ${JSON.stringify(h.range.slice(0, 100))}; this gateway serves one range: bytes=A-B, bytes=A- or bytes=-N`
      : `Range ${JSON.stringify(h.range.slice(0, 100))} is outside the file (${size} bytes)`
    return sendError(res, new BadRangeError(why), { head, headers: ['Content-Range', `bytes */${size}`, ...common] })
  }
  if (range !== null) {
    status = 206
    start = range[0]; end = range[1] + 1
    headers.push('Content-Range', `bytes ${range[0]}-${range[1]}/${size}`)
  }
  headers.push('Content-Length', String(end - start))

  if (head || end === start) { res.writeHead(status, headers); return res.end() }

  if (entry.inline) { // verified with its directory page: nothing left to fetch
    res.writeHead(status, headers)
    return res.end(entry.inline.subarray(start, end))
  }

  const one = readOneChunk(pin, entry, start, end)
  if (one !== null) {
    let bytes
    try { bytes = await one } catch (err) { return sendError(res, err, { headers: pin.headers, log: o.log }) }
    if (res.destroyed) return
    res.writeHead(status, headers)
    return res.end(bytes)
  }

  const it = readEntry(pin, entry, start, end)
  let r
  try {
    r = await it.next()
  } catch (err) {
    return sendError(res, err, { headers: pin.headers, log: o.log })
  }
  if (res.destroyed) return it.return()
  if (r.done) return sendError(res, new Error(`no bytes read for a ${size}-byte file`), { log: o.log })
  res.writeHead(status, headers)
  if (r.value.length === end - start) { // the whole answer is one verified piece
    res.end(r.value)
    return it.return()
  }
  await pump(res, it, r, o.log)
}

/** Write verified pieces with backpressure; stop when the client leaves. */
async function pump (res, it, r, log) {
  try {
    while (!r.done) {
      if (res.destroyed) return
      if (!res.write(r.value)) await drained(res)
      if (res.destroyed) return
      r = await it.next()
    }
    res.end()
  } catch (err) {
    // headers are out: a wrong status is impossible now, a clean short body is forbidden
    log?.error?.(`rotree gateway: transfer aborted: ${err.code ?? ''} ${err.message}`)
    destroyAfterHeaders(res)
  } finally {
    await it.return().catch(() => {})
  }
}

export function drained (res) {
  return new Promise(resolve => {
    const done = () => { res.off('drain', done); res.off('close', done); resolve() }
    res.on('drain', done)
    res.on('close', done)
  })
}

/**
 * RFC 9110 §13.2.2. Returns 412, 304 or null (go on).
 * If-None-Match decides alone when present; If-Modified-Since only without it.
 */
export function precondition (h, m) {
  const im = h['if-match']
  if (im !== undefined) {
    if (!strongMatch(im, m.etag)) return 412
  } else if (h['if-unmodified-since'] !== undefined) {
    const t = Date.parse(h['if-unmodified-since'])
    if (!Number.isNaN(t) && m.mtimeS * 1000 > t) return 412
  }
  const inm = h['if-none-match']
  if (inm !== undefined) return etagMatches(inm, m.etag) ? 304 : null
  const ims = h['if-modified-since']
  if (ims !== undefined && m.lastModified !== null) {
    const t = Date.parse(ims)
    if (!Number.isNaN(t) && m.mtimeS * 1000 <= t) return 304
  }
  return null
}

function strongMatch (header, etag) {
  for (const tag of header.split(',')) {
    const t = tag.trim()
    if (t === '*' || t === etag) return true
  }
  return false
}

/**
 * The one range to send: [first, last] inclusive, null for the whole file,
 * 'unsatisfiable' or 'malformed' (both 416 with a clear body: DESIGN.md "Bad
 * input"). Another unit, several ranges, or an If-Range that no longer holds
 * mean the whole file, as RFC 9110 §14.2 allows.
 */
export function wantedRange (h, m) {
  const spec = h.range.trim()
  if (!/^bytes\s*=/i.test(spec)) return null
  if (spec.includes(',')) return null
  const ir = h['if-range']
  if (ir !== undefined && ir !== m.etag && ir !== m.lastModified) return null
  const norm = spec.replace(/^bytes\s*=\s*/i, 'bytes=')
  const syn = /^bytes=(\d*)-(\d*)$/.exec(norm)
  if (syn === null || (syn[1] === '' && syn[2] === '') || (syn[1] !== '' && syn[2] !== '' && Number(syn[2]) < Number(syn[1]))) return 'malformed'
  if (m.size === 0) return null // as nginx: nothing to slice, the empty 200 is the whole answer
  return parseRange(norm, m.size)
}

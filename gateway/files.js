// GET/HEAD of a file: validators, conditional requests, one byte range, the
// signed whole-file digest (Repr-Digest), and a body of verified bytes only,
// never more than its Content-Length announced.
//
// The first piece of the body is fetched and verified before the status line
// is written, so a lie about a small file (or about the first chunk of a big
// one) is answered 502/504 with a body naming the error. Later chunks can only
// fail after a 200/206 with a Content-Length went out: then the socket is
// destroyed (bounded-body.js), and the client sees a short, broken transfer.
import { parseRange, etagMatches, etagMatchesStrong, ifRangeHolds, contentRange, unsatisfiedRange } from 'rotree-client/http'
import { BadRangeError, BadFormatError } from 'rotree-client/errors'
import { fileMeta, readEntry, readOneChunk } from './tree-access.js'
import { sendError, sendText, destroyAfterHeaders } from './http-status.js'
import { BoundedBody } from './bounded-body.js'
import { sandboxHeaders } from './sandbox.js'

/**
 * @param {import('node:http').IncomingMessage} req
 * @param {import('node:http').ServerResponse} res
 * @param {import('./mount.js').Pin} pin
 * @param {object} entry a verified file entry
 * @param {{ log?: object, vary?: boolean, sandbox?: boolean, onRead?: (entry: object, start: number, end: number) => void }} o
 *   vary: the answer depends on Accept (a directory's index.html); sandbox: docs/GATEWAY.md "Sandboxed documents";
 *   onRead: bytes [start, end) of the file are about to be read for the body (the read-ahead's credit, readahead.js)
 */
export async function sendFile (req, res, pin, entry, o = {}) {
  const m = fileMeta(entry)
  const head = req.method === 'HEAD'
  const common = commonHeaders(pin, m, o)

  // RFC 9110 §13.2.2: preconditions in this order
  const pre = precondition(req.headers, m)
  if (pre === 412) return sendText(res, 412, '412 Precondition Failed\nIf-Match / If-Unmodified-Since did not hold for this file\n', { head, headers: common })
  if (pre === 304) { res.writeHead(304, common); return res.end() }

  const range = wantedRange(req.headers, m)
  if (range === 'unsatisfiable') {
    const why = `Range ${JSON.stringify(req.headers.range.slice(0, 100))} is outside the file (${m.size} bytes)`
    return sendError(res, new BadRangeError(why), { head, headers: ['Content-Range', unsatisfiedRange(m.size), ...common] })
  }
  const start = range === null ? 0 : range.start
  const end = range === null ? m.size : range.end + 1 // exclusive
  const status = range === null ? 200 : 206
  const headers = ['Content-Type', m.type, 'X-Content-Type-Options', 'nosniff', ...sandboxHeaders(m.type, o.sandbox !== false), ...common]
  if (range !== null) headers.push('Content-Range', contentRange(range, m.size))
  // RFC 9530 §3: the digest of the selected representation (the whole file),
  // so a 206 carries it too; only a hash the tree signed (FORMAT.md §12.7)
  if (m.reprDigest !== null) headers.push('Repr-Digest', m.reprDigest)
  headers.push('Content-Length', String(end - start))

  if (head || end === start) { res.writeHead(status, headers); return res.end() }
  const answer = { status, headers, length: end - start }
  o.onRead?.(entry, start, end)
  if (entry.inline) return sendWhole(res, answer, entry.inline.subarray(start, end), o.log)
  const one = readOneChunk(pin, entry, start, end)
  if (one !== null) return sendOneChunk(res, pin, answer, one, o.log)
  return sendStream(res, pin, answer, readEntry(pin, entry, start, end), o.log)
}

function commonHeaders (pin, m, o) {
  const h = ['ETag', m.etag, 'Cache-Control', pin.cacheControl(), 'Accept-Ranges', 'bytes']
  if (m.lastModified !== null) h.push('Last-Modified', m.lastModified)
  if (o.vary) h.push('Vary', 'Accept')
  h.push(...pin.headers)
  return h
}

/** The whole answer in hand: its length is checked before the status goes out. */
function sendWhole (res, answer, bytes, log) {
  if (bytes.length !== answer.length) return sendError(res, overLength(bytes.length, answer.length), { log })
  res.writeHead(answer.status, answer.headers)
  return new BoundedBody(res, answer.length, log).whole(bytes)
}

/** A range inside one chunk: fetched and verified before any header. */
async function sendOneChunk (res, pin, answer, pending, log) {
  let bytes
  try { bytes = await pending } catch (err) { return sendError(res, err, { headers: pin.headers, log }) }
  if (res.destroyed) return
  return sendWhole(res, answer, bytes, log)
}

/** Several chunks: the first is verified before the status line, the rest stream through a BoundedBody. */
async function sendStream (res, pin, answer, it, log) {
  let r
  try {
    r = await it.next()
  } catch (err) {
    return sendError(res, err, { headers: pin.headers, log })
  }
  try {
    if (res.destroyed) return
    if (r.done) return sendError(res, new BadFormatError(`no bytes read for a ${answer.length}-byte range`), { headers: pin.headers, log })
    if (r.value.length > answer.length) return sendError(res, overLength(r.value.length, answer.length), { headers: pin.headers, log })
    res.writeHead(answer.status, answer.headers)
    const body = new BoundedBody(res, answer.length, log)
    const written = piece => pin.view.release(piece) // lent by readEntry (tree-access.js)
    while (!r.done) {
      if (!await body.write(r.value, written)) return
      r = await it.next()
    }
    body.end()
  } catch (err) {
    if (!res.headersSent) return sendError(res, err, { headers: pin.headers, log })
    // headers are out: a wrong status is impossible now, a clean short body is forbidden
    log?.error?.(`rotree gateway: transfer aborted: ${err.code ?? ''} ${err.message}`)
    destroyAfterHeaders(res)
  } finally {
    await it.return?.().catch(() => {})
  }
}

function overLength (got, want) {
  return new BadFormatError(`the tree gave ${got} bytes for a ${want}-byte answer (its entry and its chunks disagree)`)
}

/**
 * RFC 9110 §13.2.2. Returns 412, 304 or null (go on).
 * If-None-Match decides alone when present; If-Modified-Since only without it.
 */
export function precondition (h, m) {
  const im = h['if-match']
  if (im !== undefined) {
    if (!etagMatchesStrong(im, m.etag)) return 412
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

/**
 * The one range to send ({ start, end } inclusive), null for the whole file,
 * or 'unsatisfiable' (416): rotree-client/http's reading, the same as
 * `rotree serve` and the Service Worker. An If-Range that no longer holds
 * means the whole file.
 */
export function wantedRange (h, m) {
  if (h.range === undefined || !ifRangeHolds(h['if-range'], m)) return null
  return parseRange(h.range, m.size)
}

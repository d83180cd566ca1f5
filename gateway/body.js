// Bodies the gateway generates (directory listings, WebDAV multistatus) from
// an async iterator of text pieces. A small body is sent whole with a
// Content-Length; one that outgrows BUFFER_MAX (a directory of a million
// entries) streams chunked, page by page, without holding it in memory.
// Pieces are pulled before the status line goes out, so a failure on the first
// directory page still gets its 502/504; a failure later destroys the socket,
// and a chunked body without its last chunk is a broken transfer.
import { sendError, destroyAfterHeaders } from './http-status.js'
import { drained } from './bounded-body.js'

const BUFFER_MAX = 256 * 1024
const WRITE_AT = 64 * 1024

/**
 * @param {import('node:http').IncomingMessage} req
 * @param {import('node:http').ServerResponse} res
 * @param {number} status
 * @param {string[]} headers without Content-Length
 * @param {AsyncIterable<string>} pieces
 * @param {{ errorHeaders?: string[], log?: object, onComplete?: (bytes: number) => void }} [o]
 *   onComplete: the body is complete (its length in UTF-16 units, at most its bytes), called
 *   before its last part is written; not called when it failed
 */
export async function sendGenerated (req, res, status, headers, pieces, o = {}) {
  const head = req.method === 'HEAD'
  const it = pieces[Symbol.asyncIterator]()
  let first
  try {
    first = await bufferFirst(it)
  } catch (err) {
    await it.return?.().catch(() => {})
    return sendError(res, err, { head, headers: o.errorHeaders, log: o.log })
  }
  if (first.done) {
    const body = Buffer.from(first.text)
    o.onComplete?.(head ? 0 : body.length)
    res.writeHead(status, [...headers, 'Content-Length', String(body.length)])
    return res.end(head ? undefined : body)
  }
  res.writeHead(status, headers) // no Content-Length: chunked
  if (head || res.destroyed) { res.end(); return it.return?.() }
  return streamRest(res, it, first.text, o)
}

/** Pull pieces until the body is complete or outgrows BUFFER_MAX: { text, done }. */
async function bufferFirst (it) {
  const buf = []
  let size = 0
  while (size <= BUFFER_MAX) {
    const r = await it.next()
    if (r.done) return { text: buf.join(''), done: true }
    buf.push(r.value); size += r.value.length
  }
  return { text: buf.join(''), done: false }
}

/** The chunked rest, written in WRITE_AT pieces with backpressure; a failure breaks the transfer. */
async function streamRest (res, it, text, { log, onComplete }) {
  let sent = 0
  try {
    for (;;) {
      if (text.length >= WRITE_AT) {
        if (!res.write(text)) await drained(res)
        if (res.destroyed) return
        sent += text.length
        text = ''
      }
      const r = await it.next()
      if (r.done) break
      text += r.value
    }
    onComplete?.(sent + text.length)
    res.end(text)
  } catch (err) {
    log?.error?.(`rotree gateway: listing aborted: ${err.code ?? ''} ${err.message}`)
    destroyAfterHeaders(res)
  } finally {
    await it.return?.().catch(() => {})
  }
}

const ESC = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }
/** HTML and XML text or attribute value. */
export function escapeMarkup (s) { return String(s).replace(/[&<>"']/g, c => ESC[c]) }

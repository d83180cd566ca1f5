// The one place where an error becomes an HTTP status (STYLE.md habit 4), and
// the one place that writes an error response.
//
// The trust rules decide the mapping (DESIGN.md rules 4 and 5):
//   404  only ROTREE_NOT_FOUND / ROTREE_NOT_A_DIRECTORY, which tree.js throws
//        only when a verified, sorted directory proves the absence;
//   502  a mirror served bad data, answered an error, or every mirror failed
//        (a mirror's own 404 for a blob is a fault, so it lands here too);
//   504  mirrors stalled past the timeout;
//   4xx  for what the client sent (bad path, bad range).
// A failure after the headers went out cannot change the status any more: the
// caller destroys the socket instead (see destroyAfterHeaders), so a client
// sees a broken transfer, never a clean short or wrong body.
import { STATUS_CODES } from 'node:http'
import { MIRROR_FAULT_CODES } from 'rotree-client/errors'

/** @param {any} err @returns {number} */
export function statusOf (err) {
  const code = err?.code
  switch (code) {
    case 'ROTREE_NOT_FOUND':
    case 'ROTREE_NOT_A_DIRECTORY':
      return 404
    case 'ROTREE_BAD_PATH':
      return err.status === 414 ? 414 : 400
    case 'ROTREE_BAD_RANGE':
      return 416
    case 'ROTREE_IS_A_DIRECTORY':
      return 409
    case 'ROTREE_SYMLINK_LOOP':
      return 508 // RFC 5842 Loop Detected: a property of the signed tree, not of the mirrors
    case 'ROTREE_TIMEOUT':
      return 504
    case 'ROTREE_ALL_MIRRORS_FAILED':
      return 502
    case 'ROTREE_STATE':
      return 503 // our own disk (rollback state) failed, not a mirror
  }
  if (MIRROR_FAULT_CODES.has(code)) return 502
  return 500
}

const TEXT_HEADERS = [
  'Content-Type', 'text/plain; charset=utf-8',
  'X-Content-Type-Options', 'nosniff',
  'Cache-Control', 'no-store'
]

/**
 * Answer `err` with its status and a plain-text body naming the code (and, for
 * mirror failures, what each mirror did). After headers: destroy the socket.
 * @param {import('node:http').ServerResponse} res
 * @param {any} err
 * @param {{ head?: boolean, headers?: string[], log?: { error?: Function } | null }} [o]
 *   headers: extra header pairs (the X-Rotree-* of the root that was used)
 */
export function sendError (res, err, { head = false, headers = [], log = null } = {}) {
  if (res.headersSent) return destroyAfterHeaders(res)
  const status = statusOf(err)
  if (status === 500) log?.error?.(`rotree gateway: internal error: ${err?.stack ?? err}`)
  const code = typeof err?.code === 'string' && err.code.startsWith('ROTREE_') ? err.code : 'ROTREE_INTERNAL'
  let body = `${status} ${STATUS_CODES[status] ?? 'Error'}\n${code}: ${status === 500 ? 'internal error' : oneLine(err?.message)}\n`
  if (Array.isArray(err?.errors)) for (const e of err.errors) body += `  ${e.mirror}: ${e.code} (${oneLine(e.message)})\n`
  sendText(res, status, body, { head, headers: ['X-Rotree-Error', code, ...headers] })
}

/** A plain-text response with a complete body (4xx/5xx from the gateway itself). */
export function sendText (res, status, body, { head = false, headers = [] } = {}) {
  if (res.headersSent) return destroyAfterHeaders(res)
  const buf = Buffer.from(body)
  res.writeHead(status, [...TEXT_HEADERS, 'Content-Length', String(buf.length), ...headers])
  res.end(head ? undefined : buf)
}

/**
 * The status line already went out with a Content-Length (or a chunked body
 * began): the only honest thing left is to break the connection, so the
 * client's transfer fails instead of ending clean and short.
 */
export function destroyAfterHeaders (res) {
  res.destroy() // no error argument: the socket's error path would report it as a client error
}

function oneLine (s) { return String(s ?? '').replace(/[\r\n]+\s*/g, ' ') }

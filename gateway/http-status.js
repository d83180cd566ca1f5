// The one place that writes an error response. Which status an error gets is
// decided by its row in rotree-client/errors (statusOf), shared with the
// Service Worker: 404 only for a verified absence (docs/TRUST.md rule 5), 502
// for a mirror that lied or failed, 504 when every mirror stalled (rule 4),
// 4xx for what the client sent.
// A failure after the headers went out cannot change the status any more: the
// caller destroys the socket instead (see destroyAfterHeaders), so a client
// sees a broken transfer, never a clean short or wrong body.
import { STATUS_CODES } from 'node:http'
import { statusOf, ABSENT_CODES } from 'rotree-client/errors'
import { redactText } from './redact.js'
import { gatewayWhatToDo } from './what-to-do.js'

export { statusOf }

/**
 * Errors a listing or an index.html lookup may meet and go on: the name is
 * proved absent, or its symlinks lead round in a loop (a property of the
 * signed tree, not of the mirrors).
 */
export const NOWHERE_CODES = new Set([...ABSENT_CODES, 'ROTREE_SYMLINK_LOOP'])

const TEXT_HEADERS = [
  'Content-Type', 'text/plain; charset=utf-8',
  'X-Content-Type-Options', 'nosniff',
  'Cache-Control', 'no-store'
]

/**
 * Answer `err` with its status and a plain-text body naming the code (and, for
 * mirror failures, what each mirror did, with any credentials in a mirror URL
 * removed), then one line of what to do. After headers: destroy the socket.
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
  // the last line: what the person who got this page can do (what-to-do.js)
  const todo = gatewayWhatToDo(code)
  if (todo) body += `What to do: ${todo}\n`
  sendText(res, status, redactText(body), { head, headers: ['X-Rotree-Error', code, ...headers] })
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
  // node:http corks the socket on a response's first write and uncorks it on
  // the next tick; a failure that comes in the same run of microtasks (a
  // version-2 file whose chunk index failed while its lead chunk, FORMAT.md
  // §5.1, went out) would destroy the status line and the verified bytes
  // with the socket: the client would see an empty reply, not the broken
  // transfer (a verified prefix) it should. Flush them first.
  const socket = res.socket
  if (socket && !socket.destroyed) while (socket.writableCorked) socket.uncork()
  res.destroy() // no error argument: the socket's error path would report it as a client error
}

function oneLine (s) { return String(s ?? '').replace(/[\r\n]+\s*/g, ' ') }

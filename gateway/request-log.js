// What happens to each request once it is over: counted in the metrics (by
// method and status), and, when an access log is configured, one line in
// nginx's "combined" format with three fields added (the time taken, the
// sequence number of the root served, the rotree error code):
//
//   127.0.0.1 - - [23/Nov/2026:21:03:05 +0000] "GET /docs/a.txt HTTP/1.1" 200 1234 "-" "curl/8.5.0" 0.004 1795468985 -
//
// A gated gateway (edge-gate.js) adds a fourth: the holder of the grant whose
// edge token admitted the request (64 hex; '-' for a request no token
// admitted, or a token the exchange of this process did not give), and
// writes an edge token in the query as rotree_token=- (it is a bearer token).
// A request whose client went away before the status line went out is logged
// with status 499 (as nginx does). Client-supplied text (the request line,
// Referer, User-Agent) is written with '"', '\' and every byte outside
// printable ASCII as \xHH, so a request cannot forge a log line; mirror
// credentials never appear (the whole line goes through redact.js).
import fs from 'node:fs'
import { redactText } from './redact.js'
import { methodLabel } from './metrics.js'
import { UsageError } from 'rotree-client/errors'
import { TOKEN_QUERY } from '../server/edge-token.js'

const verified = new WeakMap() // res → file bytes sent that passed verification (bounded-body.js)
const trees = new WeakMap() // res → the label of the tree it was served from
const holders = new WeakMap() // res → the grant holder whose token admitted it (a gated gateway)

/** Count `n` verified file bytes written to `res`. */
export function countVerified (res, n) { verified.set(res, (verified.get(res) ?? 0) + n) }

/** Which tree `res` answers from ('/' or '/NAME/'), for the metrics. */
export function noteTree (res, label) { trees.set(res, label) }

/** The grant holder whose edge token admitted `res`'s request, for the access log. */
export function noteHolder (res, holder) { holders.set(res, holder) }

/**
 * An access log destination: null (none), '-' (stderr), a file path (appended
 * to), or anything with write(line).
 * @returns {{ write: (line: string) => void, close: () => Promise<void> } | null}
 */
export function openAccessLog (dest) {
  if (dest === null || dest === undefined || dest === false) return null
  if (dest === '-') return { write: l => process.stderr.write(l), close: async () => {} }
  if (typeof dest === 'string') {
    const s = fs.createWriteStream(dest, { flags: 'a' })
    s.on('error', () => {}) // a full disk must not take the gateway down; the lines are lost
    return { write: l => s.write(l), close: () => new Promise(resolve => s.end(resolve)) }
  }
  if (typeof dest.write === 'function') return { write: l => dest.write(l), close: async () => {} }
  throw new UsageError('gateway: accessLog must be a file path, \'-\' or a stream')
}

/**
 * Watch one request until it is over.
 * @param {import('node:http').IncomingMessage} req
 * @param {import('node:http').ServerResponse} res
 * @param {{ metrics: import('./metrics.js').Metrics, accessLog: { write: Function } | null, gate?: object | null }} o
 *   gate: set when the gateway is gated: each line names the holder
 */
export function watchRequest (req, res, { metrics, accessLog, gate = null }) {
  const t0 = process.hrtime.bigint()
  let body = 0
  let seen = null // the X-Rotree-Seq and X-Rotree-Error that went out (writeHead takes them as an array, not kept by getHeader)
  if (accessLog !== null) {
    const write = res.write
    const end = res.end
    const writeHead = res.writeHead
    res.write = function (c, ...a) { body += sizeOf(c); return write.call(this, c, ...a) }
    res.end = function (c, ...a) { if (typeof c !== 'function') body += sizeOf(c); return end.call(this, c, ...a) }
    res.writeHead = function (status, ...a) { seen = rotreeHeaders(a.find(x => typeof x === 'object' && x !== null)); return writeHead.call(this, status, ...a) }
  }
  res.once('close', () => {
    const status = res.headersSent ? res.statusCode : 499
    metrics.requests.inc({ method: methodLabel(req.method), status: String(status) })
    const v = verified.get(res)
    if (v !== undefined) metrics.verifiedBytes.inc({ tree: trees.get(res) ?? '/' }, v)
    if (accessLog === null) return
    const ms = Number(process.hrtime.bigint() - t0) / 1e6
    const line = accessLine(req, status, body, ms, seen) + (gate === null ? '' : ` ${holders.get(res) ?? '-'}`)
    accessLog.write(redactText(line) + '\n')
  })
}

function sizeOf (c) {
  if (c === undefined || c === null) return 0
  return typeof c === 'string' ? Buffer.byteLength(c) : c.length
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec']
const p2 = n => String(n).padStart(2, '0')

/** [10/Oct/2000:13:55:36 +0000], in UTC. */
export function logTime (d = new Date()) {
  return `[${p2(d.getUTCDate())}/${MONTHS[d.getUTCMonth()]}/${d.getUTCFullYear()}:${p2(d.getUTCHours())}:${p2(d.getUTCMinutes())}:${p2(d.getUTCSeconds())} +0000]`
}

/** Client text for a quoted log field: '"', '\' and anything but printable ASCII as \xHH. */
export function escapeLogField (s) {
  if (s === undefined || s === null || s === '') return '-'
  return Buffer.from(String(s), 'utf8').toString('latin1').replace(/[^\x20-\x7e]|["\\]/g, c => '\\x' + c.charCodeAt(0).toString(16).padStart(2, '0'))
}

/** X-Rotree-Seq and X-Rotree-Error from writeHead's headers (a flat array or an object). */
function rotreeHeaders (h) {
  const out = { seq: '-', code: '-' }
  if (h === undefined) return out
  const pairs = Array.isArray(h) ? h.flatMap((x, i) => i % 2 === 0 ? [[x, h[i + 1]]] : []) : Object.entries(h)
  for (const [k, v] of pairs) {
    const n = String(k).toLowerCase()
    if (n === 'x-rotree-seq') out.seq = escapeLogField(v)
    else if (n === 'x-rotree-error') out.code = escapeLogField(v)
  }
  return out
}

const TOKEN_IN_QUERY = new RegExp(`([?&]${TOKEN_QUERY}=)[^&#]*`, 'g')

/** A request target with the value of an edge token in its query written as '-': a token is a bearer token (edge-gate.js). */
export function withoutToken (url) {
  return typeof url === 'string' && url.includes(TOKEN_QUERY) ? url.replace(TOKEN_IN_QUERY, '$1-') : url
}

function accessLine (req, status, body, ms, seen) {
  const addr = req.socket?.remoteAddress ?? '-'
  const request = `${req.method} ${withoutToken(req.url)} HTTP/${req.httpVersion}`
  const seq = seen?.seq ?? '-'
  const code = seen?.code ?? '-'
  return `${addr} - - ${logTime()} "${escapeLogField(request)}" ${status} ${body} "${escapeLogField(req.headers.referer)}" "${escapeLogField(req.headers['user-agent'])}" ${(ms / 1000).toFixed(3)} ${seq} ${code}`
}

// `rotree gateway` as a node:http server: the middleware of gateway.js with no
// framework in front (the hot path pays no per-request framework cost), plus
// what only a server can do: answer malformed requests and oversized headers
// with a clear 4xx before any handler runs, and shut down gracefully.
import http from 'node:http'
import { listen as listenOn, gracefulClose } from '../server/lifecycle.js'
import { gateway } from './gateway.js'

export const MAX_HEADER_BYTES = 16 * 1024

/**
 * @param {object} opts gateway() options, plus { maxHeaderSize }
 * @returns {Promise<{ handler, gateway, server: http.Server, listen: (o?: { port?: number, host?: string }) => Promise<{ url: string, port: number, host: string }>, close: (o?: { timeoutMs?: number }) => Promise<void> }>}
 *   resolves when the disk cache is open and each tree has been tried once
 */
export async function createGatewayServer ({ maxHeaderSize = MAX_HEADER_BYTES, ...opts } = {}) {
  const mw = gateway(opts)
  try {
    await mw.ready
  } catch (err) {
    await mw.close().catch(() => {})
    throw err
  }
  const handler = (req, res) => mw(req, res)
  const server = http.createServer({ maxHeaderSize, requireHostHeader: false }, handler)
  server.keepAliveTimeout = 30_000
  server.on('clientError', onClientError)

  const listen = ({ port = 8081, host = '127.0.0.1' } = {}) => listenOn(server, { port, host })
  const closeServer = gracefulClose(server)
  let closing = null
  const close = opts => (closing ??= closeServer(opts).finally(() => mw.close()))

  return { handler, gateway: mw, server, listen, close }
}

// Node's parser rejects these before any handler sees them; the default answer
// has no body. Bad input gets a 4xx that says what was wrong.
const CLIENT_ERRORS = {
  HPE_HEADER_OVERFLOW: [431, 'Request Header Fields Too Large', `request line and headers together may be at most ${MAX_HEADER_BYTES / 1024} KiB`],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'Request Timeout', 'the request did not arrive in time'],
  HPE_INVALID_METHOD: [400, 'Bad Request', 'unknown HTTP method'],
  HPE_INVALID_URL: [400, 'Bad Request', 'malformed request target (control characters or spaces in the URL?)']
}

function onClientError (err, socket) {
  if (err.code === 'ECONNRESET' || !socket.writable) return socket.destroy()
  const [status, reason, why] = CLIENT_ERRORS[err.code] ?? [400, 'Bad Request', 'malformed HTTP request']
  const body = `${status} ${reason}\n${why}\n`
  socket.end(`HTTP/1.1 ${status} ${reason}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`)
}

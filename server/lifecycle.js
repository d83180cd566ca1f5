// Listening and graceful shutdown for the node:http servers rotree runs
// (`rotree serve`, `rotree gateway`): one implementation for both.

/** Listen on host:port; resolves with the origin URL (ending in '/', like a mirror URL). */
export function listen (server, { port, host }) {
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => {
      server.off('error', reject)
      const a = server.address()
      const h = a.family === 'IPv6' || a.family === 6 ? `[${a.address}]` : a.address
      resolve({ url: `http://${h}:${a.port}/`, port: a.port, host: a.address })
    })
  })
}

/**
 * A close({ timeoutMs }) for `server`, idempotent: stop accepting; idle
 * keep-alive sockets close now, busy ones as soon as their response ends (the
 * sweep), and whatever is left at the deadline is cut, so a stalled client
 * cannot hold shutdown forever.
 */
export function gracefulClose (server) {
  let closing = null
  return ({ timeoutMs = 5000 } = {}) => {
    closing ??= new Promise((resolve, reject) => {
      const sweep = setInterval(() => server.closeIdleConnections(), 50)
      const deadline = setTimeout(() => server.closeAllConnections(), timeoutMs)
      server.close(err => {
        clearInterval(sweep)
        clearTimeout(deadline)
        if (err && err.code !== 'ERR_SERVER_NOT_RUNNING') reject(err); else resolve()
      })
      server.closeIdleConnections()
    })
    return closing
  }
}

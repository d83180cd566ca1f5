// A proxy for tests of how many requests a reader keeps in flight: it counts
// blob requests per path and holds each one until `gather` of them are
// waiting or `holdMs` have passed, so requests a reader sends together meet
// here and requests it sends one after another do not. No timing is
// asserted: `peak` (the most blob requests waiting at once) is a count.
import http from 'node:http'

/**
 * A proxy in front of `upstream` that counts blob requests per path and
 * holds each one until `gather` of them are waiting or `holdMs` have passed,
 * so requests a reader sends together meet here, and requests it sends one
 * after another do not. `peak`: the most blob requests waiting at once.
 */
export async function countingProxy (t, upstream, { gather = Infinity, holdMs = 0 } = {}) {
  const up = new URL(upstream)
  const stats = { peak: 0, perPath: new Map() }
  let waiting = []
  const release = () => { const w = waiting; waiting = []; for (const go of w) go() }
  const srv = http.createServer((req, res) => {
    const go = () => http.get({ host: up.hostname, port: up.port, path: req.url, headers: req.headers }, r => {
      res.writeHead(r.statusCode, r.headers)
      r.pipe(res)
    }).on('error', () => res.destroy())
    if (!req.url.startsWith('/h/')) return go()
    stats.perPath.set(req.url, (stats.perPath.get(req.url) ?? 0) + 1)
    waiting.push(go)
    stats.peak = Math.max(stats.peak, waiting.length)
    if (waiting.length >= gather) release()
    else setTimeout(() => { const i = waiting.indexOf(go); if (i >= 0) { waiting.splice(i, 1); go() } }, holdMs)
  })
  await new Promise(resolve => srv.listen(0, '127.0.0.1', resolve))
  t.after(() => { release(); srv.closeAllConnections(); srv.close() })
  return { url: `http://127.0.0.1:${srv.address().port}/`, stats }
}


// A plain static mirror of a published folder on 127.0.0.1:0, serving the
// three kinds of path a reader asks for (docs/FORMAT.md §1.1, §12.2):
// fsinfo.json, h/<64 hex> and trust/<seq>.json. A test can make it lie by
// omission or serve other bytes for one path (set), as a mirror that hides a
// rotation or serves another tree would.
import http from 'node:http'
import fs from 'node:fs/promises'
import path from 'node:path'

const PATH_RE = /^\/(?:fsinfo\.json|h\/[0-9a-f]{64}|trust\/[1-9][0-9]{0,15}\.json)$/

/**
 * @param {string} dir a published folder
 * @returns {Promise<{ url: string, dir: string, set (p: string, body: Uint8Array|string|null|undefined): void, requests: string[], close (): Promise<void> }>}
 *   set('/trust/2.json', null) answers 404 for it; undefined serves the file again
 */
export async function startStaticMirror (dir) {
  const overrides = new Map()
  const requests = []
  const server = http.createServer(async (req, res) => {
    const p = new URL(req.url, 'http://x').pathname
    requests.push(p)
    let body = null
    if ((req.method === 'GET' || req.method === 'HEAD') && PATH_RE.test(p)) {
      body = overrides.has(p) ? overrides.get(p) : await fs.readFile(path.join(dir, p.slice(1))).catch(() => null)
    }
    if (body === null) { res.writeHead(404, { 'content-length': 0 }).end(); return }
    if (typeof body === 'string') body = Buffer.from(body)
    res.writeHead(200, { 'content-length': body.length, 'cache-control': 'no-store' })
    res.end(req.method === 'HEAD' ? undefined : body)
  })
  await new Promise(resolve => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${server.address().port}/`,
    dir,
    requests,
    set (p, body) { if (body === undefined) overrides.delete(p); else overrides.set(p, body) },
    close () { server.closeAllConnections(); return new Promise(resolve => server.close(resolve)) }
  }
}

// `rotree token-server`: the token exchange of a gated edge on its own
// (docs/FORMAT.md §12.11, docs/DEPLOY.md), for whatever edge serves the
// files: POST /.rotree/token trades a grant for an edge token of the tree
// the grant names, among the trees of the folders given; GET /.rotree/check
// tells an edge that cannot check a token itself (Caddy's forward_auth)
// whether a request's token is good. Nothing else is served: no blob, no
// file of any folder.
import http from 'node:http'
import { listen as listenOn, gracefulClose } from './lifecycle.js'
import { createGate } from './gate.js'
import { sendStatus } from './blob-route.js'
import { TOKEN_PATH } from './edge-token.js'

export const CHECK_PATH = '/.rotree/check'

/**
 * @param {{ dirs: string[], secret: string, ttlS?: number, log?: { info?: Function, error?: Function } | null, accessLog?: ((line: string) => void) | null }} o
 */
export async function createTokenServer ({ dirs, secret, ttlS, log = null, accessLog = null }) {
  const gate = await createGate({ dirs, secret, ttlS, log, accessLog })
  const server = http.createServer((req, res) => {
    const path = req.url.split('?')[0]
    if (path === TOKEN_PATH && req.method === 'POST') return gate.token(req, res)
    if (path === CHECK_PATH && (req.method === 'GET' || req.method === 'HEAD')) return gate.check(req, res)
    if (path === TOKEN_PATH && req.method === 'OPTIONS') {
      // a browser's preflight of the JSON POST
      res.writeHead(204, ['Access-Control-Allow-Origin', '*', 'Access-Control-Allow-Methods', 'POST, OPTIONS', 'Access-Control-Allow-Headers', 'Content-Type', 'Access-Control-Max-Age', '86400', 'Cache-Control', 'no-store'])
      return res.end()
    }
    sendStatus(res, 404, 'not found\n')
  })
  server.keepAliveTimeout = 30_000
  return {
    server,
    trees: gate.trees,
    listen: o => listenOn(server, o),
    close: gracefulClose(server)
  }
}

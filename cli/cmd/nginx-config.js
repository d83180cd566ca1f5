// rotree nginx-config
import fs from 'node:fs'
import path from 'node:path'
import { UsageError } from 'rotree-client/errors'
import { serverBlock, fullConfig, webServerBlocks } from '../../server/nginx-config.js'

export default {
  usage: 'nginx-config OUT --listen HOST:PORT [--full --prefix DIR] [--web --app-host NAME] [--gated SECRETFILE [--token-upstream HOST:PORT]]',
  summary: 'print an nginx config serving OUT (a server block; --full: a whole nginx.conf)',
  positionals: [1, 1],
  options: {
    listen: { type: 'string', arg: 'HOST:PORT', help: 'what nginx listens on: HOST:PORT, [IPv6]:PORT or PORT; required' },
    full: { type: 'boolean', help: 'a complete nginx.conf for `nginx -p DIR -c FILE` as an ordinary user (needs --prefix)' },
    prefix: { type: 'string', arg: 'DIR', help: 'with --full: where nginx keeps its pid file, logs and temporary files' },
    base: { type: 'string', arg: 'PATH', help: 'URL path the tree is served under (default /; e.g. /pub/)' },
    'fsinfo-max-age': { type: 'string', arg: 'SECONDS', help: 'Cache-Control max-age of fsinfo.json (default 30)' },
    workers: { type: 'string', arg: 'N', help: 'with --full: worker_processes (default auto)' },
    web: { type: 'boolean', help: 'also serve the verifying web app, each site on its own per-key host (docs/WEB.md); needs --app-host' },
    'app-host': { type: 'string', arg: 'NAME', help: 'with --web: the app\'s host name; sites are served from <key label>.NAME' },
    'web-root': { type: 'string', arg: 'DIR', help: 'with --web: the web app\'s files (default: this checkout\'s web/)' },
    gated: { type: 'string', arg: 'SECRETFILE', help: 'serve blobs only with an edge token, checked by nginx\'s secure_link with this secret (docs/FORMAT.md §12.11); the config then holds the secret' },
    'token-upstream': { type: 'string', arg: 'HOST:PORT', help: 'with --gated: pass POST /.rotree/token to the rotree serve --grants there (same secret)' }
  },
  async run ([out], v, io) {
    if (!v.listen) throw new UsageError('--listen HOST:PORT is required')
    if (v.full && !v.prefix) throw new UsageError('--full needs --prefix DIR')
    if (!v.full && (v.prefix || v.workers)) throw new UsageError('--prefix and --workers go with --full')
    if (!fs.existsSync(path.join(out, 'h'))) io.stderr.write(`rotree: warning: ${out} has no h/ yet (not built?)\n`)
    let maxAge
    if (v['fsinfo-max-age'] !== undefined) {
      maxAge = Number(v['fsinfo-max-age'])
      if (!Number.isInteger(maxAge) || maxAge < 0) throw new UsageError('--fsinfo-max-age must be a whole number of seconds')
    }
    if (!v.web && (v['app-host'] || v['web-root'])) throw new UsageError('--app-host and --web-root go with --web')
    let web = null
    if (v.web) {
      if (!v['app-host']) throw new UsageError('--web needs --app-host NAME')
      const webRoot = v['web-root'] ?? new URL('../../web/', import.meta.url).pathname
      if (!fs.existsSync(path.join(webRoot, 'rotree-client.js'))) throw new UsageError(`--web: ${webRoot} has no rotree-client.js (run npm run build:browser)`)
      web = { appHost: v['app-host'], webRoot }
    }
    if (!v.gated && v['token-upstream']) throw new UsageError('--token-upstream goes with --gated')
    if (v.gated && web) throw new UsageError('--gated and --web: not together yet (serve the web app from another server block)')
    let gate = null
    if (v.gated) {
      const { readSecret } = await import('../../server/edge-token.js')
      const { gatedTree } = await import('../../server/gate.js')
      gate = { secret: await readSecret(v.gated), tree: (await gatedTree(out)).id, tokenUpstream: v['token-upstream'] ?? null }
      if (!gate.tokenUpstream) io.stderr.write('rotree: note: no --token-upstream: holders get their tokens from a rotree serve --grants elsewhere (same secret)\n')
    }
    const o = { out, listen: v.listen, base: v.base, fsinfoMaxAge: maxAge, gate }
    const warn = m => io.stderr.write(`rotree: warning: ${m}\n`)
    const text = v.full
      ? fullConfig({ ...o, prefix: v.prefix, workers: v.workers, warn, web })
      : web ? webServerBlocks({ ...o, ...web }) : serverBlock(o)
    io.stdout.write(text)
  }
}

// rotree caddy-config
import { UsageError } from 'rotree-client/errors'
import { caddyConfig } from '../../server/caddy-config.js'

export default {
  usage: 'caddy-config OUT --listen HOST:PORT [--base PATH] [--fsinfo-max-age SECONDS] [--full] [--gated --token-upstream HOST:PORT]',
  summary: 'print a Caddyfile serving only fsinfo.json, h/, trust/ and history/ of OUT (docs/DEPLOY.md)',
  positionals: [1, 1],
  options: {
    listen: { type: 'string', arg: 'HOST:PORT', help: 'what Caddy listens on (plain HTTP; put TLS in your own site block); required' },
    base: { type: 'string', arg: 'PATH', help: 'URL path the tree is served under (default /)' },
    'fsinfo-max-age': { type: 'string', arg: 'SECONDS', help: 'Cache-Control max-age of fsinfo.json (default 30)' },
    full: { type: 'boolean', help: 'a whole Caddyfile (global options included), for `caddy run --config FILE`' },
    gated: { type: 'boolean', help: 'serve blobs only with an edge token, each checked by the rotree token-server at --token-upstream (Caddy cannot check the MD5 itself; docs/DEPLOY.md)' },
    'token-upstream': { type: 'string', arg: 'HOST:PORT', help: 'with --gated: the rotree token-server (required): it checks tokens and hands them out' }
  },
  async run ([out], v, io) {
    if (!v.listen) throw new UsageError('--listen HOST:PORT is required')
    if (!v.gated && v['token-upstream']) throw new UsageError('--token-upstream goes with --gated')
    let gate = null
    if (v.gated) {
      if (!v['token-upstream']) throw new UsageError('--gated needs --token-upstream HOST:PORT: stock Caddy cannot check an edge token\'s MD5, so it asks a rotree token-server there for each blob (docs/DEPLOY.md)')
      const { gatedTree } = await import('../../server/gate.js')
      gate = { tree: (await gatedTree(out)).id, upstream: v['token-upstream'] }
    }
    io.stdout.write(caddyConfig({ out, listen: v.listen, base: v.base, fsinfoMaxAge: seconds(v['fsinfo-max-age'], 'fsinfo-max-age'), full: !!v.full, gate }))
  }
}

export function seconds (s, name) {
  if (s === undefined) return undefined
  const n = Number(s)
  if (!Number.isInteger(n) || n < 0) throw new UsageError(`--${name} must be a whole number of seconds`)
  return n
}

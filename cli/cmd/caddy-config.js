// rotree caddy-config
import { UsageError } from 'rotree-client/errors'
import { caddyConfig } from '../../server/caddy-config.js'

export default {
  usage: 'caddy-config OUT --listen HOST:PORT [--base PATH] [--fsinfo-max-age SECONDS] [--full]',
  summary: 'print a Caddyfile serving only fsinfo.json, h/, trust/ and history/ of OUT (docs/DEPLOY.md)',
  positionals: [1, 1],
  options: {
    listen: { type: 'string', arg: 'HOST:PORT', help: 'what Caddy listens on (plain HTTP; put TLS in your own site block); required' },
    base: { type: 'string', arg: 'PATH', help: 'URL path the tree is served under (default /)' },
    'fsinfo-max-age': { type: 'string', arg: 'SECONDS', help: 'Cache-Control max-age of fsinfo.json (default 30)' },
    full: { type: 'boolean', help: 'a whole Caddyfile (global options included), for `caddy run --config FILE`' }
  },
  async run ([out], v, io) {
    if (!v.listen) throw new UsageError('--listen HOST:PORT is required')
    io.stdout.write(caddyConfig({ out, listen: v.listen, base: v.base, fsinfoMaxAge: seconds(v['fsinfo-max-age'], 'fsinfo-max-age'), full: !!v.full }))
  }
}

export function seconds (s, name) {
  if (s === undefined) return undefined
  const n = Number(s)
  if (!Number.isInteger(n) || n < 0) throw new UsageError(`--${name} must be a whole number of seconds`)
  return n
}

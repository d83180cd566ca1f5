// rotree varnish-config
import { UsageError } from 'rotree-client/errors'
import { varnishConfig } from '../../server/varnish-config.js'
import { seconds } from './caddy-config.js'

export default {
  usage: 'varnish-config --backend HOST:PORT [--base PATH] [--grace SECONDS] [--host-header NAME] [--gated]',
  summary: 'print a Varnish VCL for an edge in front of a mirror: blobs kept, absences never (docs/DEPLOY.md)',
  positionals: [0, 0],
  options: {
    backend: { type: 'string', arg: 'HOST:PORT', help: 'the origin mirror (nginx, rotree serve, …); required' },
    base: { type: 'string', arg: 'PATH', help: 'URL path of the tree, on the edge and the origin alike (default /)' },
    grace: { type: 'string', arg: 'SECONDS', help: 'how long a stale fsinfo.json may be served while a fresh one is fetched (default 10)' },
    'host-header': { type: 'string', arg: 'NAME', help: 'Host sent to the origin (default: the client\'s)' },
    gated: { type: 'boolean', help: 'the backend is nginx from nginx-config --gated: tokens pass through to it, each cached blob is kept per token and no longer than it lives (Varnish cannot check the token itself; docs/DEPLOY.md)' }
  },
  async run (_, v, io) {
    if (!v.backend) throw new UsageError('--backend HOST:PORT is required')
    io.stdout.write(varnishConfig({ backend: v.backend, base: v.base, grace: seconds(v.grace, 'grace'), hostHeader: v['host-header'], gated: !!v.gated }))
  }
}

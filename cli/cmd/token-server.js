// rotree token-server
import fs from 'node:fs'
import path from 'node:path'
import { UsageError, BadPathError } from 'rotree-client/errors'
import { untilSignal } from '../common.js'
import { parseDuration } from '../../builder/duration.js'

export default {
  usage: 'token-server --grants SECRETFILE --tree OUT… [--port 8082] [--host 127.0.0.1] [--token-ttl 10m] [--access-log FILE|-]',
  summary: 'the token exchange of gated edges alone: POST /.rotree/token for the trees of the folders given (docs/DEPLOY.md)',
  positionals: [0, 0],
  options: {
    grants: { type: 'string', arg: 'SECRETFILE', help: 'the edge secret the edges check tokens with (rotree grant secret writes it); required' },
    tree: { type: 'string', multiple: true, arg: 'OUT', help: 'a published folder whose tree holders may get tokens for (its fsinfo.json and trust/ name the tree and its access role); repeatable, at least one' },
    port: { type: 'string', arg: 'PORT', help: 'port to listen on (default 8082; 0 picks one)' },
    host: { type: 'string', arg: 'HOST', help: 'address to bind (default 127.0.0.1: the edge in front passes /.rotree/token here)' },
    'token-ttl': { type: 'string', arg: 'DURATION', help: 'how long an edge token lives (default 10m)' },
    'access-log': { type: 'string', arg: 'FILE', help: 'one line per /.rotree/check request (Caddy\'s forward_auth) naming the token\'s holder, to FILE (- for stderr)' }
  },
  async run (_, v, io) {
    if (!v.grants) throw new UsageError('--grants SECRETFILE is required')
    if (!v.tree?.length) throw new UsageError('give at least one --tree OUT (a published folder)')
    for (const out of v.tree) {
      if (!fs.existsSync(path.join(out, 'fsinfo.json'))) throw new BadPathError(`--tree ${out} has no fsinfo.json (a published folder, built and signed)`)
    }
    const port = v.port === undefined ? 8082 : Number(v.port)
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError('--port must be 0..65535')
    const ttlMs = parseDuration(v['token-ttl'] ?? '10m')
    if (!ttlMs || ttlMs > 86400e3) throw new UsageError(`--token-ttl ${v['token-ttl']}: a duration up to 1d, such as 10m`)
    const { readSecret } = await import('../../server/edge-token.js')
    const { createTokenServer } = await import('../../server/token-server.js')
    const { accessLogTo } = await import('./serve.js')
    const log = { info: m => io.stderr.write(m + '\n'), error: m => io.stderr.write(m + '\n') }
    const access = accessLogTo(v['access-log'] ?? null, io)
    const srv = await createTokenServer({ dirs: v.tree, secret: await readSecret(v.grants), ttlS: Math.floor(ttlMs / 1000), log, accessLog: access?.write ?? null })
    const { url } = await srv.listen({ port, host: v.host ?? '127.0.0.1' })
    for (const t of srv.trees()) io.stdout.write(`tree ${t.id}\n`)
    io.stdout.write(`token exchange at ${url}.rotree/token\n`) // tests parse "at URL"
    await untilSignal()
    await srv.close({ timeoutMs: 5000 })
    await access?.close()
  }
}

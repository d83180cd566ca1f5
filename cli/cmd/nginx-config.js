// rotree nginx-config
import fs from 'node:fs'
import path from 'node:path'
import { UsageError } from 'rotree-client/errors'
import { serverBlock, fullConfig } from '../../server/nginx-config.js'

export default {
  usage: 'nginx-config OUT --listen HOST:PORT [--full --prefix DIR]',
  summary: 'print an nginx config serving OUT (a server block; --full: a whole nginx.conf)',
  positionals: [1, 1],
  options: {
    listen: { type: 'string', arg: 'HOST:PORT', help: 'what nginx listens on: HOST:PORT, [IPv6]:PORT or PORT; required' },
    full: { type: 'boolean', help: 'a complete nginx.conf for `nginx -p DIR -c FILE` as an ordinary user (needs --prefix)' },
    prefix: { type: 'string', arg: 'DIR', help: 'with --full: where nginx keeps its pid file, logs and temporary files' },
    base: { type: 'string', arg: 'PATH', help: 'URL path the tree is served under (default /; e.g. /pub/)' },
    'fsinfo-max-age': { type: 'string', arg: 'SECONDS', help: 'Cache-Control max-age of fsinfo.json (default 30)' },
    workers: { type: 'string', arg: 'N', help: 'with --full: worker_processes (default auto)' }
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
    let text
    try {
      const o = { out, listen: v.listen, base: v.base, fsinfoMaxAge: maxAge }
      text = v.full ? fullConfig({ ...o, prefix: v.prefix, workers: v.workers }) : serverBlock(o)
    } catch (err) {
      if (err instanceof RangeError) throw new UsageError(err.message)
      throw err
    }
    io.stdout.write(text)
  }
}

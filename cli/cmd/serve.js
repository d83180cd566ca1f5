// rotree serve
import fs from 'node:fs'
import path from 'node:path'
import { UsageError } from 'rotree-client/errors'

export default {
  usage: 'serve OUT [--port 8080] [--host 127.0.0.1] [--web]',
  summary: 'serve a published folder over HTTP (fsinfo.json and h/<hash>)',
  positionals: [1, 1],
  options: {
    port: { type: 'string', arg: 'PORT', help: 'port to listen on (default 8080; 0 picks one)' },
    host: { type: 'string', arg: 'HOST', help: 'address to bind (default 127.0.0.1)' },
    web: { type: 'boolean', help: 'also serve the web app at /' }
  },
  async run ([out], v, io) {
    const { createRotreeServer } = await import('../../server/index.js')
    if (!fs.existsSync(path.join(out, 'h'))) throw new UsageError(`${out} is not a published folder (no h/); run rotree build first`)
    const port = v.port === undefined ? 8080 : Number(v.port)
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError('--port must be 0..65535')
    const webRoot = v.web ? new URL('../../web/', import.meta.url).pathname : null
    if (webRoot && !fs.existsSync(webRoot)) throw new UsageError('--web: the web app is not built in this checkout')
    if (webRoot && !fs.existsSync(path.join(webRoot, 'rotree-client.js'))) throw new UsageError('--web: the web app needs the browser build of the client: run npm run build:browser')
    const srv = await createRotreeServer({ dir: out, webRoot })
    const { url } = await srv.listen({ port, host: v.host ?? '127.0.0.1' })
    io.stdout.write(`serving ${out} at ${url}\n`)
    await new Promise(resolve => {
      const stop = () => { process.off('SIGINT', stop); process.off('SIGTERM', stop); resolve() }
      process.on('SIGINT', stop); process.on('SIGTERM', stop)
    })
    await srv.close({ timeoutMs: 5000 })
  }
}

// rotree serve
import fs from 'node:fs'
import path from 'node:path'
import { UsageError, BadPathError } from 'rotree-client/errors'
import { decodeFsinfo } from 'rotree-client/internal'
import { expiryWarning } from '../expiry.js'

const RECHECK_MS = 60_000 // how often fsinfo.json is re-read for the expiry warning (serve picks up rebuilds)

export default {
  usage: 'serve OUT [--port 8080] [--host 127.0.0.1] [--web]',
  summary: 'serve a published folder over HTTP (fsinfo.json and h/<hash>); prints the address to give readers',
  positionals: [1, 1],
  options: {
    port: { type: 'string', arg: 'PORT', help: 'port to listen on (default 8080; 0 picks one)' },
    host: { type: 'string', arg: 'HOST', help: 'address to bind (default 127.0.0.1)' },
    web: { type: 'boolean', help: 'also serve the web app at /' }
  },
  async run ([out], v, io) {
    const port = v.port === undefined ? 8080 : Number(v.port)
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError('--port must be 0..65535')
    // a folder that is not built is not a usage mistake: one coded line, exit 1
    if (!fs.existsSync(path.join(out, 'h'))) throw new BadPathError(`${out} is not a published folder (no h/): build it first (rotree build SRC ${out})`)
    if (!fs.existsSync(path.join(out, 'fsinfo.json'))) throw new BadPathError(`${out} has no fsinfo.json (build it first${fs.existsSync(path.join(out, 'unsigned.json')) ? ', or sign its unsigned.json with rotree sign' : ''})`)
    const { createRotreeServer } = await import('../../server/index.js')
    const webRoot = v.web ? new URL('../../web/', import.meta.url).pathname : null
    if (webRoot && !fs.existsSync(webRoot)) throw new UsageError('--web: the web app is not built in this checkout')
    if (webRoot && !fs.existsSync(path.join(webRoot, 'rotree-client.js'))) throw new UsageError('--web: the web app needs the browser build of the client: run npm run build:browser')
    const srv = await createRotreeServer({ dir: out, webRoot })
    const { url } = await srv.listen({ port, host: v.host ?? '127.0.0.1' })
    io.stdout.write(`serving ${out} at ${url}\n`) // tests and scripts parse this line: keep "at URL"
    const watch = fsinfoWatcher(out, io)
    const first = watch.check()
    if (first) {
      io.stdout.write(`address: ${url}#${first.key}\n`)
      if (webRoot) io.stdout.write(`open ${url}#${first.key} in a browser for the verifying web app\n`)
    }
    const timer = setInterval(() => watch.check(), RECHECK_MS)
    timer.unref()
    await new Promise(resolve => {
      const stop = () => { process.off('SIGINT', stop); process.off('SIGTERM', stop); resolve() }
      process.on('SIGINT', stop); process.on('SIGTERM', stop)
    })
    clearInterval(timer)
    await srv.close({ timeoutMs: 5000 })
  }
}

/**
 * Reads OUT/fsinfo.json now and then: warns on stderr when the tree is close
 * to expiry, once per sequence number (so again after each re-sign that is
 * still too short), and when it cannot be read. The server does no
 * cryptography and neither does this: readers verify the signature.
 */
function fsinfoWatcher (out, io) {
  let warnedSeq = null
  let broken = null
  return {
    check () {
      let info
      try {
        info = decodeFsinfo(fs.readFileSync(path.join(out, 'fsinfo.json')))
        broken = null
      } catch (err) {
        const m = `rotree: warning: ${path.join(out, 'fsinfo.json')}: ${err.code ?? ''} ${err.message}`
        if (m !== broken) io.stderr.write(m + '\n')
        broken = m
        return null
      }
      const w = expiryWarning(info)
      if (w && warnedSeq !== info.seq) { io.stderr.write(w + '\n'); warnedSeq = info.seq }
      return info
    }
  }
}

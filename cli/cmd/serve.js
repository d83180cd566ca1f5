// rotree serve
import fs from 'node:fs'
import path from 'node:path'
import { UsageError, BadPathError } from 'rotree-client/errors'
import { MAX_FSINFO_V2 } from 'rotree-client/format'
import { decodeRoot } from '../../lib/published/signed-roots.js'
import { readRegular } from '../../lib/open-regular.js'
import { expiryWarning } from '../expiry.js'
import { untilSignal } from '../common.js'
import { parseDuration } from '../../builder/duration.js'

const RECHECK_MS = 60_000 // how often fsinfo.json is re-read for the expiry warning (serve picks up rebuilds)

export default {
  usage: 'serve OUT [--port 8080] [--host 127.0.0.1] [--web] [--grants SECRETFILE [--token-ttl 10m] [--access-log FILE|-|off]]',
  summary: 'serve a published folder over HTTP (fsinfo.json and h/<hash>); prints the address to give readers',
  positionals: [1, 1],
  options: {
    port: { type: 'string', arg: 'PORT', help: 'port to listen on (default 8080; 0 picks one)' },
    host: { type: 'string', arg: 'HOST', help: 'address to bind (default 127.0.0.1)' },
    web: { type: 'boolean', help: 'also serve the web app at /' },
    grants: { type: 'string', arg: 'SECRETFILE', help: 'gate the tree: blobs only with an edge token, minted at POST /.rotree/token for a grant (rotree grant secret writes the file; docs/FORMAT.md §12.11)' },
    'token-ttl': { type: 'string', arg: 'DURATION', help: 'with --grants: how long an edge token lives (default 10m)' },
    'access-log': { type: 'string', arg: 'FILE', help: 'with --grants: one line per blob request naming the holder of its token\'s grant, to FILE (default -, stderr; off for none)' }
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
    if (!v.grants && (v['token-ttl'] || v['access-log'])) throw new UsageError('--token-ttl and --access-log go with --grants')
    let gate = null
    let access = null
    if (v.grants) {
      const { readSecret } = await import('../../server/edge-token.js')
      const ttlMs = parseDuration(v['token-ttl'] ?? '10m')
      if (!ttlMs || ttlMs > 86400e3) throw new UsageError(`--token-ttl ${v['token-ttl']}: a duration up to 1d, such as 10m`)
      access = accessLogTo(v['access-log'] ?? '-', io)
      gate = { secret: await readSecret(v.grants), ttlS: Math.floor(ttlMs / 1000), accessLog: access?.write ?? null }
    }
    const srv = await createRotreeServer({ dir: out, webRoot, gate })
    const { url } = await srv.listen({ port, host: v.host ?? '127.0.0.1' })
    io.stdout.write(`serving ${out} at ${url}\n`) // tests and scripts parse this line: keep "at URL"
    const watch = fsinfoWatcher(out, io)
    const first = await watch.check()
    const frag = first && fragmentOf(first)
    if (gate) io.stdout.write(`gated: blobs only with an edge token; holders of a grant ask POST ${url}.rotree/token\n`)
    if (frag) {
      io.stdout.write(`address: ${url}#${frag}\n`)
      if (webRoot) io.stdout.write(`open ${url}#${frag} in a browser for the verifying web app\n`)
    }
    const timer = setInterval(() => watch.check(), RECHECK_MS)
    timer.unref()
    await untilSignal()
    clearInterval(timer)
    await srv.close({ timeoutMs: 5000 })
    await access?.close()
  }
}

/**
 * Where a gated edge's access log goes: FILE (appended), - (stderr), off or
 * null (nowhere).
 * @returns {{ write: (line: string) => void, close: () => Promise<void> } | null}
 */
export function accessLogTo (target, io) {
  if (target === null || target === 'off') return null
  if (target === '-') return { write: line => io.stderr.write(line + '\n'), close: async () => {} }
  const stream = fs.createWriteStream(target, { flags: 'a' })
  stream.on('error', err => io.stderr.write(`rotree: warning: --access-log ${target}: ${err.code ?? err.message}\n`))
  return { write: line => stream.write(line + '\n'), close: () => new Promise(resolve => stream.end(resolve)) }
}

/**
 * The address fragment of the tree OUT publishes (what readers are given):
 * version 1's key; version 2's anchor and name (FORMAT.md §12.4: fsinfo.json
 * names both). Readers check them against what is signed; this only prints.
 */
function fragmentOf (r) {
  return r.version === 1 ? r.key : `${r.info.anchor}${r.name ? ':' + r.name : ''}`
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
    async check () {
      let r
      try {
        // as the server reads it: a link or FIFO planted there is not followed or waited on
        const bytes = await readRegular(path.join(out, 'fsinfo.json'), MAX_FSINFO_V2)
        if (bytes === null) throw new BadPathError('missing, or not a regular file')
        r = decodeRoot(bytes) // either format version (a longer file does not decode)
        broken = null
      } catch (err) {
        const m = `rotree: warning: ${path.join(out, 'fsinfo.json')}: ${err.code ?? ''} ${err.message}`
        if (m !== broken) io.stderr.write(m + '\n')
        broken = m
        return null
      }
      // version 2: readers refuse it once fsinfo.json or its release has expired (FORMAT.md §12.4)
      const w = expiryWarning(r.version === 1 ? r.info : { issuedMs: r.info.issuedMs, expiresMs: Math.min(r.info.expiresMs, r.info.release.expiresMs) })
      if (w && warnedSeq !== r.seq) { io.stderr.write(w + '\n'); warnedSeq = r.seq }
      return r
    }
  }
}

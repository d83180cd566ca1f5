// rotree gateway
import path from 'node:path'
import { UsageError } from 'rotree-client/errors'
import { READER_OPTIONS, positiveInt, parseDuration, stateDirOf, treeAddress, readerOptions, untilSignal } from '../common.js'
import { expiryWarning } from '../expiry.js'
import fs from 'node:fs'
import { decodeGrant } from 'rotree-client/grant'
import { parseAddress } from 'rotree-client/trust'
import { parseDuration as parseTtl } from '../../builder/duration.js'

export default {
  usage: 'gateway [ADDR|NAME:] [--tree NAME=ADDR]… [--port 8081] [--host 127.0.0.1] [--grant FILE --grant-key KEYFILE] [--grants SECRETFILE [--token-ttl 10m]]',
  summary: 'serve trees, verified, to plain HTTP clients, browsers and WebDAV (read-only)',
  positionals: [0, 1],
  options: {
    ...READER_OPTIONS,
    tree: { type: 'string', multiple: true, arg: 'NAME=ADDR', help: 'also serve the tree at ADDR (or a remote, REMOTE:) under /NAME/ (repeatable)' },
    port: { type: 'string', arg: 'PORT', help: 'port to listen on (default 8081; 0 picks one)' },
    host: { type: 'string', arg: 'HOST', help: 'address to bind (default 127.0.0.1)' },
    refresh: { type: 'string', arg: 'SECONDS', help: 're-check fsinfo.json this often (default 60)' },
    'cache-dir': { type: 'string', arg: 'DIR', help: 'verified-blob cache on disk (default <state-dir>/gateway-cache-<port>)' },
    'cache-size': { type: 'string', arg: 'BYTES', help: 'disk cache limit, e.g. 2G or 500M (default 1G; 0 disables the disk cache)' },
    'memory-cache': { type: 'string', arg: 'BYTES', help: 'verified blobs kept in memory per tree (default 64M)' },
    concurrency: { type: 'string', arg: 'N', help: 'upstream blob fetches at once, per tree (default 64)' },
    'mirror-penalty': { type: 'string', arg: 'SECONDS', help: 'a mirror that failed is asked last for this long (default 30)' },
    'no-index': { type: 'boolean', help: 'list directories even when they hold an index.html (DIR/?listing lists one anyway)' },
    'no-prefetch': { type: 'boolean', help: 'do not fetch ahead what a client walking the listings (wget -r, rclone, davfs2) asks for next' },
    'allow-host': { type: 'string', multiple: true, arg: 'NAME', help: 'also answer for Host NAME (or NAME:PORT) on a loopback bind; * answers any (docs/GATEWAY.md)' },
    'no-sandbox': { type: 'boolean', help: 'send HTML/SVG/XML without the CSP sandbox: tree pages then run with this host\'s origin' },
    'access-log': { type: 'string', arg: 'FILE', help: 'one line per request to FILE (- for stderr; off for none, the default, as rotree serve takes it); with --grants each names the grant holder' },
    grants: { type: 'string', arg: 'SECRETFILE', help: 'gate every tree served: its content only with an edge token, traded for a grant at the tree\'s .rotree/token (rotree grant token; docs/GATEWAY.md, "A gated gateway")' },
    'token-ttl': { type: 'string', arg: 'DURATION', help: 'with --grants: how long an edge token lives (default 10m)' }
  },
  async run ([addr], v, io) {
    const { createGatewayServer } = await import('../../gateway/index.js')
    const { isTreeName } = await import('../../gateway/gateway.js')
    const trees = {}
    // private trees (FORMAT.md §12.8): every identity given (--identity, $ROTREE_IDENTITY, the remotes'),
    // tried on each tree's keyring; the gateway decrypts for its clients (docs/GATEWAY.md)
    const identities = []
    for (const t of v.tree ?? []) {
      const eq = t.indexOf('=')
      if (eq <= 0) throw new UsageError(`--tree wants NAME=ADDR, got ${JSON.stringify(t)}`)
      const name = t.slice(0, eq)
      if (!isTreeName(name)) throw new UsageError(`--tree ${JSON.stringify(name)}: a tree's NAME is letters, digits and . _ ~ - (not starting with .); it is served under /NAME/`)
      if (trees[name] !== undefined) throw new UsageError(`--tree ${name} given twice`)
      // a remote's mirrors cannot follow it here: the gateway takes mirrors for ADDR only
      const r = await treeAddress(t.slice(eq + 1), { ...v, mirror: undefined })
      if (r.reader.mirrors.length) io.stderr.write(`rotree: warning: --tree ${name}: the remote's extra mirrors are not used under /${name}/, only its address\n`)
      trees[name] = r.address
      identities.push(...(r.reader.identity ?? []))
    }
    if (addr === undefined && Object.keys(trees).length === 0) throw new UsageError('give a tree ADDR, or --tree NAME=ADDR')
    if (addr === undefined && v.mirror) throw new UsageError('--mirror adds mirrors to ADDR; there is no ADDR')
    const main = addr === undefined ? null : await treeAddress(addr, v)
    identities.push(...(main?.reader.identity ?? readerOptions(v).identity ?? []))
    const port = v.port === undefined ? 8081 : Number(v.port)
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError('--port must be 0..65535')
    const refreshSeconds = v.refresh === undefined ? 60 : positiveInt(v.refresh, 'refresh')
    const stateDir = stateDirOf(v)
    const cacheSize = v['cache-size'] === undefined ? 1 << 30 : bytes(v['cache-size'], 'cache-size')
    const cacheDir = cacheSize === 0 ? null : path.resolve(v['cache-dir'] ?? path.join(stateDir, `gateway-cache-${port}`))
    let checkExpiry = () => {}
    const gated = grantedTrees(v, [...(addr === undefined ? [] : [main.address]), ...Object.values(trees)], io)
    const transportOptions = () => { const r = readerOptions(v); return { ...(r.ca ? { ca: r.ca } : {}), ...(r.allowRedirectOrigins ? { allowRedirectOrigins: r.allowRedirectOrigins } : {}), ...(gated ? { wrapTransport: gated(r.wrapTransport) } : {}) } }
    const opts = {
      tree: main?.address,
      trees,
      mirrors: main?.reader.mirrors ?? [],
      stateDir,
      refreshSeconds,
      cacheDir,
      cacheSize: cacheSize || undefined,
      index: !v['no-index'],
      prefetch: !v['no-prefetch'],
      allowHosts: v['allow-host'] ?? null,
      sandbox: !v['no-sandbox'],
      ...(v['access-log'] !== undefined && v['access-log'] !== 'off' ? { accessLog: v['access-log'] } : {}),
      treeOptions: { ...transportOptions(), ...(identities.length ? { identity: [...new Set(identities)] } : {}) },
      // each log line may follow a root change: the expiry check runs after it
      log: { info: m => { io.stderr.write(m + '\n'); checkExpiry() }, error: m => io.stderr.write(m + '\n') }
    }
    if (v.timeout !== undefined) opts.timeoutMs = parseDuration(v.timeout, 'timeout')
    if (v.concurrency !== undefined) opts.concurrency = positiveInt(v.concurrency, 'concurrency')
    if (v['mirror-penalty'] !== undefined) opts.mirrorPenaltyMs = positiveInt(v['mirror-penalty'], 'mirror-penalty') * 1000
    if (v['memory-cache'] !== undefined) opts.cacheBytes = bytes(v['memory-cache'], 'memory-cache')
    if (!v.grants && v['token-ttl']) throw new UsageError('--token-ttl goes with --grants')
    if (v.grants) {
      const { readSecret } = await import('../../server/edge-token.js')
      const ttlMs = parseTtl(v['token-ttl'] ?? '10m')
      if (!ttlMs || ttlMs < 1000 || ttlMs > 86400e3) throw new UsageError(`--token-ttl ${v['token-ttl']}: a duration from 1s up to 1d, such as 10m`)
      opts.grants = { secret: await readSecret(v.grants), ttlS: Math.floor(ttlMs / 1000) }
    }
    const srv = await createGatewayServer(opts)
    let bound
    try {
      bound = await srv.listen({ port, host: v.host ?? '127.0.0.1' })
    } catch (err) {
      await srv.close()
      throw err
    }
    const { url, also } = reachableUrl(bound)
    // each tree where it is served: its mount path (a version-2 tree's own name, t.treeName, is not one)
    for (const t of srv.gateway.status().trees) {
      const where = url + t.mount.slice(1)
      io.stdout.write(t.root ? `${where}  sequence ${t.seq}, root ${t.root}\n` : `${where}  not available yet: ${t.lastRefresh?.code ?? ''} ${t.lastRefresh?.message ?? ''}\n`)
    }
    if (opts.grants) io.stdout.write(`gated: content only with an edge token; holders of a grant ask POST ${url}.rotree/token (a tree under /NAME/: ${url}NAME/.rotree/token)\n`)
    io.stdout.write(`rotree gateway listening at ${url}${also}\n`)
    checkExpiry = expiryChecker(srv.gateway, io)
    checkExpiry()
    const timer = setInterval(() => checkExpiry(), refreshSeconds * 1000)
    timer.unref()
    await untilSignal()
    clearInterval(timer)
    await srv.close({ timeoutMs: 5000 })
  }
}

/**
 * --grant (docs/GATEWAY.md): the trees of the grant's family (its anchor)
 * trade it for edge tokens at their mirrors, renewed before they expire; the
 * other trees are read without it, so no other tree's edge is shown the
 * grant. Null without --grant.
 */
function grantedTrees (v, addresses, io) {
  if (!v.grant) return null
  let anchor
  try { anchor = decodeGrant(fs.readFileSync(v.grant)).anchor } catch (err) { throw new UsageError(`--grant ${v.grant}: ${err.code === 'ROTREE_BAD_FORMAT' ? err.message : err.code ?? err.message}`) }
  const anchorOf = a => parseAddress(a).id.split(':')[0]
  if (!addresses.some(a => anchorOf(a) === anchor)) io.stderr.write(`rotree: warning: --grant is for tree ${anchor}, which this gateway does not serve: it is not used\n`)
  return wrap => (t, tree) => tree?.id?.split(':')[0] === anchor ? wrap(t) : t
}

/** A function that warns once per tree and sequence number when the root a tree serves expires soon (cli/expiry.js). */
function expiryChecker (gw, io) {
  const warned = new Map() // mount → seq warned about
  return () => {
    for (const t of gw.status().trees) {
      if (!t.root) continue
      const w = expiryWarning(t)
      if (w && warned.get(t.mount) !== t.seq) {
        warned.set(t.mount, t.seq)
        io.stderr.write(w.replace(/^rotree: warning: tree/, `rotree: warning: tree ${t.mount}`) + '\n')
      }
    }
  }
}

/**
 * The URL to print for where the server listens. Bound to every address
 * (0.0.0.0 or ::), its own URL would name 0.0.0.0, which a client on this
 * machine reaches over loopback with `Host: 0.0.0.0`: not a loopback name, so
 * the Host check answers 421 (docs/GATEWAY.md, "Host names"). Such a bind is
 * printed as the loopback address of its family, which is served.
 * @param {{ url: string, port: number, host: string }} bound what listen() resolved with
 * @returns {{ url: string, also: string }} also: what to add to the "listening at" line
 */
function reachableUrl ({ url, port, host }) {
  if (host === '0.0.0.0') return { url: `http://127.0.0.1:${port}/`, also: ' (bound to 0.0.0.0: every IPv4 address of this machine)' }
  if (host === '::') return { url: `http://[::1]:${port}/`, also: ' (bound to ::, every address of this machine)' }
  return { url, also: '' }
}

/** '1073741824', '1G', '500M', '64k' → bytes (powers of 1024); 0 allowed. */
function bytes (s, name) {
  const m = /^(\d+)\s*([kmgt]?)i?b?$/i.exec(String(s).trim())
  if (!m) throw new UsageError(`--${name} wants a size such as 500M or 2G, got ${JSON.stringify(s)}`)
  const n = Number(m[1]) * 1024 ** ' kmgt'.indexOf((m[2] || ' ').toLowerCase())
  if (!Number.isSafeInteger(n)) throw new UsageError(`--${name} is too large`)
  return n
}

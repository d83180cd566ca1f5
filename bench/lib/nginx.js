// nginx for the network figures: the config `rotree nginx-config --full`
// generates for a published folder, extended here (never in server/) with
//   - a second listen socket with TLS and HTTP/2 (a certificate made now with
//     openssl, trusted by child processes through NODE_EXTRA_CA_CERTS and by
//     curl through --cacert),
//   - extra locations for the plain files the baselines download,
//   - an access log of protocol and connection per request, so a figure can
//     say how many requests and connections a reader used, and over which protocol,
//   - optional pinning to CPUs with taskset.
// The location blocks for fsinfo.json and h/<hash> are the generated ones, unchanged.
import { spawn, execFileSync } from 'node:child_process'
import fs from 'node:fs/promises'
import path from 'node:path'
import os from 'node:os'
import { freePort, waitPort, exposeToNginx } from './servers.js'

const ROOT = new URL('../../', import.meta.url).pathname
const BIN = path.join(ROOT, 'bin/rotree.js')

/**
 * A self-signed certificate for 127.0.0.1 and localhost, valid for a day.
 * @returns {Promise<{ cert: string, key: string, dir: string }>} PEM file paths
 */
export async function makeCert (dir) {
  await fs.mkdir(dir, { recursive: true })
  const cert = path.join(dir, 'cert.pem'); const key = path.join(dir, 'key.pem')
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
    '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost',
    '-addext', 'basicConstraints=critical,CA:TRUE', '-keyout', key, '-out', cert], { stdio: 'ignore' })
  return { cert, key, dir }
}

/** The SHA-256 of the certificate's public key, base64: Chromium's --ignore-certificate-errors-spki-list. */
export function spkiHash (certPath) {
  const pub = execFileSync('openssl', ['x509', '-in', certPath, '-pubkey', '-noout'])
  const der = execFileSync('openssl', ['pkey', '-pubin', '-outform', 'der'], { input: pub })
  return execFileSync('openssl', ['dgst', '-sha256', '-binary'], { input: der }).toString('base64')
}

/**
 * nginx serving published folder `out` (and plain folders beside it).
 * @param {string} out
 * @param {{ tls?: { cert: string, key: string }|null, workers?: number, plain?: Record<string, string>,
 *   web?: { url: string, dir: string }|null, log?: boolean, cpu?: string|null, keepaliveRequests?: number }} o
 *   plain: URL prefix ('/plain/') → folder, served as plain files;
 *   web: a folder served with JavaScript and HTML types (a bench page);
 *   cpu: taskset CPU list for master and worker;
 *   gated: { secretFile, tokenUpstream } for `nginx-config --gated SECRETFILE --token-upstream HOST:PORT` (FORMAT.md §12.11)
 * @returns {Promise<{ url: string, port: number, tlsUrl?: string, tlsPort?: number, pids: number[],
 *   logMark: () => Promise<number>, logSince: (mark: number) => Promise<{ requests: number, connections: number, protocols: Record<string, number>, bytes: number }>,
 *   stop: () => Promise<void>, name: string }>}
 */
export async function startNginxTree (out, { tls = null, workers = 1, plain = {}, web = null, log = true, cpu = null, keepaliveRequests = null, gated = null } = {}) {
  const port = await freePort()
  const tlsPort = tls ? await freePort() : null
  exposeToNginx([out, ...Object.values(plain), ...(web ? [web.dir] : []), ...(tls ? [path.dirname(tls.cert)] : [])])
  const prefix = await fs.mkdtemp(path.join(os.tmpdir(), 'rotree-nginx-'))
  let conf = execFileSync(process.execPath, [BIN, 'nginx-config', out, '--listen', `127.0.0.1:${port}`, '--full', '--prefix', prefix, '--workers', String(workers), ...(gated ? ['--gated', gated.secretFile, '--token-upstream', gated.tokenUpstream] : [])], { stdio: ['ignore', 'pipe', 'ignore'] }).toString()
  const logPath = path.join(prefix, 'bench.log')
  const q = s => JSON.stringify(s)
  conf = replaceOnce(conf, /^ {4}access_log\s+[^;]+;/m, log
    ? `    log_format rotree_bench '$server_protocol $connection $status $body_bytes_sent';\n    access_log ${q(logPath)} rotree_bench;`
    : '    access_log off;')
  if (keepaliveRequests) conf = replaceOnce(conf, /keepalive_requests \d+;/, `keepalive_requests ${keepaliveRequests};`)
  if (tls) {
    conf = replaceOnce(conf, /^( {8}listen 127\.0\.0\.1:\d+;)$/m, `$1
        listen 127.0.0.1:${tlsPort} ssl http2;   # added by the bench: TLS and HTTP/2
        ssl_certificate ${q(tls.cert)};
        ssl_certificate_key ${q(tls.key)};
        ssl_protocols TLSv1.2 TLSv1.3;           # nginx 1.22 leaves TLS 1.3 out by default; CDNs speak it`)
  }
  const extra = []
  for (const [url, dir] of Object.entries(plain)) {
    extra.push(`
        # added by the bench: plain files for the baselines
        location ${url} {
            alias ${q(path.resolve(dir) + '/')};
            types { }
            default_type application/octet-stream;
        }`)
  }
  if (web) {
    extra.push(`
        # added by the bench: the browser figure's page
        location ${web.url} {
            alias ${q(path.resolve(web.dir) + '/')};
            types { text/html html; text/javascript js; }
            add_header Cache-Control "no-store";
        }`)
  }
  // the server block is the last block of the http block: '    }\n}\n' ends the file
  if (extra.length) conf = replaceOnce(conf, /\n {4}\}\n\}\n?$/, extra.join('\n') + '\n    }\n}\n')
  await fs.writeFile(path.join(prefix, 'nginx.conf'), conf)
  const cmd = ['/usr/sbin/nginx', '-p', prefix, '-c', path.join(prefix, 'nginx.conf'), '-g', 'daemon off;']
  const proc = cpu ? spawn('taskset', ['-c', cpu, ...cmd], { stdio: 'ignore' }) : spawn(cmd[0], cmd.slice(1), { stdio: 'ignore' })
  try {
    await waitPort(port, proc)
    if (tlsPort) await waitPort(tlsPort, proc)
  } catch (err) {
    const log = await fs.readFile(path.join(prefix, 'error.log'), 'utf8').catch(() => '')
    throw new Error(`nginx did not start: ${err.message}\n${log}`)
  }
  const kids = execFileSync('ps', ['-o', 'pid=', '--ppid', String(proc.pid)]).toString().trim().split(/\s+/).map(Number).filter(Boolean)
  const size = () => fs.stat(logPath).then(s => s.size, () => 0)
  return {
    name: 'nginx',
    port,
    url: `http://127.0.0.1:${port}/`,
    tlsPort,
    tlsUrl: tlsPort ? `https://127.0.0.1:${tlsPort}/` : undefined,
    pids: [proc.pid, ...kids],
    conf,
    logMark: size,
    async logSince (mark) {
      // nginx writes each line as the request ends; give the last one a moment
      await new Promise(resolve => setTimeout(resolve, 50))
      const fh = await fs.open(logPath, 'r').catch(() => null)
      if (!fh) return { requests: 0, connections: 0, protocols: {}, bytes: 0 }
      try {
        const n = (await fh.stat()).size - mark
        const buf = Buffer.alloc(Math.max(0, n))
        await fh.read(buf, 0, buf.length, mark)
        const conns = new Set(); const protocols = {}; let requests = 0; let bytes = 0
        for (const line of buf.toString().split('\n')) {
          const [proto, conn, , sent] = line.split(' ')
          if (!conn) continue
          requests++; conns.add(conn); bytes += Number(sent) || 0
          protocols[proto] = (protocols[proto] ?? 0) + 1
        }
        return { requests, connections: conns.size, protocols, bytes }
      } finally { await fh.close() }
    },
    async stop () {
      if (proc.exitCode === null) {
        await new Promise(resolve => {
          proc.once('exit', resolve); proc.kill('SIGTERM')
          setTimeout(() => proc.kill('SIGKILL'), 3000).unref()
        })
      }
      await fs.rm(prefix, { recursive: true, force: true })
    }
  }
}

function replaceOnce (s, re, to) {
  if (!re.test(s)) throw new Error(`the generated nginx config no longer matches ${re}: bench/lib/nginx.js needs updating`)
  return s.replace(re, to)
}

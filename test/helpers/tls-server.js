// HTTPS test servers on 127.0.0.1:0 with a self-signed certificate made by
// the openssl CLI at test time (one per process, valid for a day):
//
//   const srv = await startTlsServer(handler, { h2: true, settings: { maxConcurrentStreams: 4 } })
//   srv.url ('https://127.0.0.1:PORT/'), srv.cert (PEM), srv.sessions, srv.connections,
//   srv.protocols (httpVersion of every request), await srv.close()
//
// h2: true is a node:http2 secure server (HTTP/2 only unless allowHTTP1);
// h2: false is a node:https server, which offers no ALPN h2. The handler is
// the (req, res) of either: the http2 compatibility API and node:https agree.
import http2 from 'node:http2'
import https from 'node:https'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { execFileSync } from 'node:child_process'

let made = null

/** @returns {{ cert: string, key: string, certPath: string }} PEM strings, and the certificate's file */
export function testCert () {
  if (made) return made
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rotree-tls-'))
  const certPath = path.join(dir, 'cert.pem'); const keyPath = path.join(dir, 'key.pem')
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
    '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1', '-keyout', keyPath, '-out', certPath], { stdio: 'ignore' })
  made = { cert: fs.readFileSync(certPath, 'utf8'), key: fs.readFileSync(keyPath, 'utf8'), certPath }
  process.once('exit', () => fs.rmSync(dir, { recursive: true, force: true }))
  return made
}

/**
 * @param {(req, res) => void} handler
 * @param {{ h2?: boolean, settings?: object, allowHTTP1?: boolean, cert?: { cert: string, key: string } }} [o]
 */
export async function startTlsServer (handler, { h2 = true, settings, allowHTTP1 = false, cert = testCert() } = {}) {
  const opts = { key: cert.key, cert: cert.cert }
  const server = h2 ? http2.createSecureServer({ ...opts, settings, allowHTTP1 }) : https.createServer(opts)
  const state = { sessions: 0, connections: 0, protocols: [] }
  const sessions = new Set()
  const sockets = new Set()
  server.on('session', s => { state.sessions++; sessions.add(s); s.on('close', () => sessions.delete(s)) })
  server.on('secureConnection', s => { state.connections++; sockets.add(s); s.on('close', () => sockets.delete(s)) })
  server.on('request', (req, res) => { state.protocols.push(req.httpVersion); handler(req, res) })
  await new Promise(resolve => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address()
  return {
    server,
    port,
    url: `https://127.0.0.1:${port}/`,
    origin: `https://127.0.0.1:${port}`,
    cert: cert.cert,
    get sessions () { return state.sessions },
    get connections () { return state.connections },
    get protocols () { return state.protocols },
    /** the live HTTP/2 sessions (for goaway) */
    liveSessions: () => [...sessions],
    close: () => new Promise(resolve => {
      server.close(() => resolve())
      for (const s of sessions) s.destroy()
      for (const s of sockets) s.destroy()
    })
  }
}

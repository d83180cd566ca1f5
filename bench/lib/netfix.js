// What the network figures (P3w, P3t, P11) share, made once per process: a
// tree holding one large file, the same bytes as one plain file for curl, a
// certificate made now, and one nginx that serves both over HTTP/1.1 and over
// HTTPS + HTTP/2. Links (bench/lib/link.js) are put between it and the readers.
import fs from 'node:fs/promises'
import { rmSync } from 'node:fs'
import path from 'node:path'
import os from 'node:os'
import { makeTree } from './trees.js'
import { makeCert, startNginxTree } from './nginx.js'
import { startLink } from './link.js'
import { clientLabel, envOpts } from './clients.js'
import { tmpdir } from '../../test/helpers/fixtures.js'

const made = new Map()
const cleanups = []
process.once('exit', () => { for (const c of cleanups.reverse()) { try { c() } catch {} } })

/**
 * @param {number} size bytes of big.bin
 * @param {{ version?: number }} [o] the tree's format version (FORMAT.md §12; 2: compressed blobs, a lead chunk)
 * @returns {Promise<{ t, cert: { cert: string, key: string }, nginx, plainDir: string, stateDir: string,
 *   addr: (origin: string) => string, key: string }>}
 */
export function bigFileTree (size, { version = 1 } = {}) {
  const id = `${size}:${version}`
  if (!made.has(id)) made.set(id, (async () => {
    const t = await makeTree({ 'big.bin': size }, { label: `net-${size >> 20}m-v${version}`, version })
    const plainDir = path.join(t.dir, 'plain')
    await fs.mkdir(plainDir)
    await fs.link(path.join(t.src, 'big.bin'), path.join(plainDir, 'big.bin'))
    const cert = await makeCert(path.join(t.dir, 'tls'))
    const nginx = await startNginxTree(t.out, { tls: cert, plain: { '/plain/': plainDir } })
    const stateDir = path.join(t.dir, 'state')
    cleanups.push(() => { for (const p of nginx.pids) { try { process.kill(p, 'SIGTERM') } catch {} } rmSync(t.dir, { recursive: true, force: true }) })
    return { t, cert, nginx, plainDir, stateDir, key: t.key.publicKey, addr: origin => `${origin}#${t.key.publicKey}` }
  })())
  return made.get(id)
}

/** Stop what bigFileTree made (the exit handler does it too). */
export async function releaseAll () {
  for (const p of made.values()) {
    const f = await p
    await f.nginx.stop()
    await f.t.cleanup()
  }
  made.clear()
}

/** ROTREE_BENCH_LINK='{"tcp":false}' or '{"window":33554432}': link options for every figure (an experiment, noted in each figure). */
export function linkOverrides () {
  return process.env.ROTREE_BENCH_LINK ? JSON.parse(process.env.ROTREE_BENCH_LINK) : {}
}

/**
 * A link in front of one of nginx's ports; `origin` is the URL a reader uses.
 * @param {{ nginx, tls: boolean, rttMs: number, mbit: number|null }} o
 */
export async function linkTo ({ nginx, tls, rttMs, mbit, window }) {
  const link = await startLink({ target: `127.0.0.1:${tls ? nginx.tlsPort : nginx.port}`, rttMs, mbit, window, ...linkOverrides() })
  return { ...link, origin: `${tls ? 'https' : 'http'}://127.0.0.1:${link.port}/` }
}

export const PROTOCOLS = [
  { name: 'HTTP/1.1', tls: false, http2: false },
  // nginx offers h2 and http/1.1 by ALPN: curl takes h2 (--http2), rotree's
  // reader its default, HTTP/1.1 over TLS (client-js/src/net/transport-node.js)
  { name: 'HTTPS', tls: true, http2: true }
]

/**
 * The same HTTPS mirror with rotree's reader told to take h2 (`--http2`,
 * openTree's http2: true): rows that show why HTTP/1.1 over TLS is its
 * default, informative (not judged); readerFlags go to every rotree command.
 */
export const FORCED_H2 = { name: 'HTTPS + HTTP/2 (rotree --http2)', tls: true, http2: true, readerFlags: ['--http2'], readerOpts: { http2: true }, informative: true }

/** A line for a figure's notes: which client was measured, the machine's load. */
export function runContext () {
  const opts = envOpts(); const link = linkOverrides()
  return `Client measured: ${clientLabel()}${opts ? `, library reads with openTree() options ${JSON.stringify(opts)} (ROTREE_BENCH_OPTS)` : ''}${Object.keys(link).length ? `; link model changed by ROTREE_BENCH_LINK=${JSON.stringify(link)}, which overrides what the notes above say of it` : ''}. Load average at the end: ${os.loadavg().map(x => x.toFixed(1)).join(' ')} (2 cores shared with nginx, the relay and the reader).`
}

/** "HTTP/1.1 ×1,027 on 16 connections" from an nginx log slice. */
export function wireSummary (w) {
  const protos = Object.entries(w.protocols).map(([p, n]) => `${p} ×${n.toLocaleString('en-US')}`).join(', ')
  return `${protos || 'no requests'} on ${w.connections} connection${w.connections === 1 ? '' : 's'}`
}

/** A line for a figure's notes: how far behind its stamped times the relay delivered (is it a faithful link?). */
export function relayNote (stats) {
  const mean = Math.max(...stats.map(s => s.lateMeanMs)); const max = Math.max(...stats.map(s => s.lateMaxMs))
  const cpu = stats.some(s => s.cpuShare !== undefined) ? `, and it used at most ${(100 * Math.max(...stats.map(s => s.cpuShare ?? 0))).toFixed(0)}% of a core` : ''
  return mean <= 1
    ? `The relay kept up: pieces left it at most ${mean.toFixed(2)} ms after their stamped time on average in any run (worst single piece ${max.toFixed(1)} ms)${cpu}.`
    : `The relay fell behind in at least one run (the machine was busy): pieces left it up to ${mean.toFixed(2)} ms late on average (worst single piece ${max.toFixed(1)} ms)${cpu}; those rows understate the link.`
}

export { tmpdir }

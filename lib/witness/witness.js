// `rotree witness`: a C2SP tlog-witness (docs/DEPLOY.md "Witnesses"). For each
// log it is told to accept (an origin and the log's note verifier keys) it
// keeps the latest checkpoint it cosigned, one file per log in the state
// directory:
//
//   STATE/<SHA-256 of the origin, hex>      the cosigned checkpoint note: the log's
//                                           signature lines and this witness's
//
// written under a temporary name, fsynced, renamed into place and the
// directory fsynced before the answer leaves (the spec's "persist before
// responding"). Requests for one log run one at a time, so the check of the
// old size and the update are one step (the spec's rollback race).
//
//   POST /add-checkpoint          the cosignature line, or 400/403/404/409/422
//   GET  /<origin hash>/checkpoint the latest cosigned checkpoint (monitoring)
import http from 'node:http'
import fs from 'node:fs/promises'
import path from 'node:path'
import { createHash } from 'node:crypto'
import {
  parseAddCheckpoint, checkAddCheckpoint, cosignerOf, cosignatureLine, encodeCosignatureVerifierKey,
  parseVerifierKey, verifierOf, parseCheckpoint, WitnessRefusal, SIZE_CONTENT_TYPE, TlogError
} from 'rotree-client/tlog'
import { writeDurable } from '../published/history.js'
import { syncDir } from '../published/blob-store.js'

const MAX_BODY = 64 * 1024
const originHash = origin => createHash('sha256').update(origin).digest('hex')

/**
 * The logs a witness accepts from `ORIGIN=VKEY` texts (VKEY: a C2SP note
 * verifier key whose name is the origin, or a 64-hex Ed25519 key); one
 * origin may have several keys. Throws TlogError for a malformed one.
 * @param {string[]} specs @returns {Map<string, object[]>} origin → verifiers
 */
export function parseLogList (specs) {
  const logs = new Map()
  for (const s of specs) {
    const at = s.lastIndexOf('=', s.indexOf('+') < 0 ? s.length : s.indexOf('+'))
    if (at <= 0) throw new TlogError(`${JSON.stringify(s)} is not ORIGIN=VKEY`)
    const origin = s.slice(0, at); const key = s.slice(at + 1)
    const v = /^[0-9a-f]{64}$/.test(key) ? verifierOf(origin, key) : parseVerifierKey(key)
    if (v.name !== origin) throw new TlogError(`the key ${key} is for ${v.name}, not ${origin}`)
    logs.set(origin, [...(logs.get(origin) ?? []), v])
  }
  return logs
}

/** Lines of a log list file: ORIGIN=VKEY each, blank lines and # comments ignored. */
export function parseLogFile (text) {
  return text.split('\n').map(l => l.trim()).filter(l => l && !l.startsWith('#'))
}

/**
 * A witness over a state directory.
 * @param {{ name: string, key: { secretKey: string, publicKey: string }, stateDir: string, logs: Map<string, object[]>,
 *   fsync?: boolean, now?: () => number }} o  now: seconds
 */
export async function createWitness ({ name, key, stateDir, logs, fsync = true, now }) {
  await fs.mkdir(stateDir, { recursive: true })
  const cosigner = cosignerOf(name, key, now)
  const cache = new Map() // origin → { size, hash, note } | null
  const queues = new Map() // origin → the tail of its request chain

  async function latest (origin) {
    if (cache.has(origin)) return cache.get(origin)
    let note = null
    try { note = await fs.readFile(path.join(stateDir, originHash(origin)), 'utf8') } catch (err) { if (err.code !== 'ENOENT') throw err }
    // the state is this witness's own file: the log's signature was checked before it was written
    const cp = note === null ? null : parseCheckpoint(note.slice(0, note.lastIndexOf('\n\n') + 1))
    const s = cp && { size: cp.size, hash: cp.hash, note }
    cache.set(origin, s)
    return s
  }

  async function store (origin, note) {
    const file = path.join(stateDir, originHash(origin))
    const tmp = `${file}.tmp-${process.pid}`
    await writeDurable(tmp, note, fsync, 0o600)
    await fs.rename(tmp, file)
    if (fsync) await syncDir(stateDir)
  }

  /** One add-checkpoint body: { status, body, type }. */
  async function addCheckpoint (body) {
    let req
    try { req = parseAddCheckpoint(body) } catch (err) { return { status: 400, body: err.message + '\n' } }
    const origin = req.note.slice(0, req.note.indexOf('\n'))
    const run = async () => {
      const have = await latest(origin)
      try {
        const cp = checkAddCheckpoint(req, o => logs.get(o) ?? null, () => have)
        const line = cosignatureLine(cp.text, cosigner)
        const note = req.note.split('\n').filter(l => !l.startsWith(`\u2014 ${name} `)).join('\n') + line
        await store(origin, note)
        cache.set(origin, { size: cp.size, hash: cp.hash, note })
        return { status: 200, body: line }
      } catch (err) {
        if (!(err instanceof WitnessRefusal)) throw err
        if (err.status === 409) return { status: 409, body: `${err.size}\n`, type: SIZE_CONTENT_TYPE }
        return { status: err.status, body: err.message + '\n' }
      }
    }
    // one request per log at a time: the check and the update are one step
    const prev = queues.get(origin) ?? Promise.resolve()
    const mine = prev.then(run, run)
    const tail = mine.catch(() => {})
    queues.set(origin, tail)
    try { return await mine } finally { if (queues.get(origin) === tail) queues.delete(origin) }
  }

  async function handle (req, res) {
    const send = (status, body = '', type = 'text/plain; charset=utf-8') => {
      res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) })
      res.end(body)
    }
    const url = new URL(req.url, 'http://witness')
    if (url.pathname === '/add-checkpoint') {
      if (req.method !== 'POST') return send(405, 'POST only\n')
      const chunks = []; let size = 0
      for await (const c of req) {
        size += c.length
        if (size > MAX_BODY) return send(413, 'request too large\n')
        chunks.push(c)
      }
      const r = await addCheckpoint(Buffer.concat(chunks).toString('utf8'))
      return send(r.status, r.body, r.type)
    }
    const m = /^\/([0-9a-f]{64})\/checkpoint$/.exec(url.pathname)
    if (m && (req.method === 'GET' || req.method === 'HEAD')) {
      const origin = [...logs.keys()].find(o => originHash(o) === m[1])
      const s = origin && await latest(origin)
      return s ? send(200, s.note) : send(404, 'no checkpoint cosigned for that log\n')
    }
    send(404, 'not found\n')
  }

  const server = http.createServer((req, res) => {
    handle(req, res).catch(err => { if (!res.headersSent) { res.writeHead(500); res.end(`${err.message}\n`) } else res.destroy() })
  })
  return {
    name,
    verifierKey: encodeCosignatureVerifierKey(name, key.publicKey),
    addCheckpoint,
    /** @returns {Promise<{ url: string, port: number }>} */
    listen: ({ port = 0, host = '127.0.0.1' } = {}) => new Promise((resolve, reject) => {
      server.once('error', reject)
      server.listen(port, host, () => {
        const a = server.address()
        resolve({ url: `http://${host.includes(':') ? `[${host}]` : host}:${a.port}`, port: a.port })
      })
    }),
    close: () => new Promise(resolve => { server.close(() => resolve()); server.closeAllConnections?.() })
  }
}

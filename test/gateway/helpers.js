// Shared pieces of the gateway suites: a fixture tree, a gateway on port 0,
// and real clients (curl) run as processes with a deadline.
import fs from 'node:fs/promises'
import path from 'node:path'
import http from 'node:http'
import net from 'node:net'
import { execFile } from 'node:child_process'
import { decodeDirPage, fsinfoVersion, decodeFsinfo, decodeFsinfoV2, refOfReleaseRoot } from 'rotree-client/format'
import { decodeBlobSync } from 'rotree-client/codec'
import { tmpdir, makeKey, writeTree, buildTree, prng, address } from '../helpers/fixtures.js'
import { createGatewayServer } from '../../gateway/index.js'

export { tmpdir, makeKey, writeTree, buildTree, prng, address }

export const MTIME = Date.UTC(2024, 4, 17, 12, 30, 15, 250)

/** Files of the main fixture: every entry kind and the sizes that matter for ranges. */
export function fixtureFiles () {
  return {
    'empty.txt': '',
    'hello.txt': { data: 'hello, world\n', mtime: MTIME }, // inline
    'medium.bin': prng(100 * 1024, 'medium'), // one chunk
    'big.bin': prng(3 * 1024 * 1024, 'big'), // several chunks, listed in the entry
    'huge.bin': prng(12 * 1024 * 1024, 'huge'), // a chunk index
    'docs/README.md': '# readme\n'.repeat(600),
    'docs/guide.html': '<p>guide</p>\n',
    'docs/sub/deep.txt': 'deep\n',
    'site/index.html': '<!doctype html><title>site</title>\n',
    'site/page.css': 'body{}\n',
    'weird/<b>&"x\'.txt': 'escaped\n',
    'weird/javascript:alert(1)': 'not a scheme\n',
    'weird/sp ace #hash ?q 100%.txt': 'odd name\n',
    'weird/ünï ✓.txt': 'unicode\n',
    'link-to-hello': { symlink: 'hello.txt' },
    'link-to-docs': { symlink: 'docs' },
    'docs/link-up': { symlink: '../hello.txt' },
    'dangling': { symlink: 'nothing-here' },
    'loop-a': { symlink: 'loop-b' },
    'loop-b': { symlink: 'loop-a' }
  }
}

/** Build `files` into a published folder: { src, out, key, pk, cleanup }. */
export async function makeFixture (files = fixtureFiles(), { ttlMs = 3600e3, onBad = 'fail' } = {}) {
  const src = await tmpdir('rotree-gw-src-')
  await writeTree(src, files)
  const key = makeKey()
  const { out } = await buildTree(src, { key, ttlMs, onBad })
  return {
    src, out, key, pk: key.publicKey,
    cleanup: async () => { await fs.rm(src, { recursive: true, force: true }); await fs.rm(out, { recursive: true, force: true }) }
  }
}

/**
 * What a published folder's fsinfo.json says, in either format (FORMAT.md §6,
 * §12.4): { version, seq, root } where root is the root page's ref as the
 * format's blobs carry it (version 2: size decoded, storedSize, codec: §12.6).
 */
export async function publishedRoot (out) {
  const bytes = await fs.readFile(path.join(out, 'fsinfo.json'))
  const version = fsinfoVersion(bytes)
  if (version === 1) {
    const info = decodeFsinfo(bytes)
    return { version, seq: info.seq, root: info.root, info }
  }
  const info = decodeFsinfoV2(bytes)
  return { version, seq: info.seq, root: refOfReleaseRoot(info.release.root), info }
}

/** A blob of a published folder as its ref says it is stored, decoded (FORMAT.md §12.6). */
export async function readBlob (out, ref) {
  const stored = new Uint8Array(await fs.readFile(path.join(out, 'h', ref.hash)))
  return ref.codec === undefined ? stored : decodeBlobSync(stored, ref.codec, ref.size)
}

/**
 * The decoded entry for a path of a published folder (for chunk boundaries in
 * tests), in the folder's format: its refs name the STORED blobs, and their
 * `size` is the decoded size in version 2 (FORMAT.md §12.6).
 */
export async function entryOf (out, rel) {
  const { version, root } = await publishedRoot(out)
  let ref = root
  const parts = rel.split('/').filter(Boolean)
  let e
  for (const name of parts) {
    const page = decodeDirPage(await readBlob(out, ref), { version })
    e = page.entries?.find(x => x.name === name)
    if (!e) throw new Error(`no ${name} in ${rel}`)
    if (e.type === 'dir') ref = e.dir
  }
  return e
}

/**
 * A recipe of docs/GATEWAY.md as written there: the fenced block right after
 * its `<!-- recipe: NAME -->` line. The suites run these (wget, davfs2,
 * litmus), so what the doc tells users and what is tested cannot drift apart.
 * @returns {Promise<string>} the block's text, without the fences
 */
export function gatewayRecipe (name) { return docRecipe('GATEWAY.md', name) }

/** The same for any file of docs/ (DEPLOY.md's load-testing recipes). */
export async function docRecipe (file, name) {
  const doc = await fs.readFile(new URL('../../docs/' + file, import.meta.url), 'utf8')
  const m = new RegExp('^<!-- recipe: ' + name + ' -->\\n(`{3,})[^\\n]*\\n([\\s\\S]*?)\\n\\1\\n', 'm').exec(doc)
  if (m === null) throw new Error(`docs/${file} has no block after <!-- recipe: ${name} -->`)
  return m[2]
}

/** A gateway on 127.0.0.1:0 (in this process), closed after the test `t` (or by the caller: close()). */
export async function startGateway (t, opts) {
  const srv = await createGatewayServer({ stateDir: null, refreshSeconds: 3600, ...opts })
  const { url, port } = await srv.listen({ port: 0, host: '127.0.0.1' })
  const close = () => srv.close({ timeoutMs: 1000 })
  t?.after(close)
  return { ...srv, url, port, close }
}

/**
 * curl as a process: -s -i --path-as-is, no redirects followed.
 * @returns {Promise<{ exit: number, status: number, headers: Record<string,string>, body: Buffer, stderr: string }>}
 */
export function curl (url, args = [], { timeoutMs = 20_000 } = {}) {
  return new Promise((resolve, reject) => {
    execFile('curl', ['-s', '-S', '-i', '--path-as-is', '--max-time', String(timeoutMs / 1000), ...args, url],
      { encoding: 'buffer', maxBuffer: 256 << 20, timeout: timeoutMs + 5000 }, (err, stdout, stderr) => {
        if (err && typeof err.code !== 'number') return reject(err)
        resolve({ exit: err ? err.code : 0, ...parseResponse(stdout), stderr: stderr.toString() })
      })
  })
}

function parseResponse (buf) {
  let at = 0
  let status = 0
  let headers = {}
  // skip interim (1xx) blocks; take the last header block curl printed
  for (;;) {
    const end = buf.indexOf('\r\n\r\n', at)
    if (end === -1) return { status, headers, body: buf.subarray(at) }
    const lines = buf.subarray(at, end).toString('latin1').split('\r\n')
    const m = /^HTTP\/[\d.]+ (\d{3})/.exec(lines[0] ?? '')
    if (!m) return { status, headers, body: buf.subarray(at) }
    status = Number(m[1])
    headers = {}
    for (const l of lines.slice(1)) {
      const i = l.indexOf(':')
      if (i > 0) headers[l.slice(0, i).toLowerCase()] = l.slice(i + 1).trim()
    }
    at = end + 4
    if (status >= 200) return { status, headers, body: buf.subarray(at) }
  }
}

/**
 * A request exactly as written (no URL normalisation), by node:http.
 * @returns {Promise<{ status: number, headers: object, body: Buffer, error?: Error }>}
 *   error: the connection broke mid-body (body holds what arrived)
 */
export function raw (url, path, { method = 'GET', headers = {}, body } = {}) {
  const u = new URL(url)
  return new Promise((resolve, reject) => {
    const req = http.request({ host: u.hostname, port: u.port, path, method, headers, agent: false }, res => {
      const parts = []
      res.on('data', c => parts.push(c))
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(parts) }))
      res.on('error', error => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(parts), error }))
      res.on('aborted', () => {})
    })
    req.on('error', reject)
    req.setTimeout(20_000, () => req.destroy(new Error('test request timed out')))
    req.end(body)
  })
}

/** Run a command; resolves { code, stdout, stderr } (never rejects on exit status). */
export function run (cmd, args, { env, cwd, timeoutMs = 60_000 } = {}) {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { env: { ...process.env, ...env }, cwd, encoding: 'buffer', maxBuffer: 64 << 20, timeout: timeoutMs }, (err, stdout, stderr) => {
      if (err && typeof err.code !== 'number') return reject(err)
      resolve({ code: err ? err.code : 0, stdout: stdout.toString(), stderr: stderr.toString() })
    })
  })
}

/** Every regular file under dir (following symlinks, as HTTP clients see them): rel → Buffer. */
export async function readAll (dir, { skip = () => false } = {}) {
  const out = {}
  async function walk (abs, rel) {
    for (const d of await fs.readdir(abs, { withFileTypes: true })) {
      const a = path.join(abs, d.name); const r = rel ? rel + '/' + d.name : d.name
      if (skip(r)) continue
      let st
      try { st = await fs.stat(a) } catch { continue } // a dangling symlink
      if (st.isDirectory()) await walk(a, r)
      else if (st.isFile()) out[r] = await fs.readFile(a)
    }
  }
  await walk(dir, '')
  return out
}

/** Write `request` bytes as they are on a new connection; resolves with everything read until it closes. */
export function rawSocket (url, request) {
  const u = new URL(url)
  return new Promise((resolve, reject) => {
    const parts = []
    const s = net.connect(Number(u.port), u.hostname, () => s.write(request))
    s.setTimeout(20_000, () => s.destroy(new Error('test socket timed out')))
    s.on('data', c => parts.push(c))
    s.on('error', reject)
    s.on('close', () => resolve(Buffer.concat(parts).toString('latin1')))
  })
}

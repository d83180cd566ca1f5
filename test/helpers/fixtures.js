// Shared test fixtures: temp folders, keys, builds and a real server on port 0.
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { createHash, createCipheriv } from 'node:crypto'
import { generateKeyPair } from 'rotree-client/crypto'
import { build } from '../../builder/build.js'
import { createRotreeServer } from '../../server/index.js'

/** A fresh temp directory, removed by the returned cleanup (t.after(cleanup)). */
export async function tmpdir (prefix = 'rotree-test-') {
  return fs.mkdtemp(path.join(os.tmpdir(), prefix))
}

export function makeKey () { return generateKeyPair() }

/** Write a map { 'a/b.txt': string|Uint8Array|{ symlink }|{ dir: true }|{ data, mode, mtime } } under root. */
export async function writeTree (root, files) {
  for (const [rel, spec] of Object.entries(files)) {
    const p = path.join(root, rel)
    await fs.mkdir(path.dirname(p), { recursive: true })
    if (spec && spec.dir) { await fs.mkdir(p, { recursive: true }); continue }
    if (spec && spec.symlink !== undefined) { await fs.symlink(spec.symlink, p); continue }
    const data = typeof spec === 'string' || spec instanceof Uint8Array ? spec : spec.data
    await fs.writeFile(p, data)
    if (spec.mode) await fs.chmod(p, spec.mode)
    if (spec.mtime) await fs.utimes(p, spec.mtime / 1000, spec.mtime / 1000)
  }
}

/** Build src into out (default: a new temp dir) with key; returns { out, result }. */
export async function buildTree (src, { key, out, ttlMs = 3600e3, now, seq, onBad = 'fail', fsync = false, version, name } = {}) {
  out ??= await tmpdir('rotree-out-')
  const result = await build({ src, out, key, ttlMs, now, seq, onBad, fsync, version, name })
  return { out, result }
}

/** Serve a published folder with the embedded server on 127.0.0.1:0. */
export async function serve (dir) {
  const srv = await createRotreeServer({ dir })
  const { url } = await srv.listen({ port: 0, host: '127.0.0.1' })
  return { url, close: () => srv.close({ timeoutMs: 1000 }), srv }
}

export const address = (url, publicKey) => `${url}#${publicKey}`

/** Deterministic pseudo-random bytes (an AES-CTR keystream): fast enough for 100 MB. */
export function prng (n, seed = 'seed') {
  const key = createHash('sha256').update(seed).digest()
  return createCipheriv('aes-256-ctr', key, Buffer.alloc(16)).update(Buffer.alloc(n))
}

/**
 * An assert.rejects validator: every mirror failed (docs/TRUST.md rule 4), and
 * each one with `code` (ROTREE_ALL_MIRRORS_FAILED carries what each did).
 */
export function allFailedWith (code) {
  return err => {
    // a verdict on fsinfo.json every mirror gave is thrown as itself, each mirror's answer kept (docs/TRUST.md rule 4)
    if (err?.code !== 'ROTREE_ALL_MIRRORS_FAILED' && err?.code !== code) throw err
    const codes = (err.errors ?? []).map(e => e.code)
    if (codes.length === 0 || codes.some(c => c !== code)) throw new Error(`expected every mirror to fail with ${code}, got ${codes.join(', ')}`, { cause: err })
    return true
  }
}

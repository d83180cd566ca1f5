// Shared by the mirror suites: run the CLI, list blobs, compute what a root reaches.
import fs from 'node:fs/promises'
import path from 'node:path'
import { spawn } from 'node:child_process'
import { walkTree } from 'rotree-client'
import { VERIFIERS } from 'rotree-client/trust'
import { verifyRoot } from '../../lib/published/signed-roots.js'

export const BIN = new URL('../../bin/rotree.js', import.meta.url).pathname

/** Run `rotree …` as a child process. @returns {{ p, done: Promise<{ code, signal, stdout, stderr }> }} */
export function spawnRotree (args, { env = {} } = {}) {
  const p = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  const out = []; const err = []
  p.stdout.on('data', b => out.push(b)); p.stderr.on('data', b => err.push(b))
  const done = new Promise((resolve, reject) => {
    p.on('error', reject)
    p.on('close', (code, signal) => resolve({ code, signal, stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString() }))
  })
  return { p, done }
}

export const rotree = (args, o) => spawnRotree(args, o).done

/** Names in DIR/h that look like blobs. */
export async function blobNames (dir) {
  return new Set((await fs.readdir(path.join(dir, 'h'))).filter(n => /^[0-9a-f]{64}$/.test(n)))
}

/** Every non-blob name in DIR/h (temp files left behind). */
export async function strayNames (dir) {
  return (await fs.readdir(path.join(dir, 'h'))).filter(n => !/^[0-9a-f]{64}$/.test(n))
}

/**
 * What the root in `fsinfoBytes` reaches, read from the blobs in `dir`, for
 * either format version (signed by the address's key: FORMAT.md §12.5 for
 * version 2; an old root's age does not matter here):
 * Map hash → { kind, size: the stored size (what DIR/h holds), paths: string[] }.
 */
export async function reachable (dir, fsinfoBytes, publicKey) {
  const { root } = verifyRoot(fsinfoBytes, { anchor: { kind: 'key', key: publicKey }, name: '', chain: { docs: [] } })
  const read = ref => fs.readFile(path.join(dir, 'h', ref.hash))
  const out = new Map()
  await walkTree(root,
    async (ref, kind) => VERIFIERS[kind](await read(ref), ref),
    (ref, kind, p) => {
      const e = out.get(ref.hash) ?? { kind, size: ref.storedSize ?? ref.size, paths: [] }
      if (!e.paths.includes(p)) e.paths.push(p)
      out.set(ref.hash, e)
    })
  return out
}

export const sum = (iter, f) => { let n = 0; for (const x of iter) n += f(x); return n }

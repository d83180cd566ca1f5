// The CLI as a user runs it, for test/cli: real processes, a real
// `rotree serve` on port 0, a small built tree.
import fs from 'node:fs/promises'
import path from 'node:path'
import { spawn } from 'node:child_process'
import { tmpdir, writeTree, buildTree, makeKey, serve } from '../helpers/fixtures.js'

export const BIN = new URL('../../bin/rotree.js', import.meta.url).pathname

/** Run `rotree …` to its end: { code, signal, stdout (Buffer), out (string), err (string) }. */
export function rotree (args, { env = {}, uid, gid, timeoutMs = 60_000 } = {}) {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, ...env }, uid, gid })
    const out = []; const err = []
    const killer = setTimeout(() => p.kill('SIGKILL'), timeoutMs)
    p.stdout.on('data', b => out.push(b)); p.stderr.on('data', b => err.push(b))
    p.on('error', reject)
    p.on('close', (code, signal) => {
      clearTimeout(killer)
      const stdout = Buffer.concat(out)
      resolve({ code, signal, stdout, out: stdout.toString(), err: Buffer.concat(err).toString() })
    })
    p.stdin.end()
  })
}

/**
 * Start a long-running `rotree …` (serve, gateway, get); resolves once stdout
 * matches `ready` with { proc, match, output(), exited }. Stopped (SIGTERM)
 * when the test ends.
 */
export function start (t, args, { env = {}, ready = /at (http:\/\/\S+)/, stream = 'stdout', cwd } = {}) {
  const p = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, ...env }, cwd })
  const killer = setTimeout(() => p.kill('SIGKILL'), 120_000)
  const exited = new Promise(resolve => p.on('exit', (code, signal) => { clearTimeout(killer); resolve({ code, signal }) }))
  t.after(async () => { if (p.exitCode === null && p.signalCode === null) { p.kill('SIGTERM'); await exited } })
  let out = ''; let err = ''
  return new Promise((resolve, reject) => {
    const check = () => {
      const m = ready.exec(stream === 'stdout' ? out : err)
      if (m) resolve({ proc: p, match: m, output: () => ({ out, err }), exited })
    }
    p.stdout.on('data', b => { out += b; check() })
    p.stderr.on('data', b => { err += b; check() })
    exited.then(({ code }) => reject(new Error(`rotree ${args[0]} exited ${code}: ${err}`)))
  })
}

/**
 * A tree built from `files` (writeTree's map), served by `rotree serve` on
 * port 0: { dir, site, out, pub, url, addr, env, serve }.
 */
export async function servedTree (t, files, { ttlMs = 3600e3, now } = {}) {
  const dir = await tmpdir('rotree-cli-')
  t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const site = path.join(dir, 'site')
  await writeTree(site, files)
  const key = makeKey()
  const out = path.join(dir, 'out')
  await buildTree(site, { key, out, ttlMs, now })
  const env = { ROTREE_STATE: path.join(dir, 'state') }
  const serve = await start(t, ['serve', out, '--port', '0'])
  const url = serve.match[1]
  return { dir, site, out, pub: key.publicKey, key, url, addr: `${url}#${key.publicKey}`, env, serve }
}

/** Everything under dir: relative path → 'dir' | 'file:<content>' | 'link:<target>'. */
export async function snapshot (dir) {
  const out = {}
  async function walk (rel) {
    for (const n of (await fs.readdir(path.join(dir, rel))).sort()) {
      const r = rel ? rel + '/' + n : n
      const p = path.join(dir, r)
      const s = await fs.lstat(p)
      if (s.isSymbolicLink()) out[r] = 'link:' + await fs.readlink(p)
      else if (s.isDirectory()) { out[r] = 'dir'; await walk(r) } else out[r] = 'file:' + await fs.readFile(p, 'utf8')
    }
  }
  await walk('')
  return out
}

export const exists = p => fs.lstat(p).then(() => true, () => false)

/** A tree built from `files` and served in this process on port 0 (no CLI): { dir, site, url, pub }. */
export async function servedHere (t, files, prefix = 'rotree-cli-') {
  const dir = await tmpdir(prefix)
  t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const site = path.join(dir, 'site')
  await writeTree(site, files)
  const key = makeKey()
  const { out } = await buildTree(site, { key, out: path.join(dir, 'out') })
  const srv = await serve(out); t.after(srv.close)
  return { dir, site, url: srv.url, pub: key.publicKey }
}

// Real servers for the edge suites: nginx from the generated config as the
// origin, Varnish or Caddy from theirs, each a child process of the test on a
// loopback port, stopped after it. A port is picked by binding port 0 and
// closing, so another process may take it first: "address in use" means try
// again with another.
import fs from 'node:fs/promises'
import { statSync, chmodSync } from 'node:fs'
import path from 'node:path'
import http from 'node:http'
import net from 'node:net'
import { spawn, execFileSync } from 'node:child_process'
import { tmpdir } from '../helpers/fixtures.js'
import { toolPath, needs } from '../helpers/tools.js'
import { fullConfig } from '../../server/nginx-config.js'

export { needs }
export const NGINX = toolPath('nginx')
export const VARNISHD = toolPath('varnishd')
export const CADDY = toolPath('caddy')

export function freePort () {
  return new Promise((resolve, reject) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)) })
    s.on('error', reject)
  })
}

function connects (port) {
  return new Promise(resolve => {
    const s = net.connect(port, '127.0.0.1', () => { s.end(); resolve(true) })
    s.on('error', () => resolve(false))
  })
}

/**
 * Start `cmd args(port, dir)` in the foreground and wait for it to accept on
 * port. setup(port, dir) writes its config into the fresh folder dir first;
 * env(dir) adds to the environment.
 * @returns {Promise<{ port: number, dir: string, url: string, stop: () => Promise<void>, output: () => string }>}
 */
export async function startProcess (name, cmd, { setup, args, env = () => ({}) }) {
  for (let attempt = 0; attempt < 5; attempt++) {
    const port = await freePort()
    const dir = await tmpdir(`rotree-${name}-`)
    await setup(port, dir)
    const proc = spawn(cmd, args(port, dir), { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env(dir) } })
    let out = ''
    proc.stdout.on('data', b => { out += b })
    proc.stderr.on('data', b => { out += b })
    const exited = new Promise(resolve => proc.once('exit', resolve))
    const deadline = Date.now() + 30_000
    while (Date.now() < deadline && proc.exitCode === null && !(await connects(port))) await new Promise(resolve => setTimeout(resolve, 50))
    if (proc.exitCode === null && await connects(port)) {
      const stop = async () => {
        if (proc.exitCode === null) { proc.kill('SIGTERM'); setTimeout(() => proc.kill('SIGKILL'), 5000).unref() }
        await exited
        await fs.rm(dir, { recursive: true, force: true })
      }
      return { port, dir, url: `http://127.0.0.1:${port}/`, stop, output: () => out }
    }
    if (proc.exitCode === null) proc.kill('SIGKILL')
    await exited
    await fs.rm(dir, { recursive: true, force: true })
    if (!/address already in use|could not bind|bind\(\).*failed|Address in use/i.test(out)) throw new Error(`${name} did not start: ${out}`)
  }
  throw new Error(`${name}: no free port after 5 tries`)
}

/** OUT readable by anyone (a+rX), and each folder above it passable (o+x). */
function openUpTo (out) {
  execFileSync('chmod', ['-R', 'a+rX', out])
  for (let d = path.dirname(out); d !== path.dirname(d); d = path.dirname(d)) {
    const mode = statSync(d).mode & 0o7777
    if ((mode & 0o001) === 0) chmodSync(d, mode | 0o001)
  }
}

/** nginx from `rotree nginx-config --full` for `out`, one worker, access log at dir/access.log; gate: --gated's ({ secret, tree, tokenUpstream }). */
export function startNginx (out, { fsinfoMaxAge = 30, base, gate = null } = {}) {
  // started as root, the workers run as nobody (or OUT's owner): let them read
  // OUT and pass through the folders above it; never more (OUT's parent may be
  // /tmp itself, where a chmod -R races every other test's files)
  if (process.getuid?.() === 0) openUpTo(path.resolve(out))
  return startProcess('nginx', NGINX, {
    setup: (port, dir) => fs.writeFile(path.join(dir, 'nginx.conf'), fullConfig({ out, listen: `127.0.0.1:${port}`, prefix: dir, base, fsinfoMaxAge, workers: 1, gate })),
    args: (port, dir) => ['-p', dir, '-c', path.join(dir, 'nginx.conf'), '-e', path.join(dir, 'startup.log'), '-g', 'daemon off;']
  })
}

/** varnishd in the foreground with `vcl`, no jail (it runs as whoever runs the test), a small memory store. */
export function startVarnish (vcl) {
  return startProcess('varnish', VARNISHD, {
    setup: (port, dir) => fs.writeFile(path.join(dir, 'edge.vcl'), vcl),
    args: (port, dir) => ['-F', '-j', 'none', '-n', path.join(dir, 'work'), '-a', `127.0.0.1:${port}`, '-T', 'none',
      '-f', path.join(dir, 'edge.vcl'), '-s', 'malloc,32m']
  })
}

/** One request by node:http, the path exactly as given. */
export function req (port, p, { method = 'GET', headers = {} } = {}) {
  return new Promise((resolve, reject) => {
    const r = http.request({ host: '127.0.0.1', port, path: p, method, headers, agent: false }, res => {
      const parts = []
      res.on('data', c => parts.push(c))
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(parts) }))
      res.on('error', reject)
    })
    r.on('error', reject)
    r.setTimeout(20_000, () => r.destroy(new Error('test request timed out')))
    r.end()
  })
}

/** Caddy in the foreground from `caddyfile(port)` (a full Caddyfile: no admin endpoint); its state under the temp folder. */
export function startCaddy (caddyfile) {
  return startProcess('caddy', CADDY, {
    setup: (port, dir) => fs.writeFile(path.join(dir, 'Caddyfile'), caddyfile(port)),
    args: (port, dir) => ['run', '--config', path.join(dir, 'Caddyfile'), '--adapter', 'caddyfile'],
    env: dir => ({ HOME: dir, XDG_CONFIG_HOME: path.join(dir, 'config'), XDG_DATA_HOME: path.join(dir, 'data') })
  })
}

// The servers a benchmark compares, each started as its own process on a
// loopback port so its CPU can be read from /proc: the embedded server
// (`rotree serve`), nginx from `rotree nginx-config`, express.static, and
// `rotree gateway` in front of a mirror.
import { spawn, execFileSync } from 'node:child_process'
import fs from 'node:fs/promises'
import net from 'node:net'
import path from 'node:path'
import os from 'node:os'
import { once } from 'node:events'

const ROOT = new URL('../../', import.meta.url).pathname
const BIN = path.join(ROOT, 'bin/rotree.js')

export async function freePort () {
  return new Promise((resolve, reject) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => resolve(p)) })
    s.on('error', reject)
  })
}

export async function waitPort (port, proc, ms = 10_000) {
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    if (proc.exitCode !== null) throw new Error(`server exited with ${proc.exitCode}`)
    const ok = await new Promise(resolve => {
      const s = net.connect(port, '127.0.0.1', () => { s.end(); resolve(true) })
      s.on('error', () => resolve(false))
    })
    if (ok) return
    await new Promise(resolve => setTimeout(resolve, 50))
  }
  throw new Error(`nothing listening on ${port}`)
}

function stopper (proc) {
  return () => new Promise(resolve => {
    if (proc.exitCode !== null) return resolve()
    proc.once('exit', resolve); proc.kill('SIGTERM')
    setTimeout(() => proc.kill('SIGKILL'), 3000).unref()
  })
}

/**
 * Run as root, nginx's worker drops to 'nobody': let it read these folders
 * (recursively) and pass through their parents (each parent: a+x only, never
 * recursively), stopping at the system's temporary folder, which is shared.
 */
export function exposeToNginx (dirs) {
  if (process.getuid?.() !== 0) return
  const stop = new Set(['/', path.resolve(os.tmpdir())])
  for (const d of dirs) {
    const abs = path.resolve(d)
    if (stop.has(abs)) throw new Error(`will not open ${abs} to nginx: it is shared`)
    execFileSync('chmod', ['-R', 'a+rX', abs])
    for (let p = path.dirname(abs); !stop.has(p); p = path.dirname(p)) execFileSync('chmod', ['a+x', p])
  }
}

/** cmd args…, pinned to a taskset CPU list when cpu is given (taskset execs it: same pid). */
function spawnOn (cpu, cmd, args, opts) {
  return cpu ? spawn('taskset', ['-c', cpu, cmd, ...args], opts) : spawn(cmd, args, opts)
}

/**
 * `rotree gateway ADDR` in its own process; resolves when it answers.
 * dir: its state goes in dir/state. o.bin: the rotree to run (another
 * checkout's bin/rotree.js, for an A/B); o.env: added to its environment.
 */
export async function startGateway (addr, dir, extra = [], { env = {}, bin = BIN } = {}) {
  const port = await freePort()
  const proc = spawn(process.execPath, [bin, 'gateway', addr, '--port', String(port), '--state-dir', path.join(dir, 'state'), ...extra], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } })
  let out = ''
  proc.stdout.on('data', b => { out += b })
  // its log (a line per root change) stays out of the figure's output; the tail explains a failed start
  let log = ''
  proc.stderr.on('data', b => { log = (log + b).slice(-8192) })
  const deadline = Date.now() + 30_000
  while (!out.includes('listening at')) {
    if (proc.exitCode !== null || Date.now() > deadline) {
      if (proc.exitCode === null) proc.kill('SIGKILL')
      throw new Error(`gateway did not start: ${out}${log}`)
    }
    await new Promise(resolve => setTimeout(resolve, 50))
  }
  return {
    url: `http://127.0.0.1:${port}/`,
    pid: proc.pid,
    stop: async () => { if (proc.exitCode === null) { proc.kill('SIGTERM'); await once(proc, 'exit') } }
  }
}

/** `rotree serve DIR` in its own process. */
export async function startRotreeServe (dir, { cpu = null } = {}) {
  const port = await freePort()
  const proc = spawnOn(cpu, process.execPath, [BIN, 'serve', dir, '--port', String(port)], { stdio: 'ignore' })
  await waitPort(port, proc)
  return { url: `http://127.0.0.1:${port}/`, pids: [proc.pid], stop: stopper(proc), name: 'rotree serve' }
}

/** express.static over DIR, the framework baseline. */
export async function startExpressStatic (dir) {
  const port = await freePort()
  const code = `import express from 'express'; const app = express(); app.use(express.static(${JSON.stringify(path.resolve(dir))}, { etag: true })); app.listen(${port}, '127.0.0.1')`
  const proc = spawn(process.execPath, ['--input-type=module', '-e', code], { stdio: 'ignore', cwd: ROOT })
  await waitPort(port, proc)
  return { url: `http://127.0.0.1:${port}/`, pids: [proc.pid], stop: stopper(proc), name: 'express.static' }
}

/**
 * The floor for any Node server: bare node:http answering every request with
 * one constant buffer (the blob at h/<hex>, read once), with the same headers
 * `rotree serve` sends. No routing, no file access, no cache lookup.
 */
export async function startBareNode (dir, hex, { cpu = null } = {}) {
  const port = await freePort()
  const code = `import http from 'node:http'; import fs from 'node:fs'
import { BLOB_COMMON } from ${JSON.stringify(path.join(ROOT, 'server/blob-route.js'))}
const buf = fs.readFileSync(${JSON.stringify(path.resolve(dir, 'h', hex))})
const h = ['Content-Type', 'application/octet-stream', 'Content-Length', String(buf.length), 'ETag', '"${hex}"', ...BLOB_COMMON]
http.createServer((req, res) => { res.writeHead(200, h); res.end(buf) }).listen(${port}, '127.0.0.1')`
  const proc = spawnOn(cpu, process.execPath, ['--input-type=module', '-e', code], { stdio: 'ignore', cwd: ROOT })
  await waitPort(port, proc)
  return { url: `http://127.0.0.1:${port}/`, pids: [proc.pid], stop: stopper(proc), name: 'bare node:http' }
}

/**
 * nginx with one worker, from the config `rotree nginx-config --full` prints
 * for OUT (a published folder). `plainRoot` serves any folder the same way,
 * for baselines that need plain files (e.g. a 100 MB file as one file).
 */
export async function startNginx (dir, { plain = false } = {}) {
  const port = await freePort()
  // run as root, nginx's worker drops to 'nobody': let it read the (mkdtemp 0700) tree
  exposeToNginx([dir])
  const prefix = await fs.mkdtemp(path.join(os.tmpdir(), 'rotree-nginx-'))
  let conf
  if (plain) {
    conf = `worker_processes 1; daemon off; pid ${prefix}/nginx.pid; error_log ${prefix}/error.log;
events { worker_connections 1024; }
http { access_log off; sendfile on; tcp_nopush on; keepalive_requests 100000;
  client_body_temp_path ${prefix}/tmp; proxy_temp_path ${prefix}/tmp; fastcgi_temp_path ${prefix}/tmp; uwsgi_temp_path ${prefix}/tmp; scgi_temp_path ${prefix}/tmp;
  default_type application/octet-stream;
  server { listen 127.0.0.1:${port}; root ${path.resolve(dir)}; } }\n`
  } else {
    conf = execFileSync(process.execPath, [BIN, 'nginx-config', dir, '--listen', `127.0.0.1:${port}`, '--full', '--prefix', prefix]).toString()
    conf = conf.replace(/access_log\s+[^;]+;/g, 'access_log off;') // logging every request would measure the disk
  }
  await fs.mkdir(path.join(prefix, 'tmp'), { recursive: true })
  await fs.mkdir(path.join(prefix, 'logs'), { recursive: true })
  await fs.writeFile(path.join(prefix, 'nginx.conf'), conf)
  // the plain config sets 'daemon off' itself; the generated one is run in the foreground as DEPLOY.md says
  const proc = spawn('/usr/sbin/nginx', ['-p', prefix, '-c', path.join(prefix, 'nginx.conf'), ...(plain ? [] : ['-g', 'daemon off;'])], { stdio: 'ignore' })
  await waitPort(port, proc)
  // the master and its one worker
  const kids = execFileSync('ps', ['-o', 'pid=', '--ppid', String(proc.pid)]).toString().trim().split(/\s+/).map(Number).filter(Boolean)
  const stop = stopper(proc)
  return { url: `http://127.0.0.1:${port}/`, pids: [proc.pid, ...kids], stop: async () => { await stop(); await fs.rm(prefix, { recursive: true, force: true }) }, name: 'nginx' }
}

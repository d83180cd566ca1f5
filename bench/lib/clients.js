// The readers the network figures time, each in its own process and each with
// a time limit: the client library (bench/lib/reader.js), `rotree cat`,
// `rotree get`, curl through `rotree gateway`, and curl as the baseline.
//
// Which rotree client is measured: this checkout, or the one named by
// ROTREE_BENCH_CLIENT=DIR (a checkout with node_modules), so a before/after
// pair can be measured against the same servers and links:
//   node bench/lib/clients.js export HEAD /tmp/rotree-before   # git archive of a ref, node_modules linked
//   ROTREE_BENCH_CLIENT=/tmp/rotree-before node bench/run.js --results /tmp/before P3w
import { spawn, execFileSync } from 'node:child_process'
import { openSync, closeSync, existsSync, readFileSync } from 'node:fs'
import fs from 'node:fs/promises'
import path from 'node:path'
import os from 'node:os'
import { pathToFileURL } from 'node:url'
import { startGateway } from './servers.js'

const ROOT = new URL('../../', import.meta.url).pathname
const READER = new URL('./reader.js', import.meta.url).pathname

/** The checkout whose client is measured. */
export function clientDir () { return path.resolve(process.env.ROTREE_BENCH_CLIENT || ROOT) }
export function clientLabel () {
  const dir = clientDir()
  let rev = ''
  try { rev = execFileSync('git', ['-C', dir, 'rev-parse', '--short', 'HEAD'], { stdio: ['ignore', 'pipe', 'ignore'] }).toString().trim() } catch {}
  if (!rev) { try { rev = (execFileSync('cat', [path.join(dir, '.bench-ref')], { stdio: ['ignore', 'pipe', 'ignore'] }).toString().trim()) } catch {} }
  const dirty = dir === path.resolve(ROOT) && gitDirty() ? ' + uncommitted changes in client-js/, cli/ or gateway/' : ''
  return `${dir === path.resolve(ROOT) ? 'this checkout' : dir}${rev ? ` (${rev}${dirty})` : dirty}`
}

function gitDirty () {
  try { return execFileSync('git', ['-C', ROOT, 'status', '--porcelain', '--', 'client-js', 'cli', 'gateway'], { stdio: ['ignore', 'pipe', 'ignore'] }).toString().trim() !== '' } catch { return false }
}

const envWith = ca => ca ? { ...process.env, NODE_EXTRA_CA_CERTS: ca } : process.env

/** Run a child; resolve { code, signal, ms, stdout (unless counted), bytes, truncated } with a hard time limit. */
function runChild (cmd, args, { env, limitS, devNull = false, killAtLimit = true, okCodes = [0], cwd }) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now()
    const nul = devNull ? openSync('/dev/null', 'w') : null
    const p = spawn(cmd, args, { env, cwd, stdio: ['ignore', devNull ? nul : 'pipe', 'pipe'] })
    if (nul !== null) closeSync(nul)
    let out = ''; let err = ''; let truncated = false
    p.stdout?.on('data', b => { out += b })
    p.stderr.on('data', b => { err += b })
    const timer = setTimeout(() => { truncated = true; p.kill('SIGKILL') }, (killAtLimit ? limitS : limitS + 30) * 1000)
    p.on('error', reject)
    p.on('close', (code, signal) => {
      clearTimeout(timer)
      const ms = performance.now() - t0
      if (!okCodes.includes(code) && !truncated) return reject(new Error(`${path.basename(cmd)} ${args.slice(0, 3).join(' ')} … exited with ${code ?? signal}: ${err.trim().slice(-500)}`))
      resolve({ code, signal, ms, stdout: out, stderr: err, truncated })
    })
  })
}

/** ROTREE_BENCH_OPTS='{"readAhead":32}': openTree() options for every library read (an experiment, noted in each figure). */
export function envOpts () {
  const o = process.env.ROTREE_BENCH_OPTS
  return o ? JSON.parse(o) : null
}

/**
 * A verified streaming read through the library.
 * @returns {Promise<{ openMs: number, firstMs: number, totalMs: number, bytes: number, truncated: boolean, requests: number|null, cpuMs: number }>}
 */
export async function libraryRead ({ addr, file, mirrors = [], ca = null, limitS = 60, first = false, mem = false, lend = false, opts = envOpts() }) {
  const args = [READER, addr, file, '--limit-s', String(limitS), '--client', clientDir()]
  for (const m of mirrors) args.push('--mirror', m)
  if (first) args.push('--first')
  if (mem) args.push('--mem')
  if (lend) args.push('--lend')
  if (opts) args.push('--opt', JSON.stringify(opts))
  // the reader stops itself at the limit; the kill is for a reader that hangs
  const r = await runChild(process.execPath, args, { env: envWith(ca), limitS, killAtLimit: false })
  return JSON.parse(r.stdout.trim().split('\n').pop())
}

/**
 * `rotree cat ADDR FILE > /dev/null` of a file of `size` bytes; wall time
 * includes Node's start-up. A run stopped at the limit has bytes NaN (not counted).
 */
export async function rotreeCat ({ addr, file, size, mirrors = [], ca = null, limitS = 60, stateDir }) {
  const args = [path.join(clientDir(), 'bin/rotree.js'), 'cat', addr, file, '--state-dir', stateDir]
  for (const m of mirrors) args.push('--mirror', m)
  const r = await runChild(process.execPath, args, { env: envWith(ca), limitS, devNull: true })
  return { ms: r.ms, bytes: r.truncated ? NaN : size, truncated: r.truncated }
}

/** `rotree get ADDR PATH -o DEST`; wall time includes Node's start-up. */
export async function rotreeGet ({ addr, from = '/', dest, mirrors = [], ca = null, limitS = 120, stateDir, jobs = null }) {
  const args = [path.join(clientDir(), 'bin/rotree.js'), 'get', addr, from, '-o', dest, '--state-dir', stateDir]
  for (const m of mirrors) args.push('--mirror', m)
  if (jobs) args.push('--jobs', String(jobs))
  const r = await runChild(process.execPath, args, { env: envWith(ca), limitS })
  return { ms: r.ms, truncated: r.truncated }
}

/**
 * curl of FILE through a `rotree gateway ADDR` started for this one download
 * (no disk cache, so every chunk comes from the mirror, verified, as it is
 * sent); the gateway is on loopback with curl, the mirror behind the link.
 * The time is curl's, from connecting to the gateway to the last byte; the
 * gateway has opened the tree (fsinfo.json) before it.
 * @returns {Promise<{ ms: number, bytes: number, truncated: boolean }>}
 */
export async function gatewayRead ({ addr, file, ca = null, limitS = 60, dir }) {
  const state = await fs.mkdtemp(path.join(dir, 'gw-'))
  const gw = await startGateway(addr, state, ['--cache-size', '0', ...(ca ? ['--ca', ca] : [])], { bin: path.join(clientDir(), 'bin/rotree.js') })
  try {
    const r = await curl({ url: gw.url + file.replace(/^\//, ''), limitS })
    return { ms: r.ms, bytes: r.bytes, truncated: r.truncated }
  } finally {
    await gw.stop()
    await fs.rm(state, { recursive: true, force: true })
  }
}

/**
 * `wget -r -np` of a whole tree through a `rotree gateway ADDR` started for
 * this run, with its disk cache in `dir` (the default setup) and `extra`
 * flags (--no-prefetch): the way a plain HTTP client mirrors a tree through
 * the gateway, one listing or file at a time. wget's exit code 8 (some
 * answer was an error: a symlink that leads nowhere is a 404) is expected.
 * @returns {Promise<{ ms: number, files: number, truncated: boolean }>} files: counted in dest
 */
export async function wgetThroughGateway ({ addr, dir, dest, extra = [], limitS = 300 }) {
  const state = await fs.mkdtemp(path.join(dir, 'gw-'))
  const gw = await startGateway(addr, state, ['--cache-dir', path.join(state, 'cache'), ...extra], { bin: path.join(clientDir(), 'bin/rotree.js') })
  try {
    await fs.mkdir(dest, { recursive: true })
    const r = await runChild('wget', ['-r', '-np', '-nH', '-q', '-e', 'robots=off', gw.url], { env: process.env, limitS, okCodes: [0, 8], cwd: dest })
    const files = Number(execFileSync('sh', ['-c', `find '${dest}' -type f | wc -l`]).toString())
    return { ms: r.ms, files, truncated: r.truncated }
  } finally {
    await gw.stop()
    await fs.rm(state, { recursive: true, force: true })
  }
}

/** Why `mount -t davfs` cannot run here (a line to print), or null. */
export function davfsMissing () {
  if (process.platform !== 'linux') return 'davfs2 mounts need Linux'
  try { execFileSync('sh', ['-c', 'command -v mount.davfs'], { stdio: 'ignore' }) } catch { return 'mount.davfs not found (Debian package: davfs2)' }
  if (process.getuid?.() !== 0) return 'mounting davfs2 needs root'
  if (!existsSync('/dev/fuse')) return 'no /dev/fuse in this machine or container'
  const eff = /^CapEff:\s*([0-9a-f]+)$/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1]
  if (eff === undefined || !(BigInt('0x' + eff) & (1n << 21n))) return 'no CAP_SYS_ADMIN: the kernel will not mount here'
  return null
}

/**
 * `cp -r` of a whole tree out of a davfs2 mount of a `rotree gateway ADDR`
 * started for this run (with a disk cache, and `extra` flags) into `dest`: a
 * file manager's copy over WebDAV, depth-first in davfs2's own order, one
 * PROPFIND or GET at a time. The gateway's and davfs2's caches and the mount
 * point are in a new folder of the system's temp folder, which davfs2's own
 * user can reach.
 * @returns {Promise<{ ms: number, files: number, truncated: boolean }>}
 */
export async function davfsCopyThroughGateway ({ addr, dest, extra = [], limitS = 300 }) {
  // in the system's temp folder, not under `dir`: davfs2 runs as its own user and must reach its cache folder
  const work = await fs.mkdtemp(path.join(os.tmpdir(), 'rotree-bench-dav-'))
  const gw = await startGateway(addr, work, ['--cache-dir', path.join(work, 'gw-cache'), ...extra], { bin: path.join(clientDir(), 'bin/rotree.js') })
  const mnt = path.join(work, 'mnt'); const cache = path.join(work, 'cache'); const secrets = path.join(work, 'secrets')
  let mounted = false
  try {
    await fs.mkdir(mnt); await fs.mkdir(cache)
    // davfs2 makes its cache folder as its own unprivileged user (davfs2): let its group write
    const gid = /^davfs2:[^:]*:(\d+):/m.exec(await fs.readFile('/etc/group', 'utf8').catch(() => ''))?.[1]
    if (gid !== undefined) { await fs.chown(cache, 0, Number(gid)); await fs.chmod(cache, 0o775) }
    await fs.writeFile(secrets, '', { mode: 0o600 })
    await fs.chmod(work, 0o755)
    const conf = path.join(work, 'davfs2.conf')
    await fs.writeFile(conf, `use_locks 0\nask_auth 0\nbuf_size 64\ncache_dir ${cache}\nsecrets ${secrets}\n`)
    await runChild('mount', ['-t', 'davfs', '-o', `ro,conf=${conf}`, gw.url, mnt], { env: process.env, limitS: 60 })
    mounted = true
    const r = await runChild('cp', ['-r', mnt + '/.', dest], { env: process.env, limitS })
    const files = Number(execFileSync('sh', ['-c', `find '${dest}' -type f | wc -l`]).toString())
    return { ms: r.ms, files, truncated: r.truncated }
  } finally {
    if (mounted) await runChild('umount', [mnt], { env: process.env, limitS: 60 }).catch(() => {})
    await gw.stop()
    await fs.rm(work, { recursive: true, force: true })
  }
}

/**
 * curl of one URL over one connection, body to /dev/null (or piped to `pipe`, a shell command).
 * @returns {Promise<{ ms: number, startMs: number, connectMs: number, bytes: number, httpVersion: string, truncated: boolean }>}
 */
export async function curl ({ url, http2 = false, cacert = null, limitS = 60, range = null, pipe = null }) {
  const args = ['-s', '--max-time', String(limitS), http2 ? '--http2' : '--http1.1']
  if (cacert) args.push('--cacert', cacert)
  if (range) args.push('-r', range)
  if (pipe) {
    // the body goes down the pipe; curl's -w goes to stderr
    const cmd = `curl ${args.map(shq).join(' ')} -w '%{stderr}%{json}' -o - ${shq(url)} | ${pipe}`
    const r = await runChild('sh', ['-c', cmd], { env: process.env, limitS: limitS + 5 })
    return parseCurl(r.stderr.trim().split('\n').pop(), r.ms)
  }
  args.push('-w', '%{json}', '-o', '/dev/null', url)
  const r = await runChild('curl', args, { env: process.env, limitS: limitS + 5 }).catch(err => {
    if (/exited with 28/.test(err.message)) return null // the time limit: curl still printed its -w
    throw err
  })
  if (!r) throw new Error(`curl ${url}: no answer within ${limitS} s`)
  return parseCurl(r.stdout, r.ms)
}

function parseCurl (json, wallMs) {
  const j = JSON.parse(json)
  if (j.exitcode && j.exitcode !== 28) throw new Error(`curl ${j.url_effective}: ${j.errormsg}`)
  if (j.http_code >= 300 || j.http_code < 200) throw new Error(`curl ${j.url_effective}: HTTP ${j.http_code}`)
  return { ms: j.time_total * 1000, wallMs, startMs: j.time_starttransfer * 1000, connectMs: j.time_connect * 1000, bytes: j.size_download, httpVersion: j.http_version, truncated: j.exitcode === 28 }
}

const shq = s => `'${String(s).replace(/'/g, "'\\''")}'`

/**
 * A copy of the repository at `ref` (git archive) in `dest`, with this
 * checkout's node_modules linked in and rotree-client pointing at its own
 * client-js: a "before" client for ROTREE_BENCH_CLIENT.
 */
export async function exportRef (ref, dest) {
  await fs.mkdir(dest, { recursive: true })
  execFileSync('sh', ['-c', `git -C ${shq(ROOT)} archive ${shq(ref)} | tar -x -C ${shq(dest)}`])
  await fs.writeFile(path.join(dest, '.bench-ref'), execFileSync('git', ['-C', ROOT, 'rev-parse', '--short', ref]).toString())
  const nm = path.join(dest, 'node_modules')
  await fs.mkdir(nm, { recursive: true })
  for (const e of await fs.readdir(path.join(ROOT, 'node_modules'))) {
    if (e === 'rotree-client' || e === '.bin' || e.startsWith('.')) continue
    await fs.symlink(path.join(ROOT, 'node_modules', e), path.join(nm, e)).catch(err => { if (err.code !== 'EEXIST') throw err })
  }
  await fs.symlink('../client-js', path.join(nm, 'rotree-client')).catch(err => { if (err.code !== 'EEXIST') throw err })
  // the browser bundle is built, not committed: take this checkout's if the export has none
  return dest
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const [cmd, ref, dest] = process.argv.slice(2)
  if (cmd !== 'export' || !ref || !dest) { console.error('usage: node bench/lib/clients.js export REF DIR'); process.exit(2) }
  await exportRef(ref, dest)
  console.log(`${dest}: ${ref} (${execFileSync('git', ['-C', ROOT, 'rev-parse', '--short', ref]).toString().trim()}); run with ROTREE_BENCH_CLIENT=${dest}`)
}

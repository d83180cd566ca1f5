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
import { openSync, closeSync, readFileSync, rmSync } from 'node:fs'
import fs from 'node:fs/promises'
import path from 'node:path'
import os from 'node:os'
import { pathToFileURL } from 'node:url'
import { startGateway } from './servers.js'
import { procStat } from '../../lib/proc-stat.js'
import { davfsConfig } from '../../test/helpers/davfs.js'

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

// The CPU a reader used, user + system, as the kernel counts it: each child
// runs under GNU time (`/usr/bin/time -f '%U %S' -o FILE`), which reads the
// child's rusage from wait4() when it reaps it. That covers every thread of
// the child and every process the child waited for (curl and tar under
// \`sh -c 'curl | tar -x'\`), and nothing else. The alternatives are less
// reliable: Node reaps a child before its 'exit' event, so /proc/<pid>/stat is
// gone by then, and sampling it earlier misses the last moments; the bench
// process's own cutime/cstime would mix in every other child it reaps (nginx,
// the relay, a gateway). GNU time prints hundredths of a second. Where it is
// missing (Debian package `time`), figures have no CPU columns: `cpuNote()` says so.
const TIME = '/usr/bin/time'
let timeOk = null
export function cpuAccounting () {
  if (timeOk === null) {
    try { timeOk = /GNU/.test(execFileSync(TIME, ['--version'], { stdio: ['ignore', 'pipe', 'pipe'] }).toString()) } catch { timeOk = false }
  }
  return timeOk
}
/** A line for a figure's notes where GNU time is missing; null where the CPU columns are measured. */
export function cpuNote () { return cpuAccounting() ? null : `No CPU columns: ${TIME} (GNU time, Debian package \`time\`) is missing on this machine.` }

let cpuSeq = 0
/** user + system CPU seconds GNU time wrote to `file` (its last line), or null. */
function readCpu (file) {
  try {
    const m = /(\d+\.\d+) (\d+\.\d+)\s*$/.exec(readFileSync(file, 'utf8'))
    return m ? { userS: Number(m[1]), sysS: Number(m[2]) } : null
  } catch { return null } finally { rmSync(file, { force: true }) }
}

/** The children of pid (Linux 3.5+), to stop the command GNU time runs rather than time itself. */
function childrenOf (pid) {
  try { return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number) } catch { return [] }
}

/**
 * Run a child; resolve { code, signal, ms, stdout (unless counted), stderr, truncated, cpu } with a
 * hard time limit. cpu: { userS, sysS } of the child and what it waited for (GNU time), or null.
 */
function runChild (cmd, args, { env, limitS, devNull = false, killAtLimit = true, okCodes = [0], cwd }) {
  return new Promise((resolve, reject) => {
    const cpuFile = cpuAccounting() ? path.join(os.tmpdir(), `rotree-bench-cpu-${process.pid}-${++cpuSeq}`) : null
    const t0 = performance.now()
    const nul = devNull ? openSync('/dev/null', 'w') : null
    const p = cpuFile
      ? spawn(TIME, ['-f', '%U %S', '-o', cpuFile, cmd, ...args], { env, cwd, stdio: ['ignore', devNull ? nul : 'pipe', 'pipe'] })
      : spawn(cmd, args, { env, cwd, stdio: ['ignore', devNull ? nul : 'pipe', 'pipe'] })
    if (nul !== null) closeSync(nul)
    let out = ''; let err = ''; let truncated = false
    p.stdout?.on('data', b => { out += b })
    p.stderr.on('data', b => { err += b })
    const kill = () => {
      // the command itself, so GNU time still reaps it and reports; time too if it lingers
      if (cpuFile) for (const c of childrenOf(p.pid)) { try { process.kill(c, 'SIGKILL') } catch {} }
      setTimeout(() => { if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL') }, cpuFile ? 5000 : 0).unref()
    }
    const timer = setTimeout(() => { truncated = true; kill() }, (killAtLimit ? limitS : limitS + 30) * 1000)
    p.on('error', reject)
    p.on('close', (code, signal) => {
      clearTimeout(timer)
      const ms = performance.now() - t0
      const cpu = cpuFile ? readCpu(cpuFile) : null
      if (!okCodes.includes(code) && !truncated) return reject(new Error(`${path.basename(cmd)} ${args.slice(0, 3).join(' ')} … exited with ${code ?? signal}: ${err.trim().slice(-500)}`))
      resolve({ code, signal, ms, stdout: out, stderr: err, truncated, cpu })
    })
  })
}

/** user and system CPU seconds of a running process (/proc/<pid>/stat utime, stime), or null. */
function procCpu (pid) {
  try { const f = procStat(pid); return { userS: Number(f[14 - 3]) / CLK_TCK, sysS: Number(f[15 - 3]) / CLK_TCK } } catch { return null }
}
const CLK_TCK = 100 // sysconf(_SC_CLK_TCK) on Linux x86_64, as bench/lib/proc.js

/** user + system seconds of a { userS, sysS }, NaN for null. */
export const cpuSecondsOf = c => c ? c.userS + c.sysS : NaN

/** ROTREE_BENCH_OPTS='{"readAhead":32}': openTree() options for every library read (an experiment, noted in each figure). */
export function envOpts () {
  const o = process.env.ROTREE_BENCH_OPTS
  return o ? JSON.parse(o) : null
}

/**
 * A verified streaming read through the library.
 * @returns {Promise<{ openMs: number, firstMs: number, totalMs: number, bytes: number, truncated: boolean, requests: number|null, cpuMs: number, cpu: { userS: number, sysS: number }|null }>}
 */
export async function libraryRead ({ addr, file, mirrors = [], ca = null, limitS = 60, first = false, mem = false, lend = false, opts = envOpts() }) {
  // file: one path, or several read one after another through one tree
  const args = [READER, addr, ...[file].flat(), '--limit-s', String(limitS), '--client', clientDir()]
  for (const m of mirrors) args.push('--mirror', m)
  if (first) args.push('--first')
  if (mem) args.push('--mem')
  if (lend) args.push('--lend')
  if (opts) args.push('--opt', JSON.stringify(opts))
  // the reader stops itself at the limit; the kill is for a reader that hangs
  const r = await runChild(process.execPath, args, { env: envWith(ca), limitS, killAtLimit: false })
  // cpuMs: the reader's own count from just before openTree(); cpu: the whole process's, start-up included
  return { ...JSON.parse(r.stdout.trim().split('\n').pop()), cpu: r.cpu }
}

/**
 * `rotree cat ADDR FILE > /dev/null` of a file of `size` bytes; wall time
 * includes Node's start-up. A run stopped at the limit has bytes NaN (not counted).
 * identity: an age identity file, for a private tree (FORMAT.md §12.8).
 */
export async function rotreeCat ({ addr, file, size, mirrors = [], ca = null, limitS = 60, stateDir, identity = null, flags = [] }) {
  const args = [path.join(clientDir(), 'bin/rotree.js'), 'cat', addr, file, '--state-dir', stateDir, ...flags]
  for (const m of mirrors) args.push('--mirror', m)
  if (identity) args.push('--identity', identity)
  const r = await runChild(process.execPath, args, { env: envWith(ca), limitS, devNull: true })
  return { ms: r.ms, bytes: r.truncated ? NaN : size, truncated: r.truncated, cpu: r.cpu }
}

/** `rotree get ADDR PATH -o DEST`; wall time includes Node's start-up. identity: as rotreeCat's. */
export async function rotreeGet ({ addr, from = '/', dest, mirrors = [], ca = null, limitS = 120, stateDir, jobs = null, identity = null, flags = [] }) {
  const args = [path.join(clientDir(), 'bin/rotree.js'), 'get', addr, from, '-o', dest, '--state-dir', stateDir, ...flags]
  for (const m of mirrors) args.push('--mirror', m)
  if (identity) args.push('--identity', identity)
  if (jobs) args.push('--jobs', String(jobs))
  const r = await runChild(process.execPath, args, { env: envWith(ca), limitS })
  return { ms: r.ms, truncated: r.truncated, cpu: r.cpu }
}

/**
 * `rotree gateway ADDR` (this checkout's, or ROTREE_BENCH_CLIENT's) started
 * for one run in a new folder below `parent`, with `flags(folder)`; then
 * `run(gateway, folder)`; then the gateway stopped and the folder removed.
 */
async function throughGateway (addr, parent, flags, run) {
  const folder = await fs.mkdtemp(path.join(parent, 'rotree-gw-'))
  try {
    const gw = await startGateway(addr, folder, flags(folder), { bin: path.join(clientDir(), 'bin/rotree.js') })
    try { return await run(gw, folder) } finally { await gw.stop() }
  } finally {
    await fs.rm(folder, { recursive: true, force: true })
  }
}

/** Regular files below `dir` (find, not a recursive readdir: one count that cannot miss a level). */
export function countFiles (dir) { return Number(execFileSync('sh', ['-c', `find '${dir}' -type f | wc -l`]).toString()) }

/**
 * curl of FILE through a `rotree gateway` started for this one download
 * (no disk cache, so every chunk comes from the mirror, verified, as it is
 * sent); the gateway is on loopback with curl, the mirror behind the link.
 * The time is curl's, from connecting to the gateway to the last byte; the
 * gateway has opened the tree (fsinfo.json) before it.
 * cpu: the gateway's CPU over curl's download (/proc/<pid>/stat before and
 * after; it is a running process, not one that is reaped), and curl's own.
 * @returns {Promise<{ ms: number, bytes: number, truncated: boolean, cpu: { userS: number, sysS: number }|null, curlCpu: { userS: number, sysS: number }|null }>}
 */
export function gatewayRead ({ addr, file, ca = null, limitS = 60, dir, flags = [] }) {
  return throughGateway(addr, dir, () => ['--cache-size', '0', ...(ca ? ['--ca', ca] : []), ...flags], async gw => {
    const c0 = procCpu(gw.pid)
    const r = await curl({ url: gw.url + file.replace(/^\//, ''), limitS })
    const c1 = procCpu(gw.pid)
    return { ms: r.ms, bytes: r.bytes, truncated: r.truncated, cpu: c0 && c1 ? { userS: c1.userS - c0.userS, sysS: c1.sysS - c0.sysS } : null, curlCpu: r.cpu }
  })
}

/**
 * `wget -r -np` of a whole tree into `dest` through a `rotree gateway`
 * started for this run, with a disk cache (the default setup) and `extra`
 * flags (--no-prefetch): the way a plain HTTP client mirrors a tree through
 * the gateway, one listing or file at a time. wget's exit code 8 (some
 * answer was an error: a symlink that leads nowhere is a 404) is expected.
 * @returns {Promise<{ ms: number, files: number, truncated: boolean }>} files: counted in dest
 */
export function wgetThroughGateway ({ addr, dir, dest, extra = [], limitS = 300 }) {
  return throughGateway(addr, dir, folder => ['--cache-dir', path.join(folder, 'gw-cache'), ...extra], async gw => {
    await fs.mkdir(dest, { recursive: true })
    const r = await runChild('wget', ['-r', '-np', '-nH', '-q', '-e', 'robots=off', gw.url], { env: process.env, limitS, okCodes: [0, 8], cwd: dest })
    return { ms: r.ms, files: countFiles(dest), truncated: r.truncated }
  })
}

/**
 * `cp -r` of a whole tree into `dest` out of a davfs2 mount of a `rotree
 * gateway` started for this run (with a disk cache, and `extra` flags): a
 * file manager's copy over WebDAV, depth-first in davfs2's own order, one
 * PROPFIND or GET at a time. The gateway's and davfs2's caches and the mount
 * point are in a new folder of the system's temp folder, which davfs2's own
 * user can reach (test/helpers/davfs.js: davfsMissing() says whether this
 * machine can mount).
 * @returns {Promise<{ ms: number, files: number, truncated: boolean }>}
 */
export function davfsCopyThroughGateway ({ addr, dest, extra = [], limitS = 300 }) {
  return throughGateway(addr, os.tmpdir(), folder => ['--cache-dir', path.join(folder, 'gw-cache'), ...extra], async (gw, folder) => {
    const mnt = path.join(folder, 'mnt')
    await fs.mkdir(mnt)
    const conf = await davfsConfig(folder)
    await runChild('mount', ['-t', 'davfs', '-o', `ro,conf=${conf}`, gw.url, mnt], { env: process.env, limitS: 60 })
    try {
      const r = await runChild('cp', ['-r', mnt + '/.', dest], { env: process.env, limitS })
      return { ms: r.ms, files: countFiles(dest), truncated: r.truncated }
    } finally {
      await runChild('umount', [mnt], { env: process.env, limitS: 60 }).catch(() => {})
    }
  })
}

/**
 * curl of one URL over one connection, body to /dev/null (or piped to `pipe`, a shell command).
 * cpu: curl's (with pipe: the shell's, curl's and the pipe's command's), as runChild's.
 * @returns {Promise<{ ms: number, startMs: number, connectMs: number, bytes: number, httpVersion: string, truncated: boolean, cpu: { userS: number, sysS: number }|null }>}
 */
export async function curl ({ url, http2 = false, cacert = null, limitS = 60, range = null, pipe = null }) {
  const args = ['-s', '--max-time', String(limitS), http2 ? '--http2' : '--http1.1']
  if (cacert) args.push('--cacert', cacert)
  if (range) args.push('-r', range)
  if (pipe) {
    // the body goes down the pipe; curl's -w goes to stderr
    const cmd = `curl ${args.map(shq).join(' ')} -w '%{stderr}%{json}' -o - ${shq(url)} | ${pipe}`
    const r = await runChild('sh', ['-c', cmd], { env: process.env, limitS: limitS + 5 })
    return { ...parseCurl(r.stderr.trim().split('\n').pop(), r.ms), cpu: r.cpu }
  }
  args.push('-w', '%{json}', '-o', '/dev/null', url)
  const r = await runChild('curl', args, { env: process.env, limitS: limitS + 5 }).catch(err => {
    if (/exited with 28/.test(err.message)) return null // the time limit: curl still printed its -w
    throw err
  })
  if (!r) throw new Error(`curl ${url}: no answer within ${limitS} s`)
  return { ...parseCurl(r.stdout, r.ms), cpu: r.cpu }
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

// The soak (docs/GATEWAY.md#soak): the gateway under autocannon for a bounded time
// while fsinfo.json is re-published and one of its two mirrors flaps. What
// must hold: no wrong byte, no 5xx while an honest mirror is up, memory flat.
// test/soak/soak.test.js runs it short; scripts/soak.js runs it long.
//
//   test process            autocannon (verifies every body), the builder
//                           (republishes into OUT), the flapping mirror
//                           (test/helpers/lying-server.js over OUT)
//   child `rotree serve`    the honest mirror over the same OUT
//   child `rotree gateway`  ADDR = the flapping mirror (so it is asked first
//                           whenever it is not benched), --mirror the honest
//                           one; its RSS and CPU are read from /proc/<pid>
//
// Every body autocannon reads is compared with the true bytes in its
// onResponse hook (content.js says why a string comparison is exact here),
// and after the load every request is made once more by node:http.
import fs from 'node:fs/promises'
import path from 'node:path'
import http from 'node:http'
import { spawn } from 'node:child_process'
import autocannon from 'autocannon'
import { tmpdir, makeKey, writeTree, buildTree } from '../helpers/fixtures.js'
import { startLyingServer } from '../helpers/lying-server.js'
import { rssBytes, cpuSeconds, median } from '../../bench/lib/proc.js'
import { Expectations, soakFiles, versionBytes } from './content.js'
import { flapPhases, lying } from './flapping.js'

export { Expectations, soakFiles, versionBytes, asciiBytes } from './content.js'

const BIN = new URL('../../bin/rotree.js', import.meta.url).pathname
const MiB = 1024 * 1024
export const RSS_GROWTH_LIMIT_MIB = 64

/**
 * @param {object} [o]
 * @param {number} [o.seconds=20] autocannon's duration
 * @param {number} [o.connections=8]
 * @param {number} [o.republishEveryMs=3000]
 * @param {number} [o.flapEveryMs=2000]
 * @param {(line: string) => void} [o.log] progress lines
 * @param {number} [o.progressEveryMs=10000]
 * @param {string} [o.memoryCache='2M'] the gateway's --memory-cache: below the working set, so reads go on to the disk cache and the mirrors
 * @param {string} [o.diskCache='4M'] its --cache-size: also below the working set (LRU churn in level)
 * @param {number} [o.refreshSeconds=1] its --refresh
 * @param {number} [o.timeoutSeconds=5] its --timeout (how long a stalled mirror holds a fetch)
 * @param {number} [o.mirrorPenaltySeconds=1] its --mirror-penalty: how long the flapping mirror is asked
 *   last after a fault (30 s by default in the gateway; short here, so its blob lies keep reaching it)
 * @param {number} [o.bigBytes] size of the multi-chunk file
 * @param {number} [o.rssLimitMiB=64]
 * @param {number} [o.ttlSeconds=3600] how long each signed root is valid (short: roots expire under the readers)
 * @param {AbortSignal} [o.signal] stops the load early (the report is still made)
 * @returns {Promise<object>} the report (report.failures lists what went wrong; empty when all held)
 */
export async function runSoak ({
  seconds = 20, connections = 8, republishEveryMs = 3000, flapEveryMs = 2000, log = () => {},
  progressEveryMs = 10_000, memoryCache = '2M', diskCache = '4M', refreshSeconds = 1, timeoutSeconds = 5, mirrorPenaltySeconds = 1,
  bigBytes = 5 * MiB, rssLimitMiB = RSS_GROWTH_LIMIT_MIB, ttlSeconds = 3600, signal
} = {}) {
  const dir = await tmpdir('rotree-soak-')
  const src = path.join(dir, 'src')
  const out = path.join(dir, 'out')
  const children = []
  const killAll = () => { for (const c of children) if (alive(c)) c.proc.kill('SIGKILL') }
  process.once('exit', killAll) // a crashed or interrupted run leaves no server behind
  const timers = new Set()
  let liar = null
  let load = null
  try {
    // ---- the tree and its first publish --------------------------------
    const files = soakFiles({ bigBytes })
    await writeTree(src, files)
    const key = makeKey()
    let version = 1
    await writeTree(src, { 'versioned.txt': versionBytes(version) })
    const first = await buildTree(src, { key, out, fsync: false, ttlMs: ttlSeconds * 1000 })
    let seq = first.result.seq
    const firstFsinfo = await fs.readFile(path.join(out, 'fsinfo.json'))
    const expect = new Expectations(files)
    expect.publish(seq, versionBytes(version))

    // ---- mirrors and the gateway ---------------------------------------
    const honest = await spawnRotree(['serve', out, '--port', '0'], { ready: /at (http:\/\/\S+)/ })
    children.push(honest)
    const phases = flapPhases(() => firstFsinfo, flapEveryMs)
    liar = await startLyingServer(out)
    const gwArgs = [
      'gateway', `${liar.url}#${key.publicKey}`, '--mirror', honest.match[1], '--port', '0',
      '--refresh', String(refreshSeconds), '--timeout', String(timeoutSeconds), '--mirror-penalty', String(mirrorPenaltySeconds),
      '--state-dir', path.join(dir, 'state'), '--cache-dir', path.join(dir, 'cache'),
      '--cache-size', diskCache, '--memory-cache', memoryCache
    ]
    const gw = await spawnRotree(gwArgs, { ready: /listening at (http:\/\/\S+)/, env: { ROTREE_STATE: path.join(dir, 'state') } })
    children.push(gw)
    const gwUrl = gw.match[1]
    const gwPid = gw.proc.pid

    // ---- what runs beside the load -------------------------------------
    const report = newReport({ seconds, connections, republishEveryMs, flapEveryMs, memoryCache, diskCache, refreshSeconds, timeoutSeconds, mirrorPenaltySeconds, bigBytes, rssLimitMiB, ttlSeconds })
    report.seqFirst = seq
    const every = (ms, fn) => { const t = setInterval(fn, ms); timers.add(t); return t }
    let phaseIndex = 0
    every(flapEveryMs, () => {
      phaseIndex = (phaseIndex + 1) % phases.length
      const p = phases[phaseIndex]
      liar.set({ blob: lying(p.blob, 'blob', report.liesTold), fsinfo: lying(p.fsinfo, 'fsinfo', report.liesTold) })
      report.flaps++
      report.phases[p.name] = (report.phases[p.name] ?? 0) + 1
    })

    let publishing = null
    const republish = async () => {
      version++
      const bytes = versionBytes(version)
      // the sequence readers will see (X-Rotree-Seq), known before the build: in format 2 the
      // builder's `seq` is the release's, and fsinfo.json's is max(last + 1, now in seconds)
      // (lib/published/publish.js nextSeq; FORMAT.md §12.4), so fix `now` and take the same
      const now = Date.now()
      const next = Math.max(seq + 1, Math.floor(now / 1000))
      expect.publish(next, bytes) // before the rename: the gateway may serve it before build() returns
      await writeTree(src, { 'versioned.txt': bytes })
      const r = await buildTree(src, { key, out, seq: next, now, fsync: false, ttlMs: ttlSeconds * 1000 })
      if (r.result.seq !== next) report.failures.push(`published sequence ${r.result.seq}, expected ${next}`)
      seq = r.result.seq
      report.republishes++
    }
    every(republishEveryMs, () => {
      if (publishing !== null) return // a slow build: skip a beat rather than pile up
      publishing = republish().catch(err => { report.failures.push(`republish failed: ${err.message}`) }).finally(() => { publishing = null })
    })

    const t0 = performance.now()
    const cpu0 = cpuSeconds(gwPid)
    const sample = async () => {
      const t = (performance.now() - t0) / 1000
      try { report.rss.samples.push([Math.round(t * 10) / 10, rssBytes(gwPid)]) } catch { /* exited: reported below */ }
      try {
        const s = JSON.parse(await get(gwUrl + '.well-known/rotree/status'))
        const tr = s.trees[0]
        if (tr?.seq !== undefined) report.gatewaySeqs.add(tr.seq)
        report.lastStatus = { seq: tr?.seq, mirrors: tr?.mirrors, upstream: tr?.upstream, memoryCache: tr?.memoryCache, diskCache: s.diskCache }
      } catch (err) { report.statusPollErrors++ }
    }
    await sample()
    every(1000, sample)
    let lastProgress = { t: 0, n: 0 }
    every(progressEveryMs, () => {
      const t = (performance.now() - t0) / 1000
      const n = expect.counts.responses
      const rss = report.rss.samples.at(-1)?.[1]
      log(`soak ${t.toFixed(0)}s: ${n} responses (${((n - lastProgress.n) / (t - lastProgress.t)).toFixed(0)}/s), ` +
        `wrong ${expect.counts.wrong}, 5xx ${expect.counts.s5xx}, errors ${load?.errors ?? 0}, ` +
        `versions served ${expect.versionsServed.size}, gateway seq ${report.lastStatus?.seq ?? '?'}, ` +
        `republishes ${report.republishes}, flaps ${report.flaps} (${phases[phaseIndex].name}), rss ${rss ? (rss / MiB).toFixed(1) : '?'} MiB`)
      lastProgress = { t, n }
    })

    // ---- the load -------------------------------------------------------
    const errorKinds = {}
    const inst = autocannon({
      url: gwUrl,
      connections,
      duration: seconds,
      timeout: 30, // seconds: longer than any stall the gateway may wait out (timeoutSeconds)
      requests: expect.requests()
    })
    load = { errors: 0 }
    if (signal?.aborted) inst.stop(); else signal?.addEventListener('abort', () => inst.stop(), { once: true })
    inst.on('reqError', err => { load.errors++; const k = String(err?.code ?? err?.message ?? err); errorKinds[k] = (errorKinds[k] ?? 0) + 1 })
    let deadlineHit = false
    const deadlineMs = seconds * 1000 + 120_000 // autocannon stops itself; this only bounds a hang
    let deadline
    const result = await Promise.race([
      inst,
      new Promise(resolve => { deadline = setTimeout(() => { deadlineHit = true; inst.stop(); resolve(null) }, deadlineMs) })
    ])
    clearTimeout(deadline)
    const wall = (performance.now() - t0) / 1000
    const answered = expect.counts.responses
    // autocannon drops the requests still in flight when its time is up; ask
    // for every request once more (the mirror still flapping), so a gateway
    // that hangs or fails at the end is seen too. These bodies are Buffers,
    // read as latin1: one character per byte, compared exactly.
    report.finalSweep = await expect.sweep(gwUrl, { timeoutMs: (timeoutSeconds * 3 + 10) * 1000 })
    for (const t of timers) clearInterval(t)
    timers.clear()
    await publishing
    await sample()
    report.gatewayAlive = alive(gw)
    report.honestAlive = alive(honest)
    const cpu = report.gatewayAlive ? cpuSeconds(gwPid) - cpu0 : NaN

    // ---- the report -----------------------------------------------------
    Object.assign(report, expect.summary())
    report.wallSeconds = round(wall, 1)
    report.rps = round(answered / wall, 1)
    report.mbps = round(expect.counts.bytes / wall / 1e6, 1)
    report.gatewayCpuSeconds = round(cpu, 1)
    report.autocannon = result === null ? null : {
      requests: result.requests.total, errors: result.errors, timeouts: result.timeouts, resets: result.resets,
      non2xx: result.non2xx, statusCodeStats: result.statusCodeStats,
      latencyMs: { p50: result.latency.p50, p99: result.latency.p99, max: result.latency.max }
    }
    report.errors = (result?.errors ?? load.errors) + report.finalSweep.errors
    report.timeouts = result?.timeouts ?? 0
    report.errorKinds = errorKinds
    report.deadlineHit = deadlineHit
    report.liar = { requests: liar.requests.length, problems: liar.problems.slice(0, 10) }
    report.gatewayLog = gw.counts()
    report.gatewaySeqs = [...report.gatewaySeqs].sort((a, b) => a - b)
    report.republishesSeenByGateway = Math.max(0, report.gatewaySeqs.length - 1)
    report.seqLast = seq
    report.rss = rssReport(report.rss.samples)
    if (report.rss.growthMiB === null) report.rssSamplesTooFew = true

    // what scripts/soak.js turns into its exit status and the test asserts
    const f = report.failures
    if (report.wrongBytes > 0) f.push(`${report.wrongBytes} responses with wrong bytes`)
    if (!report.honestAlive) f.push(`the honest mirror exited: ${honest.output().slice(-2000)}`)
    if (report.status['5xx'] > 0) f.push(`${report.status['5xx']} 5xx answers while the honest mirror was up`)
    if (report.unexpectedStatus > 0) f.push(`${report.unexpectedStatus} answers with an unexpected status`)
    // a transfer the gateway broke off (or a request that timed out) while an honest mirror was up
    if (report.errors > 0) f.push(`${report.errors} requests failed without an answer (${JSON.stringify({ ...errorKinds, ...report.finalSweep.errorKinds })})`)
    if (report.rss.growthMiB !== null && report.rss.growthMiB > rssLimitMiB) f.push(`gateway RSS grew ${report.rss.growthMiB} MiB (limit ${rssLimitMiB})`)
    if (!report.gatewayAlive) f.push(`the gateway exited: ${gw.output().slice(-2000)}`)
    if (deadlineHit) f.push('the hard deadline stopped the load')
    if (liar.problems.length > 0) f.push(`the lying mirror reported problems: ${liar.problems[0]}`)
    report.ok = f.length === 0
    return report
  } finally {
    for (const t of timers) clearInterval(t)
    await liar?.close().catch(() => {})
    await Promise.all(children.map(c => c.stop()))
    process.off('exit', killAll)
    await fs.rm(dir, { recursive: true, force: true }).catch(() => {})
  }
}

function newReport (config) {
  return {
    ok: false,
    config,
    failures: [],
    republishes: 0,
    flaps: 0,
    phases: {},
    liesTold: {},
    gatewaySeqs: new Set(),
    statusPollErrors: 0,
    rss: { samples: [] }
  }
}

/**
 * "Memory flat": the first third of the run is warm-up (caches filling, JIT);
 * growth is the median RSS of the last third minus that of the middle third.
 */
export function rssReport (samples) {
  const mib = b => round(b / MiB, 1)
  const rss = samples.map(s => s[1])
  const n = rss.length
  const third = Math.floor(n / 3)
  const mid = third > 0 ? median(rss.slice(third, 2 * third)) : null
  const last = third > 0 ? median(rss.slice(2 * third)) : null
  return {
    samples: n,
    startMiB: n ? mib(rss[0]) : null,
    endMiB: n ? mib(rss[n - 1]) : null,
    maxMiB: n ? mib(Math.max(...rss)) : null,
    middleMedianMiB: mid === null ? null : mib(mid),
    lastMedianMiB: last === null ? null : mib(last),
    growthMiB: mid === null ? null : mib(last - mid),
    series: samples.filter((s, i) => i % Math.max(1, Math.ceil(n / 60)) === 0).map(([t, b]) => [t, mib(b)])
  }
}

function alive (child) { return child.proc.exitCode === null && child.proc.signalCode === null }

function round (x, d) { const f = 10 ** d; return Math.round(x * f) / f }

/** GET a small document (the gateway's status) with a deadline. */
function get (url) {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent: false }, res => {
      let s = ''
      res.setEncoding('utf8')
      res.on('data', d => { s += d })
      res.on('end', () => res.statusCode === 200 ? resolve(s) : reject(new Error(`status ${res.statusCode}`)))
      res.on('error', reject)
    })
    req.on('error', reject)
    req.setTimeout(5000, () => req.destroy(new Error('status poll timed out')))
  })
}

/**
 * `rotree …` as a child process; resolves once stdout matches `ready`.
 * stderr is kept (the last 64 KiB) and its gateway log lines counted.
 */
function spawnRotree (args, { ready, env = {}, timeoutMs = 60_000 }) {
  // its own process group: a Ctrl-C at the terminal reaches scripts/soak.js, which stops the load and then these
  const proc = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'], detached: true })
  const exited = new Promise(resolve => proc.on('exit', (code, signal) => resolve({ code, signal })))
  let out = ''; let err = ''
  const counts = { serving: 0, refreshFailed: 0, transferAborted: 0, internalError: 0 }
  let partial = ''
  proc.stderr.setEncoding('utf8')
  proc.stderr.on('data', d => {
    err = (err + d).slice(-64 * 1024)
    const lines = (partial + d).split('\n')
    partial = lines.pop()
    for (const l of lines) {
      if (l.includes('now serving sequence')) counts.serving++
      else if (l.includes('refresh failed')) counts.refreshFailed++
      else if (l.includes('transfer aborted')) counts.transferAborted++
      else if (l.includes('internal error')) counts.internalError++
    }
  })
  const child = {
    proc,
    match: null,
    counts: () => ({ ...counts }),
    output: () => out + err,
    async stop () {
      if (proc.exitCode !== null || proc.signalCode !== null) return
      proc.kill('SIGTERM')
      const t = setTimeout(() => proc.kill('SIGKILL'), 10_000)
      await exited
      clearTimeout(t)
    }
  }
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => { proc.kill('SIGKILL'); reject(new Error(`rotree ${args[0]} did not start in ${timeoutMs} ms: ${out}${err}`)) }, timeoutMs)
    proc.stdout.setEncoding('utf8')
    proc.stdout.on('data', d => {
      out += d
      if (child.match) return
      const m = ready.exec(out)
      if (m) { child.match = m; clearTimeout(t); resolve(child) }
    })
    exited.then(({ code, signal }) => { clearTimeout(t); if (!child.match) reject(new Error(`rotree ${args[0]} exited (${code ?? signal}): ${out}${err}`)) })
  })
}

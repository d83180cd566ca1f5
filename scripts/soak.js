#!/usr/bin/env node
// The long soak (docs/GATEWAY.md#soak): `npm run soak -- --minutes 10 [--connections 32]`.
// The gateway under autocannon while fsinfo.json is re-published and one of
// its two mirrors flaps (test/soak/soak.js does the work; the test suite runs
// the same engine for ~20 s). Prints progress every ~10 s, then the report as
// JSON (stdout) and a summary (stderr). Exit status 1 on any wrong byte, any
// 5xx, an unexpected status, a request left without an answer, a server that
// exited, or gateway RSS growth beyond --rss-limit MiB; 2 on bad flags.
// Ctrl-C stops the load early and still reports.
import { parseArgs } from 'node:util'
import { runSoak, RSS_GROWTH_LIMIT_MIB } from '../test/soak/soak.js'

const USAGE = `usage: node scripts/soak.js [--minutes 10] [--connections 32] [--republish-ms 5000] [--flap-ms 2000]
                           [--memory-cache 2M] [--disk-cache 4M] [--ttl-s 3600] [--mirror-penalty-s 1] [--rss-limit ${RSS_GROWTH_LIMIT_MIB}] [--json-only]`

let v
try {
  ({ values: v } = parseArgs({
    options: {
      minutes: { type: 'string', default: '10' },
      connections: { type: 'string', default: '32' },
      'republish-ms': { type: 'string', default: '5000' },
      'flap-ms': { type: 'string', default: '2000' },
      'memory-cache': { type: 'string', default: '2M' },
      'disk-cache': { type: 'string', default: '4M' },
      'rss-limit': { type: 'string', default: String(RSS_GROWTH_LIMIT_MIB) },
      'ttl-s': { type: 'string', default: '3600' },
      'mirror-penalty-s': { type: 'string', default: '1' },
      'json-only': { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false }
    }
  }))
} catch (err) {
  process.stderr.write(`${err.message}\n${USAGE}\n`)
  process.exit(2)
}
if (v.help) { process.stdout.write(USAGE + '\n'); process.exit(0) }
const num = (name, min) => {
  const n = Number(v[name])
  if (!Number.isFinite(n) || n < min) { process.stderr.write(`--${name} must be a number >= ${min}\n${USAGE}\n`); process.exit(2) }
  return n
}
const seconds = Math.max(1, Math.round(num('minutes', 0.05) * 60))
const opts = {
  seconds,
  connections: Math.round(num('connections', 1)),
  republishEveryMs: num('republish-ms', 200),
  flapEveryMs: num('flap-ms', 200),
  memoryCache: v['memory-cache'],
  diskCache: v['disk-cache'],
  rssLimitMiB: num('rss-limit', 1),
  ttlSeconds: num('ttl-s', 1),
  mirrorPenaltySeconds: Math.round(num('mirror-penalty-s', 1)),
  progressEveryMs: 10_000,
  log: line => process.stderr.write(line + '\n')
}
process.stderr.write(`soak: ${seconds} s, ${opts.connections} connections, republish every ${opts.republishEveryMs} ms, flap every ${opts.flapEveryMs} ms\n`)

// Ctrl-C: stop the load early and still report; a second one quits at once
const stop = new AbortController()
const onSignal = () => {
  if (stop.signal.aborted) process.exit(130) // runSoak's 'exit' hook kills the servers it started
  process.stderr.write('soak: stopping early (again to quit now)\n')
  stop.abort()
}
process.on('SIGINT', onSignal)
process.on('SIGTERM', onSignal)
opts.signal = stop.signal

let r
try {
  r = await runSoak(opts)
} catch (err) {
  process.stderr.write(`soak: could not run: ${err.message}\n`)
  process.exit(1)
}
process.off('SIGINT', onSignal)
process.off('SIGTERM', onSignal)
process.stdout.write(JSON.stringify(r, null, 2) + '\n')
if (!v['json-only']) {
  const lines = [
    '',
    `soak ${r.ok ? 'PASSED' : 'FAILED'} after ${r.wallSeconds} s with ${r.config.connections} connections`,
    `  requests        ${r.requests} (${r.rps}/s, ${r.mbps} MB/s verified)`,
    `  wrong bytes     ${r.wrongBytes}`,
    `  5xx             ${r.status['5xx']}   (status classes ${JSON.stringify(r.status)})`,
    `  errors          ${r.errors} (timeouts ${r.timeouts}) ${JSON.stringify(r.errorKinds)}`,
    `  versions        published ${r.versionsPublished}, served ${r.versionsServed}; gateway saw ${r.republishesSeenByGateway} republishes`,
    `  flaps           ${r.flaps} ${JSON.stringify(r.phases)}`,
    `  lies told       ${JSON.stringify(r.liesTold)}`,
    `  gateway RSS     start ${r.rss.startMiB} MiB, end ${r.rss.endMiB} MiB, max ${r.rss.maxMiB} MiB; ` +
      `growth ${r.rss.growthMiB} MiB (last-third median ${r.rss.lastMedianMiB} vs middle-third ${r.rss.middleMedianMiB}; limit ${r.config.rssLimitMiB})`,
    `  gateway CPU     ${r.gatewayCpuSeconds} s; log: ${JSON.stringify(r.gatewayLog)}`,
    ...r.failures.map(f => `  FAILURE: ${f}`)
  ]
  process.stderr.write(lines.join('\n') + '\n')
}
process.exitCode = r.ok ? 0 : 1

// The soak, short form (docs/GATEWAY.md#soak): ~20 s of autocannon against `rotree
// gateway` (its own process) while fsinfo.json is re-published every ~3 s and
// one of its two mirrors flaps every ~2 s between honest, down and lying.
// `npm run soak` is the long form (scripts/soak.js). Nothing here asserts on
// timing: only on what was served, and on memory.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { runSoak, Expectations, soakFiles, versionBytes, rssReport, RSS_GROWTH_LIMIT_MIB } from './soak.js'

test('the soak checker refuses every kind of wrong answer it is meant to catch', () => {
  const files = soakFiles({ bigBytes: 300_000 })
  const x = new Expectations(files)
  x.publish(10, versionBytes(1))
  x.publish(11, versionBytes(2))
  const reqs = Object.fromEntries(x.requests().map(r => [r.path + (r.headers.range ?? ''), r]))
  const ok = (r, status, body, seq = 10) => r.onResponse(status, body, {}, { 'X-Rotree-Seq': String(seq) })
  const s05 = Buffer.from(files['small/s05.txt']).toString('latin1')

  ok(reqs['/small/s05.txt'], 200, s05)
  assert.equal(x.counts.wrong, 0)
  ok(reqs['/small/s05.txt'], 200, s05.slice(0, 100) + String.fromCharCode(s05.charCodeAt(100) ^ 1) + s05.slice(101))
  assert.equal(x.counts.wrong, 1, 'one flipped byte')
  // a byte >= 0x80 arrives as U+FFFD once autocannon decodes the chunk as UTF-8
  ok(reqs['/small/s05.txt'], 200, s05.slice(0, 100) + '\ufffd' + s05.slice(101))
  assert.equal(x.counts.wrong, 2, 'a high-bit byte')
  ok(reqs['/small/s05.txt'], 200, s05.slice(0, -1))
  assert.equal(x.counts.wrong, 3, 'one byte short')

  ok(reqs['/versioned.txt'], 200, versionBytes(2).toString('latin1'), 11)
  assert.equal(x.counts.wrong, 3)
  ok(reqs['/versioned.txt'], 200, versionBytes(1).toString('latin1'), 11)
  assert.equal(x.counts.wrong, 4, 'an older version under a newer root')
  assert.equal(x.counts.wrongRoot, 1)
  ok(reqs['/versioned.txt'], 200, versionBytes(3).toString('latin1'), 11)
  assert.equal(x.counts.wrong, 5, 'a version never published')
  ok(reqs['/small/s05.txt'], 200, s05, 12)
  assert.equal(x.counts.unknownSeq, 1, 'a root never published')
  reqs['/small/s05.txt'].onResponse(200, s05, {}, {})
  assert.equal(x.counts.unknownSeq, 2, 'no X-Rotree-Seq')

  ok(reqs['/small/s05.txt'], 502, '502 Bad Gateway\n')
  assert.equal(x.counts.s5xx, 1)
  ok(reqs['/small/missing.txt'], 404, '404 Not Found\n')
  ok(reqs['/small/s05.txt'], 404, '404 Not Found\n')
  assert.equal(x.counts.unexpected, 1, 'a 404 for a file that exists')
  assert.equal(x.versionsServed.size, 1)

  const r = rssReport([0, 1, 2, 3, 4, 5].map(i => [i, (100 + (i >= 4 ? 10 : 0)) * 1024 * 1024]))
  assert.equal(r.growthMiB, 10)
})

test('soak: the gateway under load while the tree is re-published and one mirror flaps', { timeout: 180_000 }, async t => {
  const lines = []
  const r = await runSoak({ seconds: 20, connections: 8, republishEveryMs: 3000, flapEveryMs: 2000, log: l => lines.push(l) })
  const s = `${r.requests} requests (${r.rps}/s), wrong ${r.wrongBytes}, 5xx ${r.status['5xx']}, errors ${r.errors}, ` +
    `versions served ${r.versionsServed}/${r.versionsPublished}, gateway saw ${r.republishesSeenByGateway} republishes, ` +
    `flaps ${r.flaps}, lies ${JSON.stringify(r.liesTold)}, ` +
    `RSS ${r.rss.startMiB} → ${r.rss.endMiB} MiB, growth ${r.rss.growthMiB} MiB`
  t.diagnostic(s)
  for (const l of lines) t.diagnostic(l)
  const why = JSON.stringify({ failures: r.failures, samples: r.failureSamples, errorKinds: r.errorKinds, statusCodes: r.statusCodes }, null, 1)

  assert.ok(r.gatewayAlive, why)
  assert.equal(r.wrongBytes, 0, why)
  assert.equal(r.status['5xx'], 0, why)
  assert.equal(r.unexpectedStatus, 0, why)
  assert.equal(r.errors, 0, why) // no transfer broken off while an honest mirror was up
  // that load happened at all (a floor, not a speed)
  assert.ok(r.requests > 100, `only ${r.requests} requests`)
  assert.ok(r.flaps >= 3, `only ${r.flaps} flaps`)
  // readers saw the re-publishes: at least three versions of the changing file were served
  assert.ok(r.versionsServed >= 3, `only ${r.versionsServed} versions served`)
  assert.ok(r.republishesSeenByGateway >= 2, `the gateway adopted only ${r.republishesSeenByGateway} new roots`)
  // memory flat: the last third against the middle third, a generous bound
  assert.ok(r.rss.growthMiB !== null, 'too few RSS samples')
  assert.ok(r.rss.growthMiB < RSS_GROWTH_LIMIT_MIB, `gateway RSS grew ${r.rss.growthMiB} MiB: ${JSON.stringify(r.rss.series)}`)
  assert.deepEqual(r.failures, [])
})

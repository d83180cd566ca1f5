#!/usr/bin/env node
// The long form of the crash-consistency tests (docs/SECURITY.md, crashes): `rotree build`
// and `rotree pull` killed with SIGKILL at random points, many times, with
// the folder checked complete after every kill and fsck clean at the end.
// The same tests as `npm test` runs (test/crash/build.test.js,
// test/mirror/kill.test.js), with more kills and more time.
//
//   npm run crash -- [--minutes 10] [--kills 500]
//
// Exit status 0 when every round held; the tests' own diagnostics (how many
// kills landed, how many mid-fetch) are printed at the end.
import { spawn } from 'node:child_process'
import { parseArgs } from 'node:util'

const { values: v } = parseArgs({ options: { minutes: { type: 'string', default: '10' }, kills: { type: 'string', default: '1000' } } })
const minutes = Number(v.minutes); const kills = Number(v.kills)
if (!(minutes > 0) || !(kills > 0)) { console.error('usage: npm run crash -- [--minutes M] [--kills N]'); process.exit(2) }

const ROOT = new URL('../', import.meta.url).pathname
const files = ['test/crash/build.test.js', 'test/mirror/kill.test.js']
// the two suites run one after the other and share the time
const seconds = Math.max(10, Math.round(minutes * 60 / files.length))
console.error(`crash run: ${files.join(', ')}; up to ${kills} kills or ${seconds} s each`)

const t0 = Date.now()
const child = spawn(process.execPath, ['--test', '--test-concurrency=1', '--test-reporter=tap', ...files], {
  cwd: ROOT, env: { ...process.env, CRASH_KILLS: String(kills), CRASH_SECONDS: String(seconds) }, stdio: ['ignore', 'pipe', 'inherit']
})
let tap = ''
child.stdout.on('data', b => {
  tap += b
  for (const line of String(b).split('\n')) if (/^\s*(not )?ok \d+ - /.test(line)) console.error(line.trim())
})
const code = await new Promise(resolve => child.on('close', resolve))
const diagnostics = tap.split('\n').map(l => l.trim()).filter(l => /^# \d+ (builds|pulls) killed/.test(l)).map(l => l.slice(2))
console.log(JSON.stringify({ minutes: +((Date.now() - t0) / 60000).toFixed(1), ok: code === 0, results: diagnostics }, null, 2))
if (code !== 0) console.error(tap.split('\n').filter(l => /not ok|error|Expected|actual|expected/.test(l)).slice(0, 40).join('\n'))
process.exit(code === 0 ? 0 : 1)

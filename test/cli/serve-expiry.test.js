// `rotree serve` prints the address to copy (and the URL to open with --web),
// refuses an unbuilt folder in one coded line, and ls, stat, serve and the
// gateway warn when the tree is close to expiry (cli/expiry.js).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { tmpdir } from '../helpers/fixtures.js'
import { rotree, servedTree, start } from './helpers.js'
import { expiryWarning } from '../../cli/expiry.js'

const H = 3600e3; const DAY = 24 * H

test('serve prints the address to copy; --web the URL to open; an unbuilt folder is one coded line', { timeout: 60_000 }, async t => {
  const tr = await servedTree(t, { 'a.txt': 'a\n' })
  const { out } = tr.serve.output()
  const lines = out.split('\n')
  assert.match(lines[0], /^serving .* at http:\/\/127\.0\.0\.1:\d+\/$/) // the line scripts parse comes first
  const m = await waitFor(tr.serve, /^address: (http:\/\/127\.0\.0\.1:\d+\/#[0-9a-f]{64})$/m)
  assert.equal(m[1], tr.addr)
  assert.equal((await rotree(['cat', m[1], '/a.txt'], { env: tr.env })).out, 'a\n', 'the printed address reads the tree')

  const web = await start(t, ['serve', tr.out, '--port', '0', '--web'])
  const opened = await waitFor(web, /^open (http:\S+#[0-9a-f]{64}) /m)
  assert.equal(opened[1], `${web.match[1]}#${tr.pub}`)

  const dir = await tmpdir(); t.after(() => fs.rm(dir, { recursive: true, force: true }))
  // the tree above is format 2 (a new OUT's default); a format-1 tree's address is its key too
  const v1 = path.join(dir, 'v1'); const v1Key = path.join(dir, 'v1.key')
  await fs.mkdir(path.join(v1, 'src'), { recursive: true }); await fs.writeFile(path.join(v1, 'src', 'b.txt'), 'b\n')
  const v1Pub = (await rotree(['keygen', v1Key])).out.trim().split('\n').at(-1)
  assert.equal((await rotree(['build', path.join(v1, 'src'), path.join(v1, 'out'), '--key', v1Key, '--format', '1', '--no-fsync'])).code, 0)
  const v1Serve = await start(t, ['serve', path.join(v1, 'out'), '--port', '0'])
  const v1Addr = await waitFor(v1Serve, /^address: (http:\/\/127\.0\.0\.1:\d+\/#[0-9a-f]{64})$/m)
  assert.equal(v1Addr[1], `${v1Serve.match[1]}#${v1Pub}`)
  assert.equal((await rotree(['cat', v1Addr[1], '/b.txt'], { env: { ROTREE_STATE: path.join(dir, 'state') } })).out, 'b\n')

  const empty = await rotree(['serve', dir, '--port', '0'])
  assert.equal(empty.code, 1)
  assert.match(empty.err, /^rotree: ROTREE_BAD_PATH: .* is not a published folder \(no h\/\): build it first .*\n(  .*\n)?$/)
  await fs.mkdir(path.join(dir, 'h'))
  const unbuilt = await rotree(['serve', dir, '--port', '0'])
  assert.equal(unbuilt.code, 1)
  assert.equal(unbuilt.err, `rotree: ROTREE_BAD_PATH: ${dir} has no fsinfo.json (build it first)\n`)
})

test('a tree close to expiry: ls, stat, serve and gateway warn on stderr; a fresh one is quiet', { timeout: 60_000 }, async t => {
  // signed for 7 days, 6.5 of them gone: 12 hours left
  const old = await servedTree(t, { 'a.txt': 'a\n' }, { ttlMs: 7 * DAY, now: Date.now() - 6.5 * DAY })
  const WARN = /^rotree: warning: tree expires in 1[12]h \(\d{4}-\d\d-\d\dT[\d:.]+Z\); the publisher must run rotree resign$/m
  const ls = await rotree(['ls', old.addr], { env: old.env })
  assert.equal(ls.code, 0, ls.err)
  assert.equal(ls.out, 'a.txt\n')
  assert.match(ls.err, WARN)
  const st = await rotree(['stat', old.addr, '/a.txt', '--json'], { env: old.env })
  assert.match(st.err, WARN)
  assert.equal(JSON.parse(st.out).path, '/a.txt', '--json output stays JSON')
  await waitFor(old.serve, WARN, 'stderr')
  const gw = await start(t, ['gateway', old.addr, '--port', '0', '--cache-size', '0'], { env: old.env, ready: /listening at (http:\/\/\S+)/ })
  await waitFor(gw, /^rotree: warning: tree \/ expires in 1[12]h /m, 'stderr')

  const fresh = await servedTree(t, { 'a.txt': 'a\n' }, { ttlMs: 7 * DAY })
  const quiet = await rotree(['ls', fresh.addr], { env: fresh.env })
  assert.equal(quiet.code, 0)
  assert.equal(quiet.err, '')
  assert.doesNotMatch(fresh.serve.output().err, /warning/)
})

test('the expiry rule: a seventh of the lifetime, or a day for trees that live two days or more', () => {
  const now = Date.parse('2026-01-10T00:00:00.000Z')
  const at = (lifeMs, leftMs) => ({ issuedMs: now + leftMs - lifeMs, expiresMs: now + leftMs })
  assert.match(expiryWarning(at(7 * DAY, 5 * H), { now }), /^rotree: warning: tree expires in 5h \(2026-01-10T05:00:00\.000Z\); the publisher must run rotree resign$/)
  assert.equal(expiryWarning(at(7 * DAY, 25 * H), { now }), null)
  assert.match(expiryWarning(at(30 * DAY, 4 * DAY), { now }), /expires in 4d /) // 30/7 ≈ 4.3 days
  assert.equal(expiryWarning(at(30 * DAY, 5 * DAY), { now }), null)
  assert.match(expiryWarning(at(3 * DAY, 20 * H), { now }), /expires in 20h /) // within a day
  assert.match(expiryWarning(at(H, 5 * 60e3), { now }), /expires in 5m /) // a seventh of an hour is 8.5 minutes
  assert.equal(expiryWarning(at(H, 30 * 60e3), { now }), null) // short-lived trees: not for the whole last day
  assert.match(expiryWarning(at(7 * DAY, -2 * H), { now }), /^rotree: warning: tree expired 2h ago .*rotree resign$/)
  assert.match(expiryWarning({ issued: '2026-01-03T00:00:00.000Z', expires: '2026-01-10T03:00:00.000Z' }, { now }), /expires in 3h /)
})

/** Wait (bounded) until a started process's stdout or stderr matches re. */
async function waitFor (proc, re, stream = 'stdout') {
  for (let i = 0; i < 400; i++) {
    const o = proc.output()
    const m = re.exec(stream === 'stdout' ? o.out : o.err)
    if (m) return m
    await new Promise(resolve => setTimeout(resolve, 25))
  }
  throw new Error(`no ${re} in ${stream}: ${JSON.stringify(proc.output())}`)
}

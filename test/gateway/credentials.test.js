// A mirror URL may carry credentials (https://user:pass@host/). Whatever the
// gateway prints about its mirrors (the status document, 502 and 504 bodies,
// headers, its log) must not show them (gateway/redact.js).
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { startLyingServer } from '../helpers/lying-server.js'
import { makeFixture, entryOf, startGateway, raw, address } from './helpers.js'

const PASSWORD = 'hunter2-s3cr3t'
const USER = 'mirror-user'

const fx = {}
before(async () => {
  Object.assign(fx, await makeFixture({ 'hello.txt': 'hello\n', 'medium.bin': Buffer.alloc(100 * 1024, 7), 'docs/a.txt': 'a\n' }))
  fx.medium = (await entryOf(fx.out, 'medium.bin')).chunks[0]
  fx.docs = (await entryOf(fx.out, 'docs')).dir
})
after(async () => { await fx.cleanup?.() })

const withCreds = url => url.replace('http://', `http://${USER}:${PASSWORD}@`)

function assertClean (text, what) {
  assert.ok(!text.includes(PASSWORD), `${what} shows the password:\n${text}`)
  assert.ok(!text.includes(`${USER}:`), `${what} shows the userinfo:\n${text}`)
}

test('status document, 502/504 bodies, headers and log lines never show a mirror URL\'s userinfo', async t => {
  const lines = []
  const log = { info: m => lines.push(m), error: m => lines.push(m) }
  const liar = await startLyingServer(fx.out, { blob: h => h === fx.medium.hash ? { status: 500 } : h === fx.docs.hash ? 'stall-silent' : 'honest' })
  const other = await startLyingServer(fx.out, { blob: h => h === fx.medium.hash ? 'reset' : h === fx.docs.hash ? 'stall-silent' : 'honest' })
  t.after(async () => { await liar.close(); await other.close() })
  const gw = await startGateway(t, {
    tree: address(withCreds(liar.url), fx.pk),
    mirrors: [withCreds(other.url)],
    timeoutMs: 500,
    log
  })
  assert.equal((await raw(gw.url, '/hello.txt')).status, 200, 'credentials in the URL work: the tree opened')

  const bad = await raw(gw.url, '/medium.bin')
  assert.equal(bad.status, 502)
  assert.match(bad.body.toString(), /127\.0\.0\.1/, 'the body still names the mirrors')
  assertClean(bad.body.toString(), '502 body')
  assertClean(JSON.stringify(bad.headers), '502 headers')

  const stalled = await raw(gw.url, '/docs/a.txt')
  assert.equal(stalled.status, 504, 'every mirror stalled')
  assertClean(stalled.body.toString(), 'stall body')

  const status = await raw(gw.url, '/.well-known/rotree/status')
  assert.equal(status.status, 200)
  const doc = status.body.toString()
  assert.match(doc, /127\.0\.0\.1/, 'the status document still names the mirrors')
  assertClean(doc, 'status document')
  assertClean(JSON.stringify(gw.gateway.status()), 'status() for an app')

  // a refresh that fails is logged, and so is a transfer that breaks
  liar.set({ fsinfo: () => ({ status: 500 }) }); other.set({ fsinfo: () => 'reset' })
  await gw.gateway.gateway.mounts[0].refresh().catch(() => {})
  assert.ok(lines.some(l => /refresh failed/.test(l)), 'the refresh failure was logged:\n' + lines.join('\n'))
  assertClean(lines.join('\n'), 'log')
  assertClean(JSON.stringify(gw.gateway.status()), 'status() after a failed refresh')
})

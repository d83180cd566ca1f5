// Several trees on one gateway: one tree whose mirrors stall or fail must not
// hold up requests for another. Nothing is serialised across trees: not the
// start (a request waits for its own tree's first refresh, not for every
// tree's), not a refresh, not the blob fetches.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import http from 'node:http'
import { serve } from '../helpers/fixtures.js'
import { startLyingServer } from '../helpers/lying-server.js'
import { gateway } from '../../gateway/index.js'
import { makeFixture, entryOf, raw, address } from './helpers.js'

const fx = {}
before(async () => {
  fx.a = await makeFixture({ 'a.txt': 'tree a\n', 'big.bin': Buffer.alloc(200 * 1024, 1) })
  fx.b = await makeFixture({ 'b.txt': 'tree b\n' })
  fx.mb = await serve(fx.b.out)
  fx.aChunk = (await entryOf(fx.a.out, 'big.bin')).chunks[0]
})
after(async () => { await fx.mb?.close(); await fx.a?.cleanup(); await fx.b?.cleanup() })

/** The middleware under a bare node:http server, listening before any tree is ready. */
async function start (t, liar, opts = {}) {
  const mw = gateway({ trees: { a: address(liar.url, fx.a.pk), b: address(fx.mb.url, fx.b.pk) }, stateDir: null, refreshSeconds: 3600, timeoutMs: 60_000, ...opts })
  const server = http.createServer((req, res) => mw(req, res))
  await new Promise(resolve => server.listen(0, '127.0.0.1', resolve))
  t.after(async () => {
    await liar.close() // first: the stalled requests fail now, so close() need not wait for them
    server.closeAllConnections()
    await new Promise(resolve => server.close(resolve))
    await mw.close()
  })
  return { mw, url: `http://127.0.0.1:${server.address().port}/` }
}

test('tree B answers while tree A stalls: at start (its first fsinfo.json) and later (a blob, its one fetch slot taken)', async t => {
  // at start: the middleware serves B before A's first refresh settles
  const early = await startLyingServer(fx.a.out, { fsinfo: () => 'stall-silent' })
  const first = await start(t, early)
  let ready = false
  first.mw.ready.then(() => { ready = true })
  const r = await raw(first.url, '/b/b.txt')
  assert.equal(r.status, 200)
  assert.equal(r.body.toString(), 'tree b\n')
  assert.equal(ready, false, 'tree A is still being tried: B did not wait for it')
  assert.ok(early.requests.includes('/fsinfo.json'), 'A\'s mirror was asked')

  // later: a request for A hangs on a stalled blob with A's only fetch slot; B has its own
  const liar = await startLyingServer(fx.a.out, { blob: h => h === fx.aChunk.hash ? 'stall-silent' : 'honest' })
  const { mw, url } = await start(t, liar, { concurrency: 1 })
  await mw.ready
  const hanging = raw(url, '/a/big.bin').catch(err => ({ error: err }))
  for (let i = 0; i < 500 && !liar.requests.includes('/h/' + fx.aChunk.hash); i++) await new Promise(resolve => setTimeout(resolve, 10))
  assert.ok(liar.requests.includes('/h/' + fx.aChunk.hash), 'the stalled fetch started')
  for (let i = 0; i < 3; i++) assert.equal((await raw(url, '/b/b.txt')).status, 200)
  assert.equal((await raw(url, '/a/a.txt')).status, 200, 'even tree A still answers from what it has verified')
  await liar.close()
  const h = await hanging
  assert.ok(h.error || h.status >= 500, 'the stalled request failed once its mirror went away')
})

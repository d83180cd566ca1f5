// A tree's pages must not run with the gateway host's origin rights
// (gateway/sandbox.js): HTML, SVG and XML go out with CSP sandbox and no
// allow-same-origin, from `rotree gateway` and the Express middleware alike.
// The proof is in Chromium: an Express app with a cookie-protected API mounts
// two trees; tree A's page script tries to read the API, the cookie and tree B.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import express from 'express'
import { serve } from '../helpers/fixtures.js'
import { gateway } from '../../gateway/index.js'
import { launchChromium, newPage, pageLogs } from '../browser/helpers.js'
import { makeFixture, startGateway, raw, address } from './helpers.js'

const SESSION = 'session-7f3a9c'
const API_SECRET = 'API-SECRET-4d1e'
const B_SECRET = 'TREE-B-SECRET-92ab'

// Tree A's page: everything it manages to read goes into its title.
const PROBE = `<!doctype html><meta charset="utf-8"><title>probe</title><script>
(async () => {
  const out = {}
  try { out.cookie = document.cookie } catch (e) { out.cookie = 'threw ' + e.name }
  try { const r = await fetch('/api/secret', { credentials: 'include' }); out.api = r.status + ' ' + await r.text() } catch (e) { out.api = 'blocked ' + e.name }
  try { const r = await fetch('/trees/b/secret.txt'); out.b = r.status + ' ' + await r.text() } catch (e) { out.b = 'blocked ' + e.name }
  out.origin = String(self.origin)
  document.title = 'done ' + JSON.stringify(out)
})()
</script>
`

const fx = {}
before(async () => {
  fx.a = await makeFixture({ 'index.html': PROBE, 'pic.svg': '<svg xmlns="http://www.w3.org/2000/svg"/>', 'feed.xml': '<x/>', 'x.xhtml': '<html xmlns="http://www.w3.org/1999/xhtml"/>', 'notes.txt': 'plain\n', 'sub/page.htm': '<p>page</p>' })
  fx.b = await makeFixture({ 'secret.txt': B_SECRET + '\n' })
  fx.ma = await serve(fx.a.out)
  fx.mb = await serve(fx.b.out)
  fx.trees = { a: address(fx.ma.url, fx.a.pk), b: address(fx.mb.url, fx.b.pk) }
})
after(async () => {
  await fx.ma?.close(); await fx.mb?.close()
  await fx.a?.cleanup(); await fx.b?.cleanup()
})

test('active types (HTML, XHTML, SVG, XML, listings) carry CSP sandbox without allow-same-origin; inert ones none; sandbox: false turns it off', async t => {
  const gw = await startGateway(t, { trees: fx.trees })
  for (const p of ['a/', 'a/index.html', 'a/pic.svg', 'a/feed.xml', 'a/x.xhtml', 'a/sub/page.htm', 'a/sub/', '']) {
    const r = await raw(gw.url, '/' + p)
    assert.equal(r.status, 200, p)
    const csp = r.headers['content-security-policy']
    assert.match(csp ?? '', /^sandbox( |$)/, `${p}: sandboxed`)
    assert.doesNotMatch(csp, /allow-same-origin/, `${p}: no allow-same-origin`)
    assert.doesNotMatch(csp, /allow-top-navigation/, `${p}: cannot navigate the host's window`)
  }
  for (const p of ['a/notes.txt', 'b/secret.txt']) {
    const r = await raw(gw.url, '/' + p)
    assert.equal(r.status, 200, p)
    assert.equal(r.headers['content-security-policy'], undefined, `${p}: an inert type needs no sandbox`)
  }
  assert.equal((await raw(gw.url, '/a/', { method: 'HEAD' })).headers['content-security-policy'].startsWith('sandbox'), true, 'HEAD too')
  // sandbox: false turns it off (the documented risk is the operator's)
  const open = await startGateway(t, { trees: fx.trees, sandbox: false })
  const r = await raw(open.url, '/a/index.html')
  assert.equal(r.status, 200)
  assert.equal(r.headers['content-security-policy'], undefined)
})

test('in Chromium, tree A\'s page reads neither the host app\'s cookie-protected API, its cookie, nor tree B', async t => {
  const mw = gateway({ trees: fx.trees, stateDir: null, refreshSeconds: 3600 })
  const app = express()
  app.get('/login', (req, res) => res.set('Set-Cookie', `session=${SESSION}; Path=/`).send('logged in'))
  app.get('/api/secret', (req, res) => {
    if ((req.headers.cookie ?? '').includes(`session=${SESSION}`)) return res.send(API_SECRET)
    res.status(401).send('who are you?')
  })
  app.use('/trees', mw)
  await mw.ready
  const server = await new Promise(resolve => { const s = app.listen(0, '127.0.0.1', () => resolve(s)) })
  const url = `http://127.0.0.1:${server.address().port}/`
  const browser = await launchChromium()
  t.after(async () => {
    await browser.close()
    server.closeAllConnections()
    await new Promise(resolve => server.close(resolve))
    await mw.close()
  })
  const page = await newPage(browser)
  await page.goto(url + 'login')
  // the setup is real: same-origin script on the host reads the API with the cookie
  assert.equal(await page.evaluate(async () => (await fetch('/api/secret')).text()), API_SECRET)
  assert.equal(await page.evaluate(async () => (await fetch('/trees/b/secret.txt')).text()), B_SECRET + '\n')

  await page.goto(url + 'trees/a/')
  await page.waitForFunction(() => document.title.startsWith('done '), null, { timeout: 20_000 })
  const got = JSON.parse((await page.title()).slice(5))
  const why = JSON.stringify(got) + pageLogs(page)
  assert.equal(got.origin, 'null', 'the tree page has an opaque origin: ' + why)
  assert.ok(!String(got.cookie).includes(SESSION), 'no host cookie: ' + why)
  assert.ok(!String(got.api).includes(API_SECRET), 'no API answer: ' + why)
  assert.ok(!String(got.b).includes(B_SECRET), 'no other tree: ' + why)
})

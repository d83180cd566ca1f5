// A verified site's _redirects (web/redirects.js, docs/WEB.md "Single-page
// apps and redirects"): a single-page app's deep link loads its index.html,
// verified (a tampered one is blocked as any page is); files that are there
// are served as they are; 301/302 go to a path of the same site; 404 serves
// the site's chosen page with a 404; a file that breaks the rules (here: a
// redirect to another origin) is reported in the bar and ignored.
import { needing } from '../helpers/tools.js'
import assert from 'node:assert/strict'
import { openTree } from 'rotree-client'
import { tmpdir, writeTree, buildTree, makeKey, serve } from '../helpers/fixtures.js'
import { startLyingServer } from '../helpers/lying-server.js'
import { ensureBundle, launchChromium, newPage, serveWithWeb, pageLogs, fileChunks } from './helpers.js'

const { test, before, after } = needing('chromium')

const SPA = makeKey()
const BAD = makeKey()
const pad = n => Array.from({ length: n }, (_, i) => `<!-- padding ${i} -->`).join('\n') // past the inline size (16 KiB in version 2): its own blob

function spaFiles () {
  // the app's assets by their path from the origin's root: a deep link's
  // relative URLs would resolve under the deep path (docs/WEB.md)
  return {
    'index.html': `<!doctype html><meta charset="utf-8"><title>SPA</title><h1 id="h">SPA shell</h1>
<script src="/site/${SPA.publicKey}/js/app.js"></script>\n${pad(1000)}`,
    'js/app.js': 'document.body.dataset.route = location.pathname.split("/").slice(3).join("/")\n',
    'about.html': '<!doctype html><meta charset="utf-8"><title>About</title><h1 id="h">About page</h1>',
    'api-missing.html': '<!doctype html><meta charset="utf-8"><title>No API</title><h1 id="h">No API here</h1>',
    _redirects: `# the rules of this site
/old-page     /about.html        301
/elsewhere/:x /about.html        302
/api/*        /api-missing.html  404
/*            /index.html        200
`
  }
}

let browser, app, spaMirror, badMirror, indexHash

before(async () => {
  await ensureBundle()
  const src = await tmpdir()
  await writeTree(src, spaFiles())
  const { out } = await buildTree(src, { key: SPA })
  spaMirror = await startLyingServer(out, { cors: true })
  const honest = await serve(out)
  const tree = await openTree(`${honest.url}#${SPA.publicKey}`, { stateDir: null })
  // the stored blob of index.html (in format version 2 named by its deflated
  // bytes, not by the file's: FORMAT.md §12.6)
  let index
  try { index = await fileChunks(tree, '/index.html') } finally { tree.close(); await honest.close() }
  assert.equal(index.length, 1, 'index.html is one blob')
  indexHash = index[0].hash

  const src2 = await tmpdir()
  await writeTree(src2, {
    'index.html': '<!doctype html><meta charset="utf-8"><title>B</title><h1 id="h">B home</h1>',
    _redirects: '/a https://evil.example/ 302\n/* /index.html 200\n'
  })
  badMirror = await serve((await buildTree(src2, { key: BAD })).out)
  app = await serveWithWeb(await tmpdir())
  browser = await launchChromium()
})

after(async () => {
  await browser?.close()
  await spaMirror?.close()
  await badMirror?.close()
  await app?.close()
})

const siteFrame = (page, key) => page.frames().find(f => f.url().includes(`/site/${key.publicKey}/`))

async function openSite (page, key, mirror, sitePath) {
  await page.goto(`http://rotree.localhost:${app.port}/site.html?key=${key.publicKey}&mirror=${encodeURIComponent(mirror.url)}&path=${encodeURIComponent(sitePath)}`)
  await page.waitForFunction(() => document.body.dataset.loaded, null, { timeout: 20_000 })
    .catch(async err => { throw new Error(`${err.message}: ${await page.textContent('body')}${pageLogs(page)}`) })
  const frame = siteFrame(page, key)
  assert.ok(frame, pageLogs(page))
  return frame
}

test('a single-page app\'s deep link loads its index.html, verified, at the deep URL', async () => {
  const page = await newPage(browser)
  try {
    const frame = await openSite(page, SPA, spaMirror, '/app/deep/link')
    await frame.waitForFunction(() => document.body.dataset.route, null, { timeout: 10_000 })
    assert.equal(await frame.textContent('#h'), 'SPA shell')
    assert.equal(await frame.evaluate(() => document.body.dataset.route), 'app/deep/link', 'the app\'s own (verified) script ran at the deep URL')
    assert.match(await page.evaluate(() => document.body.dataset.loaded), /\/site\/[0-9a-f]{64}\/app\/deep\/link$/)
    assert.equal(await page.isVisible('#site-notice'), false)
    assert.equal(await page.isVisible('#blocked'), false)
    await page.screenshot({ path: '/tmp/rotree-site-spa.png' })

    const seen = await frame.evaluate(async () => {
      const look = async (p, opts) => { const r = await fetch(p, opts); return { status: r.status, url: new URL(r.url).pathname.split('/').slice(3).join('/'), redirected: r.redirected, type: r.headers.get('content-type'), text: await r.text() } }
      return {
        rewrite: await look('../../other/route'),
        file: await look('../../about.html'),
        moved: await look('../../old-page'),
        found: await look('../../elsewhere/here'),
        missing: await look('../../api/v1/users')
      }
    })
    assert.equal(seen.rewrite.status, 200)
    assert.equal(seen.rewrite.url, 'other/route')
    assert.match(seen.rewrite.text, /SPA shell/)
    assert.equal(seen.rewrite.type, 'text/html; charset=utf-8')
    assert.match(seen.file.text, /About page/, 'a file that is there is served as it is')
    assert.deepEqual([seen.moved.status, seen.moved.redirected, seen.moved.url], [200, true, 'about.html'])
    assert.deepEqual([seen.found.status, seen.found.redirected, seen.found.url], [200, true, 'about.html'])
    assert.deepEqual([seen.missing.status, seen.missing.url], [404, 'api/v1/users'])
    assert.match(seen.missing.text, /No API here/)
  } finally { await page.context().close() }
})

test('a tampered index.html is blocked at a deep link as anywhere else', async () => {
  spaMirror.set({ blob: (h, bytes) => h === indexHash ? { body: Buffer.concat([bytes.subarray(0, -1), Buffer.from([bytes.at(-1) ^ 1])]) } : 'honest' })
  const page = await newPage(browser)
  try {
    const frame = await openSite(page, SPA, spaMirror, '/app/deep/link')
    assert.match(await frame.textContent('#rotree-error'), /ROTREE_HASH_MISMATCH/)
    assert.equal(await frame.$('#h'), null, 'none of the page')
    await page.waitForFunction(() => document.body.dataset.blocked, null, { timeout: 10_000 })
    assert.match(await page.textContent('#blocked-list'), /\/app\/deep\/link \(iframe\): .*ROTREE_HASH_MISMATCH/)
  } finally {
    await page.context().close()
    spaMirror.set({ blob: undefined })
  }
})

test('a _redirects that breaks the rules is reported in the bar and ignored as a whole', async () => {
  const page = await newPage(browser)
  try {
    const frame = await openSite(page, BAD, badMirror, '/')
    assert.equal(await frame.textContent('#h'), 'B home')
    await page.waitForSelector('#site-notice:not([hidden])', { timeout: 10_000 })
    await page.screenshot({ path: '/tmp/rotree-site-redirects-invalid.png' })
    assert.match(await page.textContent('#site-notice'), /_redirects ignored: line 1: TO must be a path starting with one "\/" \(no URL of another origin\), got "https:\/\/evil\.example\/"/)
    const seen = await frame.evaluate(async () => {
      const r = await fetch('a', { redirect: 'manual' })
      const r2 = await fetch('deep/link')
      return [r.type, r.status, r2.status]
    })
    assert.deepEqual(seen, ['basic', 404, 404], 'no rule of the broken file applies, not even the good ones')
  } finally { await page.context().close() }
})

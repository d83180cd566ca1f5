// Verified static sites: site.html on a trusted origin installs web/sw.js, which
// serves a whole website (pages, scripts, styles, images, a font) from an
// untrusted mirror on another origin, verifying every response first. A
// tampered script, image or page is blocked with a visible error; a new
// publish is picked up on reload.
import { needing } from '../helpers/tools.js'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import { existsSync, readdirSync } from 'node:fs'
import path from 'node:path'
import { openTree } from 'rotree-client'
import { tmpdir, writeTree, buildTree, makeKey, serve } from '../helpers/fixtures.js'
import { startLyingServer } from '../helpers/lying-server.js'
import { ensureBundle, launchChromium, newPage, serveWithWeb, allowCors, makePng, pageLogs, fileChunks } from './helpers.js'

const { test, before, after } = needing('chromium')

/** Some TrueType font of this machine (Chromium's Debian package pulls fonts in), or null. */
function systemFont () {
  const dirs = ['/usr/share/fonts/truetype/liberation', '/usr/share/fonts/truetype/dejavu', '/usr/share/fonts']
  for (const d of dirs) {
    if (!existsSync(d)) continue
    const f = readdirSync(d, { recursive: true }).find(n => String(n).endsWith('.ttf'))
    if (f) return path.join(d, String(f))
  }
  return null
}

const FONT = systemFont()
const pad = (line, n) => Array.from({ length: n }, (_, i) => `${line} ${i}`).join('\n') + '\n' // enough lines pass the 16 KiB inline size (version 2): own blobs

function siteFiles (version) {
  return {
    'index.html': `<!doctype html><html><head><meta charset="utf-8"><title>Home ${version}</title>
<link rel="stylesheet" href="css/site.css"><script src="js/app.js" defer></script></head>
<body><h1 id="h">Welcome ${version}</h1><img id="logo" src="img/logo.png" alt="logo">
<p class="fancy">set in the site's own font</p><p><a id="about" href="about.html">About</a> <a id="docs" href="docs">Docs</a></p></body></html>`,
    'about.html': '<!doctype html><meta charset="utf-8"><title>About</title><link rel="stylesheet" href="css/site.css"><h1 id="h">About us</h1>',
    'docs/index.html': '<!doctype html><meta charset="utf-8"><title>Docs</title><h1 id="h">Docs index</h1>',
    '404.html': '<!doctype html><meta charset="utf-8"><title>Missing</title><h1 id="h">No such page here</h1>',
    'css/site.css': `h1 { color: rgb(200, 10, 10); }\n${FONT ? "@font-face { font-family: SiteFont; src: url(../fonts/site.ttf) format('truetype'); }\n.fancy { font-family: SiteFont, monospace; }\n" : ''}${pad('/* padding */', 10)}`,
    'js/app.js': `document.body.dataset.script = 'ran'\n${pad('// padding', 1500)}`,
    'img/logo.png': makePng(120, 80, 7)
  }
}

const key = makeKey()
let src, out, browser, trusted, mirror, refs

before(async () => {
  await ensureBundle()
  src = await tmpdir()
  await writeTree(src, siteFiles('v1'))
  if (FONT) await writeTree(src, { 'fonts/site.ttf': await fs.readFile(FONT) })
  ;({ out } = await buildTree(src, { key }))
  mirror = await serve(out) // an untrusted mirror on its own origin
  trusted = await serveWithWeb(await tmpdir()) // the web app's origin: site.html, sw.js, rotree-client.js
  const tree = await openTree(`${mirror.url}#${key.publicKey}`, { stateDir: null })
  // the stored blobs of the script and the image (in format version 2 named
  // by their stored, possibly deflated, bytes: FORMAT.md §12.6)
  const blobOf = async p => { const c = await fileChunks(tree, p); assert.equal(c.length, 1, `${p} is one blob`); return c[0].hash }
  try {
    refs = { script: await blobOf('/js/app.js'), image: await blobOf('/img/logo.png'), root: tree.info.root, seq: tree.info.seq }
  } finally { tree.close() }
  browser = await launchChromium()
})

after(async () => {
  await browser?.close()
  await mirror?.close()
  await trusted?.close()
})

// rotree.localhost, not 127.0.0.1: each site gets its own origin <key label>.rotree.localhost (docs/WEB.md)
const siteUrl = (mirrorUrl, extra = '') => `http://rotree.localhost:${trusted.port}/site.html?key=${key.publicKey}&mirror=${encodeURIComponent(mirrorUrl)}${extra}`
// what was blocked names the mirror's fault: as the error's own code, or as the
// one mirror's code inside ROTREE_ALL_MIRRORS_FAILED
const fault = code => `(ROTREE_ALL_MIRRORS_FAILED: .*)?${code}`
const siteFrame = page => page.frames().find(f => f.url().includes(`/site/${key.publicKey}/`))

async function openSite (page, url, loaded = /\/$/) {
  await page.goto(url)
  await page.waitForFunction(re => new RegExp(re).test(document.body.dataset.loaded ?? ''), loaded.source, { timeout: 20_000 })
  return siteFrame(page)
}

test('the site renders from the mirror: pages, script, style, image, font', async () => {
  const page = await newPage(browser)
  const frame = await openSite(page, siteUrl(mirror.url))
  assert.ok(frame, pageLogs(page))
  await frame.waitForFunction(() => document.body.dataset.script === 'ran', null, { timeout: 10_000 })
  const seen = await frame.evaluate(async () => {
    const img = document.getElementById('logo')
    await img.decode()
    const r = await fetch('index.html')
    return {
      h: document.getElementById('h').textContent,
      color: getComputedStyle(document.getElementById('h')).color,
      img: [img.naturalWidth, img.naturalHeight],
      font: (await document.fonts.load('16px SiteFont')).length,
      root: r.headers.get('x-rotree-root'),
      type: r.headers.get('content-type'),
      controlled: !!navigator.serviceWorker.controller
    }
  })
  assert.equal(seen.h, 'Welcome v1')
  assert.equal(seen.color, 'rgb(200, 10, 10)')
  assert.deepEqual(seen.img, [120, 80])
  if (FONT) assert.equal(seen.font, 1, 'the @font-face font loaded through the Service Worker')
  assert.equal(seen.root, refs.root)
  assert.equal(seen.type, 'text/html; charset=utf-8')
  assert.equal(seen.controlled, true)
  // the bar above the site says what was verified
  assert.match(await page.textContent('#site-status'), /verified/)
  assert.equal(await page.textContent('#s-seq'), String(refs.seq))
  assert.equal(await page.textContent('#s-mirror'), mirror.url)
  assert.equal(await page.isVisible('#blocked'), false)
  await page.screenshot({ path: '/tmp/rotree-site.png' })

  // links: a page, a directory without its slash (redirected to its index.html), a missing page (the site's 404.html)
  await frame.click('#about')
  await page.waitForFunction(() => document.body.dataset.loaded?.endsWith('/about.html'))
  assert.equal(await siteFrame(page).textContent('#h'), 'About us')
  const f2 = siteFrame(page)
  await f2.evaluate(() => { location.href = 'docs' })
  await page.waitForFunction(() => document.body.dataset.loaded?.endsWith('/docs/'))
  assert.equal(await siteFrame(page).textContent('#h'), 'Docs index')
  const missing = await siteFrame(page).evaluate(async () => { const r = await fetch('../nope.html'); return [r.status, await r.text()] })
  assert.equal(missing[0], 404)
  await siteFrame(page).evaluate(() => { location.href = '../nope.html' })
  await page.waitForFunction(() => document.body.dataset.loaded?.endsWith('/nope.html'))
  assert.equal(await siteFrame(page).textContent('#h'), 'No such page here')
  assert.equal(await page.isVisible('#blocked'), false, 'a proven absence is not an attack')
  await page.context().close()
})

async function withLiar (lie, fn) {
  const liar = allowCors(await startLyingServer(out, { blob: (hash, bytes) => hash === lie ? { body: Buffer.concat([bytes.subarray(0, -1), Buffer.from([bytes.at(-1) ^ 1])]) } : 'honest' }))
  const page = await newPage(browser)
  try { await fn(page, liar) } finally { await page.context().close(); await liar.close() }
}

test('a tampered script is blocked: it never runs, and the bar says so', async () => {
  await withLiar(refs.script, async (page, liar) => {
    const frame = await openSite(page, siteUrl(liar.url))
    await page.waitForFunction(() => document.body.dataset.blocked, null, { timeout: 10_000 })
    assert.equal(await frame.textContent('#h'), 'Welcome v1') // the rest of the page verified
    assert.equal(await frame.evaluate(() => document.body.dataset.script), undefined, 'the tampered script did not run')
    assert.equal(await page.isVisible('#blocked'), true)
    assert.match(await page.textContent('#blocked-list'), new RegExp(`/js/app\\.js \\(script\\): ${fault('ROTREE_HASH_MISMATCH')}`))
    assert.match(await page.textContent('#site-status'), /blocked/)
    await page.screenshot({ path: '/tmp/rotree-site-blocked.png' })
  })
})

test('a tampered image is blocked: it does not show', async () => {
  await withLiar(refs.image, async (page, liar) => {
    const frame = await openSite(page, siteUrl(liar.url))
    await page.waitForFunction(() => document.body.dataset.blocked, null, { timeout: 10_000 })
    const img = await frame.evaluate(() => { const i = document.getElementById('logo'); return [i.complete, i.naturalWidth] })
    assert.deepEqual(img, [true, 0])
    assert.match(await page.textContent('#blocked-list'), new RegExp(`/img/logo\\.png \\(image\\): ${fault('ROTREE_HASH_MISMATCH')}`))
    assert.equal(await frame.evaluate(() => document.body.dataset.script), 'ran')
  })
})

test('a tampered page is replaced by the verifier\'s error page', async () => {
  await withLiar(refs.root, async (page, liar) => {
    const frame = await openSite(page, siteUrl(liar.url))
    assert.match(await frame.textContent('#rotree-error'), new RegExp(fault('ROTREE_HASH_MISMATCH')))
    assert.equal(await frame.$('#h'), null, 'none of the page')
    assert.match(await page.textContent('#blocked-list'), new RegExp(`^/ \\(iframe\\): ${fault('ROTREE_HASH_MISMATCH')}`))
    await page.screenshot({ path: '/tmp/rotree-site-page-blocked.png' })
  })
})

test('a new fsinfo.json is picked up on reload', async () => {
  const src2 = await tmpdir()
  await writeTree(src2, siteFiles('v1'))
  const { out: out2 } = await buildTree(src2, { key })
  const m2 = await serve(out2)
  const page = await newPage(browser)
  try {
    let frame = await openSite(page, siteUrl(m2.url))
    assert.equal(await frame.textContent('#h'), 'Welcome v1')
    const seq1 = Number(await page.textContent('#s-seq'))
    await fs.writeFile(path.join(src2, 'index.html'), siteFiles('v2')['index.html'])
    await buildTree(src2, { key, out: out2 }) // the publisher publishes; the mirror serves it
    await page.click('#s-reload')
    await page.waitForFunction(s => Number(document.body.dataset.seq) > s, seq1, { timeout: 10_000 })
    frame = siteFrame(page)
    await frame.waitForSelector('#h:text("Welcome v2")', { timeout: 10_000 })
    assert.equal(await page.isVisible('#blocked'), false)
  } finally {
    await page.context().close()
    await m2.close()
  }
})

test('a root that expires while the site is open is not served any longer', async () => {
  const src3 = await tmpdir()
  await writeTree(src3, siteFiles('v1'))
  // 8 s: long enough to open the site on a loaded machine before it expires; the mirror will go on serving it (a freeze)
  const { out: out3 } = await buildTree(src3, { key, ttlMs: 8000 })
  const m3 = await serve(out3)
  const page = await newPage(browser)
  try {
    const frame = await openSite(page, siteUrl(m3.url))
    assert.equal(await frame.textContent('#h'), 'Welcome v1')
    const expires = Date.parse(JSON.parse(await fs.readFile(path.join(out3, 'fsinfo.json'), 'utf8')).expires)
    await new Promise(resolve => setTimeout(resolve, Math.max(0, expires - Date.now()) + 500))
    await page.click('#s-reload')
    await page.waitForFunction(() => document.body.dataset.blocked, null, { timeout: 10_000 })
    assert.match(await siteFrame(page).textContent('#rotree-error'), new RegExp(fault('ROTREE_EXPIRED')))
    assert.match(await page.textContent('#blocked-list'), /ROTREE_EXPIRED/)
  } finally {
    await page.context().close()
    await m3.close()
  }
})

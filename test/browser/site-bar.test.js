// The bar of a verified site (web/site.html) as a new user meets it: on a
// phone it is one line whose facts open on demand; it links to the same
// tree's files in the app, on the same mirrors; the Service Worker's
// error page says what to do (web/explain.js, the texts the app shows too).
// Screenshots: $ROTREE_SCREENSHOTS, else <tmp>/rotree-screenshots/.
import { needing } from '../helpers/tools.js'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { tmpdir, writeTree, buildTree, makeKey, serve } from '../helpers/fixtures.js'
import { ensureBundle, launchChromium, newPage, serveWithWeb, pageLogs } from './helpers.js'

const { test, before, after } = needing('chromium')

const SHOTS = process.env.ROTREE_SCREENSHOTS ?? path.join(os.tmpdir(), 'rotree-screenshots')
const HOUR = 3600e3
const SITE = {
  'index.html': '<!doctype html><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>Home</title><h1 id="h">Welcome</h1><p><a id="docs" href="docs/">Docs</a></p>',
  'docs/index.html': '<!doctype html><meta charset="utf-8"><title>Docs</title><h1 id="h">Docs index</h1>',
  'docs/guide.txt': 'the guide\n'
}
let browser, trusted
const cleanups = []

before(async () => {
  await ensureBundle()
  await fs.mkdir(SHOTS, { recursive: true })
  trusted = await serveWithWeb(await tmpdir()) // the app's origin, serving no tree
  browser = await launchChromium()
})

after(async () => {
  await browser?.close()
  await trusted?.close()
  for (const c of cleanups.reverse()) await c()
})

/** A site signed by a new key, built with `opts`, on a mirror of its own. */
async function site (opts = {}) {
  const key = makeKey()
  const src = await tmpdir()
  await writeTree(src, SITE)
  const { out } = await buildTree(src, { key, ...opts })
  const mirror = await serve(out)
  cleanups.push(() => mirror.close())
  return { key: key.publicKey, mirror, out }
}

// rotree.localhost: each site on its own origin <key label>.rotree.localhost (docs/WEB.md)
const siteUrl = (s, extra = '') => `http://rotree.localhost:${trusted.port}/site.html?key=${s.key}&mirror=${encodeURIComponent(s.mirror.url)}${extra}`
const siteFrame = (page, key) => page.frames().find(f => f.url().includes(`/site/${key}/`))

async function pageAt (width, height = width < 600 ? 844 : 800) {
  const page = await newPage(browser)
  await page.setViewportSize({ width, height })
  return page
}

test('the verifier\'s error page says what to do', async () => {
  const s = await site({ now: Date.now() - 2 * HOUR, ttlMs: HOUR }) // expired an hour ago
  const page = await pageAt(1280)
  try {
    await page.goto(siteUrl(s))
    await page.waitForFunction(() => document.body.dataset.blocked, null, { timeout: 20_000 })
    const frame = siteFrame(page, s.key)
    assert.ok(frame, pageLogs(page))
    assert.match(await frame.textContent('#rotree-error h1'), /Expired tree/)
    assert.match(await frame.textContent('#rotree-todo'), /What to do: Ask the publisher to re-sign \(rotree resign\), or try again later/)
    await page.screenshot({ path: path.join(SHOTS, 'site-1280-expired.png') })
  } finally { await page.context().close() }
})

/** The bar's box, and the tops of what shows in it. */
function barLayout (page) {
  return page.evaluate(() => {
    const bar = document.querySelector('header.sitebar')
    const shown = [...bar.querySelectorAll('*')].filter(e => e.children.length === 0 && e.getClientRects().length && e.getBoundingClientRect().width > 0)
    const tops = shown.map(e => e.getBoundingClientRect()).map(r => Math.round(r.top + r.height / 2))
    return { height: bar.getBoundingClientRect().height, spread: Math.max(...tops) - Math.min(...tops) }
  })
}

test('on a phone the bar is one line; what was verified opens from it', async () => {
  const s = await site({ ttlMs: 5 * 24 * HOUR })
  const page = await pageAt(390)
  try {
    await page.goto(siteUrl(s))
    await page.waitForFunction(() => /\/$/.test(document.body.dataset.loaded ?? '') && document.body.dataset.seq, null, { timeout: 20_000 })
    await page.screenshot({ path: path.join(SHOTS, 'site-390-bar.png') })
    const bar = await barLayout(page)
    assert.ok(bar.height <= 0.07 * 844, `the bar takes ${bar.height}px of 844`)
    assert.ok(bar.spread <= 12, `the bar is one line (its items' middles differ by ${bar.spread}px)`)
    assert.match(await page.innerText('header.sitebar'), /✓ verified/)
    assert.equal(await page.isVisible('#s-seq'), false)
    await page.click('#s-more')
    assert.equal(await page.isVisible('#s-seq'), true)
    assert.equal(await page.getAttribute('#s-more', 'aria-expanded'), 'true')
    await page.screenshot({ path: path.join(SHOTS, 'site-390-bar-open.png') })
    await page.click('#s-more')
    assert.equal(await page.isVisible('#s-seq'), false)

    // a desktop: every fact in the one line, nothing to open
    await page.setViewportSize({ width: 1280, height: 800 })
    assert.equal(await page.isVisible('#s-seq'), true)
    assert.equal(await page.isVisible('#s-more'), false)
    assert.ok((await barLayout(page)).spread <= 12, 'one line on a desktop too')
    await page.screenshot({ path: path.join(SHOTS, 'site-1280-bar.png') })
  } finally { await page.context().close() }
})

test('the bar links to the files of the page shown, in the app, on the site\'s mirrors', async () => {
  const s = await site({ ttlMs: 5 * 24 * HOUR })
  const page = await pageAt(1280)
  try {
    await page.goto(siteUrl(s, '&path=/docs/'))
    await page.waitForFunction(() => /\/docs\/$/.test(document.body.dataset.loaded ?? ''), null, { timeout: 20_000 })
    const href = new URL(await page.getAttribute('#s-browse', 'href'), page.url())
    // the app's own origin holds no tree here: only the site's mirror
    assert.equal(href.searchParams.get('self'), '0')
    assert.deepEqual(href.searchParams.getAll('mirror'), [s.mirror.url])
    assert.equal(href.hash, `#${s.key}/docs`)
    await page.click('#s-browse')
    assert.equal(await page.waitForFunction(h => document.body.dataset.shown === h && document.body.dataset.state, `#${s.key}/docs`, { timeout: 20_000 }).then(h => h.jsonValue()), 'ok', pageLogs(page))
    assert.deepEqual(await page.locator('#listing a.entry').allTextContents(), ['guide.txt', 'index.html'])
    assert.equal(await page.isVisible('#v-mirrors li.bad'), false, 'no mirror failed: the app\'s own origin was left out')
  } finally { await page.context().close() }
})

// Where the web app leads a new user (docs/WEB.md "The web app"): a symlink
// to a folder is a folder that opens its target, and a broken link says so;
// the app that `rotree serve OUT --web` serves opens the tree it serves
// (and says the key came from that server); a folder with an index.html, or
// an HTML file, links to the same tree as a verified site, and the site's
// bar links back to its files.
// Screenshots: $ROTREE_SCREENSHOTS, else <tmp>/rotree-screenshots/.
import { needing } from '../helpers/tools.js'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { tmpdir, writeTree, buildTree, makeKey } from '../helpers/fixtures.js'
import { ensureBundle, launchChromium, newPage, serveWithWeb, settled, pageLogs } from './helpers.js'

const { test, before, after } = needing('chromium')

const SHOTS = process.env.ROTREE_SCREENSHOTS ?? path.join(os.tmpdir(), 'rotree-screenshots')
const key = makeKey()
const FILES = {
  'index.html': '<!doctype html><meta charset="utf-8"><title>Home</title><h1 id="h">Welcome</h1>',
  'docs/guide.txt': 'the guide\n',
  'docs/index.html': '<!doctype html><meta charset="utf-8"><title>Docs</title><h1 id="h">Docs index</h1>',
  'releases/v2/notes.txt': 'version 2\n',
  latest: { symlink: 'releases/v2' }, // a folder
  'docs/up': { symlink: '../releases' }, // a folder, by a relative path
  'guide-link.txt': { symlink: 'docs/guide.txt' }, // a file
  broken: { symlink: 'nowhere' } // nothing
}
let out, app, browser

before(async () => {
  await ensureBundle()
  await fs.mkdir(SHOTS, { recursive: true })
  const src = await tmpdir()
  await writeTree(src, FILES)
  ;({ out } = await buildTree(src, { key }))
  app = await serveWithWeb(out) // `rotree serve OUT --web`: the tree and the app on one origin
  browser = await launchChromium()
})

after(async () => {
  await browser?.close()
  await app?.close()
})

const K = () => key.publicKey

async function pageAt (width, height = width < 600 ? 844 : 800) {
  const page = await newPage(browser)
  await page.setViewportSize({ width, height })
  return page
}

/** The listing's row of `name`: what its link is, says and leads to. */
function row (page, name) {
  return page.$$eval('#listing tr', (rows, name) => {
    const r = rows.find(tr => tr.querySelector('a.entry .name')?.title.replace(/\/$/, '') === name)
    if (!r) return null
    const a = r.querySelector('a.entry')
    return { cls: a.className, text: r.querySelector('.name-cell').innerText, href: a.getAttribute('href'), size: r.querySelector('.num').innerText, title: a.title }
  }, name)
}

test('a symlink to a folder is a folder that opens its target; a broken link says it is broken', async () => {
  const page = await pageAt(1280)
  try {
    await page.goto(`${app.url}#${K()}`)
    assert.equal(await settled(page, `#${K()}`), 'ok', pageLogs(page))
    await page.waitForFunction(() => document.querySelectorAll('#listing a.entry.symlink:not(.pending)').length === 3, null, { timeout: 10_000 })
    await page.screenshot({ path: path.join(SHOTS, 'links-1280-symlinks.png') })
    const latest = await row(page, 'latest')
    assert.match(latest.cls, /\bdir\b/, 'shown as a folder')
    assert.match(latest.cls, /\bsymlink\b/, 'and as a link')
    assert.match(latest.text, /^latest\/\s*→ releases\/v2\/?$/)
    assert.equal(latest.href, `#${K()}/releases/v2`, 'it opens its target')
    assert.equal(latest.size, '1 item')
    const file = await row(page, 'guide-link.txt')
    assert.match(file.cls, /\bfile\b/)
    assert.equal(file.href, `#${K()}/docs/guide.txt`)
    assert.equal(file.size, '10 B')
    const broken = await row(page, 'broken')
    assert.match(broken.cls, /\bbroken\b/)
    assert.match(broken.text, /→ nowhere/)
    assert.match(broken.size + broken.title, /broken/i)

    await page.click('a.entry:has(.name[title="latest/"])')
    assert.equal(await settled(page, `#${K()}/releases/v2`), 'ok', pageLogs(page))
    assert.deepEqual(await page.locator('#listing a.entry').allTextContents(), ['notes.txt'])

    // a relative target, from a folder below the root
    await page.goto(`${app.url}#${K()}/docs`)
    assert.equal(await settled(page, `#${K()}/docs`), 'ok', pageLogs(page))
    await page.waitForFunction(() => document.querySelectorAll('#listing a.entry.symlink:not(.pending)').length === 1, null, { timeout: 10_000 })
    const up = await row(page, 'up')
    assert.match(up.cls, /\bdir\b/)
    assert.equal(up.href, `#${K()}/releases`)
    await page.setViewportSize({ width: 390, height: 844 })
    await page.goto(`${app.url}#${K()}`)
    assert.equal(await settled(page, `#${K()}`), 'ok', pageLogs(page))
    await page.waitForFunction(() => document.querySelectorAll('#listing a.entry.symlink:not(.pending)').length === 3, null, { timeout: 10_000 })
    await page.screenshot({ path: path.join(SHOTS, 'links-390-symlinks.png') })
  } finally { await page.context().close() }
})

const short = hex => `${hex.slice(0, 4)}…${hex.slice(-4)}`

test('serve --web: the landing page opens the tree this server serves, and says the key came from it', async () => {
  const page = await pageAt(390)
  try {
    await page.goto(app.url)
    assert.equal(await settled(page, `#${K()}`), 'ok', pageLogs(page))
    assert.equal(await page.isVisible('#served'), true)
    assert.equal(await page.textContent('#served-text'), `This is the tree this server serves, signed by key ${short(K())}. The key came from this server too: check it with the publisher before you trust what it signs.`)
    assert.equal(await page.getAttribute('#served-text .fp', 'title'), K())
    assert.equal(await page.isVisible('#listing a.entry'), true, 'the tree is open')
    await page.screenshot({ path: path.join(SHOTS, 'links-390-served.png') })
    // still said after a reload, and inside the tree
    await page.goto(`${app.url}#${K()}/docs`)
    assert.equal(await settled(page, `#${K()}/docs`), 'ok', pageLogs(page))
    assert.equal(await page.isVisible('#served'), true)
    await page.setViewportSize({ width: 1280, height: 800 })
    await page.screenshot({ path: path.join(SHOTS, 'links-1280-served.png') })
    // another tree: the start page, by its own link
    await page.click('#served a')
    assert.equal(await settled(page, ''), 'start')
    assert.equal(await page.isVisible('#start-key'), true)
  } finally { await page.context().close() }

  // a key the reader brought: nothing to say
  const own = await pageAt(1280)
  try {
    await own.goto(`${app.url}#${K()}`)
    assert.equal(await settled(own, `#${K()}`), 'ok', pageLogs(own))
    assert.equal(await own.isVisible('#served'), false)
  } finally { await own.context().close() }

  // an app that serves no tree asks for a key, as before
  const bare = await serveWithWeb(await tmpdir())
  const ask = await pageAt(1280)
  try {
    await ask.goto(bare.url)
    assert.equal(await settled(ask, ''), 'start')
  } finally { await ask.context().close(); await bare.close() }
})

test('browsing and the verified site link to each other, at the same place in the tree', async () => {
  const page = await pageAt(1280)
  try {
    await page.goto(`${app.url}#${K()}/docs`)
    assert.equal(await settled(page, `#${K()}/docs`), 'ok', pageLogs(page))
    assert.equal(await page.isVisible('#site-link'), true, 'a folder with an index.html is a website')
    // the app's own origin is the tree's only mirror: site.html reads its own directory by default
    assert.equal(await page.getAttribute('#site-link', 'href'), `site.html?key=${K()}&path=%2Fdocs%2F`)
    await page.screenshot({ path: path.join(SHOTS, 'links-1280-site-link.png') })
    await page.setViewportSize({ width: 390, height: 844 })
    await page.screenshot({ path: path.join(SHOTS, 'links-390-site-link.png') })
    await page.click('#site-link')
    await page.waitForFunction(() => /\/docs\/$/.test(document.body.dataset.loaded ?? ''), null, { timeout: 20_000 })
    await page.screenshot({ path: path.join(SHOTS, 'links-390-site.png') })
    await page.setViewportSize({ width: 1280, height: 800 })
    await page.goto(`${app.url}#${K()}/docs`)
    assert.equal(await settled(page, `#${K()}/docs`), 'ok', pageLogs(page))
    await page.click('#site-link')
    await page.waitForFunction(() => /\/docs\/$/.test(document.body.dataset.loaded ?? ''), null, { timeout: 20_000 })
    const frame = page.frames().find(f => f.url().includes(`/site/${K()}/docs/`))
    assert.equal(await frame.textContent('#h'), 'Docs index')
    await page.screenshot({ path: path.join(SHOTS, 'links-1280-site.png') })

    // and back: the bar's link opens the app on the same folder
    assert.match(await page.getAttribute('#s-browse', 'href'), new RegExp(`#${K()}/docs$`))
    await page.click('#s-browse')
    assert.equal(await settled(page, `#${K()}/docs`), 'ok', pageLogs(page))
    assert.deepEqual(await page.locator('#listing a.entry').allTextContents(), ['guide.txt', 'index.html', 'up/'])

    // an HTML file opens as that page; a folder without an index.html, or a text file, offers no website
    await page.goto(`${app.url}#${K()}/index.html`)
    assert.equal(await settled(page, `#${K()}/index.html`), 'ok', pageLogs(page))
    assert.equal(await page.getAttribute('#site-link', 'href'), `site.html?key=${K()}&path=%2Findex.html`)
    await page.goto(`${app.url}#${K()}/releases`)
    assert.equal(await settled(page, `#${K()}/releases`), 'ok', pageLogs(page))
    assert.equal(await page.isVisible('#site-link'), false)
  } finally { await page.context().close() }
})

// The web app's words, as a new user reads them (docs/WEB.md "The web app"):
// each error says what to do about it (web/explain.js, shared with the
// Service Worker); on a phone, error texts break between words, and only
// hashes and URLs may break anywhere.
// Screenshots: $ROTREE_SCREENSHOTS, else <tmp>/rotree-screenshots/.
import { needing } from '../helpers/tools.js'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { tmpdir, writeTree, buildTree, makeKey, serve } from '../helpers/fixtures.js'
import { ensureBundle, launchChromium, newPage, serveWithWeb, settled, pageLogs, brokenProse } from './helpers.js'

const { test, before, after } = needing('chromium')

const SHOTS = process.env.ROTREE_SCREENSHOTS ?? path.join(os.tmpdir(), 'rotree-screenshots')
const HOUR = 3600e3
const key = makeKey()
let out, app, browser
const cleanups = []

before(async () => {
  await ensureBundle()
  await fs.mkdir(SHOTS, { recursive: true })
  const src = await tmpdir()
  await writeTree(src, { 'a.txt': 'a\n', 'notes/b.txt': 'b\n' })
  ;({ out } = await buildTree(src, { key, ttlMs: 5 * 24 * HOUR }))
  app = await serveWithWeb(out)
  browser = await launchChromium()
})

after(async () => {
  await browser?.close()
  await app?.close()
  for (const c of cleanups.reverse()) await c()
})

const K = () => key.publicKey

async function pageAt (width, height = width < 600 ? 844 : 800) {
  const page = await newPage(browser)
  await page.setViewportSize({ width, height })
  return page
}

/** A mirror of a tree signed by a new key, built with `opts`. */
async function otherTree (opts = {}) {
  const k = makeKey()
  const src = await tmpdir()
  await writeTree(src, { 'x.txt': 'x\n' })
  const m = await serve((await buildTree(src, { key: k, ...opts })).out)
  cleanups.push(() => m.close())
  return { key: k.publicKey, url: m.url }
}

test('an error says what to do: a wrong key, an expired tree', async () => {
  const page = await pageAt(390)
  try {
    // the app's own origin serves the tree of K: another key in the address is the address's fault
    const wrong = makeKey().publicKey
    await page.goto(`${app.url}#${wrong}`)
    assert.equal(await settled(page, `#${wrong}`), 'error', pageLogs(page))
    assert.match(await page.textContent('#error-title'), /ROTREE_WRONG_KEY/)
    assert.equal(await page.isVisible('#error-todo'), true)
    assert.match(await page.textContent('#error-todo'), /What to do: Check the address: the part after # must be the publisher's key\./)
    await page.screenshot({ path: path.join(SHOTS, 'words-390-wrong-key.png'), fullPage: true })

    const expired = await otherTree({ now: Date.now() - 2 * HOUR, ttlMs: HOUR })
    const hash = `#${expired.key}`
    await page.goto(`${app.url}?self=0&mirror=${encodeURIComponent(expired.url)}${hash}`)
    assert.equal(await settled(page, hash), 'error', pageLogs(page))
    assert.match(await page.textContent('#error-title'), /Expired tree \(ROTREE_EXPIRED\)/)
    assert.match(await page.textContent('#error-todo'), /What to do: Ask the publisher to re-sign \(rotree resign\), or try again later/)
    await page.setViewportSize({ width: 1280, height: 800 })
    await page.screenshot({ path: path.join(SHOTS, 'words-1280-expired.png'), fullPage: true })
  } finally { await page.context().close() }
})

test('on a phone, error texts break between words; only hashes and URLs break anywhere', async () => {
  const page = await pageAt(390)
  try {
    const wrong = makeKey().publicKey
    await page.goto(`${app.url}#${wrong}/notes`)
    assert.equal(await settled(page, `#${wrong}/notes`), 'error', pageLogs(page))
    assert.deepEqual(await brokenProse(page, '#error'), [], 'the error card')
    await page.click('#panel-summary')
    assert.deepEqual(await brokenProse(page, '#panel'), [], 'the panel\'s mirror list')
    await page.screenshot({ path: path.join(SHOTS, 'words-390-error-wrap.png'), fullPage: true })
    assert.ok(await page.evaluate(() => document.documentElement.scrollWidth) <= 390, 'nothing scrolls sideways')

    // the start page's complaint about a pasted address
    await page.goto(`${app.url}?start=1`)
    await page.fill('#start-key', `https://mirror.example/published/trees/#${'e3b0c442'.repeat(9)}:Quarterly-report`)
    await page.click('#start-form button[type=submit]')
    assert.equal(await page.isVisible('#start-error'), true)
    assert.deepEqual(await brokenProse(page, '#start-error'), [], 'the start page')
  } finally { await page.context().close() }
})

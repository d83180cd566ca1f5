// The web app's words, as a new user reads them (docs/WEB.md "The web app"):
// the panel leads with words ("Published 12 minutes ago by key 3f2a…91c9",
// "Valid until …") and keeps the numbers (sequence, root, whole keys) under
// Details; a trust-document anchor is labelled as one, keys as keys; each
// error says what to do about it (web/explain.js, shared with the Service
// Worker); on a phone, error texts break between words, and only hashes and
// URLs may break anywhere.
// Screenshots: $ROTREE_SCREENSHOTS, else <tmp>/rotree-screenshots/.
import { needing } from '../helpers/tools.js'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { tmpdir, writeTree, buildTree, makeKey, serve } from '../helpers/fixtures.js'
import { startLyingServer } from '../helpers/lying-server.js'
import { Publisher } from '../client/v2-publisher.js'
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
  // published 12 minutes ago, valid for 5 days from then
  ;({ out } = await buildTree(src, { key, now: Date.now() - 12 * 60e3, ttlMs: 5 * 24 * HOUR }))
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

const short = hex => `${hex.slice(0, hex.startsWith('t') ? 5 : 4)}…${hex.slice(-4)}`

test('the panel leads with words: when, by which key, until when; the numbers are under Details', async () => {
  const info = JSON.parse(await fs.readFile(path.join(out, 'fsinfo.json'), 'utf8'))
  const page = await pageAt(1280)
  try {
    await page.goto(`${app.url}#${K()}`)
    assert.equal(await settled(page, `#${K()}`), 'ok', pageLogs(page))
    assert.equal(await page.textContent('#v-lead'), `Published 12 minutes ago by key ${short(K())}`)
    assert.equal(await page.getAttribute('#v-lead .fp', 'title'), K(), 'the whole key is at hand')
    const until = new Date(info.expires).toLocaleDateString('en-US', { weekday: 'short', month: 'short', day: 'numeric' })
    assert.equal(await page.textContent('#v-valid'), `Valid until ${until} (in 5 days)`)
    // the numbers: under Details, closed until asked for
    for (const id of ['#v-seq', '#v-root', '#v-key']) assert.equal(await page.isVisible(id), false, `${id} waits under Details`)
    assert.doesNotMatch(await page.innerText('#panel'), new RegExp(String(info.seq)), 'no sequence number up front')
    await page.screenshot({ path: path.join(SHOTS, 'words-1280-panel.png') })
    await page.click('#v-details summary')
    assert.equal(await page.textContent('#v-key-label'), 'Public key')
    assert.equal(await page.textContent('#v-key'), K())
    assert.equal(await page.textContent('#v-seq'), String(info.seq))
    assert.equal(await page.isVisible('#v-root'), true)
    await page.screenshot({ path: path.join(SHOTS, 'words-1280-panel-details.png') })

    // a phone: the one line says the same, in words
    await page.setViewportSize({ width: 390, height: 844 })
    assert.equal(await page.innerText('#panel-summary'), '✓ verified · published 12 minutes ago · expires in 5 days')
    await page.screenshot({ path: path.join(SHOTS, 'words-390-panel.png') })
    await page.click('#panel-summary')
    await page.screenshot({ path: path.join(SHOTS, 'words-390-panel-open.png') })
  } finally { await page.context().close() }
})

test('a trust-document anchor is labelled as one, and the keys that signed as keys', async () => {
  const p = await Publisher.create({ name: 'docs' }) // anchor: t + the hash of trust document 1
  cleanups.push(() => p.close())
  await p.publish({ 'a.txt': 'a\n' })
  const m = await startLyingServer(p.out, { cors: true })
  cleanups.push(() => m.close())
  const id = `${p.anchor}:docs`
  const page = await pageAt(1280)
  try {
    await page.goto(`${app.url}?self=0&mirror=${encodeURIComponent(m.url)}#${id}`)
    assert.equal(await settled(page, `#${id}`), 'ok', pageLogs(page))
    const release = p.k.R1.publicKey
    assert.match(await page.textContent('#v-lead'), new RegExp(`^Published (just now|\\d+ minutes? ago) by key ${short(release)}, under trust anchor ${short(p.anchor)}$`))
    await page.click('#v-details summary')
    assert.equal(await page.textContent('#v-key-label'), 'Trust anchor (document 1)')
    assert.equal(await page.textContent('#v-key'), p.anchor)
    assert.equal(await page.textContent('#v-name'), 'docs')
    assert.equal(await page.textContent('#v-signers-label'), 'Release signed by key')
    assert.equal(await page.textContent('#v-signers'), release)
    assert.doesNotMatch(await page.innerText('#panel'), /Public key/, 'an anchor is not called a key')
    await page.screenshot({ path: path.join(SHOTS, 'words-1280-trust-anchor.png') })
  } finally { await page.context().close() }
})

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

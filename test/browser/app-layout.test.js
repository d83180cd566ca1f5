// The web app as a reader sees it: on a phone (390 × 844) the verification
// panel is one line that opens the whole panel, the first row of a listing
// shows without scrolling, and no name breaks in the middle of a word; on a
// desktop (1280 × 800) the whole panel shows. A path the signed listing
// proves absent is a verified fact (green), a lie stays red. Expiry reads
// "in N days", with a warning when little of the tree's life is left. The key
// field takes a pasted address; a malformed key in the address says so; an
// error does not outlive its address.
// Screenshots: $ROTREE_SCREENSHOTS, else <tmp>/rotree-screenshots/.
import { needing } from '../helpers/tools.js'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { openTree } from 'rotree-client'
import { tmpdir, writeTree, buildTree, makeKey, prng, serve } from '../helpers/fixtures.js'
import { startLyingServer } from '../helpers/lying-server.js'
import { ensureBundle, launchChromium, newPage, serveWithWeb, standardFiles, settled, startFront, pageLogs } from './helpers.js'

const { test, before, after } = needing('chromium')

const SHOTS = process.env.ROTREE_SCREENSHOTS ?? path.join(os.tmpdir(), 'rotree-screenshots')
const DAY = 24 * 3600e3
const key = makeKey()
const LONG = {
  'a-very-long-file-name-with-many-words-for-a-small-phone-screen.tar.gz': 'x\n',
  'Quarterly Report 2025 (final, approved by the board).txt': 'y\n',
  'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855b7852b855.bin': 'z\n'
}
let out, app, browser

before(async () => {
  await ensureBundle()
  await fs.mkdir(SHOTS, { recursive: true })
  const src = await tmpdir()
  await writeTree(src, { ...standardFiles(prng), ...LONG })
  ;({ out } = await buildTree(src, { key, ttlMs: 5 * DAY }))
  app = await serveWithWeb(out)
  browser = await launchChromium()
})

after(async () => {
  await browser?.close()
  await app?.close()
})

const K = () => key.publicKey

async function pageAt (width, height) {
  const page = await newPage(browser)
  await page.setViewportSize({ width, height })
  return page
}

/** Words of each visible name (split at the separators names may wrap after) that the layout broke over two lines. */
function brokenWords (page, selector) {
  return page.$$eval(selector, els => {
    const broken = []
    for (const e of els) {
      // the name's characters, each with its text node and offset
      const chars = []
      const walk = document.createTreeWalker(e, NodeFilter.SHOW_TEXT)
      for (let n = walk.nextNode(); n; n = walk.nextNode()) for (let i = 0; i < n.data.length; i++) chars.push([n, i, n.data[i]])
      let i = 0
      while (i < chars.length) {
        if (/[._\-+~,;@=\s/()]/.test(chars[i][2])) { i++; continue }
        let j = i
        while (j < chars.length && !/[._\-+~,;@=\s/()]/.test(chars[j][2])) j++
        const r = document.createRange()
        r.setStart(chars[i][0], chars[i][1])
        r.setEnd(chars[j - 1][0], chars[j - 1][1] + 1)
        const tops = new Set([...r.getClientRects()].filter(b => b.width > 0).map(b => Math.round(b.top)))
        if (tops.size > 1) broken.push(chars.slice(i, j).map(c => c[2]).join(''))
        i = j
      }
    }
    return broken
  })
}

test('on a phone the panel is one line, the listing starts on the first screen, names break only between words', async () => {
  const page = await pageAt(390, 844)
  await page.goto(`${app.url}#${K()}`)
  assert.equal(await settled(page, `#${K()}`), 'ok', pageLogs(page))
  await page.screenshot({ path: path.join(SHOTS, 'app-390x844.png') })
  const facts = await page.evaluate(() => {
    const box = id => document.getElementById(id).getBoundingClientRect()
    const row = document.querySelector('#listing tr').getBoundingClientRect()
    return { panel: box('panel').height, rowTop: row.top, rowBottom: row.bottom, scrollWidth: document.documentElement.scrollWidth }
  })
  assert.ok(facts.panel < 0.25 * 844, `the panel takes ${facts.panel}px of 844`)
  assert.ok(facts.rowTop >= 0 && facts.rowBottom <= 844, `the first row is at ${facts.rowTop}–${facts.rowBottom}, off the first screen`)
  assert.ok(facts.scrollWidth <= 390, `the page is ${facts.scrollWidth}px wide: it scrolls sideways`)
  assert.match(await page.innerText('#panel-summary'), /^✓ verified · published just now · expires in 5 days/)
  assert.equal(await page.isVisible('#v-lead'), false)

  // names: whole words only, and the full name at hand
  assert.deepEqual(await brokenWords(page, '#listing a.entry'), [])
  const titles = await page.$$eval('#listing a.entry .name', els => els.map(e => e.title))
  for (const n of Object.keys(LONG)) assert.ok(titles.includes(n), `${n} is in a title`)
  const widths = await page.$$eval('#listing a.entry .name', (els, long) => els.filter(e => long.includes(e.title)).map(e => e.getBoundingClientRect().width), Object.keys(LONG))
  assert.ok(widths.length === 3 && widths.every(w => w > 150), `every long name has room to be read: ${widths}`)

  // the summary opens the whole panel: words first, the numbers under Details
  await page.click('#panel-summary')
  assert.equal(await page.isVisible('#v-lead'), true)
  await page.click('#v-details summary')
  assert.equal(await page.isVisible('#v-root'), true)
  assert.equal(await page.textContent('#v-key'), K())
  await page.screenshot({ path: path.join(SHOTS, 'app-390x844-panel-open.png') })

  // a long name as a file's own title and in the path: whole words too
  const long = Object.keys(LONG)[0]
  await page.goto(`${app.url}#${K()}/${long}`)
  assert.equal(await settled(page, `#${K()}/${long}`), 'ok', pageLogs(page))
  assert.deepEqual(await brokenWords(page, '#file-name'), [])
  assert.deepEqual(await brokenWords(page, '#crumbs'), [])
  assert.equal((await page.textContent('#file-name')).trim(), long)
  await page.screenshot({ path: path.join(SHOTS, 'app-390x844-file.png') })
  await page.context().close()
})

test('on a desktop the whole panel shows, its numbers under Details', async () => {
  const page = await pageAt(1280, 800)
  await page.goto(`${app.url}#${K()}`)
  assert.equal(await settled(page, `#${K()}`), 'ok', pageLogs(page))
  await page.screenshot({ path: path.join(SHOTS, 'app-1280x800.png') })
  assert.equal(await page.isVisible('#panel-summary'), false)
  for (const id of ['#v-lead', '#v-valid', '#v-mirrors', '#refresh']) assert.equal(await page.isVisible(id), true, id)
  await page.click('#v-details summary')
  for (const id of ['#v-key', '#v-seq', '#v-expires', '#v-root', '#v-mirror']) assert.equal(await page.isVisible(id), true, id)
  const row = await page.$eval('#listing tr', r => r.getBoundingClientRect().bottom)
  assert.ok(row <= 800)
  assert.deepEqual(await brokenWords(page, '#listing a.entry'), [])
  assert.match(await page.textContent('#v-expires'), /\(in 5 days\)/)
  assert.equal(await page.$eval('#v-expires', e => e.classList.contains('warn')), false)
  await page.context().close()
})

test('a path the signed listing proves absent is a fact: the panel stays green', async () => {
  const page = await pageAt(1280, 800)
  const hash = `#${K()}/notes/nope.txt`
  await page.goto(app.url + hash)
  assert.equal(await settled(page, hash), 'absent', pageLogs(page))
  assert.equal(await page.isVisible('#error'), false)
  assert.equal(await page.isVisible('#absent'), true)
  assert.match(await page.textContent('#absent'), /not in this tree.*proven by the signed listing of \/notes/i)
  assert.match(await page.getAttribute('#status', 'class'), /\bok\b/)
  assert.match(await page.textContent('#status'), /^✓/)
  assert.equal(await page.textContent('#v-seq'), String(JSON.parse(await fs.readFile(path.join(out, 'fsinfo.json'), 'utf8')).seq))
  // on a phone, the summary says verified too
  await page.setViewportSize({ width: 390, height: 844 })
  assert.match(await page.innerText('#panel-summary'), /^✓ verified/)
  await page.screenshot({ path: path.join(SHOTS, 'app-390x844-absent.png') })
  await page.context().close()
})

test('a lie about the same path stays a red failure, and a mirror\'s 404 is no proof of absence', async () => {
  const honest = await serve(out)
  const tree = await openTree(`${honest.url}#${K()}`, { stateDir: null })
  const notes = (await tree.stat('/notes')).hash
  tree.close(); await honest.close()
  const flip = b => { const c = Buffer.from(b); c[c.length >> 1] ^= 1; return c }
  const liar = await startLyingServer(out, { blob: (h, bytes) => h === notes ? { body: flip(bytes) } : 'honest' })
  const front = await startFront(liar.url)
  const page = await pageAt(1280, 800)
  try {
    const hash = `#${K()}/notes/nope.txt`
    await page.goto(front.url + hash)
    assert.equal(await settled(page, hash), 'error', pageLogs(page))
    // the lone mirror's own fault (inside ROTREE_ALL_MIRRORS_FAILED) is what the title says
    assert.match(await page.textContent('#error-title'), /Tampered or corrupted data \(ROTREE_HASH_MISMATCH\)/)
    assert.match(await page.getAttribute('#status', 'class'), /\bbad\b/)
    assert.equal(await page.isVisible('#absent'), false)
    liar.set({ blob: (h) => h === notes ? { status: 404 } : 'honest' })
    await page.reload()
    assert.equal(await settled(page, hash), 'error', pageLogs(page))
    assert.match(await page.textContent('#error-title'), /Mirror error \(ROTREE_MIRROR_HTTP\)/)
    assert.match(await page.getAttribute('#status', 'class'), /\bbad\b/)
    await page.setViewportSize({ width: 390, height: 844 })
    assert.match(await page.innerText('#panel-summary'), /^✗ /)
  } finally {
    await page.context().close()
    await front.close()
    await liar.close()
  }
})

test('expiry: "in N days" beside the date, and a warning near the end of the tree\'s life', async () => {
  const cases = [
    // 3 days left of 30: under a seventh of its life
    { build: { now: Date.now() - 27 * DAY, ttlMs: 30 * DAY }, rel: /\(in 3 days\)/, warn: true },
    // 20 hours left: under a day
    { build: { ttlMs: 20 * 3600e3 }, rel: /\(in 20 hours\)/, warn: true },
    // 25 days left of 30: fine
    { build: { now: Date.now() - 5 * DAY, ttlMs: 30 * DAY }, rel: /\(in 25 days\)/, warn: false }
  ]
  for (const c of cases) {
    const k = makeKey()
    const src = await tmpdir()
    await writeTree(src, { 'a.txt': 'a\n' })
    const m = await serve((await buildTree(src, { key: k, ...c.build })).out)
    const page = await pageAt(1280, 800)
    try {
      const hash = `#${k.publicKey}`
      await page.goto(`${app.url}?self=0&mirror=${encodeURIComponent(m.url)}${hash}`)
      assert.equal(await settled(page, hash), 'ok', pageLogs(page))
      assert.match(await page.textContent('#v-expires'), c.rel)
      assert.equal(await page.$eval('#v-expires', e => e.classList.contains('warn')), c.warn, await page.textContent('#v-expires'))
      assert.equal(await page.$eval('#v-valid', e => e.classList.contains('warn')), c.warn, 'the words up front warn too')
      if (c.warn) await page.screenshot({ path: path.join(SHOTS, 'app-1280x800-expiring.png') })
    } finally {
      await page.context().close()
      await m.close()
    }
  }
})

test('the key field takes a pasted address; a malformed key says so; an old error goes with its address', async () => {
  // another tree, on a mirror the app does not know: a pasted address brings its mirror
  const k2 = makeKey()
  const src = await tmpdir()
  await writeTree(src, { 'docs/guide.txt': 'the guide\n' })
  const m2 = await serve((await buildTree(src, { key: k2, version: 2, name: 'docs' })).out) // a format-2 tree named "docs"
  const page = await pageAt(390, 844)
  try {
    // this app's server serves a tree, which it would open: ?start=1 asks for a key all the same
    await page.goto(`${app.url}?start=1`)
    assert.equal(await settled(page, ''), 'start')
    // a bare key, in capitals
    await page.fill('#start-key', K().toUpperCase())
    await page.click('#start-form button[type=submit]')
    assert.equal(await settled(page, `#${K()}`), 'ok', pageLogs(page))

    // a whole address with a tree name after the key (format 2): the name is kept, it selects the tree
    await page.goto(`${app.url}?start=1`)
    await page.fill('#start-key', `  ${m2.url}#${k2.publicKey}:docs  `)
    await page.click('#start-form button[type=submit]')
    assert.equal(await settled(page, `#${k2.publicKey}:docs`), 'ok', pageLogs(page))
    assert.equal(await page.textContent('#v-key'), k2.publicKey)
    assert.equal(await page.textContent('#v-name'), 'docs')
    assert.deepEqual(await page.locator('#listing a.entry').allTextContents(), ['docs/'])
    assert.ok(new URL(page.url()).searchParams.getAll('mirror').includes(m2.url))

    // something that is not a key: a message, and no navigation
    await page.goto(`${app.url}?start=1`)
    await page.fill('#start-key', 'http://example.test/#not-a-key')
    await page.click('#start-form button[type=submit]')
    assert.equal(await page.isVisible('#start-error'), true)
    assert.match(await page.textContent('#start-error'), /"not-a-key" is not a public key: a key is 64 hex digits/)
    assert.equal(new URL(page.url()).hash, '')

    // a malformed key in the address itself
    await page.goto(`${app.url}#${K().slice(0, 60)}/notes`)
    assert.equal(await settled(page, `#${K().slice(0, 60)}/notes`), 'start')
    assert.match(await page.textContent('#start-error'), /not a public key: a key is 64 hex digits .*this has 60/)
    assert.equal(await page.inputValue('#start-key'), K().slice(0, 60))
    await page.screenshot({ path: path.join(SHOTS, 'app-390x844-bad-key.png') })

    // a tree that fails (no mirror holds this key) leaves an error ...
    const stranger = makeKey().publicKey
    await page.goto(`${app.url}?start=1#${stranger}`)
    assert.equal(await settled(page, `#${stranger}`), 'error', pageLogs(page))
    assert.equal(await page.isVisible('#error'), true)
    // ... which goes when the address changes: to the start page, and to a good tree
    await page.evaluate(() => { location.hash = '' })
    assert.equal(await settled(page, ''), 'start')
    assert.equal(await page.isVisible('#error'), false, 'the last address\'s error is still shown')
    await page.goto(`${app.url}#${stranger}`)
    assert.equal(await settled(page, `#${stranger}`), 'error', pageLogs(page))
    await page.evaluate(k => { location.hash = k }, `#${K()}`)
    await page.waitForFunction(() => document.body.dataset.state === 'busy' || document.body.dataset.state === 'ok')
    assert.equal(await page.isVisible('#error'), false, 'an error shown beside the next address')
    assert.equal(await settled(page, `#${K()}`), 'ok', pageLogs(page))
  } finally {
    await page.context().close()
    await m2.close()
  }
})

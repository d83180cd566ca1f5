// A private site (FORMAT.md §12.8) through the verifying Service Worker, in
// Chromium (docs/WEB.md "Private trees in the browser"). Per-key origins: the
// bar asks for the identity; the reader picks the file in the window of its
// own the bar opens on the site's origin (no opener), which hands it to
// sw.js; another identity is named as not a reader; the site then renders,
// its script included. A page of the site cannot hand sw.js an identity, nor
// open a picker that works, with an opener or without; nothing of the identity is left in
// either origin's storage; a worker the browser stopped has forgotten it and
// the bar asks again. A shared origin: the bar takes the file itself.
import { needing } from '../helpers/tools.js'
import assert from 'node:assert/strict'
import { generateX25519Identity, identityToRecipient } from 'age-encryption'
import { tmpdir, writeTree, makeKey, serve } from '../helpers/fixtures.js'
import { build } from '../../builder/build.js'
import fs from 'node:fs/promises'
import path from 'node:path'
import { createRotreeServer } from '../../server/index.js'
import { WEB, ensureBundle, launchChromium, newPage, serveWithWeb, pageLogs } from './helpers.js'

const { test, before, after } = needing('chromium')

const key = makeKey()
const pad = (line, n) => Array.from({ length: n }, (_, i) => `${line} ${i}`).join('\n') + '\n' // past the 16 KiB inline size: blobs of their own
const SITE = {
  'index.html': `<!doctype html><html><head><meta charset="utf-8"><title>Private home</title>
<script src="js/app.js" defer></script></head><body><h1 id="h">Private welcome</h1><p><a id="about" href="about.html">About</a></p></body></html>`,
  'about.html': '<!doctype html><meta charset="utf-8"><title>About</title><h1 id="h">About the private site</h1>',
  'js/app.js': `document.body.dataset.script = 'ran'\n${pad('// padding', 1500)}`
}
let browser, trusted, shared, mirror, identity, other

/** An identity file as age-keygen (and rotree keygen --reader) writes it. */
async function identityFile (id, name) {
  return { name, mimeType: 'text/plain', buffer: Buffer.from(`# created: ${new Date().toISOString()}\n# public key: ${await identityToRecipient(id)}\n${id}\n`) }
}

before(async () => {
  await ensureBundle()
  identity = await generateX25519Identity()
  other = await generateX25519Identity()
  const src = await tmpdir()
  await writeTree(src, SITE)
  const out = await tmpdir('rotree-out-')
  await build({ src, out, key, ttlMs: 3600e3, private: true, readers: [await identityToRecipient(identity)], fsync: false })
  mirror = await serve(out) // an untrusted mirror on its own origin
  trusted = await serveWithWeb(await tmpdir()) // the bar's origin: site.html, sw.js, rotree-client.js
  // a host without per-key names: the same files, site.html switched to a shared origin (as isolation.test.js)
  const web = await tmpdir()
  await fs.cp(WEB, web, { recursive: true })
  const html = path.join(web, 'site.html')
  await fs.writeFile(html, (await fs.readFile(html, 'utf8')).replace('name="rotree-site-origins" content="per-key"', 'name="rotree-site-origins" content="shared"'))
  const srv = await createRotreeServer({ dir: await tmpdir(), webRoot: web })
  const { port } = await srv.listen({ port: 0, host: '127.0.0.1' })
  shared = { port, close: () => srv.close({ timeoutMs: 1000 }) }
  browser = await launchChromium()
})

after(async () => {
  await browser?.close()
  await mirror?.close()
  await trusted?.close()
  await shared?.close()
})

const K = () => key.publicKey
const siteUrl = (host, port = trusted.port) => `http://${host}:${port}/site.html?key=${K()}&mirror=${encodeURIComponent(mirror.url)}`
const siteFrame = page => page.frames().find(f => f.url().includes(`/site/${K()}/`))

/** Everything an origin keeps, as text, to search for the identity. */
function storageDump (frame) {
  return frame.evaluate(async () => {
    const text = v => typeof v === 'string' ? v : (v instanceof ArrayBuffer || ArrayBuffer.isView(v)) ? new TextDecoder('latin1').decode(v) : JSON.stringify(v)
    const out = { origin: location.origin, local: Object.entries(localStorage), session: Object.entries(sessionStorage), cookie: document.cookie, caches: await caches.keys(), idb: {} }
    for (const { name } of await indexedDB.databases()) {
      const db = await new Promise((resolve, reject) => { const r = indexedDB.open(name); r.onsuccess = () => resolve(r.result); r.onerror = () => reject(r.error) })
      for (const store of db.objectStoreNames) {
        const tx = db.transaction(store, 'readonly')
        const all = await Promise.all(['getAllKeys', 'getAll'].map(m => new Promise((resolve, reject) => {
          const r = tx.objectStore(store)[m](); r.onsuccess = () => resolve(r.result); r.onerror = () => reject(r.error)
        })))
        out.idb[`${name}/${store}`] = all.flat().map(text)
      }
      db.close()
    }
    return out
  })
}

function assertNoIdentity (dump, where) {
  assert.deepEqual([dump.local, dump.session, dump.cookie, dump.caches], [[], [], '', []], `${where} (${dump.origin}) keeps something`)
  const all = JSON.stringify(dump)
  assert.ok(!all.includes('AGE-SECRET-KEY') && !all.toUpperCase().includes(identity.slice('AGE-SECRET-KEY-1'.length)), `the identity is in the storage of ${where}`)
}

test('per-key origins: the bar asks, the reader picks the file in a window of its own, and the private site renders', async () => {
  const page = await newPage(browser)
  try {
    await page.goto(siteUrl('rotree.localhost'))
    await page.waitForSelector('#site-private', { state: 'visible', timeout: 30_000 })
    assert.match(await page.textContent('#site-private-text'), /This site is private: choose your identity file \(from rotree keygen --reader or age-keygen\)/)
    assert.equal(await page.isVisible('#blocked'), false, 'a private site is not an attack')
    // the frame holds the verifier's page, no byte of the site
    let frame = siteFrame(page)
    assert.ok(frame, pageLogs(page))
    await frame.waitForSelector('#rotree-error', { timeout: 10_000 })
    assert.equal(await frame.getAttribute('#rotree-error', 'data-code'), 'ROTREE_NO_ACCESS')
    assert.equal(await frame.$('#h'), null)

    // a page of the site (this origin) cannot hand sw.js an identity, nor hold the picker's window
    const fromSite = await frame.evaluate(async k => {
      const { port1, port2 } = new MessageChannel()
      const answer = new Promise(resolve => { port1.onmessage = ev => resolve(ev.data) })
      navigator.serviceWorker.controller.postMessage({ source: 'rotree-identity', key: k, identity: 'AGE-SECRET-KEY-1QQQQ' }, [port2])
      return answer
    }, K())
    assert.equal(fromSite.ok, false)
    assert.match(fromSite.message, /site-boot\.html in a window of its own only/)
    const [held] = await Promise.all([page.context().waitForEvent('page'), frame.evaluate(() => { window.held = open(location.origin + '/site-boot.html#identity') })])
    await held.waitForFunction(() => document.body.dataset.state === 'error', null, { timeout: 10_000 })
    assert.equal(await held.isVisible('#identity-file'), false, 'a picker another page holds refuses to run')
    assert.match(await held.textContent('#boot-error-text'), /only in the window the bar's "Choose identity file" button opens/)
    await held.close()
    // nor one it opens without an opener: the browser's referrer names the site, not the bar
    const [loose] = await Promise.all([page.context().waitForEvent('page'), frame.evaluate(() => { open(location.origin + '/site-boot.html#identity', '_blank', 'noopener') })])
    await loose.waitForFunction(() => document.body.dataset.state === 'error', null, { timeout: 10_000 })
    assert.equal(await loose.isVisible('#identity-file'), false, 'a picker the site opened refuses to run')
    await loose.close()

    const [picker] = await Promise.all([page.context().waitForEvent('page'), page.click('#s-identity')])
    await picker.waitForFunction(() => document.body.dataset.state === 'identity', null, { timeout: 10_000 })
    assert.equal(new URL(picker.url()).host, new URL(frame.url()).host, 'the picker is on the site\'s own origin')
    assert.equal(await picker.evaluate(() => window.opener), null)
    await picker.screenshot({ path: '/tmp/rotree-site-private-picker.png' })

    // another identity: named as not a reader, and the window stays
    await picker.setInputFiles('#identity-file', await identityFile(other, 'other.key'))
    await picker.waitForFunction(() => !document.getElementById('identity-problem').hidden, null, { timeout: 20_000 })
    assert.match(await picker.textContent('#identity-problem'), /other\.key is not one of this tree's readers \(ROTREE_NO_ACCESS\)/)

    // the reader's identity: the window closes and the site opens in the bar's
    const closed = picker.waitForEvent('close', { timeout: 20_000 })
    await picker.setInputFiles('#identity-file', await identityFile(identity, 'reader.key'))
    await closed
    frame = siteFrame(page)
    await frame.waitForSelector('#h:text("Private welcome")', { timeout: 20_000 })
    await frame.waitForFunction(() => document.body.dataset.script === 'ran', null, { timeout: 10_000 })
    await page.waitForFunction(() => document.getElementById('site-private').hidden && /verified/.test(document.getElementById('site-status').textContent), null, { timeout: 10_000 })
    await frame.click('#about')
    await page.waitForFunction(() => document.body.dataset.loaded?.endsWith('/about.html'), null, { timeout: 10_000 })
    assert.equal(await siteFrame(page).textContent('#h'), 'About the private site')
    await page.screenshot({ path: '/tmp/rotree-site-private.png' })

    // nothing of the identity is kept by the site's origin (sw.js's rollback state is there) or the bar's
    assertNoIdentity(await storageDump(siteFrame(page)), 'the site\'s origin')
    assertNoIdentity(await storageDump(page.mainFrame()), 'the bar\'s origin')

    // a worker the browser stops forgets the identity: the next load is locked, and the bar asks again
    const cdp = await page.context().newCDPSession(page)
    await cdp.send('ServiceWorker.enable')
    await cdp.send('ServiceWorker.stopAllWorkers')
    await page.click('#s-reload')
    await page.waitForSelector('#site-private', { state: 'visible', timeout: 20_000 })
    await siteFrame(page).waitForSelector('#rotree-error[data-code="ROTREE_NO_ACCESS"]', { timeout: 10_000 })
  } finally { await page.context().close() }
})

test('a shared origin: the bar takes the identity file itself and the private site renders', async () => {
  const page = await newPage(browser)
  try {
    await page.goto(siteUrl('127.0.0.1', shared.port))
    await page.waitForSelector('#site-private', { state: 'visible', timeout: 30_000 })
    assert.equal(await page.isVisible('#s-shared'), true, 'sandboxed')
    assert.equal(await page.isVisible('#s-identity-file'), true, pageLogs(page))
    assert.equal(await page.isVisible('#s-identity'), false)
    await page.setInputFiles('#s-identity-file', await identityFile(other, 'other.key'))
    await page.waitForFunction(() => !document.getElementById('site-private-problem').hidden, null, { timeout: 20_000 })
    assert.match(await page.textContent('#site-private-problem'), /other\.key is not one of this tree's readers \(ROTREE_NO_ACCESS\)/)
    await page.setInputFiles('#s-identity-file', await identityFile(identity, 'reader.key'))
    await page.waitForFunction(() => document.getElementById('site-private').hidden, null, { timeout: 20_000 })
    const frame = siteFrame(page)
    await frame.waitForSelector('#h:text("Private welcome")', { timeout: 20_000 })
    assertNoIdentity(await storageDump(page.mainFrame()), 'the shared origin')
  } finally { await page.context().close() }
})

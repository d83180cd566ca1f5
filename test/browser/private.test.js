// A private tree (FORMAT.md §12.8) in the web app, in Chromium: without an
// identity the app says the tree is private and offers a file picker; the
// reader's identity file, picked there, opens it and every byte shown or
// downloaded verifies and equals the source; another identity is named as not
// a reader; a post-quantum one is sent to the Node reader; and nothing of the
// identity is left in the page's storage (docs/WEB.md "Private trees in the
// browser").
import { needing } from '../helpers/tools.js'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import { generateX25519Identity, generateHybridIdentity, identityToRecipient } from 'age-encryption'
import { tmpdir, writeTree, makeKey, prng } from '../helpers/fixtures.js'
import { build } from '../../builder/build.js'
import { ensureBundle, launchChromium, newPage, serveWithWeb, settled, pageLogs } from './helpers.js'

const { test, before, after } = needing('chromium')

const key = makeKey()
const files = {
  'README.md': Buffer.from(Array.from({ length: 600 }, (_, i) => `private line ${i}: sealed, then verified\n`).join('')),
  'notes/small.txt': Buffer.from('a small private note\n'),
  'data.bin': prng(3 << 20, 'private data') // several sealed chunks, over the preview limit
}
let app, browser, identity, other, pq

/** An identity file as age-keygen (and rotree keygen --reader) writes it. */
async function identityFile (id) {
  return Buffer.from(`# created: ${new Date().toISOString()}\n# public key: ${await identityToRecipient(id)}\n${id}\n`)
}

before(async () => {
  await ensureBundle()
  identity = await generateX25519Identity()
  other = await generateX25519Identity()
  pq = await generateHybridIdentity()
  const src = await tmpdir()
  await writeTree(src, files)
  const out = await tmpdir('rotree-out-')
  await build({ src, out, key, ttlMs: 3600e3, private: true, readers: [await identityToRecipient(identity)], fsync: false })
  app = await serveWithWeb(out) // the tree and the app on one origin, as `rotree serve OUT --web`
  browser = await launchChromium()
})

after(async () => {
  await browser?.close()
  await app?.close()
})

const K = () => key.publicKey

/** Pick an identity file in the app's private-tree card (the user's file dialog). */
async function pick (page, name, buffer) {
  await page.setInputFiles('#identity-file', { name, mimeType: 'text/plain', buffer })
}

/** Everything the page's origin keeps: each store's keys and values as text, to search for the identity. */
function storageDump (page) {
  return page.evaluate(async () => {
    const text = v => {
      if (typeof v === 'string') return v
      if (v instanceof ArrayBuffer || ArrayBuffer.isView(v)) return new TextDecoder('latin1').decode(v)
      try { return JSON.stringify(v) } catch { return String(v) }
    }
    const out = {
      local: Object.entries(localStorage),
      session: Object.entries(sessionStorage),
      cookie: document.cookie,
      caches: await caches.keys(),
      url: location.href,
      idb: {}
    }
    for (const { name } of await indexedDB.databases()) {
      const db = await new Promise((resolve, reject) => { const r = indexedDB.open(name); r.onsuccess = () => resolve(r.result); r.onerror = () => reject(r.error) })
      for (const store of db.objectStoreNames) {
        const tx = db.transaction(store, 'readonly')
        const [keys, values] = await Promise.all(['getAllKeys', 'getAll'].map(m => new Promise((resolve, reject) => {
          const r = tx.objectStore(store)[m](); r.onsuccess = () => resolve(r.result); r.onerror = () => reject(r.error)
        })))
        out.idb[`${name}/${store}`] = [...keys.map(text), ...values.map(text)]
      }
      db.close()
    }
    return out
  })
}

test('without an identity the app says the tree is private, offers a file picker and shows nothing of the tree', async () => {
  const page = await newPage(browser)
  try {
    await page.goto(`${app.url}#${K()}`)
    assert.equal(await settled(page, `#${K()}`), 'private', pageLogs(page))
    assert.equal(await page.isVisible('#private'), true)
    assert.match(await page.textContent('#private-text'), /This tree is private: choose your identity file \(from rotree keygen --reader or age-keygen\)/)
    assert.equal(await page.isVisible('#identity-file'), true)
    assert.equal(await page.isVisible('#private-problem'), false)
    assert.equal(await page.isVisible('#error'), false, 'a private tree is not a failure of verification')
    assert.equal(await page.locator('#listing tr').count(), 0)
    assert.match(await page.textContent('#status'), /Private tree/)
    await page.screenshot({ path: '/tmp/rotree-app-private.png', fullPage: true })
  } finally { await page.context().close() }
})

test('the reader\'s identity file opens the tree: listing, text and a multi-chunk download verify and equal the source; a wrong one is not a reader', async () => {
  const page = await newPage(browser)
  try {
    await page.goto(`${app.url}#${K()}`)
    assert.equal(await settled(page, `#${K()}`), 'private', pageLogs(page))

    // another identity: the same card again, naming that it is not one of the readers
    await pick(page, 'other.key', await identityFile(other))
    await page.waitForFunction(() => document.body.dataset.state === 'private' && !document.getElementById('private-problem').hidden, null, { timeout: 20_000 })
    assert.match(await page.textContent('#private-problem'), /other\.key is not one of this tree's readers \(ROTREE_NO_ACCESS\)/)
    assert.equal(await page.locator('#listing tr').count(), 0)
    await page.screenshot({ path: '/tmp/rotree-app-private-refused.png', fullPage: true })

    // the reader's own identity
    await pick(page, 'reader.key', await identityFile(identity))
    await page.waitForFunction(() => document.body.dataset.state === 'ok', null, { timeout: 20_000 })
    assert.deepEqual(await page.locator('#listing a.entry').allTextContents(), ['README.md', 'data.bin', 'notes/'], pageLogs(page))
    assert.equal(await page.isVisible('#private'), false)
    assert.equal(await page.textContent('#identity-name'), 'reader.key')

    await page.locator('a.entry', { hasText: /^README\.md$/ }).click()
    assert.equal(await settled(page, `#${K()}/README.md`), 'ok', pageLogs(page))
    assert.equal(await page.textContent('#preview-text'), files['README.md'].toString())
    // a reload forgets the identity: it was in the page's memory only
    await page.goto(`${app.url}#${K()}/notes/small.txt`) // only the hash changes: no reload yet
    await page.reload()
    assert.equal(await settled(page, `#${K()}/notes/small.txt`), 'private', 'a reload forgets the identity')
    await pick(page, 'reader.key', await identityFile(identity))
    await page.waitForFunction(() => document.body.dataset.state === 'ok', null, { timeout: 20_000 })
    assert.equal(await page.textContent('#preview-text'), files['notes/small.txt'].toString())

    // the same identity reads on as the address changes within the page
    await page.evaluate(k => { location.hash = `#${k}/data.bin` }, K())
    assert.equal(await settled(page, `#${K()}/data.bin`), 'ok', pageLogs(page))
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#download')])
    const got = await fs.readFile(await download.path())
    assert.ok(got.equals(files['data.bin']), 'downloaded bytes differ from the source')
    await page.waitForFunction(() => document.body.dataset.download === 'done')

    // nothing of the identity in the origin's storage or the address
    const dump = await storageDump(page)
    assert.deepEqual([dump.local, dump.session, dump.cookie, dump.caches], [[], [], '', []])
    const secret = identity.slice('AGE-SECRET-KEY-1'.length)
    const all = JSON.stringify(dump)
    assert.ok(!all.includes('AGE-SECRET-KEY') && !all.toUpperCase().includes(secret), 'the identity reached the page\'s storage or address')
    assert.ok(Object.keys(dump.idb).length > 0, 'the rollback state is there to search (docs/WEB.md)')

    // Forget: the tree is private to this page again
    await page.click('#forget')
    await page.waitForFunction(() => document.body.dataset.state === 'private', null, { timeout: 20_000 })
    assert.equal(await page.isVisible('#identity'), false)
  } finally { await page.context().close() }
})

test('a post-quantum identity is refused in the browser, naming the readers that take it', async () => {
  const page = await newPage(browser)
  try {
    await page.goto(`${app.url}#${K()}`)
    assert.equal(await settled(page, `#${K()}`), 'private', pageLogs(page))
    await pick(page, 'pq.key', await identityFile(pq))
    await page.waitForFunction(() => document.body.dataset.state === 'private' && !document.getElementById('private-problem').hidden, null, { timeout: 20_000 })
    assert.match(await page.textContent('#private-problem'), /pq\.key cannot be used here \(ROTREE_USAGE\): .*post-quantum.*Node reader and the gateway/, pageLogs(page))
    // a recipient (age1…) picked by mistake: the public half
    await pick(page, 'recipient.txt', Buffer.from(await identityToRecipient(identity) + '\n'))
    await page.waitForFunction(() => /recipient\.txt/.test(document.getElementById('private-problem').textContent), null, { timeout: 20_000 })
    assert.match(await page.textContent('#private-problem'), /ROTREE_USAGE.*public half/)
  } finally { await page.context().close() }
})

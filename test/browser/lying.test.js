// The web app against a lying mirror (test/helpers/lying-server.js). The app
// is served from the liar's own origin, so every byte of tree data is hostile:
// changed blobs, an expired fsinfo.json and a rolled-back one must each give a
// visible error and no content at all.
import { needing } from '../helpers/tools.js'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { openTree } from 'rotree-client'
import { tmpdir, writeTree, buildTree, makeKey, prng, serve } from '../helpers/fixtures.js'
import { startLyingServer } from '../helpers/lying-server.js'
import { ensureBundle, launchChromium, newPage, standardFiles, settled, startFront, pageLogs, fileChunks, README_MARKER } from './helpers.js'

const { test, before, after } = needing('chromium')

const key = makeKey()
const files = standardFiles(prng)
let out, src, browser, liar, front, refs, oldFsinfo, expiredFsinfo

/** The same bytes with one bit flipped in the middle. */
const flip = bytes => { const b = Buffer.from(bytes); b[b.length >> 1] ^= 1; return b }

before(async () => {
  await ensureBundle()
  src = await tmpdir()
  await writeTree(src, files)
  ;({ out } = await buildTree(src, { key }))
  oldFsinfo = await fs.readFile(path.join(out, 'fsinfo.json'))
  // a second publish into the same folder: the first fsinfo.json is now a rollback
  await fs.writeFile(path.join(src, 'notes/small.txt'), 'changed in the second publish\n')
  await buildTree(src, { key, out })
  // signed by the right key, but expired an hour ago
  const { out: stale } = await buildTree(src, { key, now: Date.now() - 2 * 3600e3, ttlMs: 3600e3 })
  expiredFsinfo = await fs.readFile(path.join(stale, 'fsinfo.json'))

  // what each path's blob is, read honestly through the Node client: the
  // names of the stored blobs, which in format version 2 are not the SHA-256
  // of a file's bytes when the builder deflated them (FORMAT.md §12.6)
  const honest = await serve(out)
  const tree = await openTree(`${honest.url}#${key.publicKey}`, { stateDir: null })
  try {
    const readme = await fileChunks(tree, '/README.md')
    assert.equal(readme.length, 1, 'README.md is one blob')
    refs = {
      readme: readme[0].hash,
      notes: (await tree.stat('/notes')).hash,
      // a chunk in the middle of data.bin: the download fails part-way through
      dataChunk: (await fileChunks(tree, '/data.bin'))[3].hash
    }
  } finally { tree.close(); await honest.close() } // a failed hook must not leave the process alive

  liar = await startLyingServer(out)
  front = await startFront(liar.url)
  browser = await launchChromium()
})

after(async () => {
  await browser?.close()
  await front?.close()
  await liar?.close()
})

const K = () => key.publicKey

/** Nothing of the tree's content anywhere in the page. */
async function assertNoContent (page, marker) {
  assert.equal(await page.isVisible('#error'), true, 'the error is visible' + pageLogs(page))
  assert.equal(await page.$eval('#preview', e => e.childElementCount), 0, 'no preview')
  assert.equal(await page.$eval('#listing', e => e.childElementCount), 0, 'no listing')
  assert.equal(await page.isVisible('#file'), false)
  if (marker) assert.equal((await page.content()).includes(marker), false, 'no byte of the file reached the page')
}

test('a changed file blob: error, and not one line of the file', async () => {
  liar.set({ fsinfo: undefined, blob: (hash, bytes) => hash === refs.readme ? { body: flip(bytes) } : 'honest' })
  const page = await newPage(browser)
  const hash = `#${K()}/README.md`
  await page.goto(front.url + hash)
  assert.equal(await settled(page, hash), 'error', pageLogs(page))
  assert.match(await page.textContent('#error-title'), /Tampered or corrupted data \(ROTREE_HASH_MISMATCH\)/)
  await assertNoContent(page, README_MARKER)
  assert.match(await page.textContent('#v-mirrors'), /ROTREE_HASH_MISMATCH/)
  await page.screenshot({ path: '/tmp/rotree-app-tampered.png', fullPage: true })
  // the rest of the tree still reads: only the lie is refused
  await page.goto(`${front.url}#${K()}/notes/small.txt`)
  assert.equal(await settled(page, `#${K()}/notes/small.txt`), 'ok', pageLogs(page))
  assert.equal(await page.isVisible('#error'), false)
  await page.context().close()
})

test('a changed directory page: no listing', async () => {
  liar.set({ fsinfo: undefined, blob: (hash, bytes) => hash === refs.notes ? { body: flip(bytes) } : 'honest' })
  const page = await newPage(browser)
  const hash = `#${K()}/notes`
  await page.goto(front.url + hash)
  assert.equal(await settled(page, hash), 'error', pageLogs(page))
  assert.match(await page.textContent('#error-title'), /ROTREE_HASH_MISMATCH/)
  await assertNoContent(page, 'small.txt')
  await page.context().close()
})

test('a chunk changed mid-file: the download stops, nothing is saved', async () => {
  liar.set({ fsinfo: undefined, blob: (hash, bytes) => hash === refs.dataChunk ? { body: flip(bytes) } : 'honest' })
  // Blob path: no download is ever offered
  const page = await newPage(browser)
  let downloads = 0
  page.on('download', () => downloads++)
  const hash = `#${K()}/data.bin`
  await page.goto(front.url + hash)
  assert.equal(await settled(page, hash), 'ok', pageLogs(page)) // its metadata is fine
  await page.click('#download')
  await page.waitForFunction(() => document.body.dataset.download === 'failed', null, { timeout: 20_000 })
  assert.match(await page.textContent('#error-title'), /ROTREE_HASH_MISMATCH/)
  await assertNoContent(page)
  assert.equal(downloads, 0)
  await page.context().close()

  // streamed path: what was written is aborted (the browser discards it), never closed
  const page2 = await newPage(browser, { streamToDisk: true })
  await page2.context().addInitScript(() => {
    window.__saved = { bytes: 0, closed: false, aborted: false }
    window.showSaveFilePicker = async () => ({
      async createWritable () {
        return { async write (b) { window.__saved.bytes += b.byteLength }, async close () { window.__saved.closed = true }, async abort () { window.__saved.aborted = true } }
      }
    })
  })
  await page2.goto(front.url + hash)
  assert.equal(await settled(page2, hash), 'ok', pageLogs(page2))
  await page2.click('#download')
  await page2.waitForFunction(() => document.body.dataset.download === 'failed', null, { timeout: 20_000 })
  const saved = await page2.evaluate(() => window.__saved)
  assert.deepEqual([saved.closed, saved.aborted], [false, true])
  assert.ok(saved.bytes < files['data.bin'].length)
  await page2.context().close()
})

test('an expired fsinfo.json: error, nothing listed', async () => {
  liar.set({ blob: undefined, fsinfo: () => ({ body: expiredFsinfo }) })
  const page = await newPage(browser)
  await page.goto(`${front.url}#${K()}`)
  assert.equal(await settled(page, `#${K()}`), 'error', pageLogs(page))
  assert.match(await page.textContent('#error-title'), /Expired tree \(ROTREE_EXPIRED\)/)
  await assertNoContent(page, 'README.md')
  assert.equal(await page.textContent('#v-seq'), '—')
  await page.context().close()
})

test('a rolled-back fsinfo.json after a newer one: error, even after a reload', async () => {
  liar.set({ blob: undefined, fsinfo: undefined })
  const page = await newPage(browser)
  const hash = `#${K()}/notes/small.txt`
  await page.goto(front.url + hash)
  assert.equal(await settled(page, hash), 'ok', pageLogs(page))
  assert.match(await page.textContent('#preview-text'), /second publish/)

  // the mirror goes back to the first publish; a reload starts a fresh page,
  // so only IndexedDB (through level) remembers the newer sequence number
  liar.set({ fsinfo: () => ({ body: oldFsinfo }) })
  await page.reload()
  assert.equal(await settled(page, hash), 'error', pageLogs(page))
  assert.match(await page.textContent('#error-title'), /Rollback \(ROTREE_ROLLBACK\)/)
  await assertNoContent(page, 'a small note')
  const dbs = await page.evaluate(async () => (await indexedDB.databases()).map(d => d.name))
  assert.ok(dbs.some(n => n.includes('rotree-seq')), `rollback state in IndexedDB: ${dbs}`)

  // a new browser profile has no memory: the old tree is, to it, just a valid tree
  const fresh = await newPage(browser)
  await fresh.goto(front.url + hash)
  assert.equal(await settled(fresh, hash), 'ok', pageLogs(fresh))
  assert.match(await fresh.textContent('#preview-text'), /a small note/)
  await fresh.context().close()
  await page.context().close()
})

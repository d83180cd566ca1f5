// A page on plain http:// that is not localhost has no crypto.subtle (it is
// not a secure context). The client must still verify everything, through
// @noble/hashes. The page is opened at http://insecure.test:PORT/, a name
// Chromium is told resolves to 127.0.0.1 (--host-resolver-rules in helpers.js).
import { needing } from '../helpers/tools.js'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import { openTree } from 'rotree-client'
import { tmpdir, writeTree, buildTree, makeKey, prng } from '../helpers/fixtures.js'
import { startLyingServer } from '../helpers/lying-server.js'
import { INSECURE_HOST, ensureBundle, launchChromium, newPage, serveWithWeb, standardFiles, settled, startFront, pageLogs, fileChunks, README_MARKER } from './helpers.js'

const { test, before, after } = needing('chromium')

const key = makeKey()
const files = standardFiles(prng)
let out, browser, web, liar, front

/** Same length, one bit changed: only the hash (computed by noble here) can tell. */
const flip = bytes => { const b = Buffer.from(bytes); b[100] ^= 1; return b }
const insecure = url => url.replace('127.0.0.1', INSECURE_HOST)

before(async () => {
  await ensureBundle()
  const src = await tmpdir()
  await writeTree(src, files)
  ;({ out } = await buildTree(src, { key }))
  web = await serveWithWeb(out)
  const tree = await openTree(`${web.url}#${key.publicKey}`, { stateDir: null })
  // the stored blob of README.md (in format version 2 named by its deflated
  // bytes, not by the file's: FORMAT.md §12.6)
  let chunks
  try { chunks = await fileChunks(tree, '/README.md') } finally { tree.close() }
  assert.equal(chunks.length, 1, 'README.md is one blob')
  const readme = chunks[0].hash
  liar = await startLyingServer(out, { blob: (hash, bytes) => hash === readme ? { body: flip(bytes) } : 'honest' })
  front = await startFront(liar.url)
  browser = await launchChromium()
})

after(async () => {
  await browser?.close()
  await web?.close()
  await front?.close()
  await liar?.close()
})

const K = () => key.publicKey

test('without WebCrypto the page verifies with @noble/hashes: browse, preview, download', async () => {
  const page = await newPage(browser)
  const hash = `#${K()}/README.md`
  await page.goto(insecure(web.url) + hash)
  assert.equal(await settled(page, hash), 'ok', pageLogs(page))
  assert.deepEqual(await page.evaluate(() => [window.isSecureContext, typeof globalThis.crypto?.subtle, typeof window.showSaveFilePicker]), [false, 'undefined', 'undefined'])
  assert.match(await page.textContent('#v-hash'), /@noble\/hashes/)
  assert.equal(await page.textContent('#preview-text'), files['README.md'].toString())

  // the Blob path is the only one here (no File System Access API on insecure origins)
  await page.goto(`${insecure(web.url)}#${K()}/data.bin`)
  assert.equal(await settled(page, `#${K()}/data.bin`), 'ok', pageLogs(page))
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#download')])
  assert.ok((await fs.readFile(await download.path())).equals(files['data.bin']), 'downloaded bytes differ')
  await page.context().close()
})

test('without WebCrypto a changed blob is still refused', async () => {
  const page = await newPage(browser)
  const hash = `#${K()}/README.md`
  await page.goto(insecure(front.url) + hash)
  assert.equal(await settled(page, hash), 'error', pageLogs(page))
  assert.match(await page.textContent('#error-title'), /ROTREE_HASH_MISMATCH/)
  assert.equal((await page.content()).includes(README_MARKER), false)
  await page.context().close()
})

test('site.html on an insecure origin says Service Workers need a secure context', async () => {
  const page = await newPage(browser)
  await page.goto(`${insecure(web.url)}site.html?key=${K()}`)
  await page.waitForSelector('#site-error:not([hidden])')
  assert.match(await page.textContent('#site-error-text'), /secure context/)
  await page.context().close()
})

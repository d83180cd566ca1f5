// The web app in Chromium, served the way a user starts it:
// `rotree serve OUT --web`, then <url>/#<public key>. Browse, preview, download
// (Blob and streamed-to-disk paths), and a lying second mirror that is reported
// while the honest origin serves.
import { needing } from '../helpers/tools.js'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import { spawn } from 'node:child_process'
import path from 'node:path'
import { createHash } from 'node:crypto'
import { openTree } from 'rotree-client'
import { decodeRoot } from '../../lib/published/signed-roots.js'
import { tmpdir, writeTree, buildTree, makeKey, prng } from '../helpers/fixtures.js'
import { startLyingServer } from '../helpers/lying-server.js'
import { ROOT, ensureBundle, launchChromium, newPage, standardFiles, settled, allowCors, pageLogs, README_MARKER } from './helpers.js'

const { test, before, after } = needing('chromium')

const key = makeKey()
const files = standardFiles(prng)
// an SVG whose script, run with the app's origin, would read and write the app's storage
const EVIL_SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="40" height="30"><rect width="40" height="30" fill="#c00"/>
<script>
document.documentElement.setAttribute('data-ran', String(self.origin))
localStorage.setItem('svg-ran', String(localStorage.getItem('app-marker')))
</script></svg>`
let out, url, serveProc, browser, liar

before(async () => {
  await ensureBundle()
  const src = await tmpdir()
  await writeTree(src, { ...files, link: { symlink: 'README.md' }, 'img/evil.svg': EVIL_SVG })
  ;({ out } = await buildTree(src, { key }))
  // the real command line, as the README tells a user to run it
  serveProc = spawn(process.execPath, [path.join(ROOT, 'bin', 'rotree.js'), 'serve', out, '--web', '--port', '0'], { stdio: ['ignore', 'pipe', 'inherit'] })
  url = await new Promise((resolve, reject) => {
    let buf = ''
    serveProc.stdout.on('data', d => { buf += d; const m = /at (http:\/\/\S+)/.exec(buf); if (m) resolve(m[1]) })
    serveProc.on('exit', code => reject(new Error(`rotree serve exited ${code}: ${buf}`)))
  })
  browser = await launchChromium()
})

after(async () => {
  await browser?.close()
  serveProc?.kill('SIGTERM')
  await liar?.close()
})

const K = () => key.publicKey

test('lists the tree, walks into folders and shows a file\'s text', async () => {
  const page = await newPage(browser)
  await page.goto(`${url}#${K()}`)
  assert.equal(await settled(page, `#${K()}`), 'ok', pageLogs(page))
  const names = await page.locator('#listing a.entry').allTextContents()
  assert.deepEqual(names, ['README.md', 'data.bin', 'img/', 'link', 'notes/'])
  // the verification panel names what was checked
  // (decodeRoot: either format version's fsinfo.json; the root is the blob of the top page)
  const info = decodeRoot(await fs.readFile(path.join(out, 'fsinfo.json')))
  assert.equal(await page.textContent('#v-key'), K())
  assert.equal(await page.textContent('#v-seq'), String(info.seq))
  assert.equal(await page.textContent('#v-root'), info.root.hash)
  assert.equal(await page.textContent('#v-mirror'), url)
  assert.match(await page.textContent('#v-hash'), /WebCrypto/)
  assert.match(await page.textContent('#own-origin'), /^http:\/\/127\.0\.0\.1:\d+$/)

  await page.locator('a.entry', { hasText: /^notes\/$/ }).click()
  assert.equal(await settled(page, `#${K()}/notes`), 'ok', pageLogs(page))
  assert.deepEqual(await page.locator('#listing a.entry').allTextContents(), ['deep/', 'small.txt'])
  await page.locator('a.entry', { hasText: /^small\.txt$/ }).click()
  assert.equal(await settled(page, `#${K()}/notes/small.txt`), 'ok', pageLogs(page))
  assert.equal(await page.textContent('#preview-text'), files['notes/small.txt'].toString())

  await page.click('#crumbs a:text-is("/")')
  assert.equal(await settled(page, `#${K()}`), 'ok')
  await page.locator('a.entry', { hasText: /^README\.md$/ }).click()
  assert.equal(await settled(page, `#${K()}/README.md`), 'ok', pageLogs(page))
  assert.equal(await page.textContent('#preview-text'), files['README.md'].toString())
  assert.equal(await page.isVisible('#error'), false)
  await page.screenshot({ path: '/tmp/rotree-app.png', fullPage: true })

  // a symlink resolves inside the tree
  await page.goto(`${url}#${K()}/link`)
  assert.equal(await settled(page, `#${K()}/link`), 'ok')
  assert.ok((await page.textContent('#preview-text')).startsWith(README_MARKER))
  await page.context().close()
})

test('previews an image from verified bytes', async () => {
  const page = await newPage(browser)
  await page.goto(`${url}#${K()}/img/logo.png`)
  assert.equal(await settled(page, `#${K()}/img/logo.png`), 'ok', pageLogs(page))
  const img = await page.$eval('#preview-image', i => ({ w: i.naturalWidth, h: i.naturalHeight, src: i.src }))
  assert.deepEqual([img.w, img.h], [120, 80])
  assert.match(img.src, /^blob:/)
  await page.screenshot({ path: '/tmp/rotree-app-image.png', fullPage: true })
  await page.context().close()
})

test('an SVG preview never runs its script with the app\'s origin, not even opened as a page', async () => {
  const page = await newPage(browser)
  await page.goto(`${url}#${K()}/img/evil.svg`)
  assert.equal(await settled(page, `#${K()}/img/evil.svg`), 'ok', pageLogs(page))
  await page.evaluate(() => localStorage.setItem('app-marker', 'secret of the app'))
  const img = await page.$eval('#preview-image', i => ({ w: i.naturalWidth, h: i.naturalHeight, src: i.src }))
  assert.deepEqual([img.w, img.h], [40, 30], 'the SVG is shown, as an image')
  // "open image in new tab": the preview's URL as a page of its own, beside the app
  const tab = await page.context().newPage()
  await tab.goto(img.src).catch(() => {}) // a browser may refuse to open it at all
  const ran = await tab.evaluate(() => document.documentElement.getAttribute('data-ran')).catch(() => null)
  assert.ok(ran === null || ran === 'null', `the SVG's script ran with the origin ${ran}`)
  assert.equal(await page.evaluate(() => localStorage.getItem('svg-ran')), null, 'the SVG reached the app\'s storage')
  assert.equal(await page.evaluate(() => localStorage.getItem('app-marker')), 'secret of the app')
  await page.context().close()
})

test('an unknown path is a verified "not found", shown as a fact and not as a failure', async () => {
  const page = await newPage(browser)
  await page.goto(`${url}#${K()}/notes/nope.txt`)
  assert.equal(await settled(page, `#${K()}/notes/nope.txt`), 'absent', pageLogs(page))
  assert.match(await page.textContent('#absent'), /not in this tree: proven by the signed listing of \/notes/)
  assert.equal(await page.isVisible('#error'), false)
  assert.match(await page.getAttribute('#status', 'class'), /\bok\b/)
  await page.context().close()
})

test('downloads a multi-chunk file as a Blob, after it all verified', async () => {
  const page = await newPage(browser)
  await page.goto(`${url}#${K()}/data.bin`)
  assert.equal(await settled(page, `#${K()}/data.bin`), 'ok', pageLogs(page))
  assert.match(await page.textContent('#preview'), /Too large to preview/)
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#download')])
  assert.equal(download.suggestedFilename(), 'data.bin')
  const got = await fs.readFile(await download.path())
  assert.ok(got.equals(files['data.bin']), 'downloaded bytes differ')
  await page.waitForFunction(() => document.body.dataset.download === 'done')
  assert.equal(await page.$eval('#progress', p => p.value), files['data.bin'].length)
  await page.context().close()
})

test('streams a download to disk through the File System Access API', async () => {
  const page = await newPage(browser, { streamToDisk: true })
  // stand in for the save dialog, which headless Chromium cannot answer
  await page.context().addInitScript(() => {
    window.__saved = { name: null, chunks: [], closed: false, aborted: false }
    window.showSaveFilePicker = async ({ suggestedName }) => {
      window.__saved.name = suggestedName
      return {
        async createWritable () {
          return {
            async write (b) { window.__saved.chunks.push(new Uint8Array(b)) },
            async close () { window.__saved.closed = true },
            async abort () { window.__saved.aborted = true }
          }
        }
      }
    }
  })
  await page.goto(`${url}#${K()}/data.bin`)
  assert.equal(await settled(page, `#${K()}/data.bin`), 'ok', pageLogs(page))
  await page.click('#download')
  await page.waitForFunction(() => document.body.dataset.download === 'done', null, { timeout: 20_000 })
  const saved = await page.evaluate(async () => {
    const s = window.__saved
    const all = new Blob(s.chunks)
    const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', await all.arrayBuffer()))
    return { name: s.name, writes: s.chunks.length, size: all.size, closed: s.closed, aborted: s.aborted, sha: [...digest].map(b => b.toString(16).padStart(2, '0')).join('') }
  })
  assert.equal(saved.name, 'data.bin')
  assert.ok(saved.writes > 1, 'written chunk by chunk')
  assert.equal(saved.size, files['data.bin'].length)
  assert.equal(saved.sha, createHash('sha256').update(files['data.bin']).digest('hex'))
  assert.deepEqual([saved.closed, saved.aborted], [true, false])
  assert.match(await page.textContent('#progress-text'), /streamed to disk/)
  await page.context().close()
})

test('a lying second mirror is reported, the honest origin serves', async () => {
  // the liar signs nothing: its fsinfo.json is the real one with a changed
  // root. In format version 2 the root is in the release, which fsinfo.json's
  // signed message names by hash: no signature counts any longer, and a role's
  // threshold is not met (FORMAT.md §12.3, §12.4, docs/TRUST.md rule 11); in
  // version 1 the one signature fails (rule 1).
  const info = JSON.parse(await fs.readFile(path.join(out, 'fsinfo.json'), 'utf8'))
  const [forgedInfo, refused] = info.version === 2
    ? [{ ...info, release: { ...info.release, root: { ...info.release.root, hash: 'f'.repeat(64) } } }, /ROTREE_THRESHOLD/]
    : [{ ...info, root: 'f'.repeat(64) }, /ROTREE_BAD_SIGNATURE/]
  const forged = Buffer.from(JSON.stringify(forgedInfo))
  liar = allowCors(await startLyingServer(out, { fsinfo: () => ({ body: forged }), blob: () => ({ status: 500 }) }))
  const page = await newPage(browser)
  const hash = `#${K()}/README.md`
  await page.goto(`${url}?mirror=${encodeURIComponent(liar.url)}${hash}`)
  assert.equal(await settled(page, hash), 'ok', pageLogs(page))
  assert.equal(await page.textContent('#preview-text'), files['README.md'].toString())
  const mirrors = await page.locator('#v-mirrors li').allTextContents()
  assert.equal(mirrors.length, 2)
  assert.match(mirrors.find(m => m.includes(liar.url)), refused)
  assert.doesNotMatch(mirrors.find(m => m.includes(url)), /ROTREE_/)
  assert.equal(await page.textContent('#v-mirror'), url)
  await page.context().close()
})

test('the same data read by the Node client agrees with what the page showed', async () => {
  const tree = await openTree(`${url}#${K()}`, { stateDir: null })
  try {
    assert.deepEqual(await tree.readdir('/'), ['README.md', 'data.bin', 'img', 'link', 'notes'])
  } finally { tree.close() }
})

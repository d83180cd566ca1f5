// "Download folder (.zip)" in the web app, in Chromium: the archive a folder
// becomes (web/zipdir.js, web/zip.js), unzipped by Debian's unzip, equals the
// source folder byte for byte (files, an empty folder, an executable, a
// UTF-8 name, a multi-chunk file, a symlink inside it; a symlink that leads
// out of the folder is left out and said so). Blob path and streamed-to-disk
// path write the same bytes; a chunk changed by the mirror mid-archive
// aborts the stream, and no archive is left.
// Screenshots: $ROTREE_SCREENSHOTS, else <tmp>/rotree-screenshots/.
import { needing } from '../helpers/tools.js'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { openTree } from 'rotree-client'
import { tmpdir, writeTree, buildTree, makeKey, prng, serve } from '../helpers/fixtures.js'
import { startLyingServer } from '../helpers/lying-server.js'
import { ensureBundle, launchChromium, newPage, serveWithWeb, settled, startFront, pageLogs, fileChunks } from './helpers.js'

const { test, before, after } = needing('chromium', 'unzip')

const SHOTS = process.env.ROTREE_SCREENSHOTS ?? path.join(os.tmpdir(), 'rotree-screenshots')
const key = makeKey()
const FILES = {
  'project/README.md': 'the project\n',
  'project/data/big.bin': prng(3 << 20, 'zip data'), // several chunks
  'project/data/ünïcödé name.txt': 'utf-8\n',
  'project/data/empty.txt': '',
  'project/bin/run.sh': { data: '#!/bin/sh\necho hi\n', mode: 0o755 },
  'project/nothing-here': { dir: true },
  'project/docs/latest': { symlink: '../README.md' }, // inside the folder: kept
  'project/outside': { symlink: '../elsewhere.txt' }, // out of it: left out
  'elsewhere.txt': 'not in the folder\n'
}
let src, out, app, browser

before(async () => {
  await ensureBundle()
  await fs.mkdir(SHOTS, { recursive: true })
  src = await tmpdir()
  await writeTree(src, FILES)
  ;({ out } = await buildTree(src, { key }))
  app = await serveWithWeb(out)
  browser = await launchChromium()
})

after(async () => {
  await browser?.close()
  await app?.close()
})

const K = () => key.publicKey

function run (cmd, args) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', env: { ...process.env, LC_ALL: 'C.UTF-8' } })
  assert.equal(r.status, 0, `${cmd} ${args.join(' ')}:\n${r.stdout}\n${r.stderr}`)
  return r.stdout
}

/** Every path under `dir` with what it is: a file's bytes' hash and whether it runs, a link's target. */
async function describe (dir) {
  const out = {}
  const walk = async rel => {
    for (const e of await fs.readdir(path.join(dir, rel), { withFileTypes: true })) {
      const r = rel ? `${rel}/${e.name}` : e.name
      const p = path.join(dir, r)
      if (e.isSymbolicLink()) out[r] = `-> ${await fs.readlink(p)}`
      else if (e.isDirectory()) { out[r + '/'] = 'dir'; await walk(r) } else {
        const st = await fs.stat(p)
        out[r] = `${createHash('sha256').update(await fs.readFile(p)).digest('hex')} ${st.mode & 0o100 ? 'x' : '-'}`
      }
    }
  }
  await walk('')
  return out
}

test('a folder downloads as a zip that unzips to the source, byte for byte', async () => {
  const page = await newPage(browser)
  await page.setViewportSize({ width: 1280, height: 800 })
  try {
    await page.goto(`${app.url}#${K()}/project`)
    assert.equal(await settled(page, `#${K()}/project`), 'ok', pageLogs(page))
    const [download] = await Promise.all([page.waitForEvent('download', { timeout: 30_000 }), page.click('#download-folder')])
    assert.equal(download.suggestedFilename(), 'project.zip')
    await page.waitForFunction(() => document.body.dataset.zip === 'done', null, { timeout: 30_000 })
    const dir = await tmpdir()
    const zip = path.join(dir, 'project.zip')
    await download.saveAs(zip)
    run('unzip', ['-q', zip, '-d', path.join(dir, 'x')])
    const want = await describe(path.join(src, 'project'))
    delete want.outside // leaves the folder: left out
    assert.deepEqual(await describe(path.join(dir, 'x', 'project')), want)
    assert.match(await page.textContent('#zip-text'), /✓ project\.zip: 5 files, 3\.0 MiB verified and saved\. Left out: \/project\/outside \(its target \.\.\/elsewhere\.txt leads out of the folder\)\./)
    await page.screenshot({ path: path.join(SHOTS, 'zip-1280-done.png') })
    await page.setViewportSize({ width: 390, height: 844 })
    await page.screenshot({ path: path.join(SHOTS, 'zip-390-done.png') })

    // streamed to disk (the File System Access API): the same bytes
    const streamed = await newPage(browser, { streamToDisk: true })
    try {
      await fakeSaveDialog(streamed)
      await streamed.goto(`${app.url}#${K()}/project`)
      assert.equal(await settled(streamed, `#${K()}/project`), 'ok', pageLogs(streamed))
      await streamed.click('#download-folder')
      await streamed.waitForFunction(() => document.body.dataset.zip === 'done', null, { timeout: 30_000 })
      const saved = await savedBytes(streamed)
      assert.equal(saved.name, 'project.zip')
      assert.deepEqual([saved.closed, saved.aborted], [true, false])
      assert.ok(saved.writes > 1, 'written piece by piece')
      assert.equal(saved.sha, createHash('sha256').update(await fs.readFile(zip)).digest('hex'))
    } finally { await streamed.context().close() }
  } finally { await page.context().close() }
})

/** Stand in for the save dialog, which headless Chromium cannot answer. */
function fakeSaveDialog (page) {
  return page.context().addInitScript(() => {
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
}

function savedBytes (page) {
  return page.evaluate(async () => {
    const s = window.__saved
    const all = new Blob(s.chunks)
    const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', await all.arrayBuffer()))
    return { name: s.name, writes: s.chunks.length, size: all.size, closed: s.closed, aborted: s.aborted, sha: [...digest].map(b => b.toString(16).padStart(2, '0')).join('') }
  })
}

test('a chunk changed by the mirror mid-archive: the stream is aborted, the error shown, no archive left', async () => {
  const honest = await serve(out)
  const tree = await openTree(`${honest.url}#${K()}`, { stateDir: null })
  const chunk = (await fileChunks(tree, '/project/data/big.bin'))[2].hash
  tree.close(); await honest.close()
  const liar = await startLyingServer(out, { blob: (h, bytes) => h === chunk ? { body: Buffer.concat([bytes.subarray(0, -1), Buffer.from([bytes.at(-1) ^ 1])]) } : 'honest' })
  const front = await startFront(liar.url)
  const page = await newPage(browser, { streamToDisk: true })
  try {
    await fakeSaveDialog(page)
    await page.goto(`${front.url}#${K()}/project`)
    assert.equal(await settled(page, `#${K()}/project`), 'ok', pageLogs(page))
    await page.click('#download-folder')
    await page.waitForFunction(() => document.body.dataset.zip === 'failed', null, { timeout: 30_000 })
    const saved = await savedBytes(page)
    assert.deepEqual([saved.closed, saved.aborted], [false, true], 'the browser discards what it wrote')
    assert.match(await page.textContent('#error-title'), /ROTREE_HASH_MISMATCH/)
  } finally {
    await page.context().close()
    await front.close()
    await liar.close()
  }
})

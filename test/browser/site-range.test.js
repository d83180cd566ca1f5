// Range requests through the verifying Service Worker (web/sw.js): a 4 MB
// media file read with Range gets a 206 of the right bytes, built from only
// the chunks that cover the range (counted on the mirror); the response
// starts before the rest of the range has verified (a video starts at once);
// an <audio> element plays and seeks through it; a malformed Range is
// answered as `rotree serve` answers it (the same parseRange: ignored → 200,
// unsatisfiable → 416).
import { needing } from '../helpers/tools.js'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { createHash } from 'node:crypto'
import { chunkLengths } from 'rotree-client/format'
import { openTree } from 'rotree-client'
import { tmpdir, writeTree, buildTree, makeKey, prng, serve } from '../helpers/fixtures.js'
import { startLyingServer } from '../helpers/lying-server.js'
import { ensureBundle, launchChromium, newPage, serveWithWeb, pageLogs, fileChunks } from './helpers.js'

const { test, before, after } = needing('chromium')

const RATE = 44100
/** A WAV file: 16-bit mono PCM of `bytes` noise (noise, so no two chunks are alike). */
function wav (bytes) {
  const data = prng(bytes, 'media').map(b => b >> 3) // quiet
  const h = Buffer.alloc(44)
  h.write('RIFF', 0); h.writeUInt32LE(36 + data.length, 4); h.write('WAVE', 8)
  h.write('fmt ', 12); h.writeUInt32LE(16, 16); h.writeUInt16LE(1, 20); h.writeUInt16LE(1, 22)
  h.writeUInt32LE(RATE, 24); h.writeUInt32LE(RATE * 2, 28); h.writeUInt16LE(2, 32); h.writeUInt16LE(16, 34)
  h.write('data', 36); h.writeUInt32LE(data.length, 40)
  return Buffer.concat([h, data])
}

const key = makeKey()
const MEDIA = wav(4 << 20)
const MEDIA_PATH = 'media/noise.wav'
let browser, mirror, app, chunks

before(async () => {
  await ensureBundle()
  const src = await tmpdir()
  await writeTree(src, {
    'index.html': '<!doctype html><meta charset="utf-8"><title>media</title><h1 id="h">media</h1>',
    [MEDIA_PATH]: MEDIA
  })
  const { out } = await buildTree(src, { key })
  // the file's chunks as the builder cut them: { hash, start, end } (end
  // exclusive), hash naming the stored blob (in format version 2 a deflated
  // chunk's name is the SHA-256 of its stored bytes: FORMAT.md §12.6)
  const honest = await serve(out)
  const tree = await openTree(`${honest.url}#${key.publicKey}`, { stateDir: null })
  let version
  try {
    version = tree.info.version ?? 1
    chunks = await fileChunks(tree, '/' + MEDIA_PATH)
    for (const c of chunks) assert.ok(Buffer.from(await tree.readChunk(c)).equals(MEDIA.subarray(c.start, c.end)), `chunk ${c.start}-${c.end} holds the file's bytes`)
  } finally { tree.close(); await honest.close() }
  // version 2 starts a file of 1 MiB or more with a 12 KiB lead chunk (FORMAT.md §5.1)
  assert.deepEqual(chunks.map(c => c.size), chunkLengths(MEDIA, { version }), 'the same cut as FastCDC\'s (FORMAT.md §5)')
  for (const c of chunks) await fs.access(path.join(out, 'h', c.hash))
  assert.ok(chunks.length >= 6, `only ${chunks.length} chunks`)
  mirror = await startLyingServer(out, { cors: true }) // honest, and counts what it is asked for
  app = await serveWithWeb(await tmpdir())
  browser = await launchChromium()
})

after(async () => {
  await browser?.close()
  await mirror?.close()
  await app?.close()
})

const siteFrame = page => page.frames().find(f => f.url().includes(`/site/${key.publicKey}/`))

async function openSite (page) {
  await page.goto(`http://rotree.localhost:${app.port}/site.html?key=${key.publicKey}&mirror=${encodeURIComponent(mirror.url)}`)
  await page.waitForFunction(() => document.body.dataset.loaded, null, { timeout: 20_000 })
    .catch(async err => { throw new Error(`${err.message}: ${await page.textContent('body')}${pageLogs(page)}`) })
  return siteFrame(page)
}

/** fetch() in the site's frame, through its Service Worker: status, headers and the body's SHA-256. */
function get (frame, range, { method = 'GET' } = {}) {
  return frame.evaluate(async ([p, range, method]) => {
    const r = await fetch(p, { method, headers: range === null ? {} : { range } })
    const body = new Uint8Array(await r.arrayBuffer())
    const sha = [...new Uint8Array(await crypto.subtle.digest('SHA-256', body))].map(b => b.toString(16).padStart(2, '0')).join('')
    return { status: r.status, range: r.headers.get('content-range'), length: r.headers.get('content-length'), size: body.length, sha, root: r.headers.get('x-rotree-root') }
  }, [MEDIA_PATH, range, method])
}

const sha = b => createHash('sha256').update(b).digest('hex')
/** Data chunks of the media file the mirror was asked for since request number `from`. */
const chunksAsked = from => new Set(mirror.requests.slice(from).map(u => u.slice(3)).filter(h => chunks.some(c => c.hash === h)))
const covering = (start, end) => new Set(chunks.filter(c => c.end > start && c.start <= end).map(c => c.hash))

test('a Range request gets the right bytes, from only the chunks that cover it', async () => {
  const page = await newPage(browser)
  try {
    const frame = await openSite(page)
    assert.ok(frame, pageLogs(page))
    // a range across a chunk boundary in the middle of the file
    const mid = chunks[Math.floor(chunks.length / 2)]
    const [start, end] = [mid.start - 1000, mid.start + 5000]
    let before = mirror.requests.length
    let r = await get(frame, `bytes=${start}-${end}`)
    assert.equal(r.status, 206, pageLogs(page))
    assert.equal(r.range, `bytes ${start}-${end}/${MEDIA.length}`)
    assert.equal(r.size, end - start + 1)
    assert.equal(r.sha, sha(MEDIA.subarray(start, end + 1)))
    assert.deepEqual(chunksAsked(before), covering(start, end), 'the mirror served the chunks covering the range, and no other')
    assert.equal(covering(start, end).size, 2)

    // the last 1000 bytes: only the last chunk
    before = mirror.requests.length
    r = await get(frame, 'bytes=-1000')
    assert.equal(r.status, 206)
    assert.equal(r.sha, sha(MEDIA.subarray(MEDIA.length - 1000)))
    assert.deepEqual(chunksAsked(before), new Set([chunks.at(-1).hash]))
  } finally { await page.context().close() }
})

test('the response starts before the rest of the range has verified', async () => {
  const last = chunks.at(-1).hash
  mirror.set({ blob: hash => hash === last ? 'stall' : 'honest' }) // the end of the file never comes
  const page = await newPage(browser)
  try {
    const frame = await openSite(page)
    const first = await frame.evaluate(async ([p, n]) => {
      const give = new Promise(resolve => setTimeout(() => resolve('nothing yet'), 15_000)) // a failure guard only
      const read = (async () => {
        const r = await fetch(p, { headers: { range: 'bytes=0-' } })
        const reader = r.body.getReader()
        const got = []
        let size = 0
        while (size < n) { const { value, done } = await reader.read(); if (done) break; got.push(...value); size += value.length }
        reader.cancel()
        return { status: r.status, range: r.headers.get('content-range'), head: got.slice(0, n) }
      })()
      return Promise.race([read, give])
    }, [MEDIA_PATH, 4096])
    assert.notEqual(first, 'nothing yet', 'no byte came while the last chunk was held back')
    assert.equal(first.status, 206)
    assert.equal(first.range, `bytes 0-${MEDIA.length - 1}/${MEDIA.length}`)
    assert.deepEqual(first.head, [...MEDIA.subarray(0, 4096)])
  } finally {
    await page.context().close()
    mirror.set({ blob: undefined })
  }
})

test('an <audio> element plays the file through the Service Worker, and seeks', async () => {
  const page = await newPage(browser)
  try {
    const frame = await openSite(page)
    const seen = await frame.evaluate(async p => {
      const a = document.createElement('audio')
      a.preload = 'auto'
      document.body.append(a)
      const once = (ev) => new Promise((resolve, reject) => {
        a.addEventListener(ev, resolve, { once: true })
        a.addEventListener('error', () => reject(new Error(`media error ${a.error?.code}: ${a.error?.message}`)), { once: true })
      })
      const meta = once('loadedmetadata')
      a.src = p
      await meta
      const seeked = once('seeked')
      a.currentTime = a.duration - 2
      await seeked
      return { duration: a.duration, seekable: a.seekable.length ? a.seekable.end(0) : 0, at: a.currentTime }
    }, MEDIA_PATH)
    const duration = (MEDIA.length - 44) / (RATE * 2)
    assert.ok(Math.abs(seen.duration - duration) < 0.01, `duration ${seen.duration}, not ${duration}`)
    assert.ok(Math.abs(seen.seekable - duration) < 0.01, `seekable to ${seen.seekable} only`)
    assert.ok(Math.abs(seen.at - (duration - 2)) < 0.1, `at ${seen.at}`)
  } finally { await page.context().close() }
})

test('a malformed Range is ignored (200), an unsatisfiable one is a 416: as rotree serve answers', async () => {
  const page = await newPage(browser)
  try {
    const frame = await openSite(page)
    const whole = sha(MEDIA)
    for (const h of ['bytes=5-3', 'bytes=0-1,5-9', 'items=0-1', 'bytes=a-b']) {
      const r = await get(frame, h)
      assert.deepEqual([r.status, r.size, r.sha, r.range], [200, MEDIA.length, whole, null], h)
    }
    for (const h of [`bytes=${MEDIA.length}-`, 'bytes=-0', 'bytes=99999999999999999999999999-']) {
      const r = await get(frame, h)
      assert.deepEqual([r.status, r.range, r.size], [416, `bytes */${MEDIA.length}`, 0], h)
    }
    const r = await get(frame, 'BYTES=1-2')
    assert.deepEqual([r.status, r.range, r.size], [206, `bytes 1-2/${MEDIA.length}`, 2])
    const head = await get(frame, 'bytes=10-19', { method: 'HEAD' })
    assert.deepEqual([head.status, head.range, head.length, head.size], [206, `bytes 10-19/${MEDIA.length}`, '10', 0])
  } finally { await page.context().close() }
})

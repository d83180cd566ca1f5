// The status a verified site answers when it cannot serve a path is the one
// the gateway gives (statusOf, docs/ERRORS.md): web/sw.js maps no error
// itself. Each case is a format-2 tree (test/client/v2-publisher.js) on
// mirrors that send CORS headers, read by sw.js registered on this origin for
// the tree's key, with a short per-request timeout (sw.js?timeout=).
import { needing } from '../helpers/tools.js'
import assert from 'node:assert/strict'
import { statusOf } from 'rotree-client/errors'
import { startLyingServer } from '../helpers/lying-server.js'
import { Publisher, role, RETIRED } from '../client/v2-publisher.js'
import { ensureBundle, launchChromium, newPage, serveWithWeb, pageLogs } from './helpers.js'
import { tmpdir } from '../helpers/fixtures.js'

const { test, before, after } = needing('chromium')

const HOUR = 3600e3
const TIMEOUT_MS = 1000
const STALL = { fsinfo: () => 'stall', trust: () => 'stall', blob: () => 'stall' }

let browser, app
const cleanups = []

before(async () => {
  await ensureBundle()
  app = await serveWithWeb(await tmpdir()) // 127.0.0.1: a shared origin (docs/WEB.md "One origin per site")
  browser = await launchChromium()
})

after(async () => {
  await browser?.close()
  await app?.close()
  for (const c of cleanups.reverse()) await c()
})

async function publisher () { const p = await Publisher.create({ anchor: 'key' }); cleanups.push(() => p.close()); return p }
async function mirror (dir, lies = {}) { const m = await startLyingServer(dir, { cors: true, ...lies }); cleanups.push(() => m.close()); return m }

/**
 * Register sw.js for `key` reading `mirrors`, as web/register.js does (plus
 * &timeout=), then load each of `paths` of the site as a page: its status,
 * its X-Rotree-Error and the code on the error page the worker wrote.
 */
async function answers (key, mirrors, paths) {
  const page = await newPage(browser)
  try {
    await page.goto(`${app.url}no-such-page`) // a page of this origin outside the site's scope
    await page.evaluate(async ({ key, mirrors, timeout }) => {
      const sw = new URL('/sw.js', location.href)
      sw.searchParams.set('key', key)
      for (const m of mirrors) sw.searchParams.append('mirror', m)
      sw.searchParams.set('timeout', String(timeout))
      const reg = await navigator.serviceWorker.register(sw.href, { type: 'module', scope: `/site/${key}/`, updateViaCache: 'none' })
      const w = reg.installing ?? reg.waiting ?? reg.active
      if (w.state !== 'activated') {
        await new Promise((resolve, reject) => w.addEventListener('statechange', () => {
          if (w.state === 'activated') resolve()
          if (w.state === 'redundant') reject(new Error('sw.js did not install'))
        }))
      }
    }, { key, mirrors: mirrors.map(m => m.url), timeout: TIMEOUT_MS })
    const out = {}
    for (const p of paths) {
            const r = await page.goto(`${app.url}site/${key}/${p}`)
      assert.ok(r.fromServiceWorker(), `${p} was answered by sw.js${pageLogs(page)}`)
      out[p] = {
        status: r.status(),
        error: await r.headerValue('x-rotree-error'),
        page: await page.evaluate(() => document.getElementById('rotree-error')?.dataset.code ?? null),
        title: await page.evaluate(() => document.querySelector('#rotree-error h1')?.textContent ?? null)
      }
    }
    return out
  } finally { await page.context().close() }
}

test('every mirror stalled: 504, as the gateway answers', async () => {
  const p = await publisher()
  await p.publish({ 'index.html': '<!doctype html><title>home</title>' })
  const a = await mirror(p.out, STALL)
  const b = await mirror(p.out, STALL)
  const got = await answers(p.k.K.publicKey, [a, b], ['index.html'])
  assert.deepEqual(got['index.html'], { status: 504, error: 'ROTREE_TIMEOUT', page: 'ROTREE_TIMEOUT', title: '✗ Blocked: Mirror timed out' })
  assert.ok(a.requests.length > 0 && b.requests.length > 0, 'both mirrors were asked')
})

test('a path through a symlink loop: 508; through a file: a proven absence, 404', async () => {
  const p = await publisher()
  await p.publish({
    'index.html': '<!doctype html><title>home</title>',
    'loop-a': { symlink: 'loop-b' },
    'loop-b': { symlink: 'loop-a' }
  })
  const m = await mirror(p.out)
  const got = await answers(p.k.K.publicKey, [m], ['index.html', 'loop-a', 'loop-a/page.html', 'index.html/x'])
  assert.deepEqual(got['index.html'], { status: 200, error: null, page: null, title: null })
  assert.deepEqual(got['loop-a'], { status: 508, error: 'ROTREE_SYMLINK_LOOP', page: 'ROTREE_SYMLINK_LOOP', title: '✗ Blocked: Symlink loop' })
  assert.deepEqual(got['loop-a/page.html'], { status: 508, error: 'ROTREE_SYMLINK_LOOP', page: 'ROTREE_SYMLINK_LOOP', title: '✗ Blocked: Symlink loop' })
  // a proven absence is no attack: not "Blocked"
  assert.deepEqual(got['index.html/x'], { status: 404, error: 'ROTREE_NOT_A_DIRECTORY', page: 'ROTREE_NOT_A_DIRECTORY', title: 'Not a directory' })
})

test('a retired tree (a trust document with no release keys): 410', async () => {
  const p = await publisher()
  await p.publish({ 'index.html': '<!doctype html><title>home</title>' })
  const k = p.k
  await p.rotate({ root: role([k.A, k.B], 2), release: RETIRED, timestamp: role([k.T1]) })
  await p.publish({ 'index.html': 'gone' }, { release: { seq: 2, expires: Date.now() + HOUR }, relSigners: [] })
  const m = await mirror(p.out)
  const got = await answers(k.K.publicKey, [m], ['index.html'])
  assert.deepEqual(got['index.html'], { status: 410, error: 'ROTREE_RETIRED', page: 'ROTREE_RETIRED', title: '✗ Blocked: Retired tree' })
})

test('the statuses above are statusOf\'s', () => {
  assert.equal(statusOf({ code: 'ROTREE_ALL_MIRRORS_FAILED', errors: [{ code: 'ROTREE_TIMEOUT' }, { code: 'ROTREE_TIMEOUT' }] }), 504)
  assert.equal(statusOf({ code: 'ROTREE_SYMLINK_LOOP' }), 508)
  assert.equal(statusOf({ code: 'ROTREE_NOT_A_DIRECTORY' }), 404)
  assert.equal(statusOf({ code: 'ROTREE_RETIRED' }), 410)
})

// A gated tree (FORMAT.md §12.10–12.12) in the web app and its Service
// Worker, in Chromium (docs/WEB.md "Gated trees in the browser"). The mirror
// is `rotree serve OUT --grants SECRET --token-ttl 2s` (in process, on an
// origin of its own: the token exchange is a cross-origin POST, preflighted),
// every POST to /.rotree/token counted at the server. Without a grant the app
// asks for one and blames no mirror; another tree's grant, an expired one, a
// key that is not the holder's and a sealed key file each get their line; the
// right grant and key read the tree, every byte shown or downloaded equal to
// the source, and reads spread over several token lifetimes renew the token
// (one exchange per lifetime, not one per blob). A verified site of a gated
// tree: the bar asks, the grant and key picked in the window of its own go
// to sw.js, which reads the site and renews its tokens by itself.
import { needing } from '../helpers/tools.js'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { tmpdir, writeTree, makeKey, prng } from '../helpers/fixtures.js'
import { build } from '../../builder/build.js'
import { writeKeyFile } from '../../builder/keys.js'
import { unsignedGrant, signGrant, encodeGrant } from 'rotree-client/grant'
import { createRotreeServer } from '../../server/index.js'
import { ensureBundle, launchChromium, newPage, serveWithWeb, settled, pageLogs } from './helpers.js'

const { test, before, after } = needing('chromium')

const TTL_S = 2 // a short token lifetime: `rotree serve --token-ttl 2s`
const DAY = 86400e3
const SECRET = 'c'.repeat(64)
const key = makeKey()
const pad = (line, n) => Array.from({ length: n }, (_, i) => `${line} ${i}`).join('\n') + '\n' // past the 16 KiB inline size: blobs of their own
const page = (title, body) => `<!doctype html><meta charset="utf-8"><title>${title}</title><h1 id="h">${body}</h1>
<p><a id="next" href="page-1.html">one</a> <a href="page-2.html">two</a> <a href="page-3.html">three</a></p>
<!--\n${pad(title + ' padding line', 1500)}-->\n`
const files = {
  'README.md': Buffer.from(pad('gated line', 1500)),
  'notes/a.txt': Buffer.from(pad('note a', 1500)),
  'notes/b.txt': Buffer.from(pad('note b', 1500)),
  'notes/c.txt': Buffer.from(pad('note c', 1500)),
  'data.bin': prng(3 << 20, 'gated data'), // several chunks
  'index.html': Buffer.from(page('Gated home', 'Gated welcome')),
  'page-1.html': Buffer.from(page('One', 'Page one')),
  'page-2.html': Buffer.from(page('Two', 'Page two')),
  'page-3.html': Buffer.from(page('Three', 'Page three'))
}
for (let i = 0; i < 30; i++) files[`many/f${String(i).padStart(2, '0')}.txt`] = Buffer.from(pad(`many ${i}`, 1800)) // a blob each
let dir, app, mirror, browser, hits
const grants = {}

const iso = ms => new Date(ms).toISOString()
function grantText ({ anchor = key.publicKey, holder, issued = Date.now() - 60e3, expires = Date.now() + 30 * DAY }) {
  return encodeGrant(signGrant(unsignedGrant({ anchor, holder, issued: iso(issued), expires: iso(expires) }), [key.secretKey]))
}

before(async () => {
  await ensureBundle()
  dir = await tmpdir('rotree-gated-web-')
  const src = path.join(dir, 'src')
  await writeTree(src, files)
  const out = path.join(dir, 'out')
  await build({ src, out, key, ttlMs: 3600e3, fsync: false })
  const holder = await writeKeyFile(path.join(dir, 'holder.key'))
  const other = await writeKeyFile(path.join(dir, 'other.key'))
  await writeKeyFile(path.join(dir, 'sealed.key'), { passphrase: 'a passphrase' })
  grants.key = await fs.readFile(path.join(dir, 'holder.key'))
  grants.otherKey = await fs.readFile(path.join(dir, 'other.key'))
  grants.sealedKey = await fs.readFile(path.join(dir, 'sealed.key'))
  grants.good = grantText({ holder: holder.publicKey })
  grants.otherTree = grantText({ anchor: makeKey().publicKey, holder: holder.publicKey })
  grants.expired = grantText({ holder: holder.publicKey, issued: Date.now() - 3 * DAY, expires: Date.now() - DAY })
  grants.forOther = grantText({ holder: other.publicKey })
  grants.holder = holder.publicKey

  // the gated mirror, as `rotree serve OUT --grants SECRET --token-ttl 2s` runs it; every request counted
  const srv = await createRotreeServer({ dir: out, gate: { secret: SECRET, ttlS: TTL_S } })
  hits = { tokens: 0, refusals: 0, preflights: 0, blobs: 0 }
  srv.server.prependListener('request', (req, res) => {
    if (req.url === '/.rotree/token' && req.method === 'OPTIONS') hits.preflights++
    if (req.url === '/.rotree/token' && req.method === 'POST') res.on('finish', () => { if (res.statusCode === 200) hits.tokens++; else hits.refusals++ })
    if (req.url.startsWith('/h/') && req.method === 'GET') res.on('finish', () => { if (res.statusCode === 200) hits.blobs++ })
  })
  const { url } = await srv.listen({ port: 0, host: '127.0.0.1' })
  mirror = { url, close: () => srv.close({ timeoutMs: 1000 }) }
  app = await serveWithWeb(await tmpdir(), { host: '127.0.0.1' }) // the app on another origin than the mirror
  browser = await launchChromium()
})

after(async () => {
  await browser?.close()
  await mirror?.close()
  await app?.close()
  if (dir) await fs.rm(dir, { recursive: true, force: true })
})

const K = () => key.publicKey
const appUrl = p => `${app.url}?self=0&mirror=${encodeURIComponent(mirror.url)}#${K()}${p}`
const sleep = ms => new Promise(resolve => setTimeout(resolve, ms))
async function pickGrant (page, grant, keyFile, names = ['grant.json', 'holder.key']) {
  await page.setInputFiles('#grant-file', { name: names[0], mimeType: 'application/json', buffer: Buffer.from(grant) })
  await page.setInputFiles('#grant-key-file', { name: names[1], mimeType: 'application/json', buffer: Buffer.from(keyFile) })
}
const problemIs = (page, re) => page.waitForFunction(re => new RegExp(re).test(document.getElementById('gated-problem').textContent), re.source, { timeout: 20_000 })

test('rotree serve answers the preflight of a cross-origin token request', async () => {
  const res = await fetch(`${mirror.url}.rotree/token`, { method: 'OPTIONS', headers: { origin: 'http://elsewhere.test', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' } })
  assert.equal(res.status, 204)
  assert.equal(res.headers.get('access-control-allow-origin'), '*')
  assert.match(res.headers.get('access-control-allow-methods'), /\bPOST\b/)
  assert.match(res.headers.get('access-control-allow-headers'), /content-type/i)
})

test('the app: without a grant it asks for one; wrong files get their lines; the grant and key read the tree, renewing the token once per lifetime', async () => {
  const page = await newPage(browser)
  try {
    await page.goto(appUrl(''))
    assert.equal(await settled(page, `#${K()}`), 'gated', pageLogs(page))
    assert.equal(await page.isVisible('#gated'), true)
    assert.equal(await page.isVisible('#error'), false, 'no mirror is blamed')
    assert.doesNotMatch(await page.textContent('body'), /Every mirror failed/)
    assert.match(await page.textContent('#gated-text'), /This tree is gated/)
    assert.match(await page.textContent('#status'), /Gated tree/)
    assert.equal(await page.locator('#listing tr').count(), 0)

    // checked in the page, before any mirror is asked: each its own line
    await pickGrant(page, grants.otherTree, grants.key, ['other-tree.json', 'holder.key'])
    await problemIs(page, /other-tree\.json is a grant for another tree/)
    await pickGrant(page, grants.expired, grants.key, ['old.json', 'holder.key'])
    await problemIs(page, /old\.json expired at/)
    await pickGrant(page, grants.forOther, grants.key, ['theirs.json', 'holder.key'])
    await problemIs(page, /holder\.key is not the key theirs\.json was given to/)
    // (the key first: the good grant with the key picked before would read the tree)
    await page.setInputFiles('#grant-key-file', { name: 'sealed.key', mimeType: 'application/json', buffer: grants.sealedKey })
    await page.setInputFiles('#grant-file', { name: 'grant.json', mimeType: 'application/json', buffer: Buffer.from(grants.good) })
    await problemIs(page, /sealed\.key is sealed with a passphrase, which this browser cannot open/)
    assert.equal(await page.evaluate(() => document.body.dataset.state), 'gated')
    assert.equal(await page.isVisible('#error'), false)
    assert.equal(hits.tokens, 0, 'no refused file reached the exchange')

    // the grant and its holder's key: replacing the sealed key is enough
    const before = { ...hits }
    await page.setInputFiles('#grant-key-file', { name: 'holder.key', mimeType: 'application/json', buffer: grants.key })
    await page.waitForFunction(() => document.body.dataset.state === 'ok', null, { timeout: 20_000 })
    assert.deepEqual(await page.locator('#listing a.entry').allTextContents(),
      ['README.md', 'data.bin', 'index.html', 'many/', 'notes/', 'page-1.html', 'page-2.html', 'page-3.html'], pageLogs(page))
    assert.equal(await page.isVisible('#grant'), true)
    assert.equal(await page.getAttribute('#grant-holder code', 'title'), grants.holder)
    assert.ok((await page.textContent('#grant-expires')).length > 0)
    assert.ok(hits.tokens > before.tokens && hits.preflights > before.preflights, 'a token, by a preflighted cross-origin POST')

    await page.evaluate(k => { location.hash = `#${k}/README.md` }, K())
    assert.equal(await settled(page, `#${K()}/README.md`), 'ok', pageLogs(page))
    assert.equal(await page.textContent('#preview-text'), files['README.md'].toString())
    await page.evaluate(k => { location.hash = `#${k}/data.bin` }, K())
    assert.equal(await settled(page, `#${K()}/data.bin`), 'ok', pageLogs(page))
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#download')])
    assert.ok((await fs.readFile(await download.path())).equals(files['data.bin']), 'downloaded bytes differ from the source')

    // a folder of 30 blobs, fetched at once: they wait for one exchange, not one each
    await page.evaluate(k => { location.hash = `#${k}/many` }, K())
    assert.equal(await settled(page, `#${K()}/many`), 'ok', pageLogs(page))
    await sleep((TTL_S + 1.5) * 1000) // the token held has expired
    const zipStart = { ...hits }
    const [zip] = await Promise.all([page.waitForEvent('download', { timeout: 30_000 }), page.click('#download-folder')])
    await page.waitForFunction(() => document.body.dataset.zip === 'done', null, { timeout: 30_000 })
    assert.ok((await fs.stat(await zip.path())).size > 30 * 18_000)
    const zipTokens = hits.tokens - zipStart.tokens
    const zipBlobs = hits.blobs - zipStart.blobs
    assert.ok(zipBlobs >= 30 && zipTokens >= 1 && zipTokens * 5 <= zipBlobs, `one exchange for many blobs: ${zipTokens} for ${zipBlobs}`)

    // reads spread over several token lifetimes: each after the token held has expired
    const start = { ...hits }
    for (const f of ['a', 'b', 'c']) {
      await sleep((TTL_S + 1.5) * 1000)
      await page.evaluate(([k, f]) => { location.hash = `#${k}/notes/${f}.txt` }, [K(), f])
      assert.equal(await settled(page, `#${K()}/notes/${f}.txt`), 'ok', pageLogs(page))
      assert.equal(await page.textContent('#preview-text'), files[`notes/${f}.txt`].toString())
    }
    const tokens = hits.tokens - start.tokens
    const blobs = hits.blobs - start.blobs
    assert.ok(tokens >= 3, `a new token after each lifetime: ${tokens}`)
    assert.ok(tokens <= 6, `at most one exchange per read and one renewal within it: ${tokens} for ${blobs} blobs`)
    console.log(`# app: ${hits.tokens} token exchanges in all: ${zipTokens} for a folder of ${zipBlobs} blobs, ${tokens} over three reads ${TTL_S + 1.5} s apart (${blobs} blobs); ${hits.blobs} blobs, ${hits.preflights} preflights, ${hits.refusals} refused POSTs in all`)

    // nothing of the key in the page's storage or address
    const kept = await page.evaluate(() => JSON.stringify([Object.entries(localStorage), Object.entries(sessionStorage), document.cookie, location.href]))
    assert.ok(!kept.includes(JSON.parse(grants.key).secretKey), 'the key reached the page\'s storage or address')

    // Forget: the page asks again
    await page.click('#forget-grant')
    await page.waitForFunction(() => document.body.dataset.state === 'gated', null, { timeout: 20_000 })
  } finally { await page.context().close() }
})

const siteFrame = page => page.frames().find(f => f.url().includes(`/site/${K()}/`))

test('a verified site of a gated tree: the bar asks, the grant goes to sw.js, which reads the site and renews its tokens', async () => {
  const page = await newPage(browser)
  try {
    await page.goto(`http://rotree.localhost:${app.port}/site.html?key=${K()}&mirror=${encodeURIComponent(mirror.url)}`)
    await page.waitForSelector('#site-gated', { state: 'visible', timeout: 30_000 })
    assert.equal(await page.isVisible('#blocked'), false, 'a gated site is not an attack')
    let frame = siteFrame(page)
    await frame.waitForSelector('#rotree-error[data-gated="true"]', { timeout: 10_000 })

    const [picker] = await Promise.all([page.context().waitForEvent('page'), page.click('#s-grant')])
    await picker.waitForFunction(() => document.body.dataset.state === 'grant', null, { timeout: 10_000 })
    await picker.setInputFiles('#grant-file', { name: 'other-tree.json', mimeType: 'application/json', buffer: Buffer.from(grants.otherTree) })
    await picker.setInputFiles('#grant-key-file', { name: 'holder.key', mimeType: 'application/json', buffer: grants.key })
    await picker.waitForFunction(() => !document.getElementById('grant-problem').hidden, null, { timeout: 20_000 })
    assert.match(await picker.textContent('#grant-problem'), /other-tree\.json is a grant for another tree/)
    const before = { ...hits }
    const closed = picker.waitForEvent('close', { timeout: 20_000 })
    await picker.setInputFiles('#grant-file', { name: 'grant.json', mimeType: 'application/json', buffer: Buffer.from(grants.good) })
    await closed
    frame = siteFrame(page)
    await frame.waitForSelector('#h:text("Gated welcome")', { timeout: 20_000 })
    await page.waitForFunction(() => document.getElementById('site-gated').hidden && /verified/.test(document.getElementById('site-status').textContent), null, { timeout: 10_000 })

    // pages across several token lifetimes, each fetched by sw.js with the token it renewed
    for (const [n, h] of [[1, 'Page one'], [2, 'Page two'], [3, 'Page three']]) {
      await sleep((TTL_S + 1.5) * 1000)
      await siteFrame(page).click(`a[href="page-${n}.html"]`)
      await page.waitForFunction(n => document.body.dataset.loaded?.endsWith(`/page-${n}.html`), n, { timeout: 20_000 })
      assert.equal(await siteFrame(page).textContent('#h'), h, pageLogs(page))
    }
    const tokens = hits.tokens - before.tokens
    assert.ok(tokens >= 4, `sw.js renewed its token: ${tokens}`)
    assert.ok(tokens <= 9, `about one exchange per lifetime: ${tokens} for ${hits.blobs - before.blobs} blobs`)
    console.log(`# site: ${tokens} token exchanges for ${hits.blobs - before.blobs} blobs over four pages ${TTL_S + 1.5} s apart`)
  } finally { await page.context().close() }
})

// One tree must not subvert another, or the app, on a shared browser origin
// (docs/WEB.md "One origin per site"). The publisher of tree A is hostile:
// its pages run script that tries to rewrite the trusted bar and the address
// bar to claim key B, to poison or delete B's rollback state in IndexedDB, to
// register the verifying Service Worker with key A on B's scope, and to read
// B's pages. Every attempt must fail, and B must still verify with its state
// intact: a stale mirror of B is still refused as a rollback, and B's newest
// tree still verifies. Run for both deployments: per-key origins (the
// supported mode) and a shared origin (every page sandboxed).
import { needing } from '../helpers/tools.js'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import http from 'node:http'
import path from 'node:path'
import { tmpdir, writeTree, buildTree, makeKey, serve } from '../helpers/fixtures.js'
import { createRotreeServer } from '../../server/index.js'
import { keyLabel } from '../../web/origins.js'
import * as roles from 'rotree-client/trust'
import { decodeRoot } from '../../lib/published/signed-roots.js'
import { WEB, ensureBundle, launchChromium, newPage, serveWithWeb, pageLogs } from './helpers.js'

const { test, before, after } = needing('chromium')

const A = makeKey() // hostile
const B = makeKey() // victim
const B_MARKER = 'victim-page-marker'
const SEQ1 = 1_000_000
const SEQ2 = 1_000_005

/** Tree A's pages: each runs its attacks and reports what happened in body[data-attack]. */
function hostileFiles () {
  const prelude = `
const A = ${JSON.stringify(A.publicKey)}, B = ${JSON.stringify(B.publicKey)}
const LA = ${JSON.stringify(keyLabel(A.publicKey))}, LB = ${JSON.stringify(keyLabel(B.publicKey))}
// on A's own origin, B's is the same name with B's label; on a shared origin it is this one
const B_ORIGIN = location.hostname.split('.')[0] === LA ? location.protocol + '//' + LB + location.host.slice(LA.length) : location.origin
const r = {}
async function attempt (name, fn) {
  try { r[name] = 'did: ' + String(await fn()) } catch (e) { r[name] = 'refused: ' + (e && e.name) }
}
const settle = w => new Promise(resolve => {
  if (!w) return resolve('none')
  const done = () => { if (w.state === 'activated' || w.state === 'redundant') resolve(w.state) }
  w.addEventListener('statechange', done); done(); setTimeout(() => resolve('pending: ' + w.state), 8000)
})
const idb = (fn) => new Promise((resolve, reject) => {
  const req = indexedDB.open('level-js-rotree-seq', 1)
  req.onupgradeneeded = () => req.result.createObjectStore('rotree-seq')
  req.onerror = () => reject(req.error)
  req.onsuccess = () => {
    const db = req.result
    const tx = db.transaction('rotree-seq', 'readwrite')
    fn(tx.objectStore('rotree-seq'))
    tx.oncomplete = () => { db.close(); resolve('written') }
    tx.onerror = () => reject(tx.error)
  }
})
const enc = s => new TextEncoder().encode(s)
// B's state as a version-2 reader keeps it (FORMAT.md §12.4), at sequences no publish can pass
const POISON = ${JSON.stringify(poisonOf(B.publicKey))}
`
  const wipe = `
await attempt('idbDelete', () => new Promise((resolve, reject) => {
  const req = indexedDB.deleteDatabase('level-js-rotree-seq')
  req.onsuccess = () => resolve('deleted'); req.onerror = () => reject(req.error); req.onblocked = () => resolve('blocked')
}))
`
  const attacks = `
await attempt('bar', () => { const k = top.document.getElementById('s-key'); k.textContent = B.slice(0, 16) + '…'; k.title = B; return 'rewritten' })
await attempt('address', () => { top.history.replaceState(null, '', top.location.pathname + '?key=' + B); return top.location.href })
await attempt('readB', async () => (await (await fetch('/site/' + B + '/')).text()).includes(${JSON.stringify(B_MARKER)}) ? 'read B' : 'not B')
await attempt('readBOrigin', async () => (await (await fetch(B_ORIGIN + '/site/' + B + '/')).text()).includes(${JSON.stringify(B_MARKER)}) ? 'read B' : 'not B')
await attempt('idbPoison', () => idb(store => store.put(enc(JSON.stringify(POISON)), enc('seq:' + B))))
await attempt('swOnBScope', async () => settle((await navigator.serviceWorker.register('/sw.js?key=' + A, { scope: '/site/' + B + '/', type: 'module' })).installing))
await attempt('swOnBOrigin', async () => settle((await navigator.serviceWorker.register(B_ORIGIN + '/sw.js?key=' + A, { scope: B_ORIGIN + '/site/' + B + '/', type: 'module' })).installing))
`
  const page = (title, body) => `<!doctype html><meta charset="utf-8"><title>${title}</title><h1 id="h">${title}</h1>
<script type="module">${prelude}${body}document.body.dataset.attack = JSON.stringify(r)</script>`
  // replaces its own bootstrap, in the bar's frame, by B's, to make B's origin install a verifier A
  // chose: through a link in the bootstrap's own document, as the frame's sandbox keeps a page
  // from navigating its parent itself
  const hop = `if (location.hostname.split('.')[0] === LA) {
  const link = Object.assign(parent.document.createElement('a'), { href: B_ORIGIN + '/site-boot.html' })
  parent.document.body.append(link)
  link.click()
}
`
  return { 'index.html': page('Hostile A', attacks), 'wipe.html': page('Hostile A wipes', wipe), 'hop.html': page('Hostile A hops', hop) }
}

/**
 * A forged rollback state for the single-key tree of `key`: the record a
 * version-2 reader persists per address (FORMAT.md §12.4), held by the
 * key's own signatures, so a reader that took it would refuse every real
 * publish as a rollback.
 */
function poisonOf (key) {
  const top = 2 ** 53 - 1
  return { v: 2, trust: null, release: { signers: [key], seq: top, root: 'f'.repeat(64) }, timestamp: { signers: [key], seq: top, release: 'f'.repeat(64) } }
}

function victimFiles (version) {
  return {
    'index.html': `<!doctype html><meta charset="utf-8"><title>B ${version}</title><h1 id="h">${B_MARKER} ${version}</h1><a id="about" href="about.html">about</a><script src="js/b.js"></script>`,
    'about.html': '<!doctype html><meta charset="utf-8"><title>About B</title><h1 id="h">About B</h1>',
    'js/b.js': 'document.body.dataset.script = "ran"\n'
  }
}

let browser, mirrorA, mirrorB1, mirrorB2, perKey, shared, newestB
const sharedRequests = []

before(async () => {
  await ensureBundle()
  const srcA = await tmpdir()
  await writeTree(srcA, hostileFiles())
  mirrorA = await serve((await buildTree(srcA, { key: A })).out)
  const srcB1 = await tmpdir()
  await writeTree(srcB1, victimFiles('v1'))
  mirrorB1 = await serve((await buildTree(srcB1, { key: B, seq: SEQ1 })).out) // stale once v2 is seen
  const srcB2 = await tmpdir()
  await writeTree(srcB2, victimFiles('v2'))
  const outB2 = (await buildTree(srcB2, { key: B, seq: SEQ2 })).out
  mirrorB2 = await serve(outB2)
  // what a reader that saw B's newest tree keeps. In format version 2 the
  // build's seq is the release's; fsinfo.json has a sequence of its own
  // (FORMAT.md §12.3, §12.4), the one the bar shows
  const r = decodeRoot(await fs.readFile(path.join(outB2, 'fsinfo.json')))
  newestB = r.version === 2 ? { fsinfo: r.seq, release: r.info.release.seq } : { fsinfo: r.seq }
  assert.equal(newestB.release ?? newestB.fsinfo, SEQ2)
  // the supported deployment: rotree serve --web, each site on <label>.rotree.localhost
  perKey = await serveWithWeb(await tmpdir())
  // a host without per-key names: the same files, site.html switched to a shared origin
  const web = await tmpdir()
  await fs.cp(WEB, web, { recursive: true })
  const html = path.join(web, 'site.html')
  await fs.writeFile(html, (await fs.readFile(html, 'utf8')).replace('name="rotree-site-origins" content="per-key"', 'name="rotree-site-origins" content="shared"'))
  const srv = await createRotreeServer({ dir: await tmpdir(), webRoot: web })
  srv.server.prependListener('request', req => sharedRequests.push(req.url))
  const { port } = await srv.listen({ port: 0, host: '127.0.0.1' })
  shared = { port, close: () => srv.close({ timeoutMs: 1000 }) }
  browser = await launchChromium()
})

after(async () => {
  await browser?.close()
  for (const s of [mirrorA, mirrorB1, mirrorB2, perKey, shared]) await s?.close()
})

const innerFrame = (page, key) => page.frames().find(f => f.url().includes(`/site/${key.publicKey}/`))

/** Open key's site through the bar at `app`; resolves once a page of it has loaded, with that frame. */
async function openSite (page, app, key, mirror, sitePath = '/') {
  await page.goto(`${app}site.html?key=${key.publicKey}&mirror=${encodeURIComponent(mirror.url)}&path=${encodeURIComponent(sitePath)}`)
  await page.waitForFunction(() => document.body.dataset.loaded || document.body.dataset.state === 'error', null, { timeout: 20_000 })
    .catch(async err => { throw new Error(`${err.message}: ${await page.textContent('body')}${pageLogs(page)}`) })
  assert.notEqual(await page.evaluate(() => document.body.dataset.state), 'error', await page.textContent('#site-error') + pageLogs(page))
  const frame = innerFrame(page, key)
  assert.ok(frame, 'the site is framed' + pageLogs(page))
  return frame
}

/** The attacks' report, once tree A's page has run them. */
async function attackReport (frame) {
  await frame.waitForFunction(() => document.body?.dataset.attack, null, { timeout: 30_000 })
  return JSON.parse(await frame.evaluate(() => document.body.dataset.attack))
}

/** Every Service Worker registration a page can see serves the key of its own scope. */
async function registrationsMatch (frame) {
  return frame.evaluate(async () => (await navigator.serviceWorker.getRegistrations()).map(r => {
    const w = r.active ?? r.waiting ?? r.installing
    return { scope: new URL(r.scope).pathname, key: w ? new URL(w.scriptURL).searchParams.get('key') : null }
  }))
}

/**
 * B's highest sequences in the rollback state of the origin that serves B:
 * { fsinfo } from a version-1 record; { fsinfo, release } from a version-2
 * one (FORMAT.md §12.4); null when there is none.
 */
async function stateOfB (frame) {
  return frame.evaluate(async b => {
    const { SeqStore } = await import('/rotree-client.js')
    const s = await new SeqStore('rotree-seq').get(b)
    if (!s) return null
    return s.v === 2 ? { fsinfo: s.timestamp?.seq, release: s.release?.seq } : { fsinfo: s.seq }
  }, B.publicKey)
}

async function hostileTreeFails (app, { verifierFrame, sandboxed }) {
  const context = await browser.newContext()
  const page = await context.newPage()
  page.logs = []
  page.on('console', m => page.logs.push(`${m.type()}: ${m.text()}`))
  try {
    // B's newest tree is seen: the state holds its sequences (SEQ2)
    let frame = await openSite(page, app, B, mirrorB2)
    assert.equal(await frame.textContent('#h'), `${B_MARKER} v2`)
    assert.deepEqual(await stateOfB(verifierFrame(page)), newestB)

    // A tries to delete every rollback state it can reach ...
    frame = await openSite(page, app, A, mirrorA, '/wipe.html')
    const wiped = await attackReport(frame)
    if (sandboxed) assert.match(wiped.idbDelete, /^refused/, JSON.stringify(wiped))
    // ... so that a stale mirror of B could roll it back: still refused
    frame = await openSite(page, app, B, mirrorB1)
    assert.ok(await frame.$('#rotree-error'), 'the stale tree is not shown: ' + await frame.textContent('body'))
    assert.match(await frame.textContent('#rotree-error'), /ROTREE_ROLLBACK/)
    assert.equal(await frame.$(`text=${B_MARKER}`), null)

    // A attacks the bar, the address, B's state, B's verifier and B's pages
    frame = await openSite(page, app, A, mirrorA)
    const r = await attackReport(frame)
    const report = JSON.stringify(r, null, 1) + pageLogs(page)
    assert.match(r.bar, /^refused/, report)
    assert.match(r.address, /^refused/, report)
    if (sandboxed) assert.match(r.idbPoison, /^refused/, report)
    assert.doesNotMatch(r.swOnBScope, /activated/, report)
    assert.doesNotMatch(r.swOnBOrigin, /activated/, report)
    assert.doesNotMatch(r.readB, /read B/, report)
    assert.doesNotMatch(r.readBOrigin, /read B/, report)
    // the bar and the address still name A, and only A
    assert.equal(await page.getAttribute('#s-key', 'title'), A.publicKey)
    assert.equal(new URL(page.url()).searchParams.get('key'), A.publicKey)
    assert.ok(!page.url().includes(B.publicKey), page.url())
    assert.match(await page.evaluate(() => document.body.dataset.loaded), new RegExp(`^/site/${A.publicKey}/`))
    for (const f of [page.mainFrame(), verifierFrame(page)]) {
      for (const reg of await registrationsMatch(f)) assert.equal(reg.key, reg.scope.split('/')[2], `${JSON.stringify(reg)} on ${f.url()}`)
    }
    // where it ran: its own origin, or an opaque one
    if (sandboxed) assert.equal(await frame.evaluate(() => self.origin), 'null')
    else assert.equal(new URL(frame.url()).host, `${keyLabel(A.publicKey)}.${new URL(app).host}`)

    // B still verifies, from its newest tree, with its state intact
    frame = await openSite(page, app, B, mirrorB2)
    assert.equal(await frame.textContent('#h'), `${B_MARKER} v2`, await frame.textContent('body'))
    assert.equal(await page.getAttribute('#s-key', 'title'), B.publicKey)
    assert.equal(await page.textContent('#s-seq'), String(newestB.fsinfo))
    assert.deepEqual(await stateOfB(verifierFrame(page)), newestB)
    for (const reg of await registrationsMatch(verifierFrame(page))) assert.equal(reg.key, reg.scope.split('/')[2], JSON.stringify(reg))
  } finally {
    await context.close()
  }
}

test('per-key origins: a hostile tree reaches neither the bar, nor another key\'s state, verifier or pages', { timeout: 180_000 }, async () => {
  const app = `http://rotree.localhost:${perKey.port}/`
  // the verifier of the key on view: site-boot.html on that key's own origin
  // (the bar's own page where there is none: a verifier on the app's origin)
  const verifierFrame = page => page.frames().find(f => f.url().includes('/site-boot.html')) ?? page.mainFrame()
  await hostileTreeFails(app, { sandboxed: false, verifierFrame })
})

test('per-key origins: another key\'s bootstrap put in the bar\'s frame installs nothing', { timeout: 60_000 }, async () => {
  const page = await newPage(browser)
  try {
    await page.goto(`http://rotree.localhost:${perKey.port}/site.html?key=${A.publicKey}&mirror=${encodeURIComponent(mirrorA.url)}&path=/hop.html`)
    let boot
    for (let i = 0; i < 200 && !boot; i++) {
      boot = page.frames().find(f => f.url().startsWith(`http://${keyLabel(B.publicKey)}.`))
      if (!boot) await new Promise(resolve => setTimeout(resolve, 100))
    }
    assert.ok(boot, 'A replaced its bootstrap by B\'s' + pageLogs(page))
    // the bar shows A: it does not answer B's origin, so B's bootstrap gives up
    await boot.waitForFunction(() => document.body?.dataset.state === 'error', null, { timeout: 20_000 })
    assert.match(await boot.textContent('#boot-error'), /did not ask for the site/)
    assert.equal(await boot.evaluate(async () => (await navigator.serviceWorker.getRegistrations()).length), 0)
    assert.equal(await page.getAttribute('#s-key', 'title'), A.publicKey)
    assert.equal(new URL(page.url()).searchParams.get('key'), A.publicKey)
  } finally { await page.context().close() }
})

test('a shared origin: each page of a tree runs sandboxed and loads nothing but itself', { timeout: 180_000 }, async () => {
  const app = `http://127.0.0.1:${shared.port}/`
  await hostileTreeFails(app, { sandboxed: true, verifierFrame: page => page.mainFrame() })
  // the page verified and shown; its script file is neither run nor fetched
  // unverified: a sandboxed page is not controlled by the Service Worker
  const page = await newPage(browser)
  try {
    sharedRequests.length = 0
    const frame = await openSite(page, app, B, mirrorB2)
    assert.equal(await frame.textContent('#h'), `${B_MARKER} v2`)
    assert.equal(await page.isVisible('#s-shared'), true)
    await new Promise(resolve => setTimeout(resolve, 500))
    assert.equal(await frame.evaluate(() => document.body.dataset.script), undefined)
    assert.deepEqual(sharedRequests.filter(u => u.startsWith('/site/')), [], 'nothing of the site was asked of the server')
    // links lead to the next verified, sandboxed page
    await frame.click('#about')
    await page.waitForFunction(() => document.body.dataset.loaded?.endsWith('/about.html'))
    const about = innerFrame(page, B)
    assert.equal(await about.textContent('#h'), 'About B')
    assert.equal(await about.evaluate(() => self.origin), 'null')
    assert.match(page.url(), /path=%2Fabout\.html/)
  } finally { await page.context().close() }
})

test('a site\'s own origin is given only its bootstrap and verifier, framed by the app only', async () => {
  const host = `${keyLabel(B.publicKey)}.rotree.localhost:${perKey.port}`
  const get = p => new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port: perKey.port, path: p, headers: { host } }, res => { res.resume(); resolve(res) }).on('error', reject)
  })
  for (const p of ['/', '/index.html', '/app.js', '/site.html', `/site/${B.publicKey}/`]) assert.equal((await get(p)).statusCode, 404, p)
  for (const p of ['/sw.js', '/rotree-client.js', '/site-boot.js']) assert.equal((await get(p)).statusCode, 200, p)
  const boot = await get('/site-boot.html')
  assert.equal(boot.headers['content-security-policy'], `frame-ancestors rotree.localhost:${perKey.port}`)
  assert.equal(boot.headers['origin-agent-cluster'], '?1')

  // opened by anyone but the app (here: top-level), the bootstrap installs nothing
  const page = await newPage(browser)
  try {
    await page.goto(`http://${host}/site-boot.html?mirror=${encodeURIComponent(mirrorA.url)}`)
    await page.waitForFunction(() => document.body.dataset.state === 'error')
    assert.match(await page.textContent('#boot-error'), /only inside site\.html/)
    assert.deepEqual(await page.evaluate(async () => (await navigator.serviceWorker.getRegistrations()).length), 0)
  } finally { await page.context().close() }
})

// `nginx-config --web` (webServerBlocks) with real nginx: the app's host gets
// the tree and the web app, each web file with Origin-Agent-Cluster and
// nosniff; a key's own host (<label>.app) gets only the site's bootstrap and
// worker files, site-boot.html with frame-ancestors naming the app's origin,
// and nothing of the app or the tree. The list of what a key host gets is
// checked against `rotree serve --web` (server/app.js) file by file.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import http from 'node:http'
import { execFileSync } from 'node:child_process'
import { tmpdir, writeTree, makeKey, buildTree } from '../helpers/fixtures.js'
import { fullConfig } from '../../server/nginx-config.js'
import { KEY_HOST_FILES, checkAppHost } from '../../server/nginx-web.js'
import { createApp } from '../../server/app.js'
import { decodeRoot } from '../../lib/published/signed-roots.js'
import { keyLabel } from '../../web/origins.js'
import { needs, startProcess, req } from '../edge/helpers.js'

const skip = needs('nginx')
const WEB = new URL('../../web/', import.meta.url).pathname
const APP = 'verify.example'

const fx = {}
before(async () => {
  if (skip) return
  fx.dir = await tmpdir('rotree-nginx-web-')
  fx.src = path.join(fx.dir, 'src'); fx.out = path.join(fx.dir, 'out'); fx.web = path.join(fx.dir, 'web')
  await writeTree(fx.src, { 'index.html': '<h1>tree</h1>\n' })
  fx.key = makeKey()
  ;({ result: fx.result } = await buildTree(fx.src, { key: fx.key, out: fx.out }))
  await fs.cp(WEB, fx.web, { recursive: true })
  await fs.writeFile(path.join(fx.web, '.hidden'), 'not for anyone')
  if (process.getuid?.() === 0) execFileSync('chmod', ['-R', 'a+rX', fx.dir])
  fx.nginx = await startProcess('nginx', '/usr/sbin/nginx', {
    setup: (port, dir) => fs.writeFile(path.join(dir, 'nginx.conf'), fullConfig({ out: fx.out, listen: `127.0.0.1:${port}`, prefix: dir, workers: 1, web: { appHost: APP, webRoot: fx.web } })),
    args: (port, dir) => ['-p', dir, '-c', path.join(dir, 'nginx.conf'), '-e', path.join(dir, 'startup.log'), '-g', 'daemon off;']
  })
  fx.keyHost = `${keyLabel(fx.key.publicKey)}.${APP}:${fx.nginx.port}`
  fx.appHost = `${APP}:${fx.nginx.port}`
})
after(async () => {
  await fx.nginx?.stop()
  if (fx.dir) await fs.rm(fx.dir, { recursive: true, force: true })
})

const get = (host, p, o = {}) => req(fx.nginx.port, p, { ...o, headers: { Host: host, ...o.headers } })

test('the app\'s host: the tree and every web file, each with Origin-Agent-Cluster and nosniff', { skip }, async () => {
  for (const [p, type] of [['/', /^text\/html/], ['/index.html', /^text\/html/], ['/site.html', /^text\/html/], ['/app.js', /^text\/javascript/], ['/sw.js', /^text\/javascript/], ['/style.css', /^text\/css/], ['/favicon.svg', /^image\/svg\+xml/]]) {
    const r = await get(fx.appHost, p)
    assert.equal(r.status, 200, p)
    assert.match(r.headers['content-type'], type, p)
    assert.equal(r.headers['origin-agent-cluster'], '?1', p)
    assert.equal(r.headers['x-content-type-options'], 'nosniff', p)
  }
  const f = await get(fx.appHost, '/fsinfo.json')
  assert.equal(f.status, 200)
  assert.equal(decodeRoot(f.body).root.hash, fx.result.root) // either format version's fsinfo.json (FORMAT.md §6, §12.4)
  assert.equal((await get(fx.appHost, `/h/${fx.result.root}`)).headers['cache-control'], 'public, max-age=31536000, immutable')
  for (const p of ['/.hidden', '/history/', '/.rotree/build-index/CURRENT', '/nope.js', `/h/${'0'.repeat(64)}`]) {
    const r = await get(fx.appHost, p)
    assert.equal(r.status, 404, p)
    assert.equal(r.headers['cache-control'], 'no-store', p)
  }
})

test('a key\'s own host: only the bootstrap and worker files, site-boot.html framed by the app alone', { skip }, async () => {
  const boot = await get(fx.keyHost, '/site-boot.html')
  assert.equal(boot.status, 200)
  assert.equal(boot.headers['content-security-policy'], `frame-ancestors ${fx.appHost}`)
  assert.equal(boot.headers['origin-agent-cluster'], '?1')
  assert.equal((await get(fx.keyHost, '/sw.js')).headers['content-type'], 'text/javascript; charset=utf-8')
  for (const p of ['/', '/index.html', '/site.html', '/app.js', '/panel.js', '/fsinfo.json', `/h/${fx.result.root}`, '/.hidden']) {
    const r = await get(fx.keyHost, p)
    assert.equal(r.status, 404, p)
    assert.equal(r.headers['cache-control'], 'no-store', p)
  }
  // a label that is no key's (its last letter holds a bit that must be zero) is not a key host
  const odd = keyLabel(fx.key.publicKey).slice(0, 51) + 'b'
  assert.equal((await get(`${odd}.${APP}:${fx.nginx.port}`, '/site-boot.html')).headers['content-security-policy'], undefined)
})

test('a key host gets exactly the files `rotree serve --web` gives it', { skip }, async t => {
  const server = http.createServer(createApp({ webRoot: fx.web }))
  await new Promise(resolve => server.listen(0, '127.0.0.1', resolve))
  t.after(() => new Promise(resolve => server.close(resolve)))
  const names = (await fs.readdir(fx.web)).filter(n => !n.startsWith('.'))
  const served = []
  for (const n of names) {
    const viaServe = await req(server.address().port, '/' + n, { headers: { Host: fx.keyHost } })
    const viaNginx = await get(fx.keyHost, '/' + n)
    assert.equal(viaNginx.status, viaServe.status, `/${n}: nginx ${viaNginx.status}, rotree serve --web ${viaServe.status}`)
    if (viaServe.status === 200) served.push('/' + n)
  }
  assert.deepEqual(served.sort(), KEY_HOST_FILES.filter(f => names.includes(f.slice(1))).sort())
})

test('--app-host must be a name with names under it', () => {
  for (const bad of ['127.0.0.1', '', 'a b', 'x"y', '*.example', '-x.example']) assert.throws(() => checkAppHost(bad), { code: 'ROTREE_USAGE' }, bad)
  assert.equal(checkAppHost('Verify.Example'), 'verify.example')
})

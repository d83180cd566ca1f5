// The middleware in a user's own Express app, mounted under a prefix, as the
// README shows: app.use('/downloads', gateway({ tree: ADDR })). Links,
// redirects and WebDAV hrefs must carry the prefix; the app's other routes
// keep working; rclone mounts the prefix as a WebDAV root.
import { needing } from '../helpers/tools.js'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import express from 'express'
import { serve } from '../helpers/fixtures.js'
import { gateway } from '../../gateway/index.js'
import { makeFixture, fixtureFiles, curl, run, readAll, tmpdir, address } from './helpers.js'

const { test, before, after } = needing('curl', 'rclone')

const fx = {}
before(async () => {
  fx.files = fixtureFiles()
  Object.assign(fx, await makeFixture(fx.files))
  fx.mirror = await serve(fx.out)
  fx.mw = gateway({ tree: address(fx.mirror.url, fx.pk), stateDir: null })
  const app = express()
  app.get('/', (req, res) => res.send('home page'))
  app.use('/downloads', fx.mw)
  await fx.mw.ready
  fx.server = await new Promise(resolve => { const s = app.listen(0, '127.0.0.1', () => resolve(s)) })
  fx.url = `http://127.0.0.1:${fx.server.address().port}/`
})
after(async () => {
  fx.server?.closeAllConnections()
  await new Promise(resolve => fx.server ? fx.server.close(resolve) : resolve())
  await fx.mw?.close(); await fx.mirror?.close(); await fx.cleanup?.()
})

const truth = rel => Buffer.from(fx.files[rel].data ?? fx.files[rel])

test('files, ranges and 304s under the prefix; the app\'s own routes still answer', async () => {
  let r = await curl(fx.url + 'downloads/big.bin')
  assert.equal(r.status, 200); assert.ok(r.body.equals(truth('big.bin')))
  assert.match(r.headers['x-rotree-root'], /^[0-9a-f]{64}$/)
  r = await curl(fx.url + 'downloads/big.bin', ['-r', '100-199'])
  assert.equal(r.status, 206); assert.ok(r.body.equals(truth('big.bin').subarray(100, 200)))
  assert.equal((await curl(fx.url + 'downloads/big.bin', ['-H', `If-None-Match: ${r.headers.etag}`])).status, 304)
  assert.equal((await curl(fx.url)).body.toString(), 'home page')
  assert.equal((await curl(fx.url + 'elsewhere')).status, 404)
  assert.equal((await curl(fx.url + 'downloads/nope')).status, 404)
  assert.equal((await curl(fx.url + 'downloads/%2e%2e/package.json')).status, 400)
  assert.equal((await curl(fx.url + 'downloads/../downloads/hello.txt')).status, 400)
})

test('redirects and listings carry the prefix', async () => {
  let r = await curl(fx.url + 'downloads')
  assert.equal(r.status, 301); assert.equal(r.headers.location, '/downloads/')
  r = await curl(fx.url + 'downloads?x=1')
  assert.equal(r.headers.location, '/downloads/?x=1')
  r = await curl(fx.url + 'downloads/docs')
  assert.equal(r.status, 301); assert.equal(r.headers.location, '/downloads/docs/')
  r = await curl(fx.url + 'downloads/')
  assert.equal(r.status, 200)
  assert.match(r.body.toString(), /Index of \/downloads\//)
  assert.ok(r.body.toString().includes('<a href="../">../</a>'), 'the app above the mount is a parent')
  r = await curl(fx.url + 'downloads/docs/')
  assert.match(r.body.toString(), /Index of \/downloads\/docs\//)
})

test('WebDAV under the prefix: hrefs carry it, rclone copies through it', async () => {
  const r = await curl(fx.url + 'downloads/docs/', ['-X', 'PROPFIND', '-H', 'Depth: 1'])
  assert.equal(r.status, 207)
  const hrefs = [...r.body.toString().matchAll(/<D:href>([^<]+)<\/D:href>/g)].map(m => m[1])
  assert.deepEqual(hrefs, ['/downloads/docs/', '/downloads/docs/README.md', '/downloads/docs/guide.html', '/downloads/docs/link-up', '/downloads/docs/sub/'])
  const dir = await tmpdir('rotree-gw-express-')
  try {
    await fs.writeFile(path.join(dir, 'rclone.conf'), '')
    const env = { RCLONE_CONFIG: path.join(dir, 'rclone.conf'), RCLONE_CONFIG_APP_TYPE: 'webdav', RCLONE_CONFIG_APP_URL: fx.url + 'downloads/' }
    const c = await run('rclone', ['copy', '--retries', '1', 'APP:docs', path.join(dir, 'docs')], { env })
    assert.equal(c.code, 0, c.stderr)
    const got = await readAll(path.join(dir, 'docs'))
    const want = Object.fromEntries(Object.entries(await readAll(fx.src)).filter(([k]) => k.startsWith('docs/')).map(([k, v]) => [k.slice(5), v]))
    assert.deepEqual(Object.keys(got).sort(), Object.keys(want).sort())
    for (const k of Object.keys(want)) assert.ok(got[k].equals(want[k]), k)
  } finally { await fs.rm(dir, { recursive: true, force: true }) }
})

test('the status document under the prefix, and status() for the app', async () => {
  const s = JSON.parse((await curl(fx.url + 'downloads/.well-known/rotree/status')).body)
  assert.equal(s.trees[0].key, fx.pk)
  assert.deepEqual(fx.mw.status().trees[0].root, s.trees[0].root)
})

// Real clients against the gateway: `wget -r` mirroring through the HTML
// listings, rclone over WebDAV (listing and copying), PROPFIND as raw XML, and
// a real tree (/usr/share/zoneinfo, /usr/share/doc/git and a 100 MB binary)
// read back byte for byte by curl, wget and rclone.
import { needing } from '../helpers/tools.js'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { createHash } from 'node:crypto'
import { serve } from '../helpers/fixtures.js'
import { makeFixture, fixtureFiles, startGateway, curl, run, readAll, tmpdir, makeKey, buildTree, prng, address } from './helpers.js'

const { test, before, after } = needing('curl', 'wget', 'rclone')

const fx = {}
before(async () => {
  const files = fixtureFiles()
  Object.assign(fx, await makeFixture(files))
  fx.mirror = await serve(fx.out)
  fx.gw = await startGateway(null, { tree: address(fx.mirror.url, fx.pk) })
  fx.work = await tmpdir('rotree-gw-clients-')
})
after(async () => {
  await fx.gw?.close(); await fx.mirror?.close(); await fx.cleanup?.()
  await fs.rm(fx.work, { recursive: true, force: true })
})

/** Both sides hold the same files with the same bytes. */
function assertSameFiles (got, want, what) {
  assert.deepEqual(Object.keys(got).sort(), Object.keys(want).sort(), `${what}: file names`)
  for (const k of Object.keys(want)) assert.ok(got[k].equals(want[k]), `${what}: ${k} differs`)
}

const LISTING = '.listing.html' // wget's name for directory pages, deleted after parsing
// wget 1.21 leaves a rejected page behind as NAME.tmp when it came from --default-page
const notListing = rel => path.basename(rel).startsWith(LISTING)

async function wgetMirror (url, dest) {
  await fs.mkdir(dest, { recursive: true })
  const r = await run('wget', ['-r', '-np', '-nH', '-q', '-e', 'robots=off', '--default-page=' + LISTING, '-R', LISTING,
    '--restrict-file-names=nocontrol', '-l', 'inf', url], { cwd: dest, timeoutMs: 90_000 })
  assert.equal(r.code, 0, `wget exit ${r.code}: ${r.stderr}`)
}

function rcloneEnv (url, dir) {
  return {
    RCLONE_CONFIG: path.join(dir, 'rclone.conf'), // empty: only the remote below exists
    RCLONE_CONFIG_GW_TYPE: 'webdav',
    RCLONE_CONFIG_GW_URL: url,
    RCLONE_CONFIG_GW_VENDOR: 'other'
  }
}

async function rclone (args, env, timeoutMs = 90_000) {
  await fs.writeFile(env.RCLONE_CONFIG, '')
  const r = await run('rclone', ['--contimeout', '10s', '--timeout', '30s', '--retries', '1', '--low-level-retries', '1', ...args], { env, timeoutMs })
  assert.equal(r.code, 0, `rclone ${args[0]} exit ${r.code}: ${r.stderr}`)
  return r
}

test('wget -r mirrors the tree through the HTML listings, byte for byte', { timeout: 60_000 }, async () => {
  const gw = await startGateway(null, { tree: address(fx.mirror.url, fx.pk), index: false }) // listings even where index.html is
  try {
    const dest = path.join(fx.work, 'wget')
    await wgetMirror(gw.url, dest)
    assertSameFiles(await readAll(dest, { skip: notListing }), await readAll(fx.src), 'wget -r')
  } finally { await gw.close() }
})

test('rclone over WebDAV: lsjson sees every entry, copy brings identical bytes', { timeout: 60_000 }, async () => {
  const env = rcloneEnv(fx.gw.url, fx.work)
  const ls = JSON.parse((await rclone(['lsjson', '-R', 'GW:'], env)).stdout)
  const byPath = Object.fromEntries(ls.map(e => [e.Path, e]))
  assert.equal(byPath['big.bin'].Size, 3 * 1024 * 1024)
  assert.equal(byPath['docs'].IsDir, true)
  assert.equal(byPath['link-to-docs'].IsDir, true, 'a symlinked directory is a collection')
  assert.equal(byPath['link-to-hello'].Size, 13)
  assert.equal(byPath['weird/<b>&"x\'.txt'].Size, 8)
  assert.equal(byPath['hello.txt'].ModTime, '2024-05-17T12:30:15Z')
  assert.equal(byPath.dangling, undefined, 'a symlink that leads nowhere is left out')
  const dest = path.join(fx.work, 'rclone')
  await rclone(['copy', 'GW:', dest], env)
  assertSameFiles(await readAll(dest), await readAll(fx.src), 'rclone copy')
})

test('PROPFIND: Depth 0 and 1 multistatus with the live properties; infinity refused', async () => {
  const url = fx.gw.url
  let r = await curl(url + 'docs/', ['-X', 'PROPFIND', '-H', 'Depth: 1'])
  assert.equal(r.status, 207)
  assert.equal(r.headers['content-type'], 'application/xml; charset=utf-8')
  const xml = r.body.toString()
  const responses = xml.match(/<D:response>[\s\S]*?<\/D:response>/g)
  assert.equal(responses.length, 5, 'the directory and its four entries')
  const readme = responses.find(x => x.includes('<D:href>/docs/README.md</D:href>'))
  assert.match(readme, /<D:getcontentlength>5400<\/D:getcontentlength>/)
  assert.match(readme, /<D:getlastmodified>\w{3}, \d\d \w{3} \d{4} \d\d:\d\d:\d\d GMT<\/D:getlastmodified>/)
  assert.match(readme, /<D:resourcetype\/>/)
  assert.match(readme, /<D:getetag>&quot;[0-9a-f]{64}&quot;<\/D:getetag>/)
  assert.match(readme, /<D:displayname>README.md<\/D:displayname>/)
  assert.match(responses.find(x => x.includes('<D:href>/docs/sub/</D:href>')), /<D:resourcetype><D:collection\/><\/D:resourcetype>/)
  assert.ok(responses.some(x => x.includes('<D:href>/docs/link-up</D:href>') && x.includes('<D:getcontentlength>13<')), 'symlink shown as its target')

  r = await curl(url + 'docs', ['-X', 'PROPFIND', '-H', 'Depth: 0'])
  assert.equal(r.status, 207)
  assert.equal(r.body.toString().match(/<D:response>/g).length, 1)
  assert.match(r.body.toString(), /<D:href>\/docs\/<\/D:href>/)

  // a named property list: known ones in 200, unknown ones in 404
  const body = '<?xml version="1.0"?><d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:prop><d:getcontentlength/><oc:checksums/><d:quota-used-bytes/></d:prop></d:propfind>'
  r = await curl(url + 'hello.txt', ['-X', 'PROPFIND', '-H', 'Depth: 0', '-H', 'Content-Type: application/xml', '--data-binary', body])
  assert.equal(r.status, 207)
  const one = r.body.toString()
  // the default tree is format 2, which signs every file's SHA-256 (FORMAT.md §12.7), an
  // inline one's included: oc:checksums is known here (a format-1 inline file has none,
  // a 404 propstat: repr-digest.test.js)
  const helloSha = createHash('sha256').update('hello, world\n').digest('hex')
  assert.match(one, new RegExp(`<D:propstat><D:prop><D:getcontentlength>13</D:getcontentlength><oc:checksums xmlns:oc="http://owncloud.org/ns"><oc:checksum>SHA256:${helloSha}</oc:checksum></oc:checksums></D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat>`))
  assert.match(one, /<D:propstat><D:prop><D:quota-used-bytes\/><\/D:prop><D:status>HTTP\/1.1 404 Not Found<\/D:status>/)
  assert.ok(!one.includes('displayname'), 'only what was asked for')

  r = await curl(url + 'hello.txt', ['-X', 'PROPFIND', '-H', 'Depth: 0', '--data-binary', '<?xml version="1.0"?><propfind xmlns="DAV:"><propname/></propfind>'])
  assert.match(r.body.toString(), /<D:getetag\/>/)
  assert.equal((await curl(url + 'hello.txt', ['-X', 'PROPFIND', '-H', 'Depth: 0', '--data-binary', '<not-dav/>'])).status, 400)
  assert.equal((await curl(url + 'hello.txt', ['-X', 'PROPFIND', '-H', 'Depth: 0', '--data-binary', '<!DOCTYPE x [<!ENTITY a "b">]><propfind xmlns="DAV:"><allprop/></propfind>'])).status, 400)
  assert.equal((await curl(url + 'hello.txt', ['-X', 'PROPFIND', '-H', 'Depth: 2'])).status, 400)
  assert.equal((await curl(url + 'nope', ['-X', 'PROPFIND', '-H', 'Depth: 0'])).status, 404)

  for (const depth of [['-H', 'Depth: infinity'], []]) { // no Depth means infinity (RFC 4918 §9.1)
    r = await curl(url, ['-X', 'PROPFIND', ...depth])
    assert.equal(r.status, 403)
    assert.match(r.body.toString(), /<D:propfind-finite-depth\/>/)
  }
  const big = await curl(url, ['-X', 'PROPFIND', '-H', 'Depth: 0', '--data-binary', 'x'.repeat(70_000)])
  assert.equal(big.status, 413)
})

test('a real tree (zoneinfo, git docs, a 100 MB binary) reads back byte for byte through curl, wget -r and rclone', { timeout: 110_000 }, async () => {
  const dir = await tmpdir('rotree-gw-real-')
  try {
    const src = path.join(dir, 'src')
    await fs.mkdir(path.join(src, 'bin'), { recursive: true })
    await run('cp', ['-a', '/usr/share/zoneinfo', path.join(src, 'zoneinfo')])
    await run('cp', ['-a', '/usr/share/doc/git', path.join(src, 'git')]).catch(() => {})
    await dropEscapingLinks(src)
    const big = prng(100 * 1024 * 1024, 'real-100M')
    await fs.writeFile(path.join(src, 'bin', 'blob-100M.bin'), big)
    const key = makeKey()
    const { out } = await buildTree(src, { key, out: path.join(dir, 'out') })
    const mirror = await serve(out)
    const gw = await startGateway(null, { tree: address(mirror.url, key.publicKey), cacheDir: path.join(dir, 'cache'), cacheSize: 256 << 20 })
    try {
      const want = await readAll(src)
      // 100 MB took 13-27 s through the gateway on a loaded 2-core machine, in either
      // format: more than curl()'s 20 s default meant for small answers
      const r = await curl(gw.url + 'bin/blob-100M.bin', [], { timeoutMs: 60_000 })
      assert.equal(r.status, 200)
      assert.ok(r.body.equals(big), `curl: 100 MB byte for byte (exit ${r.exit}: ${r.stderr}, ${r.body.length} bytes)`)

      await wgetMirror(gw.url, path.join(dir, 'wget'))
      assertSameFiles(await readAll(path.join(dir, 'wget'), { skip: notListing }), want, 'wget -r of the real tree')

      // rclone's WebDAV backend paces itself to one request per 10 ms (its minSleep), so
      // 2,400 files would take half a minute: list everything, copy a part that has
      // the big file, real symlinks and a directory listing of real size
      const env = rcloneEnv(gw.url, dir)
      const ls = JSON.parse((await rclone(['lsjson', '-R', '--files-only', 'GW:'], env)).stdout)
      assert.deepEqual(Object.fromEntries(ls.map(e => [e.Path, e.Size]).sort()),
        Object.fromEntries(Object.entries(want).map(([k, v]) => [k, v.length]).sort()), 'rclone lsjson -R of the real tree')
      for (const part of ['bin', 'zoneinfo/Europe']) {
        await rclone(['copy', '--transfers', '8', 'GW:' + part, path.join(dir, 'rclone', part)], env)
      }
      const partOf = p => p.startsWith('bin/') || p.startsWith('zoneinfo/Europe/')
      assertSameFiles(await readAll(path.join(dir, 'rclone')), Object.fromEntries(Object.entries(want).filter(([k]) => partOf(k))), 'rclone copy of the real tree')
    } finally {
      await gw.close(); await mirror.close()
    }
  } finally {
    await fs.rm(dir, { recursive: true, force: true })
  }
})

/** Remove symlinks that point outside `root` (the builder refuses them). */
async function dropEscapingLinks (root) {
  async function walk (abs) {
    for (const d of await fs.readdir(abs, { withFileTypes: true })) {
      const a = path.join(abs, d.name)
      if (d.isSymbolicLink()) {
        const target = path.resolve(path.dirname(a), await fs.readlink(a))
        if (!target.startsWith(root + path.sep)) await fs.unlink(a)
      } else if (d.isDirectory()) await walk(a)
    }
  }
  await walk(root)
}

// The gateway over plain HTTP, with curl as the client: every status it can
// answer, the headers that say what was verified, conditional requests, the
// range matrix (chunk-alignment cases), listings, symlinks, index.html,
// several trees, the status document, and bad input.
import { needing } from '../helpers/tools.js'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { serve } from '../helpers/fixtures.js'
import { startLyingServer } from '../helpers/lying-server.js'
import { Publisher } from '../client/v2-publisher.js'
import { makeFixture, fixtureFiles, entryOf, publishedRoot, startGateway, curl, rawSocket, address, MTIME } from './helpers.js'

const { test, describe, before, after } = needing('curl')

const fx = {}
before(async () => {
  fx.files = fixtureFiles()
  Object.assign(fx, await makeFixture(fx.files, { ttlMs: 600e3 }))
  fx.mirror = await serve(fx.out)
  fx.info = await rootInfo(fx.out)
  fx.addr = address(fx.mirror.url, fx.pk)
})
after(async () => { await fx.mirror?.close(); await fx.cleanup?.() })

/**
 * What the X-Rotree-* headers and the status document show of a published
 * folder, in either format: the root page's handle, fsinfo.json's seq and
 * expiry (FORMAT.md §6; §12.4, where the root is the release's).
 */
async function rootInfo (out) {
  const { root, seq, info } = await publishedRoot(out)
  return { root: root.hash, seq, expires: info.expires }
}

const bytesOf = rel => Buffer.from(fx.files[rel].data ?? fx.files[rel])

describe('files', () => {
  let gw
  before(async () => { gw = await startGateway(null, { tree: fx.addr, refreshSeconds: 30 }) })
  after(() => gw?.close())

  test('GET of every kind of file: exact bytes and the headers that say what was verified', async () => {
    for (const rel of ['hello.txt', 'medium.bin', 'big.bin', 'huge.bin', 'docs/README.md', 'empty.txt']) {
      const r = await curl(gw.url + rel)
      assert.equal(r.exit, 0, r.stderr)
      assert.equal(r.status, 200, rel)
      assert.ok(r.body.equals(bytesOf(rel)), `${rel}: bytes`)
      assert.equal(r.headers['content-length'], String(bytesOf(rel).length))
      assert.match(r.headers.etag, /^"[0-9a-f]{64}"$/, 'a strong ETag from the content handle')
      assert.equal(r.headers['x-rotree-root'], fx.info.root)
      assert.equal(r.headers['x-rotree-seq'], String(fx.info.seq))
      assert.equal(r.headers['x-rotree-expires'], fx.info.expires)
      assert.equal(r.headers['accept-ranges'], 'bytes')
      const maxAge = Number(/max-age=(\d+)/.exec(r.headers['cache-control'])[1])
      assert.ok(maxAge > 0 && maxAge <= 30, `max-age ${maxAge} bounded by the refresh interval`)
      assert.ok(Date.now() + maxAge * 1000 <= Date.parse(fx.info.expires) + 1000, 'never outlives fsinfo.json')
    }
    const hello = await curl(gw.url + 'hello.txt')
    assert.equal(hello.headers['content-type'], 'text/plain; charset=utf-8')
    assert.equal(hello.headers['last-modified'], new Date(MTIME).toUTCString())
    assert.equal((await curl(gw.url + 'docs/guide.html')).headers['content-type'], 'text/html; charset=utf-8')
    assert.equal((await curl(gw.url + 'big.bin')).headers['content-type'], 'application/octet-stream')
  })

  test('the same content has the same ETag; different content a different one', async () => {
    const a = await curl(gw.url + 'hello.txt')
    const b = await curl(gw.url + 'link-to-hello')
    const c = await curl(gw.url + 'docs/README.md')
    assert.equal(a.headers.etag, b.headers.etag)
    assert.notEqual(a.headers.etag, c.headers.etag)
  })

  test('HEAD: the headers of GET, no body, nothing fetched for it', async () => {
    const r = await curl(gw.url + 'huge.bin', ['-I'])
    assert.equal(r.status, 200)
    assert.equal(r.headers['content-length'], String(12 * 1024 * 1024))
    assert.equal(r.body.length, 0)
  })

  test('conditional requests: If-None-Match, If-Modified-Since, If-Match, If-Unmodified-Since', async () => {
    const first = await curl(gw.url + 'medium.bin')
    const etag = first.headers.etag
    const lm = first.headers['last-modified']
    let r = await curl(gw.url + 'medium.bin', ['-H', `If-None-Match: ${etag}`])
    assert.equal(r.status, 304); assert.equal(r.body.length, 0); assert.equal(r.headers.etag, etag)
    assert.ok(r.headers['cache-control'] && r.headers['x-rotree-root'])
    assert.equal((await curl(gw.url + 'medium.bin', ['-H', `If-None-Match: "x", W/${etag}`])).status, 304, 'weak comparison')
    assert.equal((await curl(gw.url + 'medium.bin', ['-H', 'If-None-Match: *'])).status, 304)
    assert.equal((await curl(gw.url + 'medium.bin', ['-H', 'If-None-Match: "other"'])).status, 200)
    assert.equal((await curl(gw.url + 'medium.bin', ['-H', `If-Modified-Since: ${lm}`])).status, 304)
    assert.equal((await curl(gw.url + 'medium.bin', ['-H', 'If-Modified-Since: Thu, 01 Jan 2015 00:00:00 GMT'])).status, 200)
    // If-None-Match wins over If-Modified-Since (RFC 9110 §13.2.2)
    assert.equal((await curl(gw.url + 'medium.bin', ['-H', 'If-None-Match: "other"', '-H', `If-Modified-Since: ${lm}`])).status, 200)
    assert.equal((await curl(gw.url + 'medium.bin', ['-H', `If-Match: ${etag}`])).status, 200)
    r = await curl(gw.url + 'medium.bin', ['-H', 'If-Match: "other"'])
    assert.equal(r.status, 412); assert.match(r.body.toString(), /Precondition/)
    assert.equal((await curl(gw.url + 'medium.bin', ['-H', 'If-Unmodified-Since: Thu, 01 Jan 2015 00:00:00 GMT'])).status, 412)
    // a 304 for a file whose blob was never fetched: the validators come from the verified directory
    assert.equal((await curl(gw.url + 'huge.bin', ['-H', `If-None-Match: ${(await curl(gw.url + 'huge.bin', ['-I'])).headers.etag}`])).status, 304)
  })

  test('range matrix: first/last byte, inside a chunk, across boundaries, suffix, open, beyond the end, empty', async () => {
    const big = bytesOf('big.bin')
    const size = big.length
    const e = await entryOf(fx.out, 'big.bin')
    assert.ok(e.chunks.length >= 4)
    const b1 = e.chunks[0].size // first chunk boundary
    const b2 = b1 + e.chunks[1].size
    const cases = [
      ['0-0', 0, 0],
      [`${size - 1}-${size - 1}`, size - 1, size - 1],
      [`${size - 1}-`, size - 1, size - 1],
      ['10-20', 10, 20],
      [`${b1 - 1}-${b1}`, b1 - 1, b1], // the last byte of one chunk and the first of the next
      [`${b1}-${b1}`, b1, b1],
      [`${b1 - 5}-${b2 + 5}`, b1 - 5, b2 + 5], // three chunks
      [`${b1}-${b2 - 1}`, b1, b2 - 1], // exactly one whole chunk
      ['0-', 0, size - 1],
      [`${size - 100}-`, size - 100, size - 1],
      ['-100', size - 100, size - 1],
      [`-${size * 2}`, 0, size - 1], // a suffix longer than the file: all of it
      [`100-${size * 10}`, 100, size - 1] // an end past the end is clipped
    ]
    for (const [spec, s, l] of cases) {
      const r = await curl(gw.url + 'big.bin', ['-H', `Range: bytes=${spec}`])
      assert.equal(r.status, 206, spec)
      assert.equal(r.headers['content-range'], `bytes ${s}-${l}/${size}`, spec)
      assert.equal(r.headers['content-length'], String(l - s + 1), spec)
      assert.ok(r.body.equals(big.subarray(s, l + 1)), `${spec}: bytes`)
    }
    for (const spec of [`${size}-`, `${size + 10}-${size + 20}`, '-0']) {
      const r = await curl(gw.url + 'big.bin', ['-H', `Range: bytes=${spec}`])
      assert.equal(r.status, 416, spec)
      assert.equal(r.headers['content-range'], `bytes */${size}`)
      assert.match(r.body.toString(), /ROTREE_BAD_RANGE/)
    }
    // an invalid range is ignored, as `rotree serve` does (test/gateway/ranges.test.js has the whole table)
    for (const spec of ['bytes=abc', 'bytes=5-2', 'bytes=-', 'bytes=1-2-3']) {
      const r = await curl(gw.url + 'big.bin', ['-H', `Range: ${spec}`])
      assert.equal(r.status, 200, spec)
      assert.equal(r.body.length, size, spec)
    }
    // several ranges, or another unit: the whole file (RFC 9110 §14.2 lets a server ignore Range)
    assert.equal((await curl(gw.url + 'big.bin', ['-H', 'Range: bytes=0-1,5-6'])).status, 200)
    assert.equal((await curl(gw.url + 'big.bin', ['-H', 'Range: items=0-1'])).status, 200)
    // the inline file and the empty file
    const hello = bytesOf('hello.txt')
    const r = await curl(gw.url + 'hello.txt', ['-H', 'Range: bytes=7-'])
    assert.equal(r.status, 206); assert.ok(r.body.equals(hello.subarray(7)))
    const empty = await curl(gw.url + 'empty.txt', ['-H', 'Range: bytes=0-'])
    assert.equal(empty.status, 200, 'an empty file has nothing to slice (as nginx)')
    assert.equal(empty.body.length, 0)
    assert.equal((await curl(gw.url + 'empty.txt', ['-H', 'Range: bytes=x'])).status, 200)
    // If-Range
    const etag = (await curl(gw.url + 'big.bin', ['-I'])).headers.etag
    assert.equal((await curl(gw.url + 'big.bin', ['-H', 'Range: bytes=0-9', '-H', `If-Range: ${etag}`])).status, 206)
    const stale = await curl(gw.url + 'big.bin', ['-H', 'Range: bytes=0-9', '-H', 'If-Range: "stale"'])
    assert.equal(stale.status, 200); assert.equal(stale.body.length, size)
  })

  test('ranges of a file behind a chunk index', async () => {
    const huge = bytesOf('huge.bin')
    for (const [s, l] of [[0, 0], [5_000_000, 5_300_000], [huge.length - 1, huge.length - 1]]) {
      const r = await curl(gw.url + 'huge.bin', ['-r', `${s}-${l}`])
      assert.equal(r.status, 206)
      assert.ok(r.body.equals(huge.subarray(s, l + 1)), `${s}-${l}`)
    }
  })
})

test('a range fetches only the chunks it covers', async t => {
  const counter = await startLyingServer(fx.out) // honest, but it logs every request
  t.after(() => counter.close())
  const gw = await startGateway(t, { tree: address(counter.url, fx.pk) })
  const e = await entryOf(fx.out, 'big.bin')
  const b1 = e.chunks[0].size
  const before = counter.requests.length
  const r = await curl(gw.url + 'big.bin', ['-r', `${b1 + 10}-${b1 + 20}`])
  assert.equal(r.status, 206)
  const blobs = counter.requests.slice(before).filter(u => u.startsWith('/h/')).map(u => u.slice(3))
  assert.ok(blobs.includes(e.chunks[1].hash), 'the chunk holding the range was fetched')
  for (const c of [e.chunks[0], ...e.chunks.slice(2)]) assert.ok(!blobs.includes(c.hash), 'no other chunk was fetched')
})

describe('directories', () => {
  let gw, noIndex
  before(async () => {
    gw = await startGateway(null, { tree: fx.addr })
    noIndex = await startGateway(null, { tree: fx.addr, index: false })
  })
  after(async () => { await gw?.close(); await noIndex?.close() })

  test('/dir → 301 /dir/ (query kept); / and /dir/ list their entries', async () => {
    let r = await curl(gw.url + 'docs')
    assert.equal(r.status, 301); assert.equal(r.headers.location, '/docs/')
    r = await curl(gw.url + 'docs/sub?x=1')
    assert.equal(r.status, 301); assert.equal(r.headers.location, '/docs/sub/?x=1')
    r = await curl(gw.url + 'docs/')
    assert.equal(r.status, 200)
    assert.equal(r.headers['content-type'], 'text/html; charset=utf-8')
    assert.match(r.headers.etag, /^"d-[0-9a-f]{64}-html"$/)
    const html = r.body.toString()
    for (const n of ['README.md', 'guide.html']) assert.ok(html.includes(`<a href="./${n}">${n}</a>`), n)
    // where index.html stands in for a listing, a listing links each directory to its listing (docs/GATEWAY.md)
    assert.ok(html.includes('<a href="./sub/?listing">sub/</a>'))
    assert.ok(html.includes('<a href="../?listing">../</a>'))
    const plain = (await curl(noIndex.url + 'docs/')).body.toString()
    assert.ok(plain.includes('<a href="./sub/">sub/</a>') && plain.includes('<a href="../">../</a>'), 'with --no-index, every directory URL is its listing')
    assert.match(html, /title="5400 bytes"/)
    assert.match(html, /2024-05-17|20\d\d-\d\d-\d\d \d\d:\d\d:\d\d/)
    const root = (await curl(gw.url)).body.toString()
    assert.ok(!root.includes('href="../"'), 'no parent link at the root')
  })

  test('every name is escaped in the HTML listing', async () => {
    const html = (await curl(gw.url + 'weird/')).body.toString()
    assert.ok(!html.includes('<b>'), 'a name cannot inject markup')
    assert.ok(html.includes('&lt;b&gt;&amp;&quot;x&#39;.txt'))
    assert.ok(html.includes('href="./javascript%3Aalert(1)"'), 'a name cannot become a URL scheme')
    assert.ok(html.includes('href="./sp%20ace%20%23hash%20%3Fq%20100%25.txt"'))
    // and every link leads back to its file
    for (const [, href] of html.matchAll(/href="\.\/([^"]+)"/g)) {
      const r = await curl(gw.url + 'weird/' + href.replaceAll('&#39;', "'").replaceAll('&amp;', '&'))
      assert.equal(r.status, 200, href)
    }
  })

  test('JSON listing when the request asks for application/json', async () => {
    const r = await curl(gw.url + 'docs/', ['-H', 'Accept: application/json'])
    assert.equal(r.status, 200)
    assert.equal(r.headers['content-type'], 'application/json; charset=utf-8')
    assert.match(r.headers.vary, /Accept/)
    const j = JSON.parse(r.body)
    assert.equal(j.path, '/docs/')
    const names = j.entries.map(e => e.name)
    assert.deepEqual(names, ['README.md', 'guide.html', 'link-up', 'sub'])
    // a one-chunk version-1 file: its chunk's handle is the file's SHA-256, so the listing gives it
    const readme = await curl(gw.url + 'docs/README.md')
    const { createHash } = await import('node:crypto')
    assert.deepEqual(j.entries[0], { name: 'README.md', type: 'file', size: 5400, mtime: j.entries[0].mtime, exec: false, sha256: createHash('sha256').update(readme.body).digest('hex') })
    assert.deepEqual(j.entries[2], { name: 'link-up', type: 'symlink', size: 12, mtime: j.entries[2].mtime, target: '../hello.txt' })
    assert.equal(j.entries[3].entries, 1)
    // 304 on the listing's own ETag
    assert.equal((await curl(gw.url + 'docs/', ['-H', 'Accept: application/json', '-H', `If-None-Match: ${r.headers.etag}`])).status, 304)
  })

  test('index.html is served for its directory, unless turned off', async () => {
    let r = await curl(gw.url + 'site/')
    assert.equal(r.status, 200)
    assert.equal(r.body.toString(), fx.files['site/index.html'])
    assert.equal(r.headers['content-type'], 'text/html; charset=utf-8')
    assert.match(r.headers.vary, /Accept/)
    r = await curl(noIndex.url + 'site/')
    assert.match(r.body.toString(), /Index of \/site\//)
    assert.ok(r.body.toString().includes('href="./index.html"'))
    // DIR/?listing is the listing, index.html or not: what a listing links a directory to
    r = await curl(gw.url + 'site/?listing')
    assert.equal(r.status, 200)
    assert.match(r.headers.etag, /^"d-[0-9a-f]{64}-html"$/)
    assert.match(r.body.toString(), /Index of \/site\//)
    assert.ok(r.body.toString().includes('href="./index.html"') && r.body.toString().includes('href="./page.css"'))
    r = await curl(gw.url + 'site?listing')
    assert.equal(r.status, 301); assert.equal(r.headers.location, '/site/?listing')
    assert.equal((await curl(gw.url + 'site/?other')).body.toString(), fx.files['site/index.html'], 'another query is not a listing')
    r = await curl(gw.url + 'site/', ['-H', 'Accept: application/json'])
    assert.equal(JSON.parse(r.body).entries.length, 2, 'JSON asks for the listing, not the page')
  })

  test('symlinks are followed inside the tree; loops and dangling links are not 200s', async () => {
    let r = await curl(gw.url + 'link-to-hello')
    assert.equal(r.status, 200); assert.equal(r.body.toString(), 'hello, world\n')
    r = await curl(gw.url + 'docs/link-up')
    assert.equal(r.status, 200); assert.equal(r.body.toString(), 'hello, world\n')
    r = await curl(gw.url + 'link-to-docs')
    assert.equal(r.status, 301); assert.equal(r.headers.location, '/link-to-docs/')
    r = await curl(gw.url + 'link-to-docs/sub/deep.txt')
    assert.equal(r.status, 200); assert.equal(r.body.toString(), 'deep\n')
    r = await curl(gw.url + 'dangling')
    assert.equal(r.status, 404, 'the target is proven absent by a verified directory')
    r = await curl(gw.url + 'loop-a')
    assert.equal(r.status, 508); assert.match(r.body.toString(), /ROTREE_SYMLINK_LOOP/)
    const html = (await curl(gw.url)).body.toString()
    assert.ok(html.includes('<a href="./link-to-docs/?listing">link-to-docs/ → docs</a>'), 'a symlinked directory is linked as a directory')
    assert.ok(html.includes('dangling → nothing-here (broken)'))
  })
})

describe('statuses and bad input', () => {
  let gw
  before(async () => { gw = await startGateway(null, { tree: fx.addr }) })
  after(() => gw?.close())

  test('404 only for what a verified directory proves absent, with the root that proved it', async () => {
    for (const p of ['nope', 'docs/nope.txt', 'hello.txt/x', 'hello.txt/']) {
      const r = await curl(gw.url + p)
      assert.equal(r.status, 404, p)
      assert.match(r.body.toString(), /ROTREE_NOT_(FOUND|A_DIRECTORY)/)
      assert.equal(r.headers['x-rotree-root'], fx.info.root)
      assert.equal(r.headers['cache-control'], 'no-store')
    }
  })

  test('traversal and other path tricks are 400s, never a read outside the tree', async () => {
    const attempts = [
      '/../fsinfo.json', '/docs/../../etc/passwd', '/%2e%2e/%2e%2e/etc/passwd', '/%2E%2E/x', '/docs/%2e%2e/hello.txt',
      '/.%2e/x', '/docs/./README.md', '/..%2fetc%2fpasswd', '/docs%2fREADME.md', '/docs%5cREADME.md', '/docs\\README.md',
      '/hello.txt%00.png', '/%zz', '/%c3%28', '/docs/%2e'
    ]
    for (const p of attempts) {
      const r = await curl(gw.url.slice(0, -1) + p)
      assert.equal(r.status, 400, p)
      assert.match(r.body.toString(), /ROTREE_BAD_PATH: /, p)
    }
    // Node's own parser refuses a raw NUL or space before the gateway runs: still a 400 with a body
    for (const target of ['/a\u0000b', '/a b/c']) {
      const text = await rawSocket(gw.url, `GET ${target} HTTP/1.1\r\nHost: x\r\n\r\n`)
      assert.match(text, /^HTTP\/1\.1 400 /, JSON.stringify(target))
      assert.match(text, /malformed/)
    }
  })

  test('overlong paths are 414; huge headers 431, each with a clear body', async () => {
    let r = await curl(gw.url + 'a'.repeat(300))
    assert.equal(r.status, 414); assert.match(r.body.toString(), /longer than 255 bytes/)
    r = await curl(gw.url + 'a/'.repeat(2100))
    assert.equal(r.status, 414)
    r = await curl(gw.url + 'hello.txt', ['-H', 'X-Big: ' + 'x'.repeat(20_000)])
    assert.equal(r.status, 431); assert.match(r.body.toString(), /at most 16 KiB/)
    // and the gateway still serves
    assert.equal((await curl(gw.url + 'hello.txt')).status, 200)
  })

  test('writes are 405, OPTIONS advertises read-only WebDAV', async () => {
    for (const m of ['PUT', 'DELETE', 'POST', 'MKCOL', 'MOVE', 'COPY', 'PROPPATCH', 'LOCK', 'UNLOCK', 'PATCH']) {
      const r = await curl(gw.url + 'hello.txt', ['-X', m, '--data-binary', 'x'])
      assert.equal(r.status, 405, m)
      assert.equal(r.headers.allow, 'OPTIONS, GET, HEAD, PROPFIND')
      assert.match(r.body.toString(), /read-only/)
    }
    const r = await curl(gw.url, ['-X', 'OPTIONS'])
    assert.equal(r.status, 200)
    assert.equal(r.headers.dav, '1')
    assert.equal(r.headers.allow, 'OPTIONS, GET, HEAD, PROPFIND')
  })

  test('GET /.well-known/rotree/status: root, sequence, expiry, mirror health, caches', async () => {
    await curl(gw.url + 'medium.bin')
    const r = await curl(gw.url + '.well-known/rotree/status')
    assert.equal(r.status, 200)
    assert.equal(r.headers['cache-control'], 'no-store')
    const s = JSON.parse(r.body)
    assert.equal(s.trees.length, 1)
    const t = s.trees[0]
    assert.equal(t.root, fx.info.root); assert.equal(t.seq, fx.info.seq); assert.equal(t.expires, fx.info.expires)
    assert.equal(t.key, fx.pk)
    assert.equal(t.mirrors[0].url, fx.mirror.url); assert.equal(t.mirrors[0].healthy, true)
    assert.ok(t.memoryCache.entries > 0)
    assert.equal(t.localFaults, 0)
    assert.equal(s.diskCache, null)
  })
})

test('several trees under /NAME/, and a listing of them at /', async t => {
  const other = await makeFixture({ 'only-here.txt': 'other tree\n' })
  t.after(() => other.cleanup())
  const m2 = await serve(other.out)
  t.after(() => m2.close())
  const gw = await startGateway(t, { trees: { main: fx.addr, other: address(m2.url, other.pk) } })
  assert.equal((await curl(gw.url + 'main/hello.txt')).body.toString(), 'hello, world\n')
  assert.equal((await curl(gw.url + 'other/only-here.txt')).body.toString(), 'other tree\n')
  assert.equal((await curl(gw.url + 'other/hello.txt')).status, 404)
  let r = await curl(gw.url + 'main')
  assert.equal(r.status, 301); assert.equal(r.headers.location, '/main/')
  r = await curl(gw.url + 'main/docs')
  assert.equal(r.headers.location, '/main/docs/')
  const html = (await curl(gw.url + 'main/docs/')).body.toString()
  assert.match(html, /Index of \/main\/docs\//)
  r = await curl(gw.url)
  assert.equal(r.status, 200)
  assert.ok(r.body.toString().includes('<a href="./main/?listing">main/</a>'))
  assert.ok(r.body.toString().includes('<a href="./other/?listing">other/</a>'))
  assert.ok((await curl(gw.url + 'main/?listing')).body.toString().includes('<a href="../?listing">../</a>'), 'up to the list of trees')
  assert.equal((await curl(gw.url + 'nosuch/x')).status, 404)
  const s = JSON.parse((await curl(gw.url + '.well-known/rotree/status')).body)
  assert.deepEqual(s.trees.map(x => [x.mount, x.root]), [['/main/', fx.info.root], ['/other/', (await rootInfo(other.out)).root]])
})

test('a newer publish is picked up by the periodic refresh; each response names its root', async t => {
  const f = await makeFixture({ 'v.txt': 'one\n' })
  t.after(() => f.cleanup())
  const m = await serve(f.out)
  t.after(() => m.close())
  const gw = await startGateway(t, { tree: address(m.url, f.pk), refreshSeconds: 1 })
  const r1 = await curl(gw.url + 'v.txt')
  assert.equal(r1.body.toString(), 'one\n')
  await fs.writeFile(path.join(f.src, 'v.txt'), 'two\n')
  const { buildTree } = await import('../helpers/fixtures.js')
  await buildTree(f.src, { key: f.key, out: f.out })
  let r2
  for (let i = 0; i < 100; i++) { // bounded: the refresh runs every second
    r2 = await curl(gw.url + 'v.txt')
    if (r2.body.toString() === 'two\n') break
    await new Promise(resolve => setTimeout(resolve, 100))
  }
  assert.equal(r2.body.toString(), 'two\n')
  assert.notEqual(r2.headers['x-rotree-root'], r1.headers['x-rotree-root'])
  assert.ok(Number(r2.headers['x-rotree-seq']) > Number(r1.headers['x-rotree-seq']))
  assert.notEqual(r2.headers.etag, r1.headers.etag)
})

test('Cache-Control never outlives the fsinfo.json expiry', async t => {
  const f = await makeFixture({ 'a.txt': 'a\n' }, { ttlMs: 20_000 })
  t.after(() => f.cleanup())
  const m = await serve(f.out)
  t.after(() => m.close())
  const gw = await startGateway(t, { tree: address(m.url, f.pk), refreshSeconds: 3600 })
  const r = await curl(gw.url + 'a.txt')
  const maxAge = Number(/max-age=(\d+)/.exec(r.headers['cache-control'])[1])
  assert.ok(maxAge <= 20, `max-age ${maxAge} ≤ the 20 s left before expiry`)
})

test('format 2: Cache-Control and the expiry gauge never outlive the release, even when fsinfo.json does', async t => {
  // an fsinfo.json valid for an hour naming a release that expires in 20 s
  // (the format allows it; the root is usable until the first of them: FORMAT.md §12.9 step 7)
  const p = await Publisher.create({ anchor: 'key' })
  t.after(() => p.close())
  await p.publish({ 'a.txt': 'a\n' }, { ttlMs: 3600e3, release: { seq: 1, expires: Date.now() + 20_000 } })
  const m = await serve(p.out)
  t.after(() => m.close())
  const gw = await startGateway(t, { tree: p.address(m.url), refreshSeconds: 3600 })
  const r = await curl(gw.url + 'a.txt')
  assert.equal(r.status, 200)
  assert.ok(Date.parse(r.headers['x-rotree-expires']) > Date.now() + 600e3, 'fsinfo.json itself is valid for an hour')
  const maxAge = Number(/max-age=(\d+)/.exec(r.headers['cache-control'])[1])
  assert.ok(maxAge <= 20, `max-age ${maxAge} ≤ the 20 s left before the release expires`)
  const metrics = (await curl(gw.url + '.well-known/rotree/metrics')).body.toString()
  const left = Number(/^rotree_gateway_root_expiry_seconds\{[^}]*\} (\S+)$/m.exec(metrics)?.[1])
  assert.ok(left <= 20, `the expiry gauge shows ${left} s, not fsinfo.json's hour`)
})

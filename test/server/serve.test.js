// The embedded server against a real listening socket on port 0 and a temp
// folder. No assertions on timing: only on statuses, headers and bytes.

import { test, describe, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { createHash, randomBytes } from 'node:crypto'
import { mkdtemp, mkdir, writeFile, rename, rm, symlink, readdir } from 'node:fs/promises'
import http from 'node:http'
import net from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createRotreeServer } from '../../server/index.js'
import { rangeCases } from '../gateway/range-cases.js'

const sha = (buf) => createHash('sha256').update(buf).digest('hex')

async function makeTree () {
  const dir = await mkdtemp(join(tmpdir(), 'rotree-serve-'))
  await mkdir(join(dir, 'h'))
  return dir
}

async function addBlob (dir, buf) {
  const hex = sha(buf)
  await writeFile(join(dir, 'h', hex), buf)
  return hex
}

// node:http with no agent and no URL normalisation, so '..', '%2e' and the
// like reach the server exactly as written.
function raw (port, path, { method = 'GET', headers = {} } = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path, method, headers, agent: false }, (res) => {
      const parts = []
      res.on('data', (c) => parts.push(c))
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(parts) }))
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end()
  })
}

async function start (opts) {
  const s = await createRotreeServer(opts)
  const addr = await s.listen({ port: 0 })
  return { s, ...addr }
}

describe('blobs', () => {
  let dir, srv, small, smallHex, big, bigHex
  before(async () => {
    dir = await makeTree()
    small = randomBytes(16 * 1024)
    smallHex = await addBlob(dir, small)
    big = randomBytes(3 * 1024 * 1024 + 17) // above the cacheable size: streamed
    bigHex = await addBlob(dir, big)
    await writeFile(join(dir, 'fsinfo.json'), '{"v":1}\n')
    srv = await start({ dir })
  })
  after(async () => {
    await srv.s.close()
    await rm(dir, { recursive: true, force: true })
  })

  for (const kind of ['small', 'big']) {
    const get = () => kind === 'small' ? [small, smallHex] : [big, bigHex]

    test(`${kind}: 200 with exact bytes and every header`, async () => {
      const [buf, hex] = get()
      for (let i = 0; i < 2; i++) { // second time from the cache for small
        const r = await fetch(`${srv.url}h/${hex}`)
        assert.equal(r.status, 200)
        assert.equal(r.headers.get('content-type'), 'application/octet-stream')
        assert.equal(r.headers.get('content-length'), String(buf.length))
        assert.equal(r.headers.get('etag'), `"${hex}"`)
        assert.equal(r.headers.get('cache-control'), 'public, max-age=31536000, immutable')
        assert.equal(r.headers.get('accept-ranges'), 'bytes')
        assert.equal(r.headers.get('access-control-allow-origin'), '*')
        const expose = r.headers.get('access-control-expose-headers').split(/,\s*/).map((s) => s.toLowerCase())
        for (const h of ['content-length', 'content-range', 'etag', 'accept-ranges']) assert.ok(expose.includes(h), h)
        assert.ok(Buffer.from(await r.arrayBuffer()).equals(buf))
      }
    })

    test(`${kind}: HEAD has the length and no body`, async () => {
      const [buf, hex] = get()
      const r = await raw(srv.port, `/h/${hex}`, { method: 'HEAD' })
      assert.equal(r.status, 200)
      assert.equal(r.headers['content-length'], String(buf.length))
      assert.equal(r.headers.etag, `"${hex}"`)
      assert.equal(r.body.length, 0)
    })

    test(`${kind}: If-None-Match → 304`, async () => {
      const [, hex] = get()
      for (const inm of [`"${hex}"`, `W/"${hex}"`, `"x", "${hex}"`, '*']) {
        const r = await raw(srv.port, `/h/${hex}`, { headers: { 'if-none-match': inm } })
        assert.equal(r.status, 304, inm)
        assert.equal(r.headers.etag, `"${hex}"`)
        assert.equal(r.headers['cache-control'], 'public, max-age=31536000, immutable')
        assert.equal(r.body.length, 0)
      }
      const r = await raw(srv.port, `/h/${hex}`, { headers: { 'if-none-match': '"other"' } })
      assert.equal(r.status, 200)
    })

    test(`${kind}: single ranges → 206, unsatisfiable → 416, others ignored`, async () => {
      const [buf, hex] = get()
      const n = buf.length
      const cases = [
        ['bytes=0-0', 0, 0], // first byte
        [`bytes=${n - 1}-${n - 1}`, n - 1, n - 1], // last byte
        ['bytes=-1', n - 1, n - 1], // last byte, suffix form
        ['bytes=100-4195', 100, 4195], // middle
        [`bytes=${n - 300}-`, n - 300, n - 1], // open-ended
        ['bytes=-500', n - 500, n - 1], // suffix
        [`bytes=-${n + 10}`, 0, n - 1], // suffix longer than the blob
        [`bytes=${n - 5}-${n + 1000}`, n - 5, n - 1], // end past size is clamped
        ['Bytes=1-2', 1, 2] // the unit is case-insensitive
      ]
      for (const [range, a, b] of cases) {
        const r = await raw(srv.port, `/h/${hex}`, { headers: { range } })
        assert.equal(r.status, 206, range)
        assert.equal(r.headers['content-range'], `bytes ${a}-${b}/${n}`, range)
        assert.equal(r.headers['content-length'], String(b - a + 1), range)
        assert.equal(r.headers.etag, `"${hex}"`)
        assert.ok(r.body.equals(buf.subarray(a, b + 1)), range)
      }
      for (const range of [`bytes=${n}-`, `bytes=${n + 5}-${n + 9}`, 'bytes=-0']) {
        const r = await raw(srv.port, `/h/${hex}`, { headers: { range } })
        assert.equal(r.status, 416, range)
        assert.equal(r.headers['content-range'], `bytes */${n}`, range)
      }
      for (const range of ['bytes=0-1,5-6', 'bytes=abc', 'bytes=5-2', 'bytes=-', 'items=0-1', 'bytes 0-1']) {
        const r = await raw(srv.port, `/h/${hex}`, { headers: { range } })
        assert.equal(r.status, 200, range)
        assert.ok(r.body.equals(buf), range)
      }
      // If-Range with another validator: the whole blob, not a piece.
      const r = await raw(srv.port, `/h/${hex}`, { headers: { range: 'bytes=0-9', 'if-range': '"nope"' } })
      assert.equal(r.status, 200)
      const r2 = await raw(srv.port, `/h/${hex}`, { headers: { range: 'bytes=0-9', 'if-range': `"${hex}"` } })
      assert.equal(r2.status, 206)
      const h = await raw(srv.port, `/h/${hex}`, { method: 'HEAD', headers: { range: 'bytes=0-9' } })
      assert.equal(h.status, 206)
      assert.equal(h.headers['content-length'], '10')
      assert.equal(h.body.length, 0)
    })
  }

  // The same table as the gateway's (test/gateway/ranges.test.js): one answer per malformed Range.
  test('the shared Range table: invalid → 200, unsatisfiable → 416, valid → 206, for a cached and a streamed blob', async () => {
    for (const [buf, hex] of [[small, smallHex], [big, bigHex]]) {
      const n = buf.length
      for (const [range, want] of rangeCases(n)) {
        const r = await raw(srv.port, `/h/${hex}`, { headers: { range } })
        const status = Array.isArray(want) ? 206 : want
        assert.equal(r.status, status, `${range} (${n} bytes)`)
        if (status === 200) assert.ok(r.body.equals(buf), range)
        if (status === 416) assert.equal(r.headers['content-range'], `bytes */${n}`, range)
        if (status === 206) {
          assert.equal(r.headers['content-range'], `bytes ${want[0]}-${want[1]}/${n}`, range)
          assert.ok(r.body.equals(buf.subarray(want[0], want[1] + 1)), range)
        }
      }
    }
  })

  test('the query string is ignored', async () => {
    const r = await raw(srv.port, `/h/${smallHex}?x=1&y=../../etc/passwd`)
    assert.equal(r.status, 200)
    assert.ok(r.body.equals(small))
    const f = await raw(srv.port, '/fsinfo.json?t=123')
    assert.equal(f.status, 200)
  })

  test('missing blob and hostile paths → 404 with CORS and no-store, server keeps running', async () => {
    const paths = [
      `/h/${'0'.repeat(64)}`,
      '/h/../fsinfo.json',
      '/h/%2e%2e/fsinfo.json',
      '/h/..%2ffsinfo.json',
      `/h/${smallHex.toUpperCase()}`,
      `/h/${smallHex}/`,
      `/h/${smallHex}x`,
      `/h/${smallHex.slice(1)}`,
      `/h/${smallHex}%00`,
      '/h/%00',
      '/h/',
      '/h',
      '/etc/passwd',
      '/%2e%2e/',
      '/%2e%2e/%2e%2e/etc/passwd',
      '/../../etc/passwd',
      `//h/${smallHex}`,
      '/fsinfo.json/',
      '/h%2f' + smallHex
    ]
    for (const p of paths) {
      const r = await raw(srv.port, p)
      assert.equal(r.status, 404, p)
      assert.equal(r.body.toString(), 'not found', p)
      assert.equal(r.headers['access-control-allow-origin'], '*', p)
      assert.equal(r.headers['cache-control'], 'no-store', `${p}: a cache in front must never keep an absence`)
    }
  })

  test('a raw NUL in the request line is refused, and the server stays up', async () => {
    const reply = await new Promise((resolve, reject) => {
      const sock = net.connect(srv.port, '127.0.0.1', () => {
        sock.end(`GET /h/\0${smallHex} HTTP/1.1\r\nHost: x\r\n\r\n`)
      })
      let data = ''
      sock.on('data', (d) => { data += d })
      sock.on('end', () => resolve(data))
      sock.on('error', reject)
    })
    assert.match(reply, /^HTTP\/1\.1 4\d\d /)
    const r = await raw(srv.port, `/h/${smallHex}`)
    assert.equal(r.status, 200)
  })

  test('a symlink in h/ is not followed', async () => {
    const outside = Buffer.from('secret outside the tree\n')
    await writeFile(join(dir, 'outside'), outside)
    await symlink(join(dir, 'outside'), join(dir, 'h', sha(outside)))
    const r = await raw(srv.port, `/h/${sha(outside)}`)
    assert.equal(r.status, 404)
  })

  test('CORS preflight', async () => {
    for (const p of [`/h/${smallHex}`, '/fsinfo.json', '/anything']) {
      const r = await raw(srv.port, p, {
        method: 'OPTIONS',
        headers: { origin: 'https://example.org', 'access-control-request-method': 'GET', 'access-control-request-headers': 'range' }
      })
      assert.equal(r.status, 204, p)
      assert.equal(r.headers['access-control-allow-origin'], '*')
      assert.equal(r.headers['access-control-allow-methods'], 'GET, HEAD, OPTIONS')
      assert.match(r.headers['access-control-allow-headers'], /Range/)
      assert.match(r.headers['access-control-allow-headers'], /If-None-Match/)
      assert.ok(Number(r.headers['access-control-max-age']) > 0)
    }
  })

  test('other methods on blob and fsinfo paths → 405 with Allow', async () => {
    for (const [method, p] of [['POST', `/h/${smallHex}`], ['PUT', `/h/${smallHex}`], ['DELETE', '/fsinfo.json'], ['POST', '/fsinfo.json']]) {
      const r = await raw(srv.port, p, { method })
      assert.equal(r.status, 405, `${method} ${p}`)
      assert.equal(r.headers.allow, 'GET, HEAD, OPTIONS')
      assert.equal(r.headers['cache-control'], 'no-store')
    }
    const r = await raw(srv.port, '/elsewhere', { method: 'POST' })
    assert.equal(r.status, 404)
    assert.equal(r.body.toString(), 'not found')
    assert.equal(r.headers['cache-control'], 'no-store')
  })

  test('concurrent requests all get the right bytes', async () => {
    const blobs = [[small, smallHex], [big, bigHex]]
    for (let i = 0; i < 20; i++) {
      const b = randomBytes(1000 + i * 777)
      blobs.push([b, await addBlob(dir, b)]) // cold: concurrent misses share one read
    }
    const jobs = []
    for (let round = 0; round < 5; round++) {
      for (const [buf, hex] of blobs) {
        jobs.push(fetch(`${srv.url}h/${hex}`).then(async (r) => {
          assert.equal(r.status, 200)
          assert.ok(Buffer.from(await r.arrayBuffer()).equals(buf))
        }))
        jobs.push(raw(srv.port, `/h/${hex}`, { headers: { range: 'bytes=10-19' } }).then((r) => {
          assert.equal(r.status, 206)
          assert.ok(r.body.equals(buf.subarray(10, 20)))
        }))
      }
    }
    await Promise.all(jobs)
  })

  test('client aborts on streamed downloads leak no descriptors', { skip: process.platform !== 'linux' }, async () => {
    const fds = async () => (await readdir('/proc/self/fd')).length
    const before = await fds()
    await Promise.all(Array.from({ length: 20 }, () => new Promise((resolve) => {
      const req = http.get({ host: '127.0.0.1', port: srv.port, path: `/h/${bigHex}`, agent: false }, (res) => {
        res.once('data', () => { req.destroy(); resolve() })
      })
      req.on('error', () => {})
    })))
    // The server sees the resets asynchronously: poll rather than time it.
    let now = await fds()
    for (let i = 0; i < 200 && now > before; i++) {
      await new Promise((resolve) => setTimeout(resolve, 25))
      now = await fds()
    }
    assert.ok(now <= before, `descriptors: ${before} before, ${now} after`)
  })
})

describe('blob cache', () => {
  test('serves cached bytes after the file is gone; evicts least recently used', async () => {
    const dir = await makeTree()
    const blobs = []
    for (let i = 0; i < 4; i++) {
      const b = randomBytes(10_000)
      blobs.push([b, await addBlob(dir, b)])
    }
    // Room for three 10 kB blobs.
    const srv = await start({ dir, blobCacheBytes: 35_000 })
    try {
      const [a, b, c, d] = blobs
      for (const [, hex] of [a, b, c]) assert.equal((await raw(srv.port, `/h/${hex}`)).status, 200)
      assert.equal((await raw(srv.port, `/h/${a[1]}`)).status, 200) // a is now most recent
      assert.equal((await raw(srv.port, `/h/${d[1]}`)).status, 200) // evicts b, the oldest
      for (const [, hex] of blobs) await rm(join(dir, 'h', hex))
      for (const [buf, hex] of [a, c, d]) {
        const r = await raw(srv.port, `/h/${hex}`)
        assert.equal(r.status, 200)
        assert.ok(r.body.equals(buf))
        const p = await raw(srv.port, `/h/${hex}`, { headers: { range: 'bytes=-3' } })
        assert.equal(p.status, 206)
        assert.ok(p.body.equals(buf.subarray(-3)))
        assert.equal((await raw(srv.port, `/h/${hex}`, { headers: { 'if-none-match': `"${hex}"` } })).status, 304)
      }
      assert.equal((await raw(srv.port, `/h/${b[1]}`)).status, 404)
    } finally {
      await srv.s.close()
      await rm(dir, { recursive: true, force: true })
    }
  })

  test('a blob whose bytes do not match its name is served but never cached', async () => {
    const dir = await makeTree()
    const hex = sha(Buffer.from('the real content'))
    await writeFile(join(dir, 'h', hex), 'corrupted on disk')
    const srv = await start({ dir })
    try {
      const r = await raw(srv.port, `/h/${hex}`)
      assert.equal(r.status, 200) // readers verify; the server stays dumb
      assert.equal(r.body.toString(), 'corrupted on disk')
      await writeFile(join(dir, 'h', hex), 'the real content') // a repair on disk
      assert.equal((await raw(srv.port, `/h/${hex}`)).body.toString(), 'the real content')
    } finally {
      await srv.s.close()
      await rm(dir, { recursive: true, force: true })
    }
  })

  test('blobCacheBytes: 0 serves from disk every time', async () => {
    const dir = await makeTree()
    const buf = randomBytes(5000)
    const hex = await addBlob(dir, buf)
    const srv = await start({ dir, blobCacheBytes: 0 })
    try {
      assert.ok((await raw(srv.port, `/h/${hex}`)).body.equals(buf))
      await rm(join(dir, 'h', hex))
      assert.equal((await raw(srv.port, `/h/${hex}`)).status, 404)
    } finally {
      await srv.s.close()
      await rm(dir, { recursive: true, force: true })
    }
  })
})

describe('fsinfo.json', () => {
  test('served with its headers; a rename is picked up without restart', async () => {
    const dir = await makeTree()
    const srv = await start({ dir, fsinfoMaxAge: 7 })
    try {
      const none = await raw(srv.port, '/fsinfo.json') // before the first build
      assert.equal(none.status, 404)
      assert.equal(none.headers['cache-control'], 'no-store')

      const v1 = '{"seq":1}\n'
      await writeFile(join(dir, 'fsinfo.json'), v1)
      const r1 = await raw(srv.port, '/fsinfo.json')
      assert.equal(r1.status, 200)
      assert.equal(r1.body.toString(), v1)
      assert.equal(r1.headers['content-type'], 'application/json')
      assert.equal(r1.headers['cache-control'], 'public, max-age=7')
      assert.equal(r1.headers['access-control-allow-origin'], '*')
      assert.equal(r1.headers['content-length'], String(v1.length))
      const etag1 = r1.headers.etag
      assert.match(etag1, /^"[0-9a-f]{64}"$/)
      assert.equal((await raw(srv.port, '/fsinfo.json', { headers: { 'if-none-match': etag1 } })).status, 304)
      const h = await raw(srv.port, '/fsinfo.json', { method: 'HEAD' })
      assert.equal(h.headers['content-length'], String(v1.length))
      assert.equal(h.body.length, 0)

      // A rebuild: write a temp file, rename it over (same size, so only the
      // inode tells them apart), then read again at once.
      for (let seq = 2; seq <= 5; seq++) {
        const next = `{"seq":${seq}}\n`
        await writeFile(join(dir, 'fsinfo.json.tmp'), next)
        await rename(join(dir, 'fsinfo.json.tmp'), join(dir, 'fsinfo.json'))
        const r = await raw(srv.port, '/fsinfo.json', { headers: { 'if-none-match': etag1 } })
        assert.equal(r.status, 200)
        assert.equal(r.body.toString(), next)
        assert.notEqual(r.headers.etag, etag1)
        assert.equal((await raw(srv.port, '/fsinfo.json', { headers: { 'if-none-match': r.headers.etag } })).status, 304)
      }

      await rm(join(dir, 'fsinfo.json'))
      assert.equal((await raw(srv.port, '/fsinfo.json')).status, 404)
    } finally {
      await srv.s.close()
      await rm(dir, { recursive: true, force: true })
    }
  })

  test('concurrent reads across renames always return one whole version', async () => {
    const dir = await makeTree()
    const srv = await start({ dir })
    try {
      const versions = new Set()
      const jobs = []
      for (let seq = 0; seq < 20; seq++) {
        const body = JSON.stringify({ seq, pad: 'x'.repeat(seq * 10) })
        versions.add(body)
        await writeFile(join(dir, 'f.tmp'), body)
        await rename(join(dir, 'f.tmp'), join(dir, 'fsinfo.json'))
        for (let i = 0; i < 5; i++) {
          jobs.push(raw(srv.port, '/fsinfo.json').then((r) => {
            assert.equal(r.status, 200)
            assert.ok(versions.has(r.body.toString()))
            assert.equal(r.headers.etag, `"${sha(r.body)}"`)
          }))
        }
      }
      await Promise.all(jobs)
    } finally {
      await srv.s.close()
      await rm(dir, { recursive: true, force: true })
    }
  })
})

describe('web root', () => {
  test('serves the web app at / and nothing outside it', async () => {
    const dir = await makeTree()
    const web = await mkdtemp(join(tmpdir(), 'rotree-web-'))
    await writeFile(join(web, 'index.html'), '<!doctype html><title>rotree</title>')
    await writeFile(join(dir, 'secret.txt'), 'not for the web')
    const srv = await start({ dir, webRoot: web })
    try {
      const r = await raw(srv.port, '/')
      assert.equal(r.status, 200)
      assert.match(r.headers['content-type'], /text\/html/)
      assert.match(r.body.toString(), /rotree/)
      for (const p of ['/%2e%2e/' + dir.split('/').pop() + '/secret.txt', '/../secret.txt', '/missing.js']) {
        const x = await raw(srv.port, p)
        assert.equal(x.status, 404, p)
        assert.equal(x.headers['cache-control'], 'no-store', p)
      }
    } finally {
      await srv.s.close()
      await rm(dir, { recursive: true, force: true })
      await rm(web, { recursive: true, force: true })
    }
  })
})

describe('graceful close', () => {
  let dir, huge, hugeHex
  before(async () => {
    dir = await makeTree()
    huge = randomBytes(24 * 1024 * 1024) // more than loopback socket buffers hold
    hugeHex = await addBlob(dir, huge)
  })
  after(() => rm(dir, { recursive: true, force: true }))

  test('an in-flight slow download completes; new connections are refused', async () => {
    const srv = await start({ dir })
    const res = await new Promise((resolve, reject) => {
      http.get({ host: '127.0.0.1', port: srv.port, path: `/h/${hugeHex}`, agent: false }, resolve).on('error', reject)
    })
    res.pause() // a slow reader: the server is still writing when close() starts
    const closed = srv.s.close({ timeoutMs: 120_000 })

    await assert.rejects(raw(srv.port, '/fsinfo.json'), { code: 'ECONNREFUSED' })

    const parts = []
    res.on('data', (c) => parts.push(c))
    await new Promise((resolve, reject) => { res.on('end', resolve); res.on('error', reject); res.resume() })
    assert.ok(Buffer.concat(parts).equals(huge))
    await closed
    assert.equal(srv.s.server.listening, false)
  })

  test('a stalled client is cut at the deadline', async () => {
    const srv = await start({ dir })
    const req = http.get({ host: '127.0.0.1', port: srv.port, path: `/h/${hugeHex}`, agent: false })
    req.on('error', () => {})
    const res = await new Promise((resolve) => req.on('response', resolve))
    res.on('error', () => {})
    res.pause() // reads nothing until the server has given up
    await srv.s.close({ timeoutMs: 100 })
    let got = 0
    res.on('data', (c) => { got += c.length })
    await new Promise((resolve) => { res.on('close', resolve); res.resume() })
    assert.equal(res.complete, false)
    assert.ok(got < huge.length)
  })

  test('close() with idle keep-alive connections and twice in a row', async () => {
    const srv = await start({ dir })
    const agent = new http.Agent({ keepAlive: true })
    await new Promise((resolve) => http.get({ host: '127.0.0.1', port: srv.port, path: '/x', agent }, (r) => r.resume().on('end', resolve)))
    await Promise.all([srv.s.close(), srv.s.close()])
    agent.destroy()
  })
})

describe('handler', () => {
  test('mounts in another node:http server', async () => {
    const dir = await makeTree()
    const buf = Buffer.from('mounted')
    const hex = await addBlob(dir, buf)
    const { handler } = await createRotreeServer({ dir })
    const outer = http.createServer(handler)
    await new Promise((resolve) => outer.listen(0, '127.0.0.1', resolve))
    try {
      const r = await raw(outer.address().port, `/h/${hex}`)
      assert.ok(r.body.equals(buf))
    } finally {
      outer.closeAllConnections()
      await new Promise((resolve) => outer.close(resolve))
      await rm(dir, { recursive: true, force: true })
    }
  })

  test('a missing dir fails at creation', async () => {
    await assert.rejects(createRotreeServer({ dir: join(tmpdir(), 'rotree-does-not-exist-' + Date.now()) }), { code: 'ENOENT' })
  })
})

test('trust documents: /trust/<seq>.json served as JSON with CORS, a missing one is a no-store 404, other names are not served', async () => {
  const dir = await makeTree()
  await mkdir(join(dir, 'trust'))
  await writeFile(join(dir, 'trust', '1.json'), '{"type":"rotree-trust"}\n')
  await writeFile(join(dir, 'trust', 'notes.txt'), 'private')
  const srv = await start({ dir })
  try {
    const r = await raw(srv.port, '/trust/1.json')
    assert.equal(r.status, 200)
    assert.equal(r.headers['content-type'], 'application/json')
    assert.equal(r.headers['access-control-allow-origin'], '*')
    assert.equal(r.body.toString(), '{"type":"rotree-trust"}\n')
    const again = await raw(srv.port, '/trust/1.json', { headers: { 'if-none-match': r.headers.etag } })
    assert.equal(again.status, 304)
    const missing = await raw(srv.port, '/trust/2.json')
    assert.equal(missing.status, 404)
    assert.equal(missing.headers['cache-control'], 'no-store')
    for (const p of ['/trust/notes.txt', '/trust/01.json', '/trust/0.json', '/trust/1.json/..', '/trust/%31.json']) {
      assert.notEqual((await raw(srv.port, p)).status, 200, p)
    }
  } finally {
    await srv.s.close()
    await rm(dir, { recursive: true, force: true })
  }
})

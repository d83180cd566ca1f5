// The signed whole-file SHA-256 (docs/FORMAT.md §12.7) through the gateway:
// Repr-Digest on GET, HEAD and 206 (RFC 9530 §3: the digest of the whole
// representation, never of the range), and ownCloud's oc:checksums in
// PROPFIND. A version-2 tree signs every file's hash; a version-1 tree only
// names a one-chunk file by its hash, so its other files get no digest. The
// gateway never hashes bytes it served to make one up, and a whole GET never
// completes under a digest its bytes contradict. rclone reads the
// property only as SHA1 or MD5 (its webdav backend), which this suite checks
// against the installed rclone.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { createHash } from 'node:crypto'
import { openTree } from 'rotree-client'
import { serve } from '../helpers/fixtures.js'
import { needing } from '../helpers/tools.js'
import { Publisher } from '../client/v2-publisher.js'
import { startStaticMirror } from '../client/static-mirror.js'
import { tmpdir, writeTree, makeKey, buildTree, prng, address, startGateway, raw, run } from './helpers.js'

const MiB = 1 << 20
const sha = b => createHash('sha256').update(b).digest('hex')

const FILES = {
  'inline.txt': 'hello, signed hash\n',
  'one.bin': prng(100 * 1024, 'one'), // one chunk
  'many.bin': prng(3 * MiB, 'many'), // several chunks, listed in the entry
  'huge.bin': prng(12 * MiB, 'huge'), // enough chunks for a chunk index (version 2: kind 3)
  'sub/deep.txt': 'deep\n'
}
const FILE_NAMES = Object.keys(FILES)
const bytesOf = rel => Buffer.from(FILES[rel])

const fx = {}
before(async () => {
  fx.src = await tmpdir('rotree-digest-src-')
  await writeTree(fx.src, FILES)
  for (const version of [1, 2]) {
    const key = makeKey()
    const { out } = await buildTree(fx.src, { key, version })
    const mirror = await serve(out)
    const addr = address(mirror.url, key.publicKey)
    const gw = await startGateway(null, { tree: addr })
    fx[version] = { out, mirror, gw, url: gw.url, addr }
  }
})
after(async () => {
  for (const v of [1, 2]) {
    await fx[v]?.gw.close(); await fx[v]?.mirror.close()
    if (fx[v]) await fs.rm(fx[v].out, { recursive: true, force: true })
  }
  if (fx.src) await fs.rm(fx.src, { recursive: true, force: true })
})

/** The SHA-256 a Repr-Digest value carries, in hex; null when absent; throws when malformed. */
function digestOf (headers) {
  const v = headers['repr-digest']
  if (v === undefined) return null
  const m = /^sha-256=:([A-Za-z0-9+/]+={0,2}):$/.exec(v)
  assert.ok(m, `Repr-Digest ${JSON.stringify(v)} is a sha-256 byte sequence`)
  const b = Buffer.from(m[1], 'base64')
  assert.equal(b.length, 32)
  assert.equal(b.toString('base64'), m[1], 'canonical base64')
  return b.toString('hex')
}

const get = (v, rel, opts) => raw(fx[v].url, '/' + rel, opts)

test('the entries are the kinds this suite means to cover', async () => {
  const entries = {}
  for (const v of [1, 2]) {
    const t = await openTree(fx[v].addr, { stateDir: null, timeoutMs: 10_000 })
    try {
      for (const rel of ['inline.txt', 'one.bin', 'many.bin', 'huge.bin']) entries[`${v}/${rel}`] = await t.resolve('/' + rel)
    } finally { await t.close() }
  }
  assert.ok(entries['2/many.bin'].chunks.length > 1, 'many.bin is several chunks')
  assert.equal(entries['2/many.bin'].sha256, sha(bytesOf('many.bin')), 'the version-2 entry signs the file hash')
  assert.ok(entries['2/huge.bin'].index, 'huge.bin has a chunk index')
  assert.ok(entries['2/inline.txt'].inline, 'inline.txt is inline')
  assert.ok(entries['1/many.bin'].chunks.length > 1)
  assert.ok(entries['1/huge.bin'].index)
  assert.ok(entries['1/inline.txt'].inline)
  assert.equal(entries['1/one.bin'].chunks.length, 1)
  assert.equal(entries['1/many.bin'].sha256, undefined, 'a version-1 entry has no file hash')
})

test('version 2: GET and HEAD of every file carry Repr-Digest, the SHA-256 of its bytes', async () => {
  for (const rel of FILE_NAMES) {
    const r = await get(2, rel)
    assert.equal(r.status, 200, rel)
    assert.deepEqual(r.body, bytesOf(rel), rel)
    assert.equal(digestOf(r.headers), sha(bytesOf(rel)), `${rel}: Repr-Digest`)
    const h = await get(2, rel, { method: 'HEAD' })
    assert.equal(h.status, 200)
    assert.equal(h.headers['repr-digest'], r.headers['repr-digest'], `${rel}: HEAD says the same`)
  }
})

test('version 2: a 206 carries the whole file\'s digest, not the range\'s (RFC 9530 §3)', async () => {
  const whole = bytesOf('many.bin')
  for (const [range, start, end] of [['bytes=1048570-2097160', 1048570, 2097161], ['bytes=-100', whole.length - 100, whole.length], ['bytes=0-0', 0, 1]]) {
    const r = await get(2, 'many.bin', { headers: { range } })
    assert.equal(r.status, 206, range)
    assert.deepEqual(r.body, whole.subarray(start, end), range)
    assert.equal(digestOf(r.headers), sha(whole), `${range}: the representation's digest`)
    assert.notEqual(digestOf(r.headers), sha(r.body))
  }
  const inl = await get(2, 'inline.txt', { headers: { range: 'bytes=0-4' } })
  assert.equal(inl.status, 206)
  assert.equal(digestOf(inl.headers), sha(bytesOf('inline.txt')), 'an inline file\'s range too')
})

test('version 1: a file stored as one chunk has a digest (its handle), inline and multi-chunk files have none', async () => {
  const one = await get(1, 'one.bin')
  assert.equal(one.status, 200)
  assert.equal(digestOf(one.headers), sha(bytesOf('one.bin')))
  for (const rel of ['many.bin', 'huge.bin', 'inline.txt']) {
    const r = await get(1, rel)
    assert.equal(r.status, 200, rel)
    assert.deepEqual(r.body, bytesOf(rel), rel)
    assert.equal(r.headers['repr-digest'], undefined, `${rel}: the version-1 tree signed no hash of it`)
    const part = await get(1, rel, { headers: { range: 'bytes=1-2' } })
    assert.equal(part.headers['repr-digest'], undefined, `${rel}: nor on a 206`)
  }
})

test('a 304 and a listing carry no Repr-Digest', async () => {
  const r = await get(2, 'many.bin')
  const nm = await get(2, 'many.bin', { headers: { 'if-none-match': r.headers.etag } })
  assert.equal(nm.status, 304)
  assert.equal(nm.headers['repr-digest'], undefined)
  const dir = await get(2, '')
  assert.equal(dir.status, 200)
  assert.equal(dir.headers['repr-digest'], undefined)
})

test('a publisher that signs a wrong file hash: a whole GET fails (502, or a broken body), never a complete body under that digest', async t => {
  const p = await Publisher.create({ anchor: 'key' })
  t.after(() => p.close())
  const one = prng(100 * 1024, 'liar-one')
  const many = prng(3 * MiB, 'liar-many')
  const wrong = sha('other bytes')
  const lie = async (name, data, chunkSize) => ({ name, entry: { type: 'file', ...(await p.w.fileBody(data, { chunkSize })), sha256: wrong } })
  const root = await p.w.dir([await lie('one.bin', one), await lie('many.bin', many, 512 * 1024)])
  await p.w.publish({ root, release: { seq: 1 }, relSigners: [p.k.K], tsSigners: [p.k.K] })
  const m = await startStaticMirror(p.out)
  t.after(() => m.close())
  const gw = await startGateway(t, { tree: p.address(m.url) })

  const r1 = await raw(gw.url, '/one.bin')
  assert.equal(r1.status, 502, 'one chunk: the whole file is in hand before the status line (FORMAT.md §12.7 check)')
  assert.match(r1.body.toString(), /ROTREE_HASH_MISMATCH/)
  const r2 = await raw(gw.url, '/many.bin')
  assert.equal(r2.status, 200, 'several chunks: the status went out with the first chunk')
  assert.equal(digestOf(r2.headers), wrong, 'the signed (wrong) value')
  assert.ok(r2.error || r2.body.length < many.length, 'the body breaks before it is complete')
  const again = await raw(gw.url, '/many.bin')
  assert.ok(again.error || again.body.length < many.length, 'and again: a failed check is never remembered (verify.js FileHashVerdicts)')
  // a part of the file has no hash to check: served, under the digest the tree signed
  const part = await raw(gw.url, '/one.bin', { headers: { range: 'bytes=0-99' } })
  assert.equal(part.status, 206)
  assert.deepEqual(part.body, one.subarray(0, 100))
  assert.equal(digestOf(part.headers), wrong)
})

// what rclone's webdav backend sends for vendor owncloud
const OC_PROPFIND = '<?xml version="1.0"?>\n<d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:prop>' +
  '<d:displayname/><d:getlastmodified/><d:getcontentlength/><d:resourcetype/><oc:checksums/><oc:permissions/></d:prop></d:propfind>'

/** href → { ok: the 200 propstat's XML, missing: the 404 propstat's XML } of a multistatus body. */
function responses (xml) {
  const out = new Map()
  for (const m of xml.matchAll(/<D:response><D:href>([^<]*)<\/D:href>(.*?)<\/D:response>/gs)) {
    const stats = [...m[2].matchAll(/<D:propstat><D:prop>(.*?)<\/D:prop><D:status>HTTP\/1.1 (\d+)[^<]*<\/D:status><\/D:propstat>/gs)]
    out.set(decodeURIComponent(m[1]), {
      ok: stats.find(s => s[2] === '200')?.[1] ?? '',
      missing: stats.find(s => s[2] === '404')?.[1] ?? ''
    })
  }
  return out
}

const CHECKSUM_RE = /<oc:checksums xmlns:oc="http:\/\/owncloud.org\/ns"><oc:checksum>SHA256:([0-9a-f]{64})<\/oc:checksum><\/oc:checksums>/

test('PROPFIND Depth 1 (rclone\'s owncloud request): each version-2 file has oc:checksums SHA256:<hex>', async () => {
  for (const dir of ['', 'sub/']) {
    const r = await get(2, dir, { method: 'PROPFIND', headers: { depth: '1', 'content-type': 'application/xml' }, body: OC_PROPFIND })
    assert.equal(r.status, 207)
    const res = responses(r.body.toString())
    const files = FILE_NAMES.filter(f => path.posix.dirname(f) + '/' === (dir || './'))
    assert.ok(files.length > 0)
    for (const rel of files) {
      const x = res.get('/' + rel)
      assert.ok(x, `a response for /${rel}`)
      assert.equal(CHECKSUM_RE.exec(x.ok)?.[1], sha(bytesOf(rel)), `${rel}: oc:checksums`)
      assert.match(x.missing, /permissions/, 'a property the gateway does not have is a 404 propstat')
      assert.doesNotMatch(x.missing, /checksums/)
    }
    const self = res.get('/' + dir)
    assert.ok(self)
    assert.doesNotMatch(self.ok, /checksum/, 'a directory has no checksum')
    assert.match(self.missing, /<x:checksums xmlns:x="http:\/\/owncloud.org\/ns"\/>/, 'asked for, so a 404 in its own namespace')
  }
})

test('PROPFIND allprop and propname include oc:checksums for a signed file; version 1 has it only for a one-chunk file', async () => {
  const all = responses((await get(2, 'many.bin', { method: 'PROPFIND', headers: { depth: '0' } })).body.toString())
  assert.equal(CHECKSUM_RE.exec(all.get('/many.bin').ok)?.[1], sha(bytesOf('many.bin')), 'allprop (an empty body)')
  const names = await get(2, 'many.bin', { method: 'PROPFIND', headers: { depth: '0' }, body: '<propfind xmlns="DAV:"><propname/></propfind>' })
  assert.match(names.body.toString(), /<oc:checksums xmlns:oc="http:\/\/owncloud.org\/ns"\/>/, 'propname')

  const v1 = responses((await get(1, '', { method: 'PROPFIND', headers: { depth: '1' }, body: OC_PROPFIND })).body.toString())
  assert.equal(CHECKSUM_RE.exec(v1.get('/one.bin').ok)?.[1], sha(bytesOf('one.bin')))
  for (const rel of ['many.bin', 'huge.bin', 'inline.txt']) {
    assert.doesNotMatch(v1.get('/' + rel).ok, /checksum/, `${rel}: no hash the version-1 tree did not sign`)
    assert.match(v1.get('/' + rel).missing, /checksums/)
  }
})

// ---- rclone ------------------------------------------------------------------

const rc = needing('rclone')

async function rclone (args) {
  const dir = await tmpdir('rotree-digest-rclone-')
  try {
    const conf = path.join(dir, 'rclone.conf')
    await fs.writeFile(conf, '') // only the on-the-fly remote exists
    return await run('rclone', ['--config', conf, '--contimeout', '10s', '--timeout', '30s', '--retries', '1', '--low-level-retries', '1', ...args], { timeoutMs: 90_000 })
  } finally { await fs.rm(dir, { recursive: true, force: true }) }
}

const remote = v => `:webdav,url='${fx[v].url}',vendor=owncloud:`

/** `rclone hashsum` output: path → hex ('' for a line rclone could not hash). */
function sums (stdout) {
  const m = new Map()
  for (const line of stdout.split('\n')) {
    const x = /^(\S+)\s+(.+)$/.exec(line)
    if (x) m.set(x[2], /^[0-9a-f]+$/.test(x[1]) ? x[1] : '')
  }
  return m
}

rc.test('rclone (webdav, vendor owncloud) reads the checksums property as SHA1/MD5 only: SHA-256 comes from a download, and matches', { timeout: 90_000 }, async () => {
  // without --download: rclone's webdav backend offers MD5 and SHA1 only, so SHA256 is
  // refused; should a later rclone read SHA256 from oc:checksums, its values must still match
  const listed = await rclone(['hashsum', 'sha256', remote(2)])
  if (listed.code === 0 && sums(listed.stdout).size > 0) {
    for (const rel of FILE_NAMES) assert.equal(sums(listed.stdout).get(rel), sha(bytesOf(rel)), `rclone read ${rel}'s SHA256 from PROPFIND`)
  } else {
    assert.match(listed.stderr + listed.stdout, /unsupported|not supported|hash type/i, `rclone refused SHA256 for webdav: ${listed.stderr}`)
  }
  const dl = await rclone(['hashsum', 'sha256', '--download', remote(2)])
  assert.equal(dl.code, 0, dl.stderr)
  const got = sums(dl.stdout)
  for (const rel of FILE_NAMES) assert.equal(got.get(rel), sha(bytesOf(rel)), `rclone hashsum --download ${rel}`)
})

rc.test('rclone check: without --download it compares sizes only (no common hash); with it, passes and fails on a changed file', { timeout: 90_000 }, async () => {
  const plain = await rclone(['check', fx.src, remote(2)])
  assert.equal(plain.code, 0, plain.stderr)
  assert.match(plain.stderr, new RegExp(`${FILE_NAMES.length} hashes could not be checked`), 'rclone has MD5/SHA1 for webdav, the gateway SHA256 only')
  const ok = await rclone(['check', '--download', fx.src, remote(2)])
  assert.equal(ok.code, 0, ok.stderr)
  const copy = await tmpdir('rotree-digest-changed-')
  try {
    await writeTree(copy, { ...FILES, 'many.bin': Buffer.concat([bytesOf('many.bin').subarray(0, 1000), Buffer.from('X'), bytesOf('many.bin').subarray(1001)]) })
    const bad = await rclone(['check', '--download', '--differ', '-', copy, remote(2)])
    assert.notEqual(bad.code, 0, 'a file that differs fails the check')
    assert.equal(bad.stdout, 'many.bin\n', 'rclone names the one file that differs')
  } finally { await fs.rm(copy, { recursive: true, force: true }) }
})

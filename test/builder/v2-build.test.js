// build({ version: 2 }): format-version-2 trees (docs/FORMAT.md §12.6,
// §12.7) from the real builder, read back through the real client over the
// embedded server on a real socket, and checked blob by blob from h/: every
// handle is the SHA-256 of the stored bytes, compressible data is stored
// deflated and random data raw, every file entry carries the file's SHA-256.
// Rebuilds stay incremental and equal a clean build; version-1 and
// version-2 index records are never taken for each other.
import { test, after } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { createHash } from 'node:crypto'
import { spawnSync } from 'node:child_process'
import { openTree } from 'rotree-client'
import { decodeFsinfoV2, decodeDirPage, decodeChunkIndex, refOfReleaseRoot, MAX_DIRECT_CHUNKS, releaseMessage, INLINE_MAX_V2 } from 'rotree-client/format'
import { decodeBlobSync } from 'rotree-client/codec'
import { verifySignature } from 'rotree-client/crypto'
import { tmpdir, writeTree, makeKey, prng, serve } from '../helpers/fixtures.js'
import { build, Builder } from '../../builder/build.js'

const cleanups = []
after(async () => { for (const c of cleanups.reverse()) await c() })
const sha = b => createHash('sha256').update(b).digest('hex')
const MiB = 1 << 20
const ROTREE = new URL('../../bin/rotree.js', import.meta.url).pathname

async function dir (prefix) { const d = await tmpdir(prefix); cleanups.push(() => fs.rm(d, { recursive: true, force: true })); return d }

// text that compresses (~3x) without repeating, so content-defined chunking finds its cuts
function text (n, seed) {
  const words = ['tree', 'blob', 'page', 'chunk', 'mirror', 'reader', 'signed', 'root', 'index', 'version', 'hash', 'deflate']
  const r = prng(n, seed)
  const out = []
  let len = 0
  for (let i = 0; len < n; i++) {
    const line = `${i} ${words[r[i % n] % 12]} ${words[r[(i * 7) % n] % 12]} ${r.readUInt16LE((i * 2) % (n - 2))}\n`
    out.push(line); len += line.length
  }
  return Buffer.from(out.join('')).subarray(0, n)
}

// the mixed source tree: inline, one chunk (compressible and random), many
// chunks (an index page), a large file for big-file.js, symlinks, an empty dir
const FILES = {
  'inline.txt': 'hello, version 2\n',
  'empty.txt': '',
  'one.txt': text(40_000, 'one'),
  'one-random.bin': prng(50_000, 'one-random'),
  'many.bin': prng(10 * MiB, 'many'),
  'big.bin': Buffer.concat([text(6 * MiB, 'big'), prng(6 * MiB, 'big')]),
  'sub/deep/notes.md': text(20_000, 'notes'),
  'sub/deep/inline-max.txt': text(INLINE_MAX_V2, 'inline-max'),
  'sub/link': { symlink: '../inline.txt' },
  'sub/deep/up': { symlink: '../../one.txt' },
  'empty-dir': { dir: true }
}
const FILE_PATHS = Object.keys(FILES).filter(p => typeof FILES[p] === 'string' || FILES[p] instanceof Uint8Array)
const bytesOf = p => Buffer.from(FILES[p])

let _src = null
async function mixedSrc () {
  if (_src) return _src
  _src = path.join(await dir('rotree-v2-src-'), 'src')
  await writeTree(_src, FILES)
  return _src
}

const opts = (src, out, key, extra = {}) => ({
  src, out, key, ttlMs: 3600e3, fsync: false, racyMs: 0, version: 2, threads: 2, workersAfter: 0, bigAt: 11 * MiB, segment: 3 * MiB, ...extra
})

/**
 * Every blob reachable from OUT's version-2 root, checked against its name and
 * its ref, and every file's chunk refs: { files: Map(path → { entry, chunks }), blobs }.
 */
async function walkStored (out) {
  const info = decodeFsinfoV2(await fs.readFile(path.join(out, 'fsinfo.json')))
  const blobs = new Map() // hash → { stored, ref }
  const load = async ref => {
    const stored = await fs.readFile(path.join(out, 'h', ref.hash))
    assert.equal(sha(stored), ref.hash, `h/${ref.hash} is named by the SHA-256 of its stored bytes`)
    assert.equal(stored.length, ref.storedSize, `h/${ref.hash}: stored size as its ref says`)
    blobs.set(ref.hash, { stored, ref })
    return decodeBlobSync(new Uint8Array(stored), ref.codec, ref.size)
  }
  const files = new Map()
  const chunksOf = async (ref, level) => {
    const ix = decodeChunkIndex(await load(ref), { version: 2 })
    assert.equal(ix.level, level)
    const out = []
    for (const c of ix.children) out.push(...(level === 1 ? [c] : await chunksOf(c, level - 1)))
    return out
  }
  const walkDir = async (ref, rel) => {
    const page = decodeDirPage(await load(ref), { version: 2 })
    if (page.kind === 'index') { for (const c of page.children) await walkDir(c, rel); return }
    for (const e of page.entries) {
      const p = rel + e.name
      if (e.type === 'dir') await walkDir(e.dir, p + '/')
      else if (e.type === 'file') {
        const chunks = e.inline ? [] : e.chunks ?? await chunksOf(e.index, e.index.levels)
        for (const c of chunks) await load(c)
        files.set(p, { entry: e, chunks })
      }
    }
  }
  await walkDir(refOfReleaseRoot(info.release.root), '')
  return { info, files, blobs }
}

async function open (url, key, name) {
  const t = await openTree(`${url}#${key.publicKey}${name ? ':' + name : ''}`, { stateDir: null, timeoutMs: 10_000, fsinfoSettleMs: 50 })
  cleanups.push(() => t.close())
  return t
}

test('a version-2 build of a mixed tree reads back through the client byte for byte, with each file\'s SHA-256', async () => {
  const src = await mixedSrc()
  const out = path.join(await dir('rotree-v2-out-'), 'out')
  const key = makeKey()
  const r = await build(opts(src, out, key, { name: 'stable' }))
  assert.equal(r.version, 2)
  assert.equal(r.name, 'stable')
  assert.equal(r.pool.bigFiles, 1, 'big.bin went through big-file.js')
  assert.equal(r.files, FILE_PATHS.length)

  const srv = await serve(out); cleanups.push(srv.close)
  const tree = await open(srv.url, key, 'stable')
  assert.equal(tree.info.version, 2)
  assert.equal(tree.info.name, 'stable')
  for (const p of FILE_PATHS) {
    const want = bytesOf(p)
    const got = Buffer.from(await tree.readFile('/' + p))
    assert.ok(got.equals(want), `${p}: the bytes read are the source's`)
    const st = await tree.stat('/' + p)
    assert.equal(st.size, want.length)
    assert.equal(st.sha256, sha(want), `${p}: stat's sha256 is the file's`)
  }
  assert.equal((await tree.lstat('/sub/link')).target, '../inline.txt')
  assert.equal(Buffer.from(await tree.readFile('/sub/link')).toString(), FILES['inline.txt'])
  assert.ok(Buffer.from(await tree.readFile('/sub/deep/up')).equals(bytesOf('one.txt')))
  assert.deepEqual(await tree.readdir('/empty-dir'), [])
  // a range inside a compressed chunk of the large file
  const parts = []
  for await (const b of tree.readRange('/big.bin', { start: 3 * MiB + 5, end: 3 * MiB + 700_004 })) parts.push(b)
  assert.ok(Buffer.concat(parts).equals(bytesOf('big.bin').subarray(3 * MiB + 5, 3 * MiB + 700_005)))
})

test('version-2 blobs: named by the SHA-256 of their stored bytes, compressible data deflated, random data raw', async () => {
  const src = await mixedSrc()
  const out = path.join(await dir('rotree-v2-out-'), 'out')
  const key = makeKey()
  const r = await build(opts(src, out, key))
  const { info, files, blobs } = await walkStored(out)
  assert.equal(info.version, 2)
  assert.equal(info.trust, null)
  assert.equal(info.release.root.hash, r.root)
  assert.equal(info.release.root.decodedSize, r.rootSize)
  assert.equal(info.release.root.size, r.rootStoredSize)
  assert.equal(info.release.root.codec, r.rootCodec)

  // every file of h/ (not only those reached) is named by its bytes' hash
  const names = (await fs.readdir(path.join(out, 'h'))).filter(n => !n.startsWith('.'))
  assert.equal(names.length, blobs.size, 'h/ holds exactly the blobs the tree reaches')
  for (const n of names) assert.equal(sha(await fs.readFile(path.join(out, 'h', n))), n)

  for (const p of FILE_PATHS) {
    const { entry, chunks } = files.get(p)
    const want = bytesOf(p)
    assert.equal(entry.size, want.length)
    if (want.length <= INLINE_MAX_V2) { assert.ok(entry.inline, `${p} is inline`); assert.equal(entry.sha256, null); continue }
    assert.equal(entry.sha256, sha(want), `${p}: its entry carries the file's SHA-256`)
    assert.equal(chunks.reduce((n, c) => n + c.size, 0), want.length)
  }
  const deflated = c => c.codec === 'deflate-raw' && c.storedSize < c.size
  const raw = c => c.codec === 'none' && c.storedSize === c.size
  assert.ok(files.get('one.txt').chunks.length === 1 && deflated(files.get('one.txt').chunks[0]), 'a one-chunk text file is stored deflated')
  assert.notEqual(files.get('one.txt').chunks[0].hash, sha(bytesOf('one.txt')), 'its handle names the stored bytes, its sha256 the file')
  assert.ok(files.get('one-random.bin').chunks.every(raw), 'a random one-chunk file is stored raw')
  assert.ok(files.get('sub/deep/notes.md').chunks.every(deflated))
  const many = files.get('many.bin')
  assert.ok(many.entry.index && many.chunks.length > MAX_DIRECT_CHUNKS, `many.bin has a chunk index (${many.chunks.length} chunks)`)
  assert.ok(many.chunks.every(raw), 'random chunks are stored raw')
  const big = files.get('big.bin')
  assert.ok(big.entry.index, 'big.bin has a chunk index')
  // its first 6 MiB are text, the rest random: the chunks wholly inside each half
  let at = 0; let nText = 0; let nRandom = 0
  for (const c of big.chunks) {
    if (at + c.size <= 6 * MiB) { assert.ok(deflated(c), `big.bin chunk at ${at} (text) is deflated`); nText++ }
    if (at >= 6 * MiB) { assert.ok(raw(c), `big.bin chunk at ${at} (random) is raw`); nRandom++ }
    at += c.size
  }
  assert.ok(nText >= 2 && nRandom >= 2, `${nText} text and ${nRandom} random chunks`)
  const stored = [...blobs.values()].reduce((n, b) => n + b.stored.length, 0)
  // ~6 MiB of the files are text, which deflate stores in about a third of its size
  assert.ok(stored < r.bytes - 3 * MiB, `stored ${stored} bytes for ${r.bytes} bytes of files`)

  // the same tree on one thread (no workers, no big-file path): the same root, the same blobs
  const one = await build(opts(src, path.join(await dir('rotree-v2-out-'), 'out'), key, { threads: 0 }))
  assert.equal(one.pool.bigFiles, 0)
  assert.equal(one.root, r.root)
})

test('a version-2 rebuild reads only what changed and equals a clean version-2 build', async () => {
  const src = path.join(await dir('rotree-v2-src-'), 'src')
  await writeTree(src, {
    'a.txt': text(20_000, 'a'), 'b.bin': prng(300_000, 'b'), 'c/inline.txt': 'small', 'c/d/e.txt': text(200_000, 'e'),
    'c/link': { symlink: 'inline.txt' }, 'many.bin': prng(9 * MiB, 'rebuild-many')
  })
  const out = path.join(await dir('rotree-v2-out-'), 'out')
  const key = makeKey()
  const o = (dst, x) => opts(src, dst, key, { bigAt: Infinity, ...x })
  const first = await build(o(out))
  const again = await build(o(out))
  assert.equal(again.root, first.root)
  assert.equal(again.index.misses, 0, 'nothing read again')
  assert.equal(again.blobs.written, 0)

  await fs.writeFile(path.join(src, 'c/d/e.txt'), text(210_000, 'e2'))
  const re = await build(o(out))
  assert.equal(re.index.misses, 1, 'only the changed file was read')
  assert.notEqual(re.root, first.root)
  const clean = await build(o(path.join(await dir('rotree-v2-out-'), 'out')))
  assert.equal(re.root, clean.root, 'the rebuild is the clean build')
  assert.equal(re.rootStoredSize, clean.rootStoredSize)
  assert.equal(re.rootCodec, clean.rootCodec)
  // and what the rebuilt tree reaches is all there and well named
  const { files } = await walkStored(out)
  assert.equal(files.get('c/d/e.txt').entry.sha256, sha(text(210_000, 'e2')))
  assert.equal(files.get('many.bin').entry.sha256, sha(prng(9 * MiB, 'rebuild-many')), 'an unchanged file\'s SHA-256 from its index record')
})

test('version 2: a large file the main thread meets is compressed on the workers (big-file.js), to the same tree', async () => {
  const src = path.join(await dir('rotree-v2-src-'), 'src')
  await writeTree(src, { 'small.txt': text(20_000, 's'), 'large.txt': text(5 * MiB, 'large') })
  const key = makeKey()
  // workers start only after 64 MiB: the main thread reads these files itself
  const r = await build(opts(src, path.join(await dir('rotree-v2-out-'), 'out'), key, { workersAfter: 64 * MiB, bigAt: Infinity }))
  assert.equal(r.pool.mainFiles, 1, 'small.txt on the main thread')
  assert.equal(r.pool.bigFiles, 1, 'large.txt handed to the workers')
  const one = await build(opts(src, path.join(await dir('rotree-v2-out-'), 'out'), key, { threads: 0 }))
  assert.equal(one.pool.bigFiles, 0)
  assert.equal(r.root, one.root)
})

test('a partial version-2 run (as --watch makes) looks at the changed directory only and equals a clean build', async () => {
  const src = path.join(await dir('rotree-v2-src-'), 'src')
  await writeTree(src, {
    'a/b/c.txt': text(30_000, 'c'), 'a/top.txt': 'top', 'd/big.bin': prng(400_000, 'big'), 'd/t.txt': text(100_000, 't'), 'l': { symlink: 'a/top.txt' }
  })
  const key = makeKey()
  const out = path.join(await dir('rotree-v2-out-'), 'out')
  const b = await Builder.open(opts(src, out, key))
  try {
    await b.run()
    await fs.writeFile(path.join(src, 'a/b/c.txt'), text(31_000, 'c2'))
    await fs.writeFile(path.join(src, 'a/b/new.txt'), text(20_000, 'new'))
    const r = await b.run({ dirty: new Set(['/a/b']) })
    assert.equal(r.partial, true)
    assert.equal(r.index.misses, 2, 'the two files of a/b read')
    const clean = await build(opts(src, path.join(await dir('rotree-v2-out-'), 'out'), key))
    assert.equal(r.root, clean.root)
    assert.equal(r.rootCodec, clean.rootCodec)
  } finally { await b.close() }
  const { files } = await walkStored(out)
  assert.equal(files.get('a/b/new.txt').entry.sha256, sha(text(20_000, 'new')))
  assert.equal(files.get('d/t.txt').entry.sha256, sha(text(100_000, 't')))
})

test('one OUT built as version 1, then 2, then 1: no record is taken for the other version', async () => {
  // after a version-2 publish a version-1 root is a rollback to readers, so build refuses it;
  // the index is tested by forgetting what was published (fsinfo.json, history/) and keeping h/ and the index
  const forget = () => Promise.all(['fsinfo.json', 'history'].map(f => fs.rm(path.join(out, f), { recursive: true, force: true })))
  const src = path.join(await dir('rotree-v2-src-'), 'src')
  await writeTree(src, { 'a.txt': text(30_000, 'v'), 'b/c.bin': prng(100_000, 'v'), 'b/i.txt': 'inline', 'l': { symlink: 'a.txt' } })
  const key = makeKey()
  const out = path.join(await dir('rotree-v2-out-'), 'out')
  const v1 = x => opts(src, out, key, { version: 1, ...x })
  const v2 = x => opts(src, out, key, x)
  const cleanV2 = await build(opts(src, path.join(await dir('rotree-v2-out-'), 'out'), key))

  const a = await build(v1())
  assert.equal(a.version, 1)
  const b = await build(v2())
  assert.equal(b.index.hits, 0, 'no version-1 file record taken for version 2')
  assert.equal(b.index.dirHits, 0)
  assert.ok(b.index.otherVersion >= 2, 'the version-1 records were seen and passed over')
  assert.equal(b.root, cleanV2.root)
  await assert.rejects(build(v1()), err => err.code === 'ROTREE_USAGE' && /rollback/.test(err.message))
  await forget()
  const c = await build(v1())
  assert.equal(c.index.hits, 0, 'no version-2 record taken for version 1')
  assert.equal(c.root, a.root)
  const d = await build(v1())
  assert.equal(d.index.misses, 0, 'version-1 records are taken again by version 1')
  const e = await build(v2())
  await forget()
  assert.equal(e.index.hits, 0)
  const f = await build(v2())
  assert.equal(f.index.misses, 0)
  assert.equal(f.root, cleanV2.root)
})

test('rotree build --key K --format 2 --name N publishes a single-key version-2 tree the client opens at #K:N', async () => {
  const src = path.join(await dir('rotree-v2-src-'), 'src')
  await writeTree(src, { 'hello.txt': 'hello\n', 'doc.txt': text(50_000, 'cli') })
  const base = await dir('rotree-v2-cli-')
  const keyFile = path.join(base, 'k.key')
  const run = (...args) => spawnSync(process.execPath, [ROTREE, ...args], { encoding: 'utf8', timeout: 60_000 })
  assert.equal(run('keygen', keyFile).status, 0)
  const key = JSON.parse(await fs.readFile(keyFile, 'utf8'))
  assert.ok(key.publicKey)

  const out = path.join(base, 'out')
  const b = run('build', src, out, '--key', keyFile, '--format', '2', '--name', 'stable', '--no-fsync', '--json')
  assert.equal(b.status, 0, b.stderr)
  const r = JSON.parse(b.stdout)
  assert.equal(r.version, 2)
  const bytes = await fs.readFile(path.join(out, 'fsinfo.json'))
  const info = decodeFsinfoV2(bytes)
  assert.equal(info.name, 'stable')
  assert.equal(info.release.name, 'stable')
  assert.equal(info.trust, null)
  assert.deepEqual(info.signatures.map(s => s.key), [key.publicKey])
  assert.deepEqual(info.release.signatures.map(s => s.key), [key.publicKey])
  assert.ok(verifySignature(info.release.signatures[0].sig, releaseMessage(info.release), key.publicKey))
  assert.ok(verifySignature(info.signatures[0].sig, info.message, key.publicKey))
  assert.ok((await fs.readFile(path.join(out, 'history', `${info.seq}.json`))).equals(bytes), 'recorded in history/')

  const srv = await serve(out); cleanups.push(srv.close)
  const tree = await open(srv.url, key, 'stable')
  assert.equal(Buffer.from(await tree.readFile('/doc.txt')).toString(), text(50_000, 'cli').toString())
  await assert.rejects(open(srv.url, key, ''), err => JSON.stringify([err.code, ...(err.errors ?? []).map(e => e.code)]).includes('ROTREE_WRONG_NAME'))

  // a second publish without --name or --format stays format 2 and keeps the tree's name; the sequences move on
  const b2 = run('build', src, out, '--key', keyFile, '--no-fsync', '--json')
  assert.equal(b2.status, 0, b2.stderr)
  const info2 = decodeFsinfoV2(await fs.readFile(path.join(out, 'fsinfo.json')))
  assert.equal(info2.name, 'stable')
  assert.ok(info2.seq > info.seq && info2.release.seq > info.release.seq)
  // --name with --format 1 is refused before anything is built, and so is format 1 into a version-2 OUT
  assert.equal(run('build', src, path.join(base, 'o2'), '--key', keyFile, '--format', '1', '--name', 'x').status, 2)
  const back = run('build', src, out, '--key', keyFile, '--format', '1')
  assert.equal(back.status, 2)
  assert.match(back.stderr, /rollback/)
})

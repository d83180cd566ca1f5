// The mirror-side tools on format-version-2 trees (docs/FORMAT.md §12):
// pull copies the stored bytes of every blob and the trust chain, and the
// copy opens from scratch; fsck finds a corrupt compressed blob and a hole
// in trust/; gc keeps what the kept roots reach and every trust document;
// push verifies the roots by the trust documents before it uploads.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { createHash } from 'node:crypto'
import { spawnSync } from 'node:child_process'
import { openTree } from 'rotree-client'
import { walkTree } from 'rotree-client/tree'
import { decodeFsinfoV2, refOfReleaseRoot } from 'rotree-client/format'
import { tmpdir, writeTree, makeKey, prng } from '../helpers/fixtures.js'
import { Publisher, role } from '../client/v2-publisher.js'
import { startStaticMirror } from '../client/static-mirror.js'
import { build } from '../../builder/build.js'
import { gc } from '../../builder/gc.js'
import { pull } from '../../mirror/pull.js'
import { fsck } from '../../mirror/fsck.js'
import { blobSource } from '../../mirror/source.js'
import { pageLoader } from '../../lib/published/index.js'
import { rotree, blobNames } from './helpers.js'

const sha = b => createHash('sha256').update(b).digest('hex')
const haveRclone = spawnSync('rclone', ['version'], { stdio: 'ignore' }).status === 0

async function scratch (t, prefix) {
  const d = await tmpdir(prefix)
  t.after(() => fs.rm(d, { recursive: true, force: true }))
  return d
}

// compressible text that does not repeat, so it is stored deflated and chunked
function text (n, seed) {
  const words = ['tree', 'blob', 'page', 'chunk', 'mirror', 'reader', 'signed', 'root', 'index', 'trust']
  const r = prng(n, seed)
  let s = ''
  for (let i = 0; s.length < n; i++) s += words[r[i % r.length] % words.length] + (r[(i + 7) % r.length] % 9 === 0 ? '\n' : ' ')
  return s.slice(0, n)
}

const FILES = {
  'README.md': '# v2\n',
  'docs/long.txt': text(300_000, 'long'),
  'docs/random.bin': prng(100_000, 'rnd'),
  'small/a.txt': 'a\n'
}

/** A fresh reader (no state) of the tree at `address` reads every file as `files` says. */
async function readsAll (address, files) {
  const tree = await openTree(address, { stateDir: null, timeoutMs: 5000 })
  try {
    for (const [p, want] of Object.entries(files)) {
      const got = await tree.readFile('/' + p)
      assert.equal(sha(got), sha(typeof want === 'string' ? Buffer.from(want) : want), p)
    }
    return tree.info
  } finally { tree.close() }
}

/** Every ref the root of DIR's fsinfo.json reaches: { ref, kind }[]. */
async function refsOf (dir) {
  const info = decodeFsinfoV2(await fs.readFile(path.join(dir, 'fsinfo.json')))
  const out = []
  await walkTree(refOfReleaseRoot(info.release.root), pageLoader(dir), (ref, kind) => { out.push({ ref, kind }) })
  return out
}

/** A Publisher tree of FILES with big chunked files, rotated from trust 1 to 2, published under 2. */
async function rotatedTree (t) {
  const p = await Publisher.create({ name: 'stable' })
  t.after(() => p.close())
  const files = { ...FILES, 'docs/chunked.txt': { data: text(200_000, 'chunked'), chunkSize: 4096 } }
  await p.publish(files)
  const k = p.k
  await p.rotate({ root: role([k.A, k.B, k.D], 2), release: role([k.R2, k.R3], 2), timestamp: role([k.T2]) })
  await p.publish(files)
  const plain = Object.fromEntries(Object.entries(files).map(([n, v]) => [n, v.data ?? v]))
  return { p, files: plain }
}

test('pull of a single-key version-2 tree from build({ version: 2, name }): a fresh reader of the copy reads every file', { timeout: 60_000 }, async t => {
  const d = await scratch(t, 'rotree-v2pull-')
  const src = path.join(d, 'src'); const out = path.join(d, 'out'); const dir = path.join(d, 'mirror')
  await writeTree(src, FILES)
  const key = makeKey()
  await build({ src, out, key, ttlMs: 3600e3, fsync: false, version: 2, name: 'stable' })
  const srv = await startStaticMirror(out); t.after(srv.close)
  const addr = `${srv.url}#${key.publicKey}:stable`

  const r = await pull({ address: addr, dir, reader: { stateDir: null }, fsync: false })
  assert.equal(r.updated, true)
  assert.deepEqual(await fs.readFile(path.join(dir, 'fsinfo.json')), await fs.readFile(path.join(out, 'fsinfo.json')))
  const refs = await refsOf(out)
  assert.ok(refs.some(x => x.ref.codec === 'deflate-raw'), 'the tree has compressed blobs')
  assert.deepEqual(await blobNames(dir), new Set(refs.map(x => x.ref.hash)))
  for (const h of await blobNames(dir)) {
    assert.equal(sha(await fs.readFile(path.join(dir, 'h', h))), h, 'every blob is its stored bytes')
  }
  const stored = new Map(refs.map(x => [x.ref.hash, x.ref.storedSize]))
  assert.equal(r.fetched.bytes, [...stored.values()].reduce((a, b) => a + b, 0), 'stored bytes counted')

  const copy = await startStaticMirror(dir); t.after(copy.close)
  const info = await readsAll(`${copy.url}#${key.publicKey}:stable`, FILES)
  assert.equal(info.version, 2)

  // again: nothing to fetch
  const again = await pull({ address: addr, dir, reader: { stateDir: null }, fsync: false })
  assert.equal(again.fetched.blobs, 0)
  assert.equal(again.updated, false)
})

test('pull of a k-of-n tree rotated from trust 1 to 2 copies the chain; the copy opens by #t<hash>:name from scratch', { timeout: 60_000 }, async t => {
  const { p, files } = await rotatedTree(t)
  const d = await scratch(t, 'rotree-v2pull-')
  const dir = path.join(d, 'mirror')
  const srv = await startStaticMirror(p.out); t.after(srv.close)

  const r = await pull({ address: p.address(srv.url), dir, reader: { stateDir: path.join(d, 'state') }, fsync: false })
  assert.deepEqual(r.trust, { fetched: 2, present: 0 })
  assert.deepEqual((await fs.readdir(path.join(dir, 'trust'))).sort(), ['1.json', '2.json'])
  for (const n of [1, 2]) assert.deepEqual(await fs.readFile(path.join(dir, 'trust', `${n}.json`)), await fs.readFile(path.join(p.out, 'trust', `${n}.json`)))
  const copy = await startStaticMirror(dir); t.after(copy.close)
  const info = await readsAll(p.address(copy.url), files)
  assert.equal(info.trustSeq, 2)

  // a newer release: only what changed moves, and the chain is already there
  await p.publish({ ...files, 'new.txt': 'new\n' })
  const r2 = await pull({ address: p.address(srv.url), dir, reader: { stateDir: path.join(d, 'state') }, fsync: false })
  assert.deepEqual(r2.trust, { fetched: 0, present: 2 })
  assert.ok(r2.fetched.blobs > 0 && r2.present.blobs > 0)
  await readsAll(p.address(copy.url), { ...files, 'new.txt': 'new\n' })
})

test('pull refuses a version-2 fsinfo.json with too few release signatures and leaves DIR as it was', { timeout: 60_000 }, async t => {
  const { p, files } = await rotatedTree(t)
  const d = await scratch(t, 'rotree-v2pull-')
  const dir = path.join(d, 'mirror')
  const srv = await startStaticMirror(p.out); t.after(srv.close)

  // trust 2 wants 2 of R2, R3 for a release: one is too few
  await p.publish({ ...files, 'bad.txt': 'x' }, { relSigners: [p.k.R2] })
  await assert.rejects(pull({ address: p.address(srv.url), dir, reader: { stateDir: null }, fsync: false }),
    err => (err.code === 'ROTREE_THRESHOLD' || err.errors?.every(e => e.code === 'ROTREE_THRESHOLD')) && err.message.includes('release'))
  await assert.rejects(fs.access(path.join(dir, 'fsinfo.json')), { code: 'ENOENT' })

  // over a good copy: it stays
  await p.publish(files)
  await pull({ address: p.address(srv.url), dir, reader: { stateDir: null }, fsync: false })
  const before = await fs.readFile(path.join(dir, 'fsinfo.json'))
  await p.publish({ ...files, 'bad.txt': 'x' }, { relSigners: [p.k.R2] })
  await assert.rejects(pull({ address: p.address(srv.url), dir, reader: { stateDir: null }, fsync: false }), /release/)
  assert.deepEqual(await fs.readFile(path.join(dir, 'fsinfo.json')), before)
})

test('fsck of a pulled version-2 folder: clean, then a corrupt compressed blob and a missing trust document are found and repaired', { timeout: 60_000 }, async t => {
  const { p } = await rotatedTree(t)
  const d = await scratch(t, 'rotree-v2fsck-')
  const dir = path.join(d, 'mirror')
  const srv = await startStaticMirror(p.out); t.after(srv.close)
  await pull({ address: p.address(srv.url), dir, reader: { stateDir: null }, fsync: false })
  const anchor = { kind: 'trust', hash: p.anchor.slice(1) }

  const clean = await fsck(dir, { anchor, name: 'stable', fsync: false })
  assert.equal(clean.ok, true, JSON.stringify(clean.fsinfo.problems))
  assert.equal(clean.fsinfo.version, 2)
  assert.equal(clean.fsinfo.trust.docs, 2)
  const self = await fsck(dir, { fsync: false }) // no address: the folder's own claims, with a warning
  assert.equal(self.ok, true)
  assert.ok(self.warnings.some(w => w.includes('self-asserted')))
  // another name is another tree
  const other = await fsck(dir, { anchor, name: 'nightly', fsync: false })
  assert.deepEqual(other.fsinfo.problems.map(x => x.code), ['ROTREE_WRONG_NAME'])

  // one bit of a deflated data chunk flips: its bytes no longer hash to its name
  const victim = (await refsOf(dir)).find(x => x.kind === 'data' && x.ref.codec === 'deflate-raw').ref
  const file = path.join(dir, 'h', victim.hash)
  const bytes = await fs.readFile(file)
  bytes[bytes.length >> 1] ^= 1
  await fs.writeFile(file, bytes)
  // and trust/1.json is lost: the chain no longer starts, so fsinfo.json's signatures cannot be counted
  await fs.rm(path.join(dir, 'trust', '1.json'))
  const bad = await fsck(dir, { anchor, name: 'stable', fsync: false })
  assert.equal(bad.ok, false)
  assert.deepEqual(bad.corrupt.map(e => e.hash), [victim.hash])
  assert.equal(bad.corrupt[0].size, victim.storedSize, 'the stored size is what DIR must hold')
  assert.ok(bad.fsinfo.problems.some(x => x.code === 'ROTREE_NOT_FOUND' && x.message.includes('trust/1.json')), JSON.stringify(bad.fsinfo.problems))

  // repaired from the publisher's folder: the trust document first, then the blob
  const src = blobSource(p.address(srv.url)); t.after(() => src.close())
  const fixed = await fsck(dir, { anchor, name: 'stable', repairFrom: src, fsync: false })
  assert.equal(fixed.ok, true, JSON.stringify({ p: fixed.fsinfo.problems, r: fixed.repair }))
  assert.deepEqual(fixed.repair.repaired.map(x => x.kind === 'trust' ? `trust/${x.seq}` : x.hash).sort(), [victim.hash, 'trust/1'].sort())
  assert.deepEqual(await fs.readFile(path.join(dir, 'trust', '1.json')), await fs.readFile(path.join(p.out, 'trust', '1.json')))

  // the CLI takes the anchor and name as the address spells them
  const cli = await rotree(['fsck', dir, '--key', `${p.anchor}:stable`])
  assert.equal(cli.code, 0, cli.stdout + cli.stderr)
  assert.match(cli.stdout, /format 2, tree "stable"/)
  await fs.rm(path.join(dir, 'trust', '2.json'))
  const cli2 = await rotree(['fsck', dir, '--key', `${p.anchor}:stable`, '--json'])
  assert.equal(cli2.code, 1)
  assert.ok(JSON.parse(cli2.stdout).fsinfo.problems.some(x => x.message.includes('trust/2.json is missing')))
})

test('gc of version-2 folders keeps what the kept roots reach and every trust document, and removes an unreferenced blob', { timeout: 60_000 }, async t => {
  // a publisher's OUT from build({ version: 2 }), built twice: history holds both roots
  const d = await scratch(t, 'rotree-v2gc-')
  const src = path.join(d, 'src'); const out = path.join(d, 'out')
  await writeTree(src, FILES)
  const key = makeKey()
  await build({ src, out, key, ttlMs: 3600e3, fsync: false, version: 2, name: 'stable', now: Date.now() - 10e3 })
  const first = new Set((await refsOf(out)).map(x => x.ref.hash))
  await writeTree(src, { 'docs/long.txt': text(300_000, 'other') })
  await build({ src, out, key, ttlMs: 3600e3, fsync: false, version: 2, name: 'stable' })
  const live = new Set((await refsOf(out)).map(x => x.ref.hash))
  const stray = Buffer.from('no root reaches this blob\n')
  await fs.writeFile(path.join(out, 'h', sha(stray)), stray)
  const keep2 = await gc(out, { keep: 2, graceMs: 0, fsync: false })
  assert.equal(keep2.roots.length, 2, JSON.stringify(keep2.roots))
  assert.equal(keep2.deleted.count, 1)
  assert.deepEqual(await blobNames(out), new Set([...first, ...live]))
  const keep1 = await gc(out, { keep: 1, graceMs: 0, fsync: false })
  assert.deepEqual(keep1.roots.map(r => r.why), [['last 1', 'current']])
  assert.deepEqual(await blobNames(out), live)
  assert.ok([...first].some(h => !live.has(h)), 'the old root had blobs of its own, now gone')

  // a k-of-n tree: trust/ stays whole
  const { p, files } = await rotatedTree(t)
  await fs.writeFile(path.join(p.out, 'h', sha(stray)), stray)
  const r = await gc(p.out, { keep: 1, graceMs: 0, fsync: false })
  assert.equal(r.deleted.count >= 1, true)
  assert.deepEqual(await blobNames(p.out), new Set((await refsOf(p.out)).map(x => x.ref.hash)))
  assert.deepEqual((await fs.readdir(path.join(p.out, 'trust'))).sort(), ['1.json', '2.json'])

  // pull --gc on a mirror of it: the new release's blobs and the previous root's stay, older ones go
  const dir = path.join(d, 'mirror')
  const srv = await startStaticMirror(p.out); t.after(srv.close)
  await pull({ address: p.address(srv.url), dir, reader: { stateDir: null }, fsync: false })
  const was = new Set((await refsOf(dir)).map(x => x.ref.hash))
  await p.publish({ ...files, 'docs/long.txt': text(300_000, 'third') })
  await fs.writeFile(path.join(dir, 'h', sha(stray)), stray)
  const pulled = await pull({ address: p.address(srv.url), dir, reader: { stateDir: null }, fsync: false, gc: true, keep: 1 })
  assert.equal(pulled.gc.skipped, undefined, pulled.gc.skipped)
  const now = new Set((await refsOf(dir)).map(x => x.ref.hash))
  assert.deepEqual(await blobNames(dir), now)
  assert.ok([...was].some(h => !now.has(h)))
  assert.deepEqual((await fs.readdir(path.join(dir, 'trust'))).sort(), ['1.json', '2.json'])
  // keep 2: the history entry of the previous root verifies against DIR/trust and is kept
  await p.publish({ ...files, 'docs/long.txt': text(300_000, 'fourth') })
  const kept = await pull({ address: p.address(srv.url), dir, reader: { stateDir: null }, fsync: false, gc: true, keep: 2 })
  assert.equal(kept.gc.skipped, undefined, kept.gc.skipped)
  assert.equal(kept.gc.kept.length, 2)
  const names = await blobNames(dir)
  assert.ok([...now].every(h => names.has(h)), 'the previous root (kept) is whole')
  assert.ok([...(await refsOf(dir))].every(x => names.has(x.ref.hash)), 'the current root is whole')
  await readsAll(p.address(srv.url), { ...files, 'docs/long.txt': text(300_000, 'fourth') })
})

test('push of version-2 folders to a directory: trust documents go with the tree, and a root short of its release threshold is not pushed', { skip: haveRclone ? false : 'needs rclone (Debian package rclone)', timeout: 60_000 }, async t => {
  const d = await scratch(t, 'rotree-v2push-')
  // single key, from the builder
  const src = path.join(d, 'src'); const out = path.join(d, 'out')
  await writeTree(src, FILES)
  const key = makeKey()
  await build({ src, out, key, ttlMs: 3600e3, fsync: false, version: 2, name: 'stable' })
  const dest1 = path.join(d, 'dest1')
  const r1 = await rotree(['push', out, dest1, '--url', 'http://mirror.example/pub', '--json'])
  assert.equal(r1.code, 0, r1.stderr)
  assert.equal(JSON.parse(r1.stdout).address, `http://mirror.example/pub/#${key.publicKey}:stable`)
  const m1 = await startStaticMirror(dest1); t.after(m1.close)
  await readsAll(`${m1.url}#${key.publicKey}:stable`, FILES)

  // k-of-n, rotated: trust/1 and trust/2 are on the remote; the copy opens from scratch
  const { p, files } = await rotatedTree(t)
  const dest2 = path.join(d, 'dest2')
  const r2 = await rotree(['push', p.out, dest2, '--json'])
  assert.equal(r2.code, 0, r2.stderr)
  assert.equal(JSON.parse(r2.stdout).key, p.anchor)
  assert.deepEqual((await fs.readdir(path.join(dest2, 'trust'))).sort(), ['1.json', '2.json'])
  const m2 = await startStaticMirror(dest2); t.after(m2.close)
  await readsAll(p.address(m2.url), files)

  // one release signature of the two trust 2 wants: refused before anything moves
  const before = await fs.readFile(path.join(dest2, 'fsinfo.json'))
  await p.publish({ ...files, 'bad.txt': 'x' }, { relSigners: [p.k.R2] })
  const r3 = await rotree(['push', p.out, dest2])
  assert.notEqual(r3.code, 0)
  assert.match(r3.stderr, /ROTREE_THRESHOLD|release/)
  assert.deepEqual(await fs.readFile(path.join(dest2, 'fsinfo.json')), before)
  const dest3 = path.join(d, 'dest3')
  assert.notEqual((await rotree(['push', p.out, dest3])).code, 0)
  await assert.rejects(fs.access(path.join(dest3, 'fsinfo.json')), { code: 'ENOENT' })

  // a broken chain is not pushed either
  await p.publish(files)
  await fs.rm(path.join(p.out, 'trust', '1.json'))
  const r4 = await rotree(['push', p.out, dest3])
  assert.notEqual(r4.code, 0)
  assert.match(r4.stderr, /trust\/1\.json is missing/)
})

test('rotree pull of a version-2 address, then a mirror that serves the root from before the rotation: DIR does not go back', { timeout: 60_000 }, async t => {
  const p = await Publisher.create({ name: 'stable' })
  t.after(() => p.close())
  const old = await p.publish(FILES)
  await p.rotate({ root: role([p.k.A, p.k.B, p.k.D], 2), release: role([p.k.R2]), timestamp: role([p.k.T2]) })
  await p.publish(FILES)
  const d = await scratch(t, 'rotree-v2pull-')
  const dir = path.join(d, 'mirror')
  const srv = await startStaticMirror(p.out); t.after(srv.close)
  const r = await rotree(['pull', p.address(srv.url), dir, '--json', '--no-fsync'], { env: { ROTREE_STATE: path.join(d, 'state') } })
  assert.equal(r.code, 0, r.stderr)
  assert.deepEqual(JSON.parse(r.stdout).trust, { fetched: 2, present: 0 })
  const now = await fs.readFile(path.join(dir, 'fsinfo.json'))

  // a fresh reader asks for trust/<known + 1>.json beside fsinfo.json (FORMAT.md §12.9): it
  // finds document 2 and refuses the old root under document 1
  srv.set('/fsinfo.json', old)
  await assert.rejects(pull({ address: p.address(srv.url), dir, reader: { stateDir: null }, fsync: false }),
    err => err.code === 'ROTREE_ALL_MIRRORS_FAILED' && err.errors.every(e => e.code === 'ROTREE_ROLLBACK'))
  // a mirror that hides document 2 as well: the fresh reader accepts the old root (it has seen
  // nothing), but DIR has seen trust 2
  srv.set('/trust/2.json', null)
  await assert.rejects(pull({ address: p.address(srv.url), dir, reader: { stateDir: null }, fsync: false }), { code: 'ROTREE_ROLLBACK' })
  assert.deepEqual(await fs.readFile(path.join(dir, 'fsinfo.json')), now)
})

test('a single key that adopts a trust document: pulled at #<key>:name, fsck and a fresh reader of the copy follow the chain from that key', { timeout: 60_000 }, async t => {
  const p = await Publisher.create({ name: 'stable', anchor: 'key' })
  t.after(() => p.close())
  await p.publish(FILES)
  const d = await scratch(t, 'rotree-v2pull-')
  const dir = path.join(d, 'mirror')
  const srv = await startStaticMirror(p.out); t.after(srv.close)
  const state = path.join(d, 'state')
  const r1 = await pull({ address: p.address(srv.url), dir, reader: { stateDir: state }, fsync: false })
  assert.deepEqual(r1.trust, { fetched: 0, present: 0 }, 'a single-key root names no trust document')
  // K adopts roles and stays a root key
  await p.rotate({ root: role([p.k.A, p.k.B, p.k.K], 2), release: role([p.k.R1]), timestamp: role([p.k.T1]) })
  await p.publish(FILES)
  const r2 = await pull({ address: p.address(srv.url), dir, reader: { stateDir: state }, fsync: false })
  assert.equal(r2.updated, true)
  assert.deepEqual(r2.trust, { fetched: 1, present: 0 })
  const copy = await startStaticMirror(dir); t.after(copy.close)
  assert.equal((await readsAll(p.address(copy.url), FILES)).trustSeq, 1)
  const f = await fsck(dir, { anchor: { kind: 'key', key: p.k.K.publicKey }, name: 'stable', fsync: false })
  assert.equal(f.ok, true, JSON.stringify(f.fsinfo.problems))
  assert.equal(f.history.roots, 2, 'the single-key root in history verifies by the key, the adopted one by trust/1')
  // K rotated away (a lost or stolen key): what K signed alone is no longer evidence (docs/TRUST.md rule 17)
  await p.rotate({ root: role([p.k.A, p.k.B], 2), release: role([p.k.R1]), timestamp: role([p.k.T1]) })
  await p.publish(FILES)
  await pull({ address: p.address(srv.url), dir, reader: { stateDir: state }, fsync: false })
  const f2 = await fsck(dir, { anchor: { kind: 'key', key: p.k.K.publicKey }, name: 'stable', fsync: false })
  assert.equal(f2.history.roots, 2, 'the roots under trust/1 and trust/2')
  assert.ok(JSON.stringify(f2).includes('no longer lists in any role'), JSON.stringify(f2.history))
  // another key is another tree
  const other = await fsck(dir, { anchor: { kind: 'key', key: p.k.C.publicKey }, name: 'stable', fsync: false })
  assert.equal(other.ok, false)
  assert.ok(other.fsinfo.problems.some(x => x.code === 'ROTREE_THRESHOLD'), JSON.stringify(other.fsinfo.problems))
})

test('pull of a tree that lists one stored chunk under two decoded sizes fails naming the path whose reference is wrong', { timeout: 60_000 }, async t => {
  const p = await Publisher.create({ anchor: 'key' })
  t.after(() => p.close())
  const data = Buffer.from(text(50_000, 'twice'))
  const ref = await p.w.put(data)
  assert.equal(ref.codec, 'deflate-raw')
  const root = await p.w.dir([
    { name: 'a.txt', entry: { type: 'file', size: ref.size, sha256: sha(data), chunks: [ref] } },
    // the same stored bytes, said to inflate to one byte more: no reader can read it
    { name: 'b.txt', entry: { type: 'file', size: ref.size + 1, sha256: sha(data), chunks: [{ ...ref, size: ref.size + 1 }] } }
  ])
  const now = Date.now()
  await p.w.publish({ trust: null, root, seq: Math.floor(now / 1000), relSigners: [p.k.K], tsSigners: [p.k.K], now })
  const d = await scratch(t, 'rotree-v2pull-')
  const dir = path.join(d, 'mirror')
  const srv = await startStaticMirror(p.out); t.after(srv.close)
  await assert.rejects(pull({ address: p.address(srv.url), dir, reader: { stateDir: null }, fsync: false }),
    err => err.code === 'ROTREE_BAD_FORMAT' && err.message.startsWith('/b.txt: '))
  await assert.rejects(fs.access(path.join(dir, 'fsinfo.json')), { code: 'ENOENT' })
})

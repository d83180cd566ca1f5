// `rotree gc` (docs/DEPLOY.md "History and garbage collection"): blobs reachable from none of the kept roots go,
// after a grace period; kept roots stay complete; history stays.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { spawn } from 'node:child_process'
import { tmpdir, writeTree, makeKey, prng } from '../helpers/fixtures.js'
import { checkPublished } from '../helpers/check-tree.js'
import { build } from '../../builder/build.js'
import { gc } from '../../builder/gc.js'
import { resign } from '../../builder/sign.js'
import { resignV2 } from '../../builder/release.js'
import { BuildIndex } from '../../builder/build-index.js'
import { walkLocal } from '../../lib/published/pages.js'
import { decodeRoot } from '../../lib/published/signed-roots.js'

const BIN = new URL('../../bin/rotree.js', import.meta.url).pathname
const opts = (src, out, key, extra = {}) => ({ src, out, key, ttlMs: 3600e3, fsync: false, racyMs: 0, ...extra })

async function blobs (out) { return new Set((await fs.readdir(path.join(out, 'h'))).filter(n => /^[0-9a-f]{64}$/.test(n))) }
async function reach (out, seq) {
  // either format: version 2's root is its release's (FORMAT.md §12.3), with codec and stored size
  const info = decodeRoot(await fs.readFile(path.join(out, 'history', `${seq}.json`)))
  return walkLocal(out, info.root)
}

/** Three versions sharing some content; returns their seqs and the blobs each one reaches. */
async function threeVersions (dir, key, extra = {}) {
  const src = path.join(dir, 'src'); const out = path.join(dir, 'out')
  const shared = { 'shared/big.bin': prng(1 << 20, 'shared'), 'shared/a.txt': 'always here' }
  const seqs = []
  for (let v = 1; v <= 3; v++) {
    await fs.rm(src, { recursive: true, force: true })
    await writeTree(src, { ...shared, [`only-v${v}.bin`]: prng(200_000, `v${v}`), 'changing.txt': prng(9000, `c${v}`) })
    seqs.push((await build(opts(src, out, key, extra))).seq)
  }
  return { src, out, seqs }
}

test('gc --keep 2 deletes exactly the blobs only older roots reach; dry run deletes nothing', { timeout: 60_000 }, async t => {
  const dir = await tmpdir(); t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const key = makeKey()
  const { out, seqs } = await threeVersions(dir, key)
  const all = await blobs(out)
  const r1 = await reach(out, seqs[0]); const r2 = await reach(out, seqs[1]); const r3 = await reach(out, seqs[2])
  const garbage = [...all].filter(h => !r2.has(h) && !r3.has(h))
  assert.ok(garbage.length >= 3, 'v1 has blobs of its own')

  const garbageBytes = (await Promise.all(garbage.map(h => fs.stat(path.join(out, 'h', h))))).reduce((n, st) => n + st.size, 0)
  const dry = await gc(out, { keep: 2, graceMs: 0, dryRun: true })
  assert.equal(dry.deleted.count, garbage.length)
  assert.deepEqual(await blobs(out), all)

  const real = await gc(out, { keep: 2, graceMs: 0 })
  assert.equal(real.deleted.count, garbage.length)
  assert.equal(real.deleted.bytes, garbageBytes)
  assert.equal(dry.deleted.bytes, garbageBytes)
  assert.deepEqual(real.roots.map(r => r.seq), [seqs[2], seqs[1]])
  const left = await blobs(out)
  for (const h of garbage) assert.ok(!left.has(h), `${h} should be gone`)
  for (const h of [...r2, ...r3]) assert.ok(left.has(h), `${h} is still reachable`)
  assert.ok([...r1].some(h => left.has(h)), 'blobs v1 shares with v2/v3 stay')
  await checkPublished(out, key.publicKey)
  await reach(out, seqs[1]) // the older kept root is complete too
  await assert.rejects(reach(out, seqs[0]), { code: 'ROTREE_TRUNCATED', missing: true })
  // history is never collected
  assert.equal((await fs.readdir(path.join(out, 'history'))).filter(n => /^\d+\.json$/.test(n)).length, 3)

  // again: v1 is incomplete now, nothing left to delete
  const again = await gc(out, { keep: 3, graceMs: 0 })
  assert.equal(again.deleted.count, 0)
  assert.deepEqual(again.roots.map(r => r.complete), [true, true, false])
})

test('the grace period keeps young blobs and recently replaced roots', { timeout: 60_000 }, async t => {
  const dir = await tmpdir(); t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const key = makeKey()
  const { out, seqs } = await threeVersions(dir, key)
  // everything was written seconds ago: an hour of grace keeps all of it
  const r = await gc(out, { keep: 1, graceMs: 3600e3 })
  assert.equal(r.deleted.count, 0)
  // roots replaced within the hour are kept as roots, so nothing is even unreachable
  assert.deepEqual(r.roots.map(x => x.why.join()), ['last 1,current', 'grace', 'grace'])
  assert.equal(r.young.count, 0)
  // as if an hour had passed: only the current root is kept
  const later = await gc(out, { keep: 1, graceMs: 3600e3, now: Date.now() + 2 * 3600e3 })
  assert.deepEqual(later.roots.map(x => x.seq), [seqs[2]])
  assert.ok(later.deleted.count > 0)
  await checkPublished(out, key.publicKey)
})

test('unreachable blobs younger than the grace period are kept (a build not yet published)', async t => {
  const dir = await tmpdir(); t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const key = makeKey()
  const src = path.join(dir, 'src'); const out = path.join(dir, 'out')
  await writeTree(src, { 'a.txt': 'a' })
  await build(opts(src, out, key))
  const stray = prng(5000, 'stray')
  const { createHash } = await import('node:crypto')
  const h = createHash('sha256').update(stray).digest('hex')
  await fs.writeFile(path.join(out, 'h', h), stray)
  await fs.writeFile(path.join(out, 'h', '.tmp-0123456789abcdef-aaaaaa'), 'half a blob')
  const r = await gc(out, { keep: 1, graceMs: 60_000 })
  assert.equal(r.young.count, 1); assert.equal(r.deleted.count, 0); assert.equal(r.temp.count, 0)
  const old = new Date(Date.now() - 120_000)
  await fs.utimes(path.join(out, 'h', h), old, old)
  await fs.utimes(path.join(out, 'h', '.tmp-0123456789abcdef-aaaaaa'), old, old)
  const r2 = await gc(out, { keep: 1, graceMs: 60_000 })
  assert.equal(r2.deleted.count, 1); assert.equal(r2.deleted.bytes, 5000); assert.equal(r2.temp.count, 1)
  await checkPublished(out, key.publicKey)
})

// both formats: a resign and a pending unsigned.json differ (version 1: builder/sign.js; version 2: a
// new fsinfo.json over the release, an unsigned release in unsigned.json: builder/release.js)
for (const version of [1, 2]) {
  test(`resigns do not count as roots; a pending unsigned root is kept; a locked OUT is refused (format ${version})`, { timeout: 60_000 }, async t => {
    const dir = await tmpdir(); t.after(() => fs.rm(dir, { recursive: true, force: true }))
    const key = makeKey()
    const { src, out, seqs } = await threeVersions(dir, key, { version })
    const again = version === 1
      ? at => resign(out, key, { ttlMs: 3600e3, fsync: false, now: at })
      : at => resignV2(out, [key], { ttlMs: 3600e3, fsync: false, now: at })
    await again(Date.now() + 10_000)
    await again(Date.now() + 20_000)
    // keep 2 distinct roots: v3 (three signatures) and v2
    const r = await gc(out, { keep: 2, graceMs: 0, dryRun: true })
    assert.deepEqual(r.roots.map(x => x.root), [await rootOf(out, seqs[2]), await rootOf(out, seqs[1])])

    // a tree built for an offline signature: its blobs are referenced by nothing published
    await writeTree(src, { 'pending.bin': prng(300_000, 'pending') })
    const pending = await build(opts(src, out, { publicKey: key.publicKey }, { unsigned: true }))
    assert.equal(pending.version, version)
    const warnings = []
    const g = await gc(out, { keep: 1, graceMs: 0, warn: m => warnings.push(m) })
    assert.deepEqual(warnings, [])
    assert.ok(g.roots.some(x => x.why.includes('unsigned') && x.root === pending.root))
    await walkLocal(out, version === 1 ? { hash: pending.root, size: pending.rootSize } : { hash: pending.root, size: pending.rootSize, storedSize: pending.rootStoredSize, codec: pending.rootCodec })
    await checkPublished(out, key.publicKey)

    const held = await BuildIndex.open(out)
    try {
      await assert.rejects(gc(out, { keep: 1, graceMs: 0 }), { code: 'ROTREE_LOCKED' })
    } finally { await held.close() }
  })
}

test('gc refuses to run around a hole in the current tree', async t => {
  const dir = await tmpdir(); t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const key = makeKey()
  const src = path.join(dir, 'src'); const out = path.join(dir, 'out')
  await writeTree(src, { 'd/a.txt': 'a', 'd/b.txt': 'b' })
  const b = await build(opts(src, out, key))
  // the root page names d/'s page; remove d/'s page
  const root = decodeRoot(await fs.readFile(path.join(out, 'fsinfo.json')))
  const reached = await walkLocal(out, root.root)
  const sub = [...reached].find(h => h !== b.root)
  await fs.rm(path.join(out, 'h', sub))
  const before = await blobs(out)
  await assert.rejects(gc(out, { keep: 1, graceMs: 0 }), /current root .* is incomplete/)
  assert.deepEqual(await blobs(out), before)
})

test('rotree gc on the command line', { timeout: 30_000 }, async t => {
  const dir = await tmpdir(); t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const key = makeKey()
  const { out } = await threeVersions(dir, key)
  const run = args => new Promise(resolve => {
    const p = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
    let so = ''; let se = ''
    p.stdout.on('data', b => { so += b }); p.stderr.on('data', b => { se += b })
    p.on('close', code => resolve({ code, stdout: so, stderr: se }))
  })
  assert.equal((await run(['gc', out])).code, 2) // --keep is required
  assert.equal((await run(['gc', out, '--keep', '1', '--grace', 'soon'])).code, 2)
  const dry = await run(['gc', out, '--keep', '1', '--grace', '0', '--dry-run'])
  assert.equal(dry.code, 0, dry.stderr)
  assert.match(dry.stdout, /would delete [1-9]\d* blobs/)
  const j = JSON.parse((await run(['gc', out, '--keep', '1', '--grace', '0', '--json'])).stdout)
  assert.ok(j.deleted.count > 0 && j.deleted.bytes > 0)
  await checkPublished(out, key.publicKey)
})

async function rootOf (out, seq) { return decodeRoot(await fs.readFile(path.join(out, 'history', `${seq}.json`))).root.hash }

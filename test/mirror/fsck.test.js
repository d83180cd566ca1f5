// `rotree fsck` (docs/MIRRORING.md): finds exactly the blobs a disk silently damaged,
// names the paths that use them, and --repair-from restores them verified.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { createHash } from 'node:crypto'
import { tmpdir, writeTree, buildTree, serve, makeKey, prng, address } from '../helpers/fixtures.js'
import { checkPublished } from '../helpers/check-tree.js'
import { fsck } from '../../mirror/fsck.js'
import { scrub, POOL_MIN_FILES } from '../../mirror/scrub.js'
import { rotree, reachable } from './helpers.js'
import { decodeRoot } from '../../lib/published/signed-roots.js'

async function setup (t, { now, ttlMs } = {}) {
  const dir = await tmpdir('rotree-fsck-'); t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const src = path.join(dir, 'src'); const out = path.join(dir, 'out'); const mirror = path.join(dir, 'mirror')
  const key = makeKey()
  await writeTree(src, {
    'docs/a.txt': prng(20_000, 'a'), 'docs/b.txt': prng(30_000, 'b'),
    'img/c.bin': prng(100_000, 'c'), 'img/d.bin': prng(150_000, 'd'), 'e.bin': prng(80_000, 'e'),
    'copy-of-a.txt': prng(20_000, 'a'), // the same blob under two paths
    'big/huge.bin': prng(14_000_000, 'huge'), // > 32 chunks: a chunk index
    'sub/deep/x.txt': prng(20_000, 'x'), 'small.txt': 'inline\n'
  })
  await buildTree(src, { key, out, now, ttlMs })
  await fs.cp(out, mirror, { recursive: true })
  const fsinfo = await fs.readFile(path.join(out, 'fsinfo.json'))
  const refs = await reachable(out, fsinfo, key.publicKey)
  const find = (kind, p) => [...refs].find(([, e]) => e.kind === kind && e.paths.includes(p))[0]
  return { dir, src, out, mirror, key, refs, find, env: { ROTREE_STATE: path.join(dir, 'state') } }
}

const blob = (s, h) => path.join(s.mirror, 'h', h)
const fsckJson = async (s, args = []) => {
  const r = await rotree(['fsck', s.mirror, '--json', ...args], { env: s.env })
  return { code: r.code, stderr: r.stderr, report: JSON.parse(r.stdout) }
}

test('fsck finds exactly the flipped, truncated, swapped and deleted blobs, with their paths; --repair-from restores them', { timeout: 60_000 }, async t => {
  const s = await setup(t)
  const pub = s.key.publicKey
  const clean = await fsckJson(s, ['--key', pub])
  assert.equal(clean.code, 0, clean.stderr)
  assert.equal(clean.report.ok, true)
  assert.equal(clean.report.blobs.files, s.refs.size)
  assert.equal(clean.report.blobs.reachable, s.refs.size)
  assert.equal(clean.report.keySource, 'given')

  const flipped = s.find('data', '/docs/a.txt') // also /copy-of-a.txt
  const truncated = s.find('data', '/img/c.bin')
  const swapped = s.find('data', '/img/d.bin')
  const deleted = s.find('data', '/docs/b.txt')
  const donor = s.find('data', '/e.bin')
  const b = await fs.readFile(blob(s, flipped)); b[1234] ^= 0x08; await fs.writeFile(blob(s, flipped), b)
  await fs.truncate(blob(s, truncated), 4096)
  await fs.copyFile(blob(s, donor), blob(s, swapped)) // a misdirected write: another blob's bytes under this name
  await fs.rm(blob(s, deleted))

  const bad = await fsckJson(s, ['--key', pub])
  assert.equal(bad.code, 1)
  const r = bad.report
  assert.equal(r.ok, false)
  assert.equal(r.problems, 4)
  assert.deepEqual(r.corrupt.map(e => e.hash).sort(), [flipped, truncated, swapped].sort())
  assert.deepEqual(r.missing.map(e => e.hash), [deleted])
  const byHash = Object.fromEntries([...r.corrupt, ...r.missing].map(e => [e.hash, e]))
  assert.deepEqual(byHash[flipped].paths.sort(), ['/copy-of-a.txt', '/docs/a.txt'])
  assert.equal(byHash[flipped].refs, 2)
  assert.deepEqual(byHash[truncated].paths, ['/img/c.bin'])
  assert.equal(byHash[truncated].onDisk, 4096)
  assert.equal(byHash[truncated].size, 100_000)
  assert.deepEqual(byHash[swapped].paths, ['/img/d.bin'])
  assert.equal(byHash[swapped].actual, donor) // says whose bytes they are
  assert.deepEqual(byHash[deleted].paths, ['/docs/b.txt'])
  for (const e of [...r.corrupt, ...r.missing]) assert.equal(e.kind, 'data')
  assert.deepEqual(r.orphans, [])
  assert.deepEqual(r.fsinfo.problems, [])

  // the text report names them too
  const text = await rotree(['fsck', s.mirror, '--key', pub], { env: s.env })
  assert.equal(text.code, 1)
  assert.match(text.stdout, new RegExp(`CORRUPT  ${swapped} .*hashes to ${donor}.*used by /img/d\\.bin`))
  assert.match(text.stdout, new RegExp(`MISSING  ${deleted} .*used by /docs/b\\.txt`))
  assert.match(text.stdout, /PROBLEMS: 4 problem\(s\) \(3 corrupt, 1 missing, 0 in fsinfo\.json\)/)

  // repair from a mirror: fetched, verified, written atomically; the re-check is clean
  const srv = await serve(s.out); t.after(srv.close)
  const fixed = await fsckJson(s, ['--repair-from', address(srv.url, pub)])
  assert.equal(fixed.code, 0, fixed.stderr)
  assert.equal(fixed.report.ok, true)
  assert.equal(fixed.report.keySource, 'address')
  assert.equal(fixed.report.before.problems, 4)
  assert.deepEqual(fixed.report.repair.repaired.map(x => x.hash).sort(), [flipped, truncated, swapped, deleted].sort())
  assert.deepEqual(fixed.report.repair.unrepaired, [])
  const again = await fsckJson(s, ['--key', pub])
  assert.equal(again.code, 0)
  assert.equal(again.report.problems, 0)
  await checkPublished(s.mirror, pub)
  assert.deepEqual((await fs.readdir(path.join(s.mirror, 'h'))).filter(n => !/^[0-9a-f]{64}$/.test(n)), [])
})

test('a damaged directory page or chunk index: reported with its path, what is below it unchecked; repair walks on', { timeout: 60_000 }, async t => {
  const s = await setup(t)
  const pub = s.key.publicKey
  const page = s.find('dir', '/sub')
  const index = s.find('cindex', '/big/huge.bin')
  const below = s.find('data', '/sub/deep/x.txt')
  await fs.rm(blob(s, page))
  const b = await fs.readFile(blob(s, index)); b[b.length - 1] ^= 1; await fs.writeFile(blob(s, index), b)
  await fs.rm(blob(s, below)) // hidden under the missing page until it is repaired

  const r = await fsck(s.mirror, { publicKey: pub })
  assert.equal(r.ok, false)
  assert.deepEqual(r.missing.map(e => [e.hash, e.kind, e.paths]), [[page, 'dir', ['/sub']]])
  assert.deepEqual(r.corrupt.map(e => [e.hash, e.kind, e.paths]), [[index, 'cindex', ['/big/huge.bin']]])
  assert.deepEqual(r.unchecked.map(u => [u.path, u.reason]).sort(), [['/big/huge.bin', 'corrupt'], ['/sub', 'missing']])
  // the huge file's chunks sit below its index: present, but unreached, so listed as orphans, with a warning
  assert.ok(r.orphans.length > 30)
  assert.ok(r.warnings.some(w => /2 subtree\(s\) could not be walked/.test(w)))

  const srv = await serve(s.out); t.after(srv.close)
  const fixed = await fsck(s.mirror, { publicKey: pub, repairFrom: (await import('../../mirror/source.js')).blobSource(address(srv.url, pub)) })
  assert.equal(fixed.ok, true, JSON.stringify(fixed.missing))
  assert.deepEqual(fixed.repair.repaired.map(x => x.hash).sort(), [page, index, below].sort())
  assert.deepEqual(fixed.orphans, [])
  await checkPublished(s.mirror, pub)
})

test('orphans and stray files are warnings; exit 0', async t => {
  const s = await setup(t)
  const extra = Buffer.from('a blob no root references\n')
  const hash = createHash('sha256').update(extra).digest('hex')
  await fs.writeFile(blob(s, hash), extra)
  await fs.writeFile(path.join(s.mirror, 'h', '.tmp-0123456789abcdef-000000'), 'left by a killed writer')
  const r = await fsckJson(s, ['--key', s.key.publicKey])
  assert.equal(r.code, 0)
  assert.deepEqual(r.report.orphans, [{ hash, size: extra.length }])
  assert.deepEqual(r.report.stray, ['.tmp-0123456789abcdef-000000'])
  assert.match(r.stderr, /warning: 1 file\(s\) in h\/ are not blobs/)
  const text = await rotree(['fsck', s.mirror, '--key', s.key.publicKey], { env: s.env })
  assert.match(text.stdout, new RegExp(`orphan   ${hash}`))
  assert.match(text.stdout, /^ok: 0 problem\(s\).*, 1 orphan\(s\)$/m)

  // a history entry newer than fsinfo.json: an update killed between the two (publish.js order)
  const { result } = await buildTree(s.src, { key: s.key, out: s.out, seq: 9e12 })
  await fs.mkdir(path.join(s.mirror, 'history'), { recursive: true })
  await fs.copyFile(path.join(s.out, 'fsinfo.json'), path.join(s.mirror, 'history', `${result.seq}.json`))
  const newer = await fsckJson(s, ['--key', s.key.publicKey])
  assert.equal(newer.code, 0)
  assert.equal(newer.report.history.roots, 2)
  assert.ok(newer.report.warnings.some(w => w.includes(`history/ holds seq ${result.seq}`)))
})

test('fsinfo.json: the self-asserted key warns; wrong key, forged or expired fails; bad flags exit 2', async t => {
  const s = await setup(t)
  const self = await rotree(['fsck', s.mirror], { env: s.env })
  assert.equal(self.code, 0)
  assert.match(self.stderr, /self-asserted/)
  assert.match(self.stdout, /\(self-asserted\)/)

  const other = makeKey().publicKey
  const wrong = await fsckJson(s, ['--key', other])
  assert.equal(wrong.code, 1)
  // fsinfo.json names its key (version 1) or its family's anchor (version 2, FORMAT.md §12.4)
  assert.deepEqual(wrong.report.fsinfo.problems.map(p => p.code), ['ROTREE_WRONG_KEY'])

  const file = path.join(s.mirror, 'fsinfo.json')
  const good = await fs.readFile(file, 'utf8')
  const v2 = decodeRoot(Buffer.from(good)).version === 2
  await fs.writeFile(file, good.replace(/"seq": (\d+)/, (_, n) => `"seq": ${Number(n) + 1}`))
  const forged = await fsckJson(s, ['--key', s.key.publicKey])
  assert.equal(forged.code, 1)
  // version 2 counts only signatures that verify: its one key falls short (FORMAT.md §12.2, §12.5)
  assert.deepEqual(forged.report.fsinfo.problems.map(p => p.code), [v2 ? 'ROTREE_THRESHOLD' : 'ROTREE_BAD_SIGNATURE'])
  // the refs of an unsigned root are not trusted for repair
  await fs.rm(blob(s, s.find('data', '/e.bin')))
  const srv = await serve(s.out); t.after(srv.close)
  const noRepair = await fsckJson(s, ['--repair-from', address(srv.url, s.key.publicKey)])
  assert.equal(noRepair.code, 1)
  assert.deepEqual(noRepair.report.repair.repaired, [])
  assert.match(noRepair.report.repair.unrepaired[0].message, /does not verify/)
  assert.equal(noRepair.report.missing.length, 1)
  await fs.rm(file)
  const none = await fsckJson(s, ['--key', s.key.publicKey])
  assert.equal(none.code, 1)
  assert.deepEqual(none.report.fsinfo.problems.map(p => p.code), ['ROTREE_NOT_FOUND'])
  await fs.writeFile(file, good)

  for (const args of [['fsck'], ['fsck', s.mirror, '--key', 'nothex'], ['fsck', s.mirror, '--mirror', 'http://127.0.0.1:1/'], ['fsck', s.mirror, '--bogus']]) {
    const r = await rotree(args, { env: s.env })
    assert.equal(r.code, 2, args.join(' ') + ': ' + r.stderr)
  }
  const missingDir = await rotree(['fsck', path.join(s.dir, 'nope')], { env: s.env })
  assert.equal(missingDir.code, 1)
  assert.match(missingDir.stderr, /^rotree: ROTREE_SYSTEM_ENOENT: /)
})

test('an expired root is a problem, but its blobs can still be repaired', async t => {
  const s = await setup(t, { now: Date.now() - 3 * 3600e3, ttlMs: 3600e3 })
  const victim = s.find('data', '/e.bin')
  await fs.rm(blob(s, victim))
  const r = await fsckJson(s, ['--key', s.key.publicKey])
  assert.equal(r.code, 1)
  assert.deepEqual(r.report.fsinfo.problems.map(p => p.code), ['ROTREE_EXPIRED'])
  assert.deepEqual(r.report.missing.map(e => e.hash), [victim])
  const srv = await serve(s.out); t.after(srv.close)
  const fixed = await fsckJson(s, ['--repair-from', address(srv.url, s.key.publicKey)])
  assert.equal(fixed.code, 1) // still expired: only a new pull fixes that
  assert.deepEqual(fixed.report.repair.repaired.map(x => x.hash), [victim])
  assert.deepEqual(fixed.report.missing, [])
})

test('scrub gives the same answer on worker threads as on one thread', async t => {
  const dir = await tmpdir('rotree-scrub-'); t.after(() => fs.rm(dir, { recursive: true, force: true }))
  await fs.mkdir(path.join(dir, 'h'))
  const n = POOL_MIN_FILES + 40
  let bad = null
  for (let i = 0; i < n; i++) {
    const bytes = prng(1000 + i, 'scrub' + i)
    const hash = createHash('sha256').update(bytes).digest('hex')
    if (i === 77) { bytes[5] ^= 1; bad = hash }
    await fs.writeFile(path.join(dir, 'h', hash), bytes)
  }
  const one = await scrub(dir, { jobs: 1 })
  const two = await scrub(dir, { jobs: 2 })
  assert.equal(one.threads, 1); assert.equal(two.threads, 2)
  assert.equal(two.blobs.size, n)
  assert.deepEqual([...two.blobs].sort(), [...one.blobs].sort())
  assert.deepEqual([...two.blobs].filter(([, b]) => !b.ok).map(([h]) => h), [bad])
})

test('a directory page planted as a FIFO or a link in h/ is missing to fsck, not waited on or followed', { timeout: 60_000 }, async t => {
  const s = await setup(t)
  const { execFileSync } = await import('node:child_process')
  const page = s.find('dir', '/docs')
  const elsewhere = path.join(s.dir, 'outside-copy')
  await fs.copyFile(blob(s, page), elsewhere)
  await fs.rm(blob(s, page))
  execFileSync('mkfifo', [blob(s, page)])
  const fifo = await fsckJson(s, ['--key', s.key.publicKey])
  assert.equal(fifo.code, 1)
  assert.equal(fifo.report.ok, false)
  assert.ok(JSON.stringify(fifo.report).includes(page), 'the page is reported')
  // a link to the right bytes outside the folder: still not a blob of this folder
  await fs.rm(blob(s, page))
  await fs.symlink(elsewhere, blob(s, page))
  const link = await fsckJson(s, ['--key', s.key.publicKey])
  assert.equal(link.code, 1)
  assert.ok(JSON.stringify(link.report).includes(page), 'the page is reported')
  // fsinfo.json and a history entry planted as FIFOs: missing and unreadable, not waited on
  await fs.rename(path.join(s.mirror, 'fsinfo.json'), path.join(s.dir, 'fsinfo.away'))
  execFileSync('mkfifo', [path.join(s.mirror, 'fsinfo.json')])
  const hist = (await fs.readdir(path.join(s.mirror, 'history'))).find(n => /^\d+\.json$/.test(n))
  await fs.rm(path.join(s.mirror, 'history', hist))
  execFileSync('mkfifo', [path.join(s.mirror, 'history', hist)])
  const noRoot = await fsckJson(s, ['--key', s.key.publicKey])
  assert.equal(noRoot.code, 1)
  assert.ok(noRoot.report.fsinfo.problems.some(p => p.code === 'ROTREE_NOT_FOUND'), JSON.stringify(noRoot.report.fsinfo))
})

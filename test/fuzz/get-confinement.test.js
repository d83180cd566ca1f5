// `rotree get` confinement under random hostile trees: validly signed trees
// made from a small alphabet of names (the old partial-file names, a
// temporary-looking name, control characters) and symlink targets (absolute,
// `..` chains, `..` after a name, paths to a sentinel outside DEST) are
// downloaded two at a time into one DEST, sometimes over a symlink an
// earlier run left pointing out, with files written on the main thread or on
// the file-writing thread. Whatever happens, nothing outside DEST
// changes, no symlink under DEST resolves outside it, no temporary file is
// left, every failure is a typed refusal, and a download that succeeds holds
// every file of its tree with its exact bytes. FUZZ_RUNS sets the number of
// cases (npm run fuzz sets it high).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import fc from 'fast-check'
import { openTree } from 'rotree-client'
import { getPath } from '../../cli/download.js'
import { tmpdir, makeKey, serve, address } from '../helpers/fixtures.js'
import { SignedTree } from '../helpers/signed-tree.js'
import { snapshot, exists } from '../cli/helpers.js'

const RUNS = Number(process.env.FUZZ_RUNS || 30)

const NAMES = ['a', 'b', 'x', 'sub', '.x.rotree-partial', '.a.rotree-partial', '.rotree-0.tmp', 'a\x1b[2J', ' ', '..a']
const CONTENTS = ['', 'one\n', 'two two\n', 'x'.repeat(5000)] // the last one is not inline: a chunk

test('hostile trees never make get touch anything outside DEST', { timeout: 600_000 }, async t => {
  const base = await fs.realpath(await tmpdir('rotree-confine-'))
  t.after(() => fs.rm(base, { recursive: true, force: true }))
  const sentinel = path.join(base, 'sentinel')
  await fs.mkdir(sentinel)
  await fs.writeFile(path.join(sentinel, 'file'), 'sentinel\n')
  const TARGETS = [
    '.', '..', '../..', '../../..', 'a', 'a/b', 'sub/x', 'x', '.x.rotree-partial', 'sub/..', 'a/../..', 'a/..', '../a',
    '/', '/a', '/sub/x', '/etc/passwd', '/../x',
    sentinel, path.join(sentinel, 'file'), path.join(sentinel, 'new'),
    '../sentinel/file', '../../sentinel', '../../../sentinel/new', '../../../../sentinel'
  ]
  const key = makeKey()
  const before = await snapshot(sentinel)

  const nameArb = fc.constantFrom(...NAMES)
  const leafArb = fc.oneof(
    fc.record({ name: nameArb, file: fc.constantFrom(...CONTENTS), exec: fc.boolean() }),
    fc.record({ name: nameArb, symlink: fc.constantFrom(...TARGETS) })
  )
  const dirArb = depth => fc.uniqueArray(
    depth === 0 ? leafArb : fc.oneof(leafArb, fc.record({ name: nameArb, dir: fc.constant(null) }).chain(d => dirArb(depth - 1).map(dir => ({ ...d, dir })))),
    { selector: e => e.name, maxLength: 6 })
  // writerFrom 0: every directory the run makes is written on the file-writing thread (cli/get-writer.js)
  const optsArb = fc.record({ rewriteLinks: fc.boolean(), skipUnsafeLinks: fc.boolean(), jobs: fc.integer({ min: 1, max: 4 }), writerFrom: fc.constantFrom(0, Infinity) })
  const plantArb = fc.option(fc.record({ name: nameArb, target: fc.constantFrom(sentinel, '../sentinel', path.join(sentinel, 'file')) }))

  let run = 0
  const outcomes = {}
  await fc.assert(fc.asyncProperty(dirArb(3), dirArb(3), optsArb, optsArb, plantArb, async (treeA, treeB, optsA, optsB, plant) => {
    const runDir = path.join(base, `run-${run++}`)
    const dest = path.join(runDir, 'dest')
    await fs.mkdir(runDir)
    if (plant) {
      await fs.mkdir(dest)
      await fs.symlink(plant.target, path.join(dest, plant.name))
    }
    try {
      for (const [specs, opts, label] of [[treeA, optsA, 'A'], [treeB, optsB, 'B']]) {
        const out = path.join(runDir, 'out-' + label)
        await new SignedTree(out).sign(key, specs)
        const srv = await serve(out)
        const tree = await openTree(address(srv.url, key.publicKey), { stateDir: null })
        let ok = false
        try {
          await getPath(tree, '/', dest, opts)
          ok = true
          outcomes.ok = (outcomes.ok ?? 0) + 1
        } catch (err) {
          outcomes[err.code] = (outcomes[err.code] ?? 0) + 1
          assert.ok(String(err.code).startsWith('ROTREE_'), `tree ${label}: untyped ${err.code}: ${err.stack}`)
        } finally {
          tree.close()
          await srv.close()
          await fs.rm(out, { recursive: true, force: true })
        }
        const ctx = `tree ${label} ${JSON.stringify({ treeA, treeB, optsA, optsB, plant })}`
        assert.deepEqual(await snapshot(sentinel), before, `sentinel changed after ${ctx}`)
        assert.deepEqual(await fs.readdir(runDir), (await exists(dest)) ? ['dest'] : [], `written beside DEST after ${ctx}`)
        if (await exists(dest)) await checkConfined(dest, plant, ctx)
        if (ok) await checkCopy(dest, specs, opts, ctx)
      }
    } finally {
      await fs.rm(runDir, { recursive: true, force: true })
    }
  }), { numRuns: RUNS })
  t.diagnostic(`downloads: ${JSON.stringify(outcomes)}`)
})

/**
 * No symlink under DEST resolves outside it, but the planted one and those
 * whose path goes through it (they name a path inside DEST; what an earlier
 * run left there is not get's to judge); no temporary file is left.
 */
async function checkConfined (dest, plant, ctx) {
  const root = await fs.realpath(dest)
  const planted = plant && path.join(root, plant.name)
  for (const [rel, s] of Object.entries(await snapshot(dest))) {
    assert.doesNotMatch(path.basename(rel), /^\.rotree-[0-9a-f]{24}\.tmp$/, `temporary file left: ${rel} after ${ctx}`)
    if (!s.startsWith('link:')) continue
    const end = await resolve(path.join(root, rel), planted && (await fs.readlink(planted).catch(() => null)) === plant.target ? planted : null)
    if (end === PLANTED) continue
    assert.ok(end === null || end === root || end.startsWith(root + path.sep), `${rel} -> ${s.slice(5)} resolves to ${end}, outside DEST, after ${ctx}`)
  }
}

const PLANTED = Symbol('through the planted link')

/**
 * Where the kernel would end up following the symlink at `p` (following every
 * link on the way, as open(O_CREAT) would), or null when it would fail first
 * (a missing directory on the way, a loop), or PLANTED when it goes through
 * the link at `planted`.
 */
async function resolve (p, planted) {
  if (p === planted) return PLANTED
  let at = path.dirname(p)
  const queue = (await fs.readlink(p)).split('/')
  if (queue[0] === '') at = '/'
  for (let hops = 0; queue.length;) {
    const c = queue.shift()
    if (c === '' || c === '.') continue
    if (c === '..') { at = path.dirname(at); continue }
    const next = path.join(at, c)
    const s = await fs.lstat(next).catch(() => null)
    if (!s) return queue.every(q => q === '' || q === '.') ? next : null
    if (s.isSymbolicLink()) {
      if (next === planted) return PLANTED
      if (++hops > 40) return null
      const tgt = await fs.readlink(next)
      if (tgt.startsWith('/')) at = '/'
      queue.unshift(...tgt.split('/'))
      continue
    }
    if (!s.isDirectory() && queue.some(q => q !== '' && q !== '.')) return null
    at = next
  }
  return at
}

/** A download that succeeded holds each file with its bytes and mode, each directory as one, each link as a link (unless skipped). */
async function checkCopy (dest, specs, opts, ctx, rel = '') {
  for (const s of specs) {
    const r = rel ? rel + '/' + s.name : s.name
    const p = path.join(dest, r)
    if (s.dir) {
      assert.ok((await fs.lstat(p)).isDirectory(), `${r} is not a directory after ${ctx}`)
      await checkCopy(dest, s.dir, opts, ctx, r)
    } else if (s.file !== undefined) {
      const st = await fs.lstat(p)
      assert.ok(st.isFile(), `${r} is not a file after ${ctx}`)
      assert.equal(await fs.readFile(p, 'utf8'), s.file, `${r} has other bytes after ${ctx}`)
      assert.equal(st.mode & 0o777, s.exec ? 0o755 : 0o644)
    } else if (!opts.skipUnsafeLinks) { // a skipped link leaves whatever was there
      const st = await fs.lstat(p).catch(() => null)
      assert.ok(st === null || st.isSymbolicLink(), `${r} is not a symlink after ${ctx}`)
    }
  }
}


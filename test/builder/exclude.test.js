// `rotree build --exclude PATTERN` (builder/exclude.js): .gitignore-style
// patterns leave entries of SRC out of the tree; a build with other patterns
// than the last one's, into the same OUT, gives what a clean build gives (the
// index's records of unchanged directories must not bring back, or keep out,
// what the patterns say).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { openTree } from 'rotree-client'
import { compileExcludes } from '../../builder/exclude.js'
import { build } from '../../builder/build.js'
import { tmpdir, makeKey, writeTree, serve } from '../helpers/fixtures.js'
import { rotree } from '../cli/helpers.js'

test('patterns as .gitignore reads them', () => {
  const cases = [
    [['*.log'], '/a.log', false, true], [['*.log'], '/x/y/a.log', false, true], [['*.log'], '/a.logs', false, false],
    [['node_modules/'], '/node_modules', true, true], [['node_modules/'], '/a/node_modules', true, true], [['node_modules/'], '/node_modules', false, false],
    [['/build'], '/build', true, true], [['/build'], '/x/build', true, false],
    [['docs/*.tmp'], '/docs/a.tmp', false, true], [['docs/*.tmp'], '/x/docs/a.tmp', false, false], [['docs/*.tmp'], '/docs/x/a.tmp', false, false],
    [['**/cache'], '/cache', true, true], [['**/cache'], '/a/b/cache', true, true],
    [['a/**/b'], '/a/b', false, true], [['a/**/b'], '/a/x/y/b', false, true], [['a/**/b'], '/x/a/b', false, false],
    [['logs/**'], '/logs/x', false, true], [['logs/**'], '/logs', true, false],
    [['file?.txt'], '/file1.txt', false, true], [['file?.txt'], '/file10.txt', false, false],
    [['[ab].c'], '/a.c', false, true], [['[!ab].c'], '/a.c', false, false], [['[!ab].c'], '/z.c', false, true],
    [['\\*.txt'], '/*.txt', false, true], [['\\*.txt'], '/a.txt', false, false], [['a.b'], '/axb', false, false],
    [['*.log', 'tmp/'], '/tmp', true, true], [['*.log', 'tmp/'], '/x.txt', false, false]
  ]
  for (const [pats, rel, isDir, want] of cases) assert.equal(compileExcludes(pats).test(rel, isDir), want, `${pats.join(' ')} on ${rel}${isDir ? '/' : ''}`)
  assert.equal(compileExcludes([]), null)
  for (const bad of ['!keep.log', '', '# comment', 'a//b', '/..', 'a/../b', '/']) assert.throws(() => compileExcludes([bad]), { code: 'ROTREE_USAGE' }, JSON.stringify(bad))
})

const FILES = {
  'keep.txt': 'kept\n', 'a.log': 'log\n', 'sub/b.log': 'log\n', 'sub/keep.md': 'kept\n',
  'node_modules/m.js': 'x', 'sub/node_modules/n.js': 'x', 'build/out.bin': 'x', 'sub/build/kept.bin': 'kept',
  'docs/a.tmp': 'x', 'sub/docs/a.tmp': 'kept'
}
const EXCLUDE = ['*.log', 'node_modules/', '/build', 'docs/*.tmp']
const KEPT = ['/docs', '/keep.txt', '/sub', '/sub/build', '/sub/build/kept.bin', '/sub/docs', '/sub/docs/a.tmp', '/sub/keep.md']

/** Every entry under dir an hour old: settled, so unchanged directories are taken from their records. */
async function age (dir) {
  const then = (Date.now() - 3600e3) / 1000
  for (const e of await fs.readdir(dir, { withFileTypes: true, recursive: true })) await fs.utimes(path.join(e.parentPath ?? e.path, e.name), then, then)
  await fs.utimes(dir, then, then)
}

async function listing (out, key) {
  const srv = await serve(out)
  const tree = await openTree(`${srv.url}#${key.publicKey}`, { stateDir: null })
  const seen = []
  const walk = async dir => {
    for (const e of await tree.readdir(dir, { withFileTypes: true })) {
      const p = path.posix.join(dir, e.name); seen.push(p)
      if (e.type === 'dir') await walk(p)
    }
  }
  try { await walk('/') } finally { tree.close(); await srv.close() }
  return seen.sort()
}

test('a build leaves out what matches; other patterns into the same OUT give a clean build\'s tree', { timeout: 60_000 }, async t => {
  const dir = await tmpdir(); t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const src = path.join(dir, 'src'); const out = path.join(dir, 'out'); const key = makeKey()
  await writeTree(src, FILES)
  await age(src)
  // racyMs 0: files just written count as settled, so unchanged directories are taken from their records
  const opts = { src, out, key, ttlMs: 3600e3, fsync: false, racyMs: 0 }
  const r1 = await build({ ...opts, exclude: EXCLUDE })
  assert.equal(r1.excluded, 6)
  assert.deepEqual(await listing(out, key), KEPT)
  // the same patterns again: the same root
  const r2 = await build({ ...opts, exclude: EXCLUDE })
  assert.equal(r2.root, r1.root)
  // no patterns: everything comes back, though no file changed
  await build(opts)
  assert.equal((await listing(out, key)).length, Object.keys(FILES).length + 7)
  // and the patterns again: left out again, as from a clean build
  const r4 = await build({ ...opts, exclude: EXCLUDE })
  assert.equal(r4.root, r1.root)
})

test('rotree build --exclude, repeatable; a pattern it cannot take is a usage error', { timeout: 60_000 }, async t => {
  const dir = await tmpdir(); t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const src = path.join(dir, 'src'); const k = path.join(dir, 'k')
  await writeTree(src, FILES)
  assert.equal((await rotree(['keygen', k])).code, 0)
  const r = await rotree(['build', src, path.join(dir, 'out'), '--key', k, '--json', '--no-fsync', ...EXCLUDE.flatMap(p => ['--exclude', p])])
  assert.equal(r.code, 0, r.err)
  assert.equal(JSON.parse(r.out).excluded, 6)
  const bad = await rotree(['build', src, path.join(dir, 'out2'), '--key', k, '--exclude', '!keep.log'])
  assert.equal(bad.code, 2)
  assert.match(bad.err, /negation \(!\) is not supported/)
})

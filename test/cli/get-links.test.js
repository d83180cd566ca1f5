// `rotree get` of a subtree whose symlinks point elsewhere in the tree, out of
// DEST: like rsync --safe-links, every file is written, each such link is
// skipped and named on stderr (the first ten; then only counted), a last line
// counts them, and the exit is 0; --strict-links refuses the download instead,
// with ROTREE_BAD_PATH (not ROTREE_SYMLINK_LOOP: nothing loops). Links that
// stay inside DEST are written as links. Nothing is ever written outside
// DEST (cli/download.js, docs/TRUST.md rule 8). Real CLI, a real built and
// served tree (test/cli/helpers.js servedTree).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { rotree, servedTree, snapshot, exists } from './helpers.js'

/** A tree shaped like /usr/share/doc: doc/git holds links into git-core, outside doc/git. */
async function docTree (t, extra = {}) {
  return servedTree(t, {
    'git-core/contrib/hooks/pre-commit': 'hook\n',
    'git-core/README': 'core\n',
    'doc/git/README': 'git docs\n',
    'doc/git/html/index.html': '<p>index</p>\n',
    'doc/git/contrib/hooks': { symlink: '../../../git-core/contrib/hooks' },
    'doc/git/contrib/core-readme': { symlink: '../../../git-core/README' },
    'doc/git/contrib/index': { symlink: '../html/index.html' }, // inside doc/git: kept
    'doc/git/top': { symlink: 'README' },
    ...extra
  })
}

test('get of a subtree writes every file, keeps links inside DEST, skips and names links that leave it, exits 0', async t => {
  const tr = await docTree(t)
  const dest = path.join(tr.dir, 'x')
  const r = await rotree(['get', tr.addr, '/doc/git', '-o', dest], { env: tr.env })
  assert.equal(r.code, 0, r.err)
  assert.deepEqual(await snapshot(dest), {
    README: 'file:git docs\n',
    contrib: 'dir',
    'contrib/index': 'link:../html/index.html',
    html: 'dir',
    'html/index.html': 'file:<p>index</p>\n',
    top: 'link:README'
  })
  assert.equal(await fs.readFile(path.join(dest, 'contrib/index'), 'utf8'), '<p>index</p>\n')
  const lines = r.err.split('\n').filter(l => l.startsWith('rotree get: skipped symlink '))
  assert.deepEqual(lines.sort(), [
    'rotree get: skipped symlink contrib/core-readme -> ../../../git-core/README: it has a target that could lead out of DEST',
    'rotree get: skipped symlink contrib/hooks -> ../../../git-core/contrib/hooks: it has a target that could lead out of DEST'
  ])
  assert.match(r.err, /^rotree get: skipped 2 symlinks that point outside DEST; --strict-links refuses them instead$/m)
  assert.match(r.err, /got .*: 2 files, 3 dirs, 2 symlinks, /)
  assert.doesNotMatch(r.err, /SYMLINK_LOOP/)
  // nothing beside DEST
  assert.deepEqual((await fs.readdir(tr.dir)).sort(), ['out', 'site', 'state', 'x'])
})

test('--strict-links refuses such a link with ROTREE_BAD_PATH, before anything below its directory is made', async t => {
  const tr = await docTree(t)
  const dest = path.join(tr.dir, 'x')
  const r = await rotree(['get', tr.addr, '/doc/git', '-o', dest, '--strict-links'], { env: tr.env })
  assert.equal(r.code, 1, r.err)
  assert.match(r.err, /^rotree: ROTREE_BAD_PATH: symlink contrib\/(hooks|core-readme) -> \.\.\/\.\.\/\.\.\/git-core\/\S+ has a target that could lead out of DEST: refused \(--strict-links/)
  assert.equal(await exists(path.join(dest, 'contrib')), false)
  // the whole tree holds every target: nothing to refuse, every link written
  const all = path.join(tr.dir, 'all')
  const whole = await rotree(['get', tr.addr, '/', '-o', all, '--strict-links'], { env: tr.env })
  assert.equal(whole.code, 0, whole.err)
  assert.equal(await fs.readFile(path.join(all, 'doc/git/contrib/hooks/pre-commit'), 'utf8'), 'hook\n')
  assert.doesNotMatch(whole.err, /skipped/)
  // the two flags say opposite things
  const both = await rotree(['get', tr.addr, '/doc/git', '-o', dest, '--strict-links', '--skip-unsafe-links'], { env: tr.env })
  assert.equal(both.code, 2, both.err)
})

test('many skipped links: ten named, the rest counted; a rerun skips them again and keeps what it wrote', async t => {
  const extra = {}
  for (let i = 0; i < 25; i++) extra[`doc/git/out${String(i).padStart(2, '0')}`] = { symlink: '../../git-core/README' }
  const tr = await docTree(t, extra)
  const dest = path.join(tr.dir, 'x')
  const r = await rotree(['get', tr.addr, '/doc/git', '-o', dest], { env: tr.env })
  assert.equal(r.code, 0, r.err)
  assert.equal(r.err.split('\n').filter(l => l.startsWith('rotree get: skipped symlink ')).length, 10)
  assert.match(r.err, /^rotree get: skipped 27 symlinks that point outside DEST \(the first 10 named above\); --strict-links refuses them instead$/m)
  assert.equal((await fs.readdir(dest)).filter(n => n.startsWith('out')).length, 0)
  const again = await rotree(['get', tr.addr, '/doc/git', '-o', dest], { env: tr.env })
  assert.equal(again.code, 0, again.err)
  assert.match(again.err, /skipped 27 symlinks/)
  assert.match(again.err, /got .*: 0 files, .*2 unchanged/)
})

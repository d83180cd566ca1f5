// `rotree get --delete` names each path it removes (stderr: the first ten,
// then a count) and says how many it removed; `--delete --dry-run` lists on
// stdout every path --delete would remove and writes, removes and follows
// nothing. Real CLI, a real built and served tree (test/cli/helpers.js).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { rotree, servedTree, snapshot, exists } from './helpers.js'

async function setUp (t) {
  const tr = await servedTree(t, {
    'a.txt': 'alpha\n',
    'd/b.txt': 'bravo\n',
    'd/e/c.txt': 'charlie\n',
    'l': { symlink: 'a.txt' }
  })
  const copy = path.join(tr.dir, 'copy')
  const get = (...args) => rotree(['get', tr.addr, '/', '-o', copy, ...args], { env: tr.env })
  const first = await get()
  assert.equal(first.code, 0, first.err)
  const want = await snapshot(copy)
  // what the tree does not have: files, a directory with files in it, links, another kind where a file goes
  const outside = path.join(tr.dir, 'outside')
  await fs.mkdir(path.join(outside, 'sub'), { recursive: true })
  await fs.writeFile(path.join(outside, 'victim'), 'victim\n')
  await fs.writeFile(path.join(outside, 'sub', 'inner'), 'inner\n')
  await fs.writeFile(path.join(copy, 'extra.txt'), 'x')
  await fs.mkdir(path.join(copy, 'd/old/deeper'), { recursive: true })
  await fs.writeFile(path.join(copy, 'd/old/deeper/f'), 'f')
  await fs.symlink(outside, path.join(copy, 'dirlink'))
  // a link where the tree has a directory: removed as a link, never listed into
  await fs.rm(path.join(copy, 'd/e'), { recursive: true })
  await fs.symlink(outside, path.join(copy, 'd/e'))
  return { tr, copy, get, want, outside }
}

test('--delete --dry-run lists what --delete would remove, and changes nothing', async t => {
  const { copy, get, want, outside } = await setUp(t)
  const before = await snapshot(copy)
  const dry = await get('--delete', '--dry-run')
  assert.equal(dry.code, 0, dry.err)
  assert.deepEqual(dry.out.split('\n').filter(Boolean).sort(), [
    'would delete d/e', // a link where the tree has a directory
    'would delete d/old/',
    'would delete dirlink',
    'would delete extra.txt'
  ])
  assert.match(dry.err, /^rotree get: --dry-run: --delete would remove 4 paths from .*copy; nothing was written or removed/m)
  assert.doesNotMatch(dry.out + dry.err, /inner|victim|sub/) // nothing read through the links
  assert.deepEqual(await snapshot(copy), before)
  assert.deepEqual(await snapshot(outside), { sub: 'dir', 'sub/inner': 'file:inner\n', victim: 'file:victim\n' })

  const help = await rotree(['help', 'get'])
  assert.match(help.out, /--dry-run +with --delete: list on stdout every path --delete would remove/)

  // the real run removes exactly those, names each, and counts them
  const del = await get('--delete')
  assert.equal(del.code, 0, del.err)
  const named = del.err.split('\n').filter(l => l.startsWith('rotree get: deleting ')).map(l => l.slice('rotree get: deleting '.length)).sort()
  assert.deepEqual(named, ['d/e', 'd/old/', 'dirlink', 'extra.txt'])
  assert.match(del.err, /^rotree get: deleted 4 paths the tree does not have$/m)
  assert.deepEqual(await snapshot(copy), want)
  assert.deepEqual(await snapshot(outside), { sub: 'dir', 'sub/inner': 'file:inner\n', victim: 'file:victim\n' })
  const again = await get('--delete', '--dry-run')
  assert.equal(again.code, 0, again.err)
  assert.equal(again.out, '')
  assert.match(again.err, /would remove 0 paths/)
})

test('--dry-run needs --delete; DEST absent or a link is handled as the real run would', async t => {
  const { tr, get } = await setUp(t)
  const alone = await get('--dry-run')
  assert.equal(alone.code, 2)
  assert.match(alone.err, /--dry-run lists what --delete would remove: give --delete too/)
  const absent = path.join(tr.dir, 'absent')
  const r = await rotree(['get', tr.addr, '/', '-o', absent, '--delete', '--dry-run'], { env: tr.env })
  assert.equal(r.code, 0, r.err)
  assert.match(r.err, /would remove 0 paths/)
  assert.equal(await exists(absent), false)
  const link = path.join(tr.dir, 'link')
  await fs.symlink(path.join(tr.dir, 'outside'), link)
  const refused = await rotree(['get', tr.addr, '/', '-o', link, '--delete', '--dry-run'], { env: tr.env })
  assert.equal(refused.code, 1)
  assert.match(refused.err, /^rotree: ROTREE_BAD_PATH: /)
})

test('many deletions: ten named, all counted', async t => {
  const { copy, get } = await setUp(t)
  for (let i = 0; i < 30; i++) await fs.writeFile(path.join(copy, `junk${String(i).padStart(2, '0')}`), 'j')
  const dry = await get('--delete', '--dry-run')
  assert.equal(dry.out.split('\n').filter(l => l.startsWith('would delete junk')).length, 30) // a dry run lists every one
  const del = await get('--delete')
  assert.equal(del.code, 0, del.err)
  assert.equal(del.err.split('\n').filter(l => l.startsWith('rotree get: deleting ')).length, 10)
  assert.match(del.err, /^rotree get: deleted 34 paths the tree does not have \(the first 10 named above\)$/m)
})

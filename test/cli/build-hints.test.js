// A first build that meets one entry it cannot publish stops and says how to
// go on (--skip-bad); with --skip-bad the entry is left out, warned about and
// counted as skipped.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { execFileSync } from 'node:child_process'
import { tmpdir } from '../helpers/fixtures.js'
import { rotree } from './helpers.js'

test('a bad entry: the error suggests --skip-bad; --skip-bad leaves it out and counts it', { timeout: 60_000 }, async t => {
  const dir = await tmpdir(); t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const src = path.join(dir, 'src'); const key = path.join(dir, 'k')
  await fs.mkdir(src); await fs.writeFile(path.join(src, 'a.txt'), 'a\n')
  execFileSync('mkfifo', [path.join(src, 'pipe')])
  assert.equal((await rotree(['keygen', key])).code, 0)

  const failed = await rotree(['build', src, path.join(dir, 'out'), '--key', key])
  assert.equal(failed.code, 1)
  assert.equal(failed.err, 'rotree: ROTREE_BUILD_INPUT: /pipe: is a fifo (to publish the rest, rebuild with --skip-bad: each such entry is left out with a warning)\n' +
    '  Fix or remove the named entry, or build with --skip-bad to leave such entries out.\n')
  await assert.rejects(fs.stat(path.join(dir, 'out', 'fsinfo.json')), { code: 'ENOENT' }, 'nothing published')

  const skipped = await rotree(['build', src, path.join(dir, 'out'), '--key', key, '--skip-bad', '--json'])
  assert.equal(skipped.code, 0, skipped.err)
  assert.match(skipped.err, /^rotree: warning: skipping \/pipe: is a fifo$/m)
  const r = JSON.parse(skipped.out)
  assert.equal(r.files, 1)
  assert.deepEqual(r.skipped, ['/pipe: is a fifo'])
})

test('SRC missing or not a folder is a usage error, not an entry --skip-bad could leave out; another key than the tree\'s says which keys sign it', { timeout: 60_000 }, async t => {
  const dir = await tmpdir(); t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const src = path.join(dir, 'src'); const key = path.join(dir, 'k'); const other = path.join(dir, 'other')
  await fs.mkdir(src); await fs.writeFile(path.join(src, 'a.txt'), 'a\n')
  assert.equal((await rotree(['keygen', key])).code, 0)
  assert.equal((await rotree(['keygen', other])).code, 0)

  const missing = await rotree(['build', path.join(dir, 'nosuch'), path.join(dir, 'out'), '--key', key])
  assert.equal(missing.code, 2)
  assert.match(missing.err, /^rotree build: SRC \S+nosuch does not exist: give the folder to publish\n/)
  const file = await rotree(['build', path.join(src, 'a.txt'), path.join(dir, 'out'), '--key', key])
  assert.equal(file.code, 2)
  assert.match(file.err, /^rotree build: SRC \S+a\.txt is not a folder: give the folder to publish\n/)

  assert.equal((await rotree(['build', src, path.join(dir, 'out'), '--key', key])).code, 0)
  const wrong = await rotree(['build', src, path.join(dir, 'out'), '--key', other])
  assert.equal(wrong.code, 1)
  assert.match(wrong.err, /ROTREE_BAD_KEY: key [0-9a-f]{64} is not a release key of this tree.*\n {2}Sign with one of the tree's release keys \(rotree trust show OUT lists them\), or build into a new OUT to publish under this key\.\n$/)
})

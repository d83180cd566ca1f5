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

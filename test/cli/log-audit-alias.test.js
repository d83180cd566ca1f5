// `rotree log audit ADDR` is `rotree log-audit ADDR` (FORMAT.md §13): the
// same report; `rotree log` still lists roots, and a second positional that
// is not `audit`'s address is a usage error.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { tmpdir, writeTree } from '../helpers/fixtures.js'
import { rotree, start } from './helpers.js'

test('log audit ADDR reports as log-audit does; log ADDR EXTRA is a usage error', async t => {
  const d = await tmpdir('rotree-log-audit-')
  t.after(() => fs.rm(d, { recursive: true, force: true }))
  await writeTree(path.join(d, 'src'), { 'a.txt': 'one\n' })
  const key = path.join(d, 'k.key')
  const pub = (await rotree(['keygen', key])).out.trim().split('\n').at(-1)
  for (let i = 0; i < 2; i++) {
    await fs.writeFile(path.join(d, 'src', 'a.txt'), `release ${i}\n`)
    const b = await rotree(['build', path.join(d, 'src'), path.join(d, 'out'), '--key', key, '--no-fsync'])
    assert.equal(b.code, 0, b.err)
  }
  const srv = await start(t, ['serve', path.join(d, 'out'), '--port', '0'])
  const addr = `${srv.match[1]}#${pub}`
  const env = { ROTREE_STATE: path.join(d, 'state') }
  const a = await rotree(['log-audit', addr], { env })
  assert.equal(a.code, 0, a.err)
  assert.match(a.out, /2 leaves/)
  const b = await rotree(['log', 'audit', addr], { env })
  assert.equal(b.code, 0, b.err)
  assert.equal(b.out, a.out)
  const l = await rotree(['log', addr], { env })
  assert.equal(l.code, 0, l.err)
  assert.match(l.out, /\(current\)/)
  const u = await rotree(['log', addr, 'audit'], { env })
  assert.equal(u.code, 2)
  assert.match(u.err, /log takes one ADDR/)
})

// `rotree resign --if-expiring-within D`: what a timer runs often. A root that
// stays valid longer than D is left untouched (exit 0, nothing written); one
// that expires within D is re-signed; a key that did not sign OUT is refused
// either way.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { tmpdir } from '../helpers/fixtures.js'
import { rotree } from './helpers.js'

const fsinfoOf = async out => JSON.parse(await fs.readFile(path.join(out, 'fsinfo.json'), 'utf8'))

test('resign --if-expiring-within: nothing far from expiry, a re-signature near it', { timeout: 60_000 }, async t => {
  const dir = await tmpdir(); t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const src = path.join(dir, 'src'); const out = path.join(dir, 'out'); const key = path.join(dir, 'k'); const other = path.join(dir, 'other')
  await fs.mkdir(src); await fs.writeFile(path.join(src, 'a.txt'), 'a\n')
  assert.equal((await rotree(['keygen', key])).code, 0)
  assert.equal((await rotree(['keygen', other])).code, 0)
  assert.equal((await rotree(['build', src, out, '--key', key, '--ttl', '7d'])).code, 0)
  const before = await fs.readFile(path.join(out, 'fsinfo.json'))

  const far = await rotree(['resign', out, '--key', key, '--if-expiring-within', '2d'])
  assert.equal(far.code, 0, far.err)
  assert.match(far.out, /valid until .* \(7\.0 days\), not within 2d: nothing re-signed\n$/)
  assert.deepEqual(await fs.readFile(path.join(out, 'fsinfo.json')), before, 'fsinfo.json untouched')
  const j = JSON.parse((await rotree(['resign', out, '--key', key, '--if-expiring-within', '2d', '--json'])).out)
  assert.equal(j.skipped, true)
  assert.equal(j.seq, (await fsinfoOf(out)).seq)

  // a key that did not sign OUT is refused, expiring or not
  const wrong = await rotree(['resign', out, '--key', other, '--if-expiring-within', '2d'])
  assert.equal(wrong.code, 1)
  assert.match(wrong.err, /^rotree: ROTREE_BAD_KEY: /)

  const near = await rotree(['resign', out, '--key', key, '--if-expiring-within', '8d', '--ttl', '30d'])
  assert.equal(near.code, 0, near.err)
  assert.match(near.out, /^re-signed /)
  const after = await fsinfoOf(out)
  assert.ok(after.seq > JSON.parse(before).seq)
  assert.equal(after.root, JSON.parse(before).root, 'the same root')
  assert.ok(Date.parse(after.expires) - Date.now() > 29 * 86400e3)

  const bad = await rotree(['resign', out, '--key', key, '--if-expiring-within', 'soon'])
  assert.equal(bad.code, 2)
})

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
import { decodeRoot } from '../../lib/published/signed-roots.js'

// either format (a new OUT is built as version 2): seq, root and expiry as decodeRoot reads them
const fsinfoOf = async out => decodeRoot(await fs.readFile(path.join(out, 'fsinfo.json')))

// both formats: version 1 re-signs the root with its key (builder/sign.js), version 2 signs a new
// fsinfo.json with the timestamp key (builder/release.js resignV2; the single key here)
for (const format of ['1', '2']) {
  test(`resign --if-expiring-within: nothing far from expiry, a re-signature near it (format ${format})`, { timeout: 60_000 }, async t => {
    const dir = await tmpdir(); t.after(() => fs.rm(dir, { recursive: true, force: true }))
    const src = path.join(dir, 'src'); const out = path.join(dir, 'out'); const key = path.join(dir, 'k'); const other = path.join(dir, 'other')
    await fs.mkdir(src); await fs.writeFile(path.join(src, 'a.txt'), 'a\n')
    assert.equal((await rotree(['keygen', key])).code, 0)
    assert.equal((await rotree(['keygen', other])).code, 0)
    assert.equal((await rotree(['build', src, out, '--key', key, '--ttl', '7d', '--format', format])).code, 0)
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
    assert.equal(after.version, Number(format))
    assert.ok(after.seq > decodeRoot(before).seq)
    assert.equal(after.root.hash, decodeRoot(before).root.hash, 'the same root')
    assert.ok(Date.parse(after.info.expires) - Date.now() > 29 * 86400e3)

    const bad = await rotree(['resign', out, '--key', key, '--if-expiring-within', 'soon'])
    assert.equal(bad.code, 2)
  })
}

// A validly signed tree the builder would never make: one data chunk listed
// under two sizes, or under a size its blob does not have. No reader can read
// the path whose reference is wrong, so pull must not call such a tree
// mirrored, and fsck must not call it whole; both name the path. Every
// reference is checked against the blob it names (verify.js localChunkFault),
// not only the first one to a hash.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { createHash } from 'node:crypto'
import { tmpdir, serve, makeKey, prng, address } from '../helpers/fixtures.js'
import { SignedTree } from '../helpers/signed-tree.js'
import { pull } from '../../mirror/pull.js'
import { fsck } from '../../mirror/fsck.js'
import { walkLocal } from '../../lib/published/pages.js'
import { decodeFsinfo } from 'rotree-client/format'

const ref = bytes => ({ hash: createHash('sha256').update(bytes).digest('hex'), size: bytes.length })
const file = (size, chunks) => ({ entry: { type: 'file', size, chunks } })

/**
 * /d/good.bin uses chunk X at its true size; /d/<badName> uses X at
 * `badSize`. A walk meets them in name order: 'bad.bin' first, 'zz-bad.bin'
 * after good.bin.
 */
async function hostile (t, { badSize, badName = 'bad.bin', alsoGood = true }) {
  const dir = await tmpdir('rotree-hostile-'); t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const out = path.join(dir, 'out')
  const key = makeKey()
  const tree = new SignedTree(out)
  const x = prng(100_000, 'chunk X'); const xr = await tree.put(x)
  const y = prng(50_000, 'chunk Y'); const yr = await tree.put(y)
  const specs = [
    { name: badName, ...file(badSize, [{ hash: xr.hash, size: badSize }]) },
    { name: 'other.bin', ...file(y.length, [yr]) }
  ]
  if (alsoGood) specs.push({ name: 'good.bin', ...file(x.length, [xr]) })
  await tree.sign(key, [{ name: 'd', dir: specs }])
  return { dir, out, key, x: ref(x), mirror: path.join(dir, 'mirror') }
}

for (const [what, badSize] of [['shorter', 60_000], ['longer', 100_001]]) {
  test(`pull refuses a tree that lists one chunk at two sizes (the wrong one ${what}), naming the path`, async t => {
    for (const badName of ['bad.bin', 'zz-bad.bin']) { // the wrong size met first, or second
      const s = await hostile(t, { badSize, badName })
      const srv = await serve(s.out); t.after(srv.close)
      await assert.rejects(pull({ address: address(srv.url, s.key.publicKey), dir: s.mirror, reader: { stateDir: null }, fsync: false }), err => {
        assert.equal(err.path, `/d/${badName}`, err.stack)
        assert.ok(err.message.startsWith(`/d/${badName}: `), err.message)
        assert.equal(err.hash, s.x.hash)
        // the first reference's fetch fails at every mirror (the blob is not that size), or a later one's check does
        assert.ok(['ROTREE_TRUNCATED', 'ROTREE_TOO_LARGE', 'ROTREE_ALL_MIRRORS_FAILED'].includes(err.code), err.code)
        return true
      })
      await assert.rejects(fs.access(path.join(s.mirror, 'fsinfo.json')), 'DIR is not published')
    }
  })

  test(`fsck reports a chunk whose reference says another size than its blob (${what}), with the path`, async t => {
    for (const [badName, alsoGood] of [['bad.bin', true], ['zz-bad.bin', true], ['bad.bin', false]]) { // also used at its true size (before or after), or not
      const s = await hostile(t, { badSize, badName, alsoGood })
      const r = await fsck(s.out, { publicKey: s.key.publicKey })
      assert.equal(r.ok, false, `alsoGood ${alsoGood}`)
      assert.equal(r.problems, 1)
      assert.deepEqual(r.missing, [])
      assert.equal(r.corrupt.length, 1)
      const e = r.corrupt[0]
      assert.equal(e.hash, s.x.hash)
      assert.deepEqual(e.paths, [`/d/${badName}`])
      assert.equal(e.size, badSize)
      assert.equal(e.onDisk, s.x.size)
      assert.equal(e.actual, s.x.hash) // the blob itself is fine: the reference is wrong
      assert.ok(e.fault.message.startsWith(`/d/${badName}: `), e.fault.message)
    }
  })
}

test('walkLocal (sign --publish, push) checks every reference to a chunk, not only the first', async t => {
  const s = await hostile(t, { badSize: 60_000 })
  const info = decodeFsinfo(await fs.readFile(path.join(s.out, 'fsinfo.json')))
  // the blob is larger than this reference says
  await assert.rejects(walkLocal(s.out, info.root), { code: 'ROTREE_TOO_LARGE', path: '/d/bad.bin', hash: s.x.hash })
})

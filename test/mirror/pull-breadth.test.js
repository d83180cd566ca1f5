// `rotree pull` at a distance: data blobs go out as many at a time as their
// bytes allow (copy-tree.js), not 8, so a tree of many small blobs is not
// held to 8 round trips at a time. A proxy that delays a request until 12
// are waiting counts how many a pull sends together.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { tmpdir, writeTree, buildTree, serve, makeKey, prng, address } from '../helpers/fixtures.js'
import { checkPublished } from '../helpers/check-tree.js'
import { countingProxy } from '../helpers/counting-proxy.js'
import { pull } from '../../mirror/pull.js'

test('pull sends many small blobs together, each once', { timeout: 60_000 }, async t => {
  const dir = await tmpdir('rotree-pull-breadth-'); t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const files = {}
  for (let i = 0; i < 40; i++) files[`f${String(i).padStart(2, '0')}`] = prng(17_000 + i, `small ${i}`) // one chunk each, past the inline size (16 KiB in version 2)
  await writeTree(path.join(dir, 'src'), files)
  const key = makeKey()
  const { out } = await buildTree(path.join(dir, 'src'), { key, out: path.join(dir, 'out') })
  const srv = await serve(out); t.after(srv.close)
  // a request that arrives alone waits 150 ms; twelve together go at once
  const proxy = await countingProxy(t, srv.url, { gather: 12, holdMs: 150 })
  const mirror = path.join(dir, 'mirror')
  const r = await pull({ address: address(proxy.url, key.publicKey), dir: mirror, reader: { stateDir: null }, fsync: false })
  assert.equal(r.fetched.blobs, 41) // the root page and 40 chunks
  await checkPublished(mirror, key.publicKey)
  assert.deepEqual([...proxy.stats.perPath].filter(([, n]) => n > 1), [], 'blobs fetched more than once')
  assert.ok(proxy.stats.peak >= 12, `blob requests in flight together: at most ${proxy.stats.peak}`)
})

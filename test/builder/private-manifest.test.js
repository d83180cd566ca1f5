// A private tree's manifest (FORMAT.md §12.8) lists every blob its root
// reaches, each with its stored size, and nothing else: a keyless mirror
// copies exactly what it lists. The build collects those blobs as its walk
// stores or finds them (builder/walk.js `reached`), where the directories it
// did not encode come from the build index. Each case here builds a private
// tree, then compares the manifest OUT publishes with a walk of the new root
// from OUT/h with the keys its pages carry: a clean build, a rebuild that
// changes one directory, one that changes nothing, one after h/ changed
// under the index (every record's blobs checked), and a partial (watch) run,
// whose release walks OUT/h itself.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { generateX25519Identity, identityToRecipient } from 'age-encryption'
import { decodeRootRef } from 'rotree-client/access'
import { fromHex } from 'rotree-client/format'
import { storedSizeOf } from 'rotree-client/verify'
import { tmpdir, writeTree, makeKey, prng } from '../helpers/fixtures.js'
import { build, Builder } from '../../builder/build.js'
import { walkLocal } from '../../lib/published/pages.js'
import { decodeRoot } from '../../lib/published/signed-roots.js'
import { readFsinfoFile } from '../../lib/published/publish.js'
import { readPrivate } from '../../builder/private-tree.js'

const NOW = Date.UTC(2026, 5, 1)

/** What OUT's manifest lists (hash → stored size), and the blobs the new root reaches, walked from OUT/h. */
async function listedAndReached (out) {
  const { root } = decodeRoot(await readFsinfoFile(out))
  assert.ok(root.manifest, 'a private release names a manifest')
  const listed = new Map()
  await walkLocal(out, root, { onRef: (ref, kind, p) => { if (kind === 'data' && p === '(manifest)') listed.set(ref.hash, storedSizeOf(ref)) } })
  const state = await readPrivate(out)
  const commit = Object.keys(state.roots).at(-1) // the root this release wraps (its commitment)
  const { ref, mtime } = decodeRootRef(fromHex(state.roots[commit]))
  const reached = new Map()
  await walkLocal(out, { ...ref, mtime }, { checkData: true, onRef: r => { reached.set(r.hash, storedSizeOf(r)) } })
  return { listed, reached }
}

async function assertManifestExact (out, what) {
  const { listed, reached } = await listedAndReached(out)
  const missing = [...reached.keys()].filter(h => !listed.has(h))
  const extra = [...listed.keys()].filter(h => !reached.has(h))
  assert.deepEqual({ missing, extra }, { missing: [], extra: [] }, `${what}: the manifest lists what the root reaches`)
  for (const [h, size] of reached) assert.equal(listed.get(h), size, `${what}: stored size of ${h}`)
  return reached.size
}

// a tree with every kind of blob: directories of one page and of several, inlined files,
// chunked files, one under a chunk index, the same bytes twice, links, an empty directory
async function privateSrc () {
  const src = await tmpdir('rotree-pm-src-')
  const files = {
    'a.txt': 'hello\n',
    'same1.bin': prng(300_000, 'dup'),
    'sub/same2.bin': prng(300_000, 'dup'),
    'sub/big.bin': prng(12 << 20, 'big'), // ~48 chunks: a chunk index
    'sub/deep/x/y/z.txt': 'deep\n',
    'link': { symlink: 'a.txt' },
    'empty': { dir: true }
  }
  // a directory of 3,000 names spans several pages
  for (let i = 0; i < 3000; i++) files[`wide/f${String(i).padStart(5, '0')}`] = prng(200 + (i % 40) * 50, 'w' + i)
  for (let i = 0; i < 20; i++) files[`other/g${i}.txt`] = `file ${i}\n`
  await writeTree(src, files)
  return src
}

test('a private build\'s manifest lists exactly the blobs its root reaches: clean, incremental, unchanged, after h/ changed, partial', async () => {
  const src = await privateSrc()
  const out = await tmpdir('rotree-pm-out-')
  const key = makeKey()
  const reader = await identityToRecipient(await generateX25519Identity())
  const opts = extra => ({ src, out, key, ttlMs: 3600e3, now: NOW, fsync: false, racyMs: 0, private: true, readers: [reader], ...extra })

  const r1 = await build(opts())
  assert.equal(r1.private, true)
  const n1 = await assertManifestExact(out, 'clean build')
  assert.ok(n1 > 50, `a tree of many blobs (${n1})`)

  // one directory changes: the others come from their records
  await fs.writeFile(path.join(src, 'other/g3.txt'), prng(90_000, 'changed'))
  await fs.writeFile(path.join(src, 'other/new.bin'), prng(70_000, 'new'))
  const r2 = await build(opts({ now: NOW + 1000 }))
  assert.ok(r2.index.dirHits > 0, 'directories taken from the build index')
  await assertManifestExact(out, 'rebuild of one changed directory')

  // nothing changes: every directory is its record
  const r3 = await build(opts({ now: NOW + 2000 }))
  assert.equal(r3.index.misses, 0)
  await assertManifestExact(out, 'unchanged rebuild')

  // h/ changed under the index: the records' blobs are checked in h/ before they are used
  await fs.writeFile(path.join(out, 'h', 'stray'), 'x')
  await fs.rm(path.join(out, 'h', 'stray'))
  await fs.rm(path.join(src, 'same1.bin'))
  await build(opts({ now: NOW + 3000 }))
  await assertManifestExact(out, 'rebuild after h/ changed')

  // a partial run (rotree build --watch) looks at one directory and takes the rest from records
  const b = await Builder.open(opts({ now: NOW + 4000 }))
  try {
    await fs.writeFile(path.join(src, 'sub/deep/x/y/z.txt'), 'deeper\n')
    const r5 = await b.run({ dirty: new Set(['/sub/deep/x/y']) })
    assert.equal(r5.partial, true)
  } finally { await b.close() }
  await assertManifestExact(out, 'partial rebuild')
})

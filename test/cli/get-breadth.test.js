// `rotree get` at a distance: directory listings are asked for many at a
// time, ahead of the walk, and each blob of the tree is fetched once, the
// second pass (symlinks, mtimes) included. Real server on port 0, a counting
// proxy in front of it; the policy is in cli/download.js and client-js walkAhead.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { openTree } from 'rotree-client'
import { getPath } from '../../cli/download.js'
import { address, prng } from '../helpers/fixtures.js'
import { snapshot, servedHere } from './helpers.js'
import { countingProxy } from '../helpers/counting-proxy.js'

const served = (t, files) => servedHere(t, files, 'rotree-breadth-')

test('directories are listed many at a time, not one after another', { timeout: 60_000 }, async t => {
  const files = {}
  for (let i = 0; i < 30; i++) files[`d${String(i).padStart(2, '0')}/f`] = `file ${i}\n` // inline: only directory pages are fetched
  const s = await served(t, files)
  // a listing asked for alone waits 150 ms here; four asked for together go at once
  const proxy = await countingProxy(t, s.url, { gather: 4, holdMs: 150 })
  const tree = await openTree(address(proxy.url, s.pub), { stateDir: null })
  t.after(() => tree.close())
  const dest = path.join(s.dir, 'copy')
  const r = await getPath(tree, '/', dest)
  assert.equal(r.files, 30)
  assert.equal(r.dirs, 31)
  assert.deepEqual(await snapshot(dest), await snapshot(s.site))
  assert.ok(proxy.stats.peak >= 4, `directory listings in flight together: at most ${proxy.stats.peak}`)
})

test('every blob is fetched once, symlinks and directory mtimes included, even with no cache at all', { timeout: 60_000 }, async t => {
  const files = {}
  for (let i = 0; i < 12; i++) {
    const d = `top/d${String(i).padStart(2, '0')}`
    files[`${d}/data.bin`] = prng(20_000 + i, `f${i}`) // one chunk each
    files[`${d}/note`] = `note ${i}\n`
    files[`${d}/link`] = { symlink: 'note' }
    files[`${d}/sub/deeper`] = `deeper ${i}\n`
  }
  const s = await served(t, files)
  const proxy = await countingProxy(t, s.url)
  // no verified-blob cache: a page needed twice would be fetched twice
  const tree = await openTree(address(proxy.url, s.pub), { stateDir: null, cacheBytes: 0 })
  t.after(() => tree.close())
  const dest = path.join(s.dir, 'copy')
  const r = await getPath(tree, '/top', dest)
  assert.equal(r.symlinks, 12)
  assert.deepEqual(await snapshot(dest), await snapshot(path.join(s.site, 'top')))
  const twice = [...proxy.stats.perPath].filter(([, n]) => n > 1)
  assert.deepEqual(twice, [], 'blobs fetched more than once')
  // directory mtimes are the tree's (set after the links were made in them)
  for (const d of ['', 'd00', 'd05/sub']) {
    const want = Math.floor((await fs.stat(path.join(s.site, 'top', d))).mtimeMs)
    assert.equal(Math.floor((await fs.stat(path.join(dest, d))).mtimeMs), want, `mtime of top/${d}`)
  }
})

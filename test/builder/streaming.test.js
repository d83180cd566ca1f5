// The build is one streaming pass (builder/walk.js): it holds the
// directories being worked on, never the whole tree, and every directory
// handle it opens is closed again, whether the build succeeds or fails.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import { readdirSync } from 'node:fs'
import { execFileSync } from 'node:child_process'
import path from 'node:path'
import { tmpdir, makeKey } from '../helpers/fixtures.js'
import { checkPublished } from '../helpers/check-tree.js'
import { build } from '../../builder/build.js'

const opts = (src, out, key, extra = {}) => ({ src, out, key, ttlMs: 3600e3, fsync: false, racyMs: 0, ...extra })
const openFds = () => readdirSync('/proc/self/fd').length

// 700 directories of two files each, three levels deep: more than the walk
// may have open with files in flight (256) at once
async function wideTree (src) {
  for (let a = 0; a < 7; a++) {
    for (let b = 0; b < 100; b++) {
      const d = path.join(src, `a${a}`, `b${b}`)
      await fs.mkdir(d, { recursive: true })
      await fs.writeFile(path.join(d, 'x.txt'), `${a}/${b}`)
      await fs.writeFile(path.join(d, 'y.txt'), `${b}/${a}`)
    }
  }
}

for (const threads of [0, 2]) {
  test(`at most 256 directories have files in flight, and no handle outlives the build (${threads} worker threads)`, { timeout: 120_000 }, async t => {
    const dir = await tmpdir(); t.after(() => fs.rm(dir, { recursive: true, force: true }))
    const src = path.join(dir, 'src')
    await wideTree(src)
    const key = makeKey()
    const before = openFds()
    const r = await build(opts(src, path.join(dir, 'out'), key, { threads, workersAfter: 0 }))
    assert.equal(r.files, 1400); assert.equal(r.dirs, 708)
    assert.ok(r.memory.busyDirs >= 1 && r.memory.busyDirs <= 257, `${r.memory.busyDirs} directories busy at once`)
    assert.equal(openFds(), before, 'every directory handle closed')
    await checkPublished(path.join(dir, 'out'), key.publicKey)
    // a failed build closes them too: a fifo (which cannot be published) deep in the walk
    execFileSync('mkfifo', [path.join(src, 'a6', 'b99', 'fifo')])
    await assert.rejects(build(opts(src, path.join(dir, 'out2'), key, { threads, workersAfter: 0 })), { code: 'ROTREE_BUILD_INPUT', path: '/a6/b99/fifo' })
    assert.equal(openFds(), before, 'every directory handle closed after a failure')
  })
}

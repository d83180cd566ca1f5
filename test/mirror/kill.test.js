// Crash consistency of `rotree pull` (docs/MIRRORING.md): the CLI killed with SIGKILL at
// random points, many times, while the publisher keeps publishing. After every
// kill DIR's fsinfo.json is the one it had before the run or the one being
// pulled, every blob that root reaches is present and valid (fsck: no problem,
// orphans allowed), and a final pull finishes with a clean fsck.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { tmpdir, writeTree, buildTree, serve, makeKey, prng, address } from '../helpers/fixtures.js'
import { checkPublished } from '../helpers/check-tree.js'
import { fsck } from '../../mirror/fsck.js'
import { spawnRotree, blobNames } from './helpers.js'

async function version (src, n) {
  const files = {}
  for (let i = 0; i < 30; i++) files[`d${i % 4}/f${i}.txt`] = `version ${n} file ${i}\n`.repeat(300 + i)
  for (let i = 0; i < 3; i++) files[`big${i}.bin`] = prng(3 << 20, `v${n}-${i}`)
  await fs.rm(src, { recursive: true, force: true })
  await writeTree(src, files)
}

// the short run in `npm test`; `npm run crash` (scripts/crash.js) sets these for a long one
const KILLS = Number(process.env.CRASH_KILLS) || 15
const SECONDS = Number(process.env.CRASH_SECONDS) || 30

const readOr = p => fs.readFile(p).catch(err => { if (err.code === 'ENOENT') return null; throw err })

test('pull killed at random points always leaves DIR serving a complete tree; the rerun finishes', { timeout: (SECONDS + 100) * 1000 }, async t => {
  const dir = await tmpdir('rotree-kill-'); t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const src = path.join(dir, 'src'); const out = path.join(dir, 'out'); const mirror = path.join(dir, 'mirror')
  const env = { ROTREE_STATE: path.join(dir, 'state') }
  const key = makeKey()
  await version(src, 1)
  await buildTree(src, { key, out })
  const srv = await serve(out); t.after(srv.close)
  const addr = address(srv.url, key.publicKey)

  let kills = 0; let finished = 0; let midway = 0; let round = 1
  // how long a pull of a new version takes here, start-up included: kills land
  // at random within it, however loaded the machine is (measured, then updated)
  let typical = 0
  const deadline = Date.now() + SECONDS * 1000
  while (kills < KILLS && Date.now() < deadline) {
    // most rounds the publisher has moved on, so there is new work to interrupt
    if (round % 4 !== 0) { await version(src, round); await buildTree(src, { key, out }) }
    round++
    const before = await readOr(path.join(mirror, 'fsinfo.json'))
    const target = await fs.readFile(path.join(out, 'fsinfo.json'))
    const blobsBefore = before ? (await blobNames(mirror)).size : 0
    const args = ['pull', addr, mirror]
    if (round % 3 === 0) args.push('--gc', '--keep', String(1 + (round % 2)))
    const run = spawnRotree(args, { env })
    const t0 = Date.now()
    const timer = typical ? setTimeout(() => run.p.kill('SIGKILL'), typical * (0.3 + 0.8 * Math.random())) : null
    const r = await run.done
    clearTimeout(timer)
    if (r.signal === 'SIGKILL') kills++
    else {
      assert.equal(r.code, 0, `round ${round}: ${r.stderr}`)
      finished++
      if (before === null || !before.equals(target)) typical = typical ? (typical + Date.now() - t0) / 2 : Date.now() - t0
    }

    const now = await readOr(path.join(mirror, 'fsinfo.json'))
    if (now === null) { assert.equal(before, null); continue } // killed before the first rename
    assert.ok((before && now.equals(before)) || now.equals(target), `round ${round}: fsinfo.json is neither the old nor the new one`)
    if (r.signal === 'SIGKILL' && before && now.equals(before) && (await blobNames(mirror)).size > blobsBefore) midway++
    await checkPublished(mirror, key.publicKey) // complete and valid: every reachable blob present, hashing to its name
    const report = await fsck(mirror, { publicKey: key.publicKey })
    assert.equal(report.problems, 0, `round ${round}: ${JSON.stringify({ corrupt: report.corrupt, missing: report.missing, fsinfo: report.fsinfo.problems })}`)
  }
  t.diagnostic(`${kills} pulls killed (${midway} of them mid-fetch, with new blobs written and the old root still served), ${finished} finished first, ${round - 1} rounds; a pull of a new version took ~${Math.round(typical)} ms here`)
  assert.ok(kills >= Math.min(15, KILLS / 2), `only ${kills} kills landed`)

  // the rerun finishes: DIR equals OUT's current tree, fsck is clean, no leftovers
  const last = await spawnRotree(['pull', addr, mirror, '--gc', '--keep', '1'], { env }).done
  assert.equal(last.code, 0, last.stderr)
  assert.deepEqual(await fs.readFile(path.join(mirror, 'fsinfo.json')), await fs.readFile(path.join(out, 'fsinfo.json')))
  await checkPublished(mirror, key.publicKey)
  const report = await fsck(mirror, { publicKey: key.publicKey })
  assert.equal(report.ok, true)
  assert.deepEqual(report.orphans, [])
  assert.deepEqual(report.stray, [])
  assert.deepEqual((await fs.readdir(mirror)).sort(), ['fsinfo.json', 'h', 'history', 'log'])
  // the log came too, up to the checkpoint of the root it serves (docs/FORMAT.md §13)
  assert.deepEqual(await fs.readFile(path.join(mirror, 'log', 'checkpoint')), await fs.readFile(path.join(out, 'log', 'checkpoint')))
})

// Crash consistency of `rotree build` (docs/DEPLOY.md "Publishing"): killed with SIGKILL at
// random points, many times, the folder always serves a complete tree (the
// old or the new one), and the next run finishes with the same result as a
// clean build. A full disk during a build leaves the old tree intact.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { spawn, execFileSync } from 'node:child_process'
import { tmpdir, writeTree, prng } from '../helpers/fixtures.js'
import { checkPublished } from '../helpers/check-tree.js'

const BIN = new URL('../../bin/rotree.js', import.meta.url).pathname
// the short run in `npm test`; `npm run crash` (scripts/crash.js) sets these for a long one
const KILLS = Number(process.env.CRASH_KILLS) || 15
const SECONDS = Number(process.env.CRASH_SECONDS) || 60

function rotree (args) {
  const p = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'ignore', 'pipe'] })
  let err = ''
  p.stderr.on('data', b => { err += b })
  const done = new Promise(resolve => p.on('close', (code, signal) => resolve({ code, signal, stderr: err })))
  return { p, done }
}

async function version (src, n) {
  await fs.rm(src, { recursive: true, force: true })
  const files = {}
  for (let i = 0; i < 40; i++) files[`d${i % 5}/f${i}.txt`] = `version ${n} file ${i}\n`.repeat(20 + i)
  for (let i = 0; i < 4; i++) files[`big${i}.bin`] = prng(6 * 1024 * 1024, `v${n}-${i}`)
  await writeTree(src, files)
}

test('build killed at random points always leaves a complete tree; the rerun finishes', { timeout: (SECONDS + 120) * 1000 }, async t => {
  const dir = await tmpdir(); t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const src = path.join(dir, 'src'); const out = path.join(dir, 'out'); const key = path.join(dir, 'k')
  execFileSync(process.execPath, [BIN, 'keygen', key], { stdio: 'ignore' })
  const pub = JSON.parse(await fs.readFile(key, 'utf8')).publicKey
  await version(src, 1)
  assert.equal((await rotree(['build', src, out, '--key', key]).done).code, 0)
  const first = await checkPublished(out, pub)

  let kills = 0; let finished = 0
  const deadline = Date.now() + SECONDS * 1000
  for (let round = 2; kills < KILLS && Date.now() < deadline; round++) {
    await version(src, round)
    const run = rotree(['build', src, out, '--key', key])
    setTimeout(() => run.p.kill('SIGKILL'), 20 + Math.floor(Math.random() * 400)) // a build of this tree takes ~0.3-0.6 s
    const r = await run.done
    if (r.signal === 'SIGKILL') kills++; else finished++
    // whatever happened, OUT serves a complete, valid tree
    await checkPublished(out, pub)
  }
  t.diagnostic(`${kills} builds killed, ${finished} finished before the kill; OUT checked complete after each`)
  assert.ok(kills >= Math.min(5, KILLS), `only ${kills} kills landed`)
  // the next run finishes, and equals a clean build of the same input
  assert.equal((await rotree(['build', src, out, '--key', key]).done).code, 0)
  const after = await checkPublished(out, pub)
  const clean = path.join(dir, 'clean')
  assert.equal((await rotree(['build', src, clean, '--key', key]).done).code, 0)
  assert.equal((await checkPublished(clean, pub)).root, after.root)
  assert.ok(after.seq > first.seq)
  const leftovers = (await fs.readdir(path.join(out, 'h'))).filter(n => !/^[0-9a-f]{64}$/.test(n))
  assert.deepEqual(leftovers, [])
})

test('a full disk during a build leaves the old tree intact', { timeout: 60_000 }, async t => {
  const mnt = await tmpdir('rotree-tinyfs-')
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=24m', 'tmpfs', mnt], { stdio: 'ignore' })
  } catch {
    await fs.rm(mnt, { recursive: true, force: true })
    return t.skip('needs root to mount a small tmpfs')
  }
  t.after(async () => { execFileSync('umount', [mnt]); await fs.rm(mnt, { recursive: true, force: true }) })
  const dir = await tmpdir(); t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const src = path.join(dir, 'src'); const out = path.join(mnt, 'out'); const key = path.join(dir, 'k')
  execFileSync(process.execPath, [BIN, 'keygen', key], { stdio: 'ignore' })
  const pub = JSON.parse(await fs.readFile(key, 'utf8')).publicKey
  await writeTree(src, { 'a.txt': 'first version\n', 'data.bin': prng(8 << 20, 'one') })
  assert.equal((await rotree(['build', src, out, '--key', key]).done).code, 0)
  const before = await fs.readFile(path.join(out, 'fsinfo.json'))
  // 20 MiB of new content does not fit in what is left of 24 MiB
  await writeTree(src, { 'a.txt': 'second version\n', 'more.bin': prng(20 << 20, 'two') })
  const r = await rotree(['build', src, out, '--key', key]).done
  assert.equal(r.code, 1)
  assert.match(r.stderr, /ROTREE_SYSTEM_ENOSPC/)
  assert.deepEqual(await fs.readFile(path.join(out, 'fsinfo.json')), before)
  const ok = await checkPublished(out, pub)
  assert.ok(ok.blobs > 0)
  assert.deepEqual((await fs.readdir(path.join(out, 'h'))).filter(n => n.startsWith('.tmp-')), [])
})

// `rotree pull` from hostile mirrors (docs/TRUST.md rules 2–4): nothing a
// lying mirror sends reaches DIR, DIR keeps serving its old tree, and an
// honest second mirror completes the pull.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { tmpdir, writeTree, buildTree, serve, makeKey, prng, address, allFailedWith } from '../helpers/fixtures.js'
import { checkPublished } from '../helpers/check-tree.js'
import { startLyingServer } from '../helpers/lying-server.js'
import { pull } from '../../mirror/pull.js'
import { scrub } from '../../mirror/scrub.js'
import { blobNames, strayNames, reachable } from './helpers.js'
import { decodeRoot } from '../../lib/published/signed-roots.js'

async function setup (t) {
  const dir = await tmpdir('rotree-liar-'); t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const src = path.join(dir, 'src'); const out = path.join(dir, 'out'); const mirror = path.join(dir, 'mirror')
  const key = makeKey()
  const files = { 'index.html': '<h1>v1</h1>', 'docs/guide.txt': 'guide\n'.repeat(3000) }
  for (let i = 0; i < 10; i++) files[`data/part${i}.bin`] = prng(200_000, `v1-${i}`)
  await writeTree(src, files)
  // the builder's default format and its own sequence numbers (each above the last)
  const first = (await buildTree(src, { key, out })).result.seq
  const honest = await serve(out); t.after(honest.close)
  await pull({ address: address(honest.url, key.publicKey), dir: mirror, reader: { stateDir: null }, fsync: false })
  const v1 = await fs.readFile(path.join(mirror, 'fsinfo.json'))
  // v2: every data file and the pages above them change
  for (let i = 0; i < 10; i++) await fs.writeFile(path.join(src, `data/part${i}.bin`), prng(200_000, `v2-${i}`))
  await fs.writeFile(path.join(src, 'index.html'), '<h1>v2</h1>')
  const second = (await buildTree(src, { key, out })).result.seq
  assert.ok(second > first)
  return { dir, src, out, mirror, key, honest, v1, seq: second }
}

/**
 * What a reader answers to fsinfo.json whose signature does not verify:
 * version 1 ROTREE_BAD_SIGNATURE; version 2 counts only signatures that verify,
 * so its one key falls short of the threshold (FORMAT.md §12.2, §12.5).
 */
const badSignature = fsinfoBytes => decodeRoot(fsinfoBytes).version === 2 ? 'ROTREE_THRESHOLD' : 'ROTREE_BAD_SIGNATURE'

/** Every file in DIR/h hashes to its name and no temp file is left. */
async function allValid (mirror) {
  const s = await scrub(mirror)
  assert.deepEqual([...s.blobs].filter(([, b]) => !b.ok).map(([h]) => h), [])
  assert.deepEqual(await strayNames(mirror), [])
}

test('pull from a lying mirror refuses; DIR keeps its old tree and gets no bad blob; an honest second mirror completes it', { timeout: 90_000 }, async t => {
  const s = await setup(t)
  const have = await blobNames(s.mirror)
  const v2 = await reachable(s.out, await fs.readFile(path.join(s.out, 'fsinfo.json')), s.key.publicKey)
  const pages = new Set([...v2].filter(([, e]) => e.kind !== 'data').map(([h]) => h))
  const lies = ['truncate', 'truncate-cl', 'extend', 'extend-cl', 'reset-mid', { status: 404 }, 'flip', 'swap']
  let i = 0
  const assigned = new Map()
  const liar = await startLyingServer(s.out, {
    blob: (hash, bytes) => {
      // honest on pages, so the walk gets far and the data fetches in flight meet every kind of lie
      if (have.has(hash) || pages.has(hash)) return 'honest'
      if (!assigned.has(hash)) assigned.set(hash, lies[i++ % lies.length])
      const lie = assigned.get(hash)
      if (lie === 'flip') { const b = Uint8Array.from(bytes); b[b.length >> 1] ^= 0x40; return { body: b } }
      if (lie === 'swap') return { swapWith: [...have][0] }
      return lie
    }
  })
  t.after(liar.close)
  const addr = address(liar.url, s.key.publicKey)

  const err = await pull({ address: addr, dir: s.mirror, reader: { stateDir: null, timeoutMs: 5000 }, fsync: false }).then(() => null, e => e)
  assert.ok(err, 'a lying mirror must not complete a pull')
  assert.match(err.code, /^ROTREE_(HASH_MISMATCH|TRUNCATED|TOO_LARGE|MIRROR_HTTP|MIRROR_NETWORK|ALL_MIRRORS_FAILED)$/)
  assert.deepEqual(await fs.readFile(path.join(s.mirror, 'fsinfo.json')), s.v1)
  await checkPublished(s.mirror, s.key.publicKey)
  await allValid(s.mirror)
  assert.deepEqual(liar.problems, [])
  t.diagnostic(`lies told before the pull gave up: ${[...assigned.values()].map(l => typeof l === 'string' ? l : JSON.stringify(l)).join(', ')}`)
  assert.ok(assigned.size >= lies.length, `only ${assigned.size} lies told`)

  // the liar first, the honest mirror second: every lie is caught and routed around
  const r = await pull({ address: addr, dir: s.mirror, reader: { stateDir: null, mirrors: [s.honest.url], timeoutMs: 5000 }, fsync: false })
  assert.equal(r.seq, s.seq)
  assert.deepEqual(await fs.readFile(path.join(s.mirror, 'fsinfo.json')), await fs.readFile(path.join(s.out, 'fsinfo.json')))
  await checkPublished(s.mirror, s.key.publicKey)
  await allValid(s.mirror)
  const health = Object.fromEntries(r.mirrors.map(m => [m.url, m]))
  assert.ok(health[liar.url].failed >= 1, 'the liar is reported')
})

test('a mirror serving a forged or rolled-back fsinfo.json changes nothing in DIR', { timeout: 60_000 }, async t => {
  const s = await setup(t)
  const real = await fs.readFile(path.join(s.out, 'fsinfo.json'))
  // fsinfo.json's own sequence number (the first "seq" of either version) raised, the signature kept
  const forged = Buffer.from(real.toString().replace(`"seq": ${s.seq}`, `"seq": ${s.seq + 1}`))
  assert.notDeepEqual(forged, real)
  const liar = await startLyingServer(s.out, { fsinfo: () => ({ body: forged }) })
  t.after(liar.close)
  await assert.rejects(pull({ address: address(liar.url, s.key.publicKey), dir: s.mirror, reader: { stateDir: null }, fsync: false }), allFailedWith(badSignature(real)))
  assert.deepEqual(await fs.readFile(path.join(s.mirror, 'fsinfo.json')), s.v1)

  // the first root again after DIR holds the second: refused even by a reader with no state
  await pull({ address: address(s.honest.url, s.key.publicKey), dir: s.mirror, reader: { stateDir: null }, fsync: false })
  liar.set({ fsinfo: () => ({ body: s.v1 }) })
  await assert.rejects(pull({ address: address(liar.url, s.key.publicKey), dir: s.mirror, reader: { stateDir: null }, fsync: false }), { code: 'ROTREE_ROLLBACK' })
  assert.deepEqual(await fs.readFile(path.join(s.mirror, 'fsinfo.json')), real)
  await allValid(s.mirror)
})

// Opening a tree whose trust document names witnesses (docs/FORMAT.md §13.1,
// docs/TRUST.md rule 21): the reader requires the fsinfo.json in the log its
// mirror serves, cosigned by K of the witnesses within a day, and that log
// consistent with the checkpoint it kept; a tree without witnesses costs no
// request to log/, and one with witnesses one (log/fsinfo.proof), and the
// consistency tiles when the tree moved on since the checkpoint kept. A mirror whose log/ lies is a mirror fault (the next
// mirror is read); a split view every mirror shows is reported as itself.
import { test, after } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { openTree } from 'rotree-client'
import { tmpdir, writeTree } from '../helpers/fixtures.js'
import { startLyingServer } from '../helpers/lying-server.js'
import { witnessedTree, ok } from './witness-fixture.js'

const cleanups = []
after(async () => { for (const c of cleanups.reverse()) await c() })
const scratch = async p => { const d = await tmpdir(p); cleanups.push(() => fs.rm(d, { recursive: true, force: true })); return d }
const liar = async (dir, lies) => { const l = await startLyingServer(dir, lies); cleanups.push(() => l.close()); return l }
const read = async (addr, o) => {
  const tree = await openTree(addr, { timeoutMs: 5000, fsinfoSettleMs: 200, ...o })
  try { return new TextDecoder().decode(await tree.readFile('a.txt')) } finally { await tree.close() }
}
const fromDir = other => rel => ({ body: new Uint8Array(readFileSync(path.join(other, 'log', rel))) })
const logRequests = m => m.requests.filter(r => r.startsWith('/log/'))
/** A liar's edit of a checkpoint note, applied to log/checkpoint and to the checkpoint inside log/fsinfo.proof alike. */
const editCheckpoints = edit => (rel, bytes) => {
  if (rel === 'checkpoint') return { body: new TextEncoder().encode(edit(new TextDecoder().decode(bytes))) }
  if (rel !== 'fsinfo.proof') return 'honest'
  const text = new TextDecoder().decode(bytes); const at = text.indexOf('\n\n') + 2
  return { body: new TextEncoder().encode(text.slice(0, at) + edit(text.slice(at))) }
}

test('a tree without witnesses: no request to log/', async () => {
  const base = await scratch('rotree-wopen-plain-')
  const A = path.join(base, 'A.key')
  await ok('keygen', A)
  const out = path.join(base, 'out')
  const init = await ok('trust', 'init', out, '--root', A, '--release', A, '--timestamp', A, '--name', 'site')
  await ok('trust', 'sign', out, '--key', A)
  await writeTree(path.join(base, 'src'), { 'a.txt': 'plain\n' })
  await ok('build', path.join(base, 'src'), out, '--key', A, '--no-fsync')
  const m = await liar(out)
  const fragment = init.trimEnd().split('\n').at(-1).split('#')[1]
  assert.equal(await read(`${m.url}#${fragment}`, { stateDir: null }), 'plain\n')
  assert.ok(m.requests.length > 0)
  assert.deepEqual(m.requests.filter(r => r.startsWith('/log/')), [])
})

test('witnessed: honest reads; a log that forks from the kept checkpoint, stale or too few cosignatures, an fsinfo.json outside the log are refused', async () => {
  const base = await scratch('rotree-wopen-')
  const f = await witnessedTree(base, cleanups, { builds: 2 })
  const logAt2 = path.join(base, 'log-at-2'); await fs.cp(path.join(f.out, 'log'), path.join(logAt2, 'log'), { recursive: true })
  const fork = path.join(base, 'fork'); await fs.cp(f.out, fork, { recursive: true })
  await f.build('version 3\n')
  const honest = await liar(f.out)
  const addr = url => `${url}#${f.fragment}`
  const state = await scratch('rotree-wopen-state-')

  // honest: one request to log/ per open, the proof of the fsinfo.json in the cosigned checkpoint, which is kept beside the sequence numbers
  assert.equal(await read(addr(honest.url), { stateDir: state }), 'version 3\n')
  assert.deepEqual(logRequests(honest), ['/log/fsinfo.proof'])
  honest.requests.length = 0
  assert.equal(await read(addr(honest.url), { stateDir: state }), 'version 3\n')
  assert.deepEqual(logRequests(honest), ['/log/fsinfo.proof'], 'the same checkpoint kept: nothing more')

  // the fork: the same witness keys with their memory wiped cosign a log that diverges after size 3 (2 publishes of its own)
  for (const w of f.ws) { await w.stop(); w.o.stateDir += '-wiped'; await w.start() }
  await writeTree(path.join(base, 'fsrc'), { 'a.txt': 'forked 3\n' })
  await ok('build', path.join(base, 'fsrc'), fork, '--key', f.A, '--no-fsync')
  await writeTree(path.join(base, 'fsrc'), { 'a.txt': 'forked 4\n' })
  await ok('build', path.join(base, 'fsrc'), fork, '--key', f.A, '--no-fsync')
  const forked = await liar(fork)
  // a reader that never saw the honest log reads the fork (nothing to compare it with)
  assert.equal(await read(addr(forked.url), { stateDir: null }), 'forked 4\n')
  // this reader kept the honest checkpoint: the fork alone is ROTREE_SPLIT_VIEW (the fork's own proof, and the
  // consistency tiles from size 3, show it: log/checkpoint is not asked), and so through two mirrors that both show it
  forked.requests.length = 0
  await assert.rejects(read(addr(forked.url), { stateDir: state }), e => e.code === 'ROTREE_SPLIT_VIEW' && /does not extend the checkpoint of size 3/.test(e.message))
  assert.ok(logRequests(forked).includes('/log/fsinfo.proof') && logRequests(forked).some(r => r.startsWith('/log/tile/')), logRequests(forked).join(' '))
  assert.ok(!logRequests(forked).includes('/log/checkpoint'), logRequests(forked).join(' '))
  const forked2 = await liar(fork)
  await assert.rejects(read(addr(forked.url), { stateDir: state, mirrors: [forked2.url] }), e => e.code === 'ROTREE_SPLIT_VIEW')
  // beside an honest mirror, the forked one is a mirror fault and the honest one is read
  const tree = await openTree(addr(forked.url), { stateDir: state, mirrors: [honest.url], timeoutMs: 5000, fsinfoSettleMs: 200 })
  try {
    assert.equal(new TextDecoder().decode(await tree.readFile('a.txt')), 'version 3\n')
    const h = tree.stats.mirrors.find(m => m.url === forked.url)
    assert.equal(h.lastFault?.code, 'ROTREE_SPLIT_VIEW')
  } finally { await tree.close() }

  // too few cosignatures: the liar drops two witnesses' lines (from the checkpoint and the proof alike)
  const dropTwo = text => text.split('\n').filter(l => !/^— w[12]\.example/.test(l)).join('\n')
  const fewer = await liar(f.out, { log: editCheckpoints(dropTwo) })
  await assert.rejects(read(addr(fewer.url), { stateDir: null }), e => e.code === 'ROTREE_THRESHOLD' && /1 fresh cosignature/.test(e.message))
  // the same lie in the proof alone: set aside, and the honest checkpoint and tiles read instead
  const proofOnly = await liar(f.out, { log: (rel, bytes) => rel === 'fsinfo.proof' ? editCheckpoints(dropTwo)(rel, bytes) : 'honest' })
  assert.equal(await read(addr(proofOnly.url), { stateDir: null }), 'version 3\n')
  assert.deepEqual(logRequests(proofOnly).slice(0, 2), ['/log/fsinfo.proof', '/log/checkpoint'])
  // a proof of the fsinfo.json before (a publish under way, or a mirror's copy in between): set aside alike
  const between = await liar(f.out, { log: rel => rel === 'fsinfo.proof' ? fromDir(logAt2)(rel) : 'honest' })
  assert.equal(await read(addr(between.url), { stateDir: null }), 'version 3\n')
  assert.ok(logRequests(between).includes('/log/checkpoint'))
  // too old: a day and an hour later by the reader's clock (fsinfo.json lives 7 days)
  await assert.rejects(read(addr(honest.url), { stateDir: null, now: () => Date.now() + 25 * 3600e3 }), e => e.code === 'ROTREE_THRESHOLD' && /older than 24 hours/.test(e.message))
  // the fsinfo.json not in the log: the log as it was before it was published
  const missing = await liar(f.out, { log: fromDir(logAt2) })
  await assert.rejects(read(addr(missing.url), { stateDir: null }), e => e.code === 'ROTREE_SPLIT_VIEW' && /not in the log/.test(e.message))
  // a mirror without log/: its answer is not accepted
  const bare = await liar(f.out, { log: () => ({ status: 404 }) })
  await assert.rejects(read(addr(bare.url), { stateDir: null }), e => e.code === 'ROTREE_ALL_MIRRORS_FAILED' && e.errors[0].code === 'ROTREE_MIRROR_HTTP')
})

test('witnessed, the tree moved on since the checkpoint kept: the proof and the consistency tiles, never log/checkpoint', async () => {
  const base = await scratch('rotree-wopen-moved-')
  const f = await witnessedTree(base, cleanups, { builds: 1 })
  const honest = await liar(f.out)
  const state = await scratch('rotree-wopen-moved-state-')
  assert.equal(await read(`${honest.url}#${f.fragment}`, { stateDir: state }), 'version 1\n')
  await f.build('version 2\n')
  await f.build('version 3\n')
  honest.requests.length = 0
  assert.equal(await read(`${honest.url}#${f.fragment}`, { stateDir: state }), 'version 3\n')
  const reqs = logRequests(honest)
  assert.equal(reqs[0], '/log/fsinfo.proof')
  assert.ok(reqs.length >= 2 && reqs.slice(1).every(r => r.startsWith('/log/tile/')), reqs.join(' '))
})

// Format version 2 through the library, end to end (docs/FORMAT.md §12,
// docs/TRUST.md rules 10–14): trees published with the format module's
// encoders and signed in the test (test/client/v2-publisher.js), served by a
// real HTTP server on port 0, read with openTree. Rotations are followed at
// the same address, a hidden rotation keeps a reader on the old chain until
// it expires, another tree at an address is refused, a retirement sticks
// across restarts, too few or retired keys sign nothing, and version 1 reads
// as it always did.
import { test, after } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { createHash } from 'node:crypto'
import { openTree } from 'rotree-client'
import { verifyFsinfo } from 'rotree-client/verify'
import { decodeDirPage } from 'rotree-client/format'
import { decodeBlobSync } from 'rotree-client/codec'
import { tmpdir, makeKey } from '../helpers/fixtures.js'
import { SignedTree } from '../helpers/signed-tree.js'
import { startStaticMirror } from './static-mirror.js'
import { Publisher, role, RETIRED } from './v2-publisher.js'

const cleanups = []
after(async () => { for (const c of cleanups.reverse()) await c() })
const sha = b => createHash('sha256').update(b).digest('hex')
const text = b => Buffer.from(b).toString()
const HOUR = 3600e3

async function publisher (o) { const p = await Publisher.create(o); cleanups.push(() => p.close()); return p }
async function mirror (dir) { const m = await startStaticMirror(dir); cleanups.push(() => m.close()); return m }
async function stateDir () { const d = await tmpdir('rotree-v2-state-'); cleanups.push(() => fs.rm(d, { recursive: true, force: true })); return d }
async function open (address, o = {}) { const t = await openTree(address, { stateDir: null, timeoutMs: 5000, fsinfoSettleMs: 200, ...o }); cleanups.push(() => t.close()); return t }

/** The codes a failed open or read carries: its own, or each mirror's inside ROTREE_ALL_MIRRORS_FAILED. */
async function codeOf (p) {
  try { await p } catch (err) {
    if (err.code === 'ROTREE_ALL_MIRRORS_FAILED') return err.errors.map(e => e.code).join(',')
    return err.code ?? String(err)
  }
  return 'no error'
}

/** Publisher p rotated twice, the second time replacing every root key (doc 3: 2 of D, E, F). */
async function rotateTwice (p) {
  const k = p.k
  await p.rotate({ root: role([k.A, k.B, k.D], 2), release: role([k.R2]), timestamp: role([k.T2]) })
  // every root key replaced at once: 2 of doc 2's (A, B) and 2 of its own (E, F)
  await p.rotate({ root: role([k.D, k.E, k.F], 2), release: role([k.R3]), timestamp: role([k.T3]) }, { signers: [k.A, k.B, k.E, k.F] })
}

test('a reader that saw trust document 1 follows rotations to 3 at the same address; a fresh reader does too', async () => {
  const p = await publisher({ name: 'stable' })
  await p.publish({ 'a.txt': 'one', 'big.txt': 'x'.repeat(50_000) })
  const m = await mirror(p.out)
  const state = await stateDir()
  const tree = await open(p.address(m.url), { stateDir: state })
  assert.equal(text(await tree.readFile('/a.txt')), 'one')
  assert.equal(tree.info.trustSeq, 1)
  assert.equal(tree.info.version, 2)
  assert.equal(tree.info.name, 'stable')

  await rotateTwice(p)
  await p.publish({ 'a.txt': 'three', 'big.txt': 'y'.repeat(50_000) })
  assert.equal(await tree.refresh(), true)
  assert.equal(tree.info.trustSeq, 3)
  assert.equal(tree.info.releaseSeq, 2)
  assert.equal(text(await tree.readFile('/a.txt')), 'three')
  assert.equal(sha(await tree.readFile('/big.txt')), sha('y'.repeat(50_000)))
  assert.ok(['/trust/2.json', '/trust/3.json'].every(r => m.requests.includes(r)))

  const fresh = await open(p.address(m.url))
  assert.equal(fresh.info.trustSeq, 3)
  assert.equal(text(await fresh.readFile('/a.txt')), 'three')

  // the state persisted trust document 3: after a restart, a mirror still on document 1 is behind
  const old = await mirror(p.out)
  old.set('/fsinfo.json', await oldFsinfo(p))
  assert.equal(await codeOf(open(p.address(old.url), { stateDir: state })), 'ROTREE_ROLLBACK')
})

/** An fsinfo.json of the publisher's first trust document (a fresh publisher of the same family, as it was). */
async function oldFsinfo (p) {
  const { doc, signers, releaseSeq } = p
  p.doc = await readDoc(p, 1)
  p.signers = { rel: [p.k.R1], ts: [p.k.T1] }
  const t = await p.publish({ 'a.txt': 'one' }, { file: false, release: { seq: 1, expires: Date.now() + 30 * 86400e3 } })
  Object.assign(p, { doc, signers, releaseSeq })
  return t
}
async function readDoc (p, seq) {
  const { decodeTrustDoc } = await import('rotree-client/format')
  return decodeTrustDoc(await fs.readFile(path.join(p.out, 'trust', seq + '.json')))
}

test('a single key adopts roles: its readers follow to the trust document at the same address', async () => {
  const p = await publisher({ anchor: 'key' })
  await p.publish({ 'a.txt': 'alone' })
  const m = await mirror(p.out)
  const state = await stateDir()
  const tree = await open(p.address(m.url), { stateDir: state })
  assert.equal(tree.info.trustSeq, null)
  assert.equal(tree.info.key, p.k.K.publicKey)
  const k = p.k
  await p.rotate({ root: role([k.A, k.B], 2), release: role([k.R1]), timestamp: role([k.T1]) }) // signed by K, A and B
  await p.publish({ 'a.txt': 'adopted' })
  await tree.refresh()
  assert.equal(tree.info.trustSeq, 1)
  assert.equal(text(await tree.readFile('/a.txt')), 'adopted')
  // once adopted, the lone key is no signer: a newer fsinfo.json it signs alone is behind
  const doc = p.doc
  p.doc = null
  const loneText = await p.publish({ 'a.txt': 'lone' }, { file: false, relSigners: [k.K], tsSigners: [k.K], release: { seq: 9, expires: Date.now() + HOUR } })
  p.doc = doc
  const lone = await mirror(p.out)
  lone.set('/fsinfo.json', loneText)
  assert.equal(await codeOf(open(p.address(lone.url), { stateDir: state })), 'ROTREE_ROLLBACK')
})

test('a mirror that hides a rotation keeps the reader on the old chain until it expires', async () => {
  let now = Date.now()
  const p = await publisher({ now: () => now })
  await p.publish({ 'a.txt': 'one' }, { ttlMs: HOUR })
  const oldText = await fs.readFile(path.join(p.out, 'fsinfo.json'))
  await rotateTwice(p)
  await p.publish({ 'a.txt': 'three' }, { ttlMs: 48 * HOUR })
  const hiding = await mirror(p.out)
  hiding.set('/fsinfo.json', oldText)
  hiding.set('/trust/2.json', null)
  hiding.set('/trust/3.json', null)
  const state = await stateDir()
  const tree = await open(p.address(hiding.url), { stateDir: state, now: () => now })
  assert.equal(tree.info.trustSeq, 1)
  assert.equal(text(await tree.readFile('/a.txt')), 'one')
  now += 2 * HOUR // the hidden chain's fsinfo.json has expired
  assert.equal(await codeOf(tree.refresh()), 'ROTREE_EXPIRED')
  assert.equal(await codeOf(tree.readFile('/a.txt')), 'ROTREE_EXPIRED')
  // an honest mirror beside it: the reader walks on and reads the new release
  const honest = await mirror(p.out)
  const both = await open(p.address(hiding.url), { stateDir: state, now: () => now, mirrors: [honest.url] })
  assert.equal(both.info.trustSeq, 3)
  assert.equal(text(await both.readFile('/a.txt')), 'three')
  // and from now on the hiding mirror is behind, even when it is the only one
  now -= 2 * HOUR
  assert.equal(await codeOf(open(p.address(hiding.url), { stateDir: state, now: () => now })), 'ROTREE_ROLLBACK')
})

test('tree B at tree A\'s address is refused: another family, another name, another key', async () => {
  const a = await publisher({ name: 'stable' })
  await a.publish({ 'a.txt': 'A' })
  const b = await publisher({ name: 'stable' })
  await b.publish({ 'a.txt': 'B' })
  const mb = await mirror(b.out)
  // b's fsinfo.json names b's family (FORMAT.md §12.4), refused before any trust document is fetched
  assert.equal(await codeOf(open(a.address(mb.url))), 'ROTREE_WRONG_KEY')
  // the same family's other tree
  const nightly = await mirror(a.out)
  nightly.set('/fsinfo.json', await a.publish({ 'a.txt': 'N' }, { name: 'nightly', file: false }))
  assert.equal(await codeOf(open(a.address(nightly.url))), 'ROTREE_WRONG_NAME')
  assert.equal(await codeOf(open(a.address(nightly.url, 'nightly'))), 'no error')
  // a named tree at an unnamed address (and the reverse)
  const ma = await mirror(a.out)
  assert.equal(await codeOf(open(a.address(ma.url, ''))), 'ROTREE_WRONG_NAME')
  // single-key trees: another key's tree at K's address
  const k1 = await publisher({ anchor: 'key' })
  const k2 = await publisher({ anchor: 'key' })
  await k2.publish({ 'a.txt': 'k2' })
  const m2 = await mirror(k2.out)
  assert.equal(await codeOf(open(k1.address(m2.url))), 'ROTREE_WRONG_KEY')
})

test('a retired tree is refused with ROTREE_RETIRED, and stays refused after a restart', async () => {
  const p = await publisher()
  await p.publish({ 'a.txt': 'one' })
  const oldText = await fs.readFile(path.join(p.out, 'fsinfo.json'))
  const m = await mirror(p.out)
  const state = await stateDir()
  const tree = await open(p.address(m.url), { stateDir: state })
  const k = p.k
  await p.rotate({ root: role([k.A, k.B, k.C], 2), release: RETIRED, timestamp: role([k.T1]) })
  await p.publish({ 'a.txt': 'gone' }, { release: { seq: 2, expires: Date.now() + HOUR }, relSigners: [] })
  assert.equal(await codeOf(tree.refresh()), 'ROTREE_RETIRED')
  assert.equal(await codeOf(tree.readFile('/a.txt')), 'ROTREE_RETIRED') // not even from the root accepted before
  tree.close()
  // a restart, and a mirror that hides the retirement: still retired
  const hiding = await mirror(p.out)
  hiding.set('/fsinfo.json', oldText)
  hiding.set('/trust/2.json', null)
  assert.equal(await codeOf(open(p.address(hiding.url), { stateDir: state })), 'ROTREE_RETIRED')
  // a reader that never saw it learns it from an honest mirror
  assert.equal(await codeOf(open(p.address(m.url))), 'ROTREE_RETIRED')
})

test('nothing signed by too few or retired keys is accepted; an accepted trust document sticks when its fsinfo.json fails', async () => {
  const p = await publisher()
  await p.publish({ 'a.txt': 'one' })
  const oldText = await fs.readFile(path.join(p.out, 'fsinfo.json'))
  const k = p.k
  // release threshold 2 of R1, R2 (R1 is kept); timestamp T2 replaces T1
  await p.rotate({ root: role([k.A, k.B, k.C], 2), release: role([k.R1, k.R2], 2), timestamp: role([k.T2]) })
  const m = await mirror(p.out)
  const cases = [
    ['the release by one of two keys', { relSigners: [k.R1] }],
    ['the release by a key the rotation did not keep as enough', { relSigners: [k.R1, k.R3] }],
    ['fsinfo.json by the retired timestamp key', { tsSigners: [k.T1] }],
    ['fsinfo.json by a release key', { tsSigners: [k.R1] }]
  ]
  const state = await stateDir()
  for (const [what, o] of cases) {
    m.set('/fsinfo.json', await p.publish({ 'a.txt': 'bad' }, { file: false, ...o }))
    assert.equal(await codeOf(open(p.address(m.url), { stateDir: state })), 'ROTREE_THRESHOLD', what)
  }
  // trust document 2 was accepted on the way, and persisted: document 1's fsinfo.json is now behind
  m.set('/fsinfo.json', oldText)
  assert.equal(await codeOf(open(p.address(m.url), { stateDir: state })), 'ROTREE_ROLLBACK')
  // a trust document signed by one old root key only
  const q = await publisher()
  await q.publish({ 'a.txt': 'one' })
  await q.rotate({ root: role([q.k.A, q.k.D], 2), release: role([q.k.R1]), timestamp: role([q.k.T1]) }, { signers: [q.k.A, q.k.D] })
  await q.publish({ 'a.txt': 'two' })
  const mq = await mirror(q.out)
  assert.equal(await codeOf(open(q.address(mq.url))), 'ROTREE_THRESHOLD')
  // and the good one reads
  m.set('/fsinfo.json', await p.publish({ 'a.txt': 'good' }, { file: false, relSigners: [k.R1, k.R2] }))
  const ok = await open(p.address(m.url), { stateDir: state })
  assert.equal(text(await ok.readFile('/a.txt')), 'good')
})

test('version 1 reads as before; a key that moves its tree to version 2 never goes back', async () => {
  const dir = await tmpdir('rotree-v1-')
  cleanups.push(() => fs.rm(dir, { recursive: true, force: true }))
  const key = makeKey()
  const t = new SignedTree(dir)
  const one = new Uint8Array(100_000).fill(1)
  const two = new Uint8Array(1_500_000).map((_, i) => i * 7)
  await t.sign(key, [{ name: 'small.txt', file: 'v1' }, { name: 'one.bin', file: one }, { name: 'two.bin', file: two }])
  const v1Text = await fs.readFile(path.join(dir, 'fsinfo.json'))
  const m = await mirror(dir)
  const state = await stateDir()
  const tree = await open(`${m.url}#${key.publicKey}`, { stateDir: state })
  assert.equal(tree.info.version, undefined)
  assert.deepEqual(Object.keys(tree.info), ['key', 'seq', 'issued', 'expires', 'root', 'rootSize', 'rootMtime', 'mirror'])
  assert.equal(text(await tree.readFile('/small.txt')), 'v1')
  const s1 = await tree.stat('/one.bin')
  assert.equal(s1.sha256, sha(one)) // one chunk: the chunk's handle is the file's SHA-256
  assert.equal(s1.hash, sha(one))
  const s2 = await tree.stat('/two.bin')
  assert.equal(s2.sha256, null)
  assert.equal(s2.hash, null)
  assert.equal((await tree.stat('/small.txt')).sha256, null)
  assert.equal(sha(await tree.readFile('/two.bin')), sha(two))
  // the same key publishes version 2 (a single-key tree): the reader follows
  const p = new Publisher(dir, '', Date.now)
  p.k.K = key
  p.anchor = key.publicKey
  p.signers = { rel: [key], ts: [key] }
  p.seq = 2
  await p.publish({ 'small.txt': 'v2' })
  await tree.refresh()
  assert.equal(tree.info.version, 2)
  assert.equal(text(await tree.readFile('/small.txt')), 'v2')
  assert.equal((await tree.stat('/small.txt')).sha256, sha('v2'))
  // a mirror still serving the version-1 fsinfo.json is behind
  const old = await mirror(dir)
  old.set('/fsinfo.json', v1Text)
  assert.equal(await codeOf(open(`${old.url}#${key.publicKey}`, { stateDir: state })), 'ROTREE_ROLLBACK')
  // an address that names a tree never takes a version-1 fsinfo.json
  assert.equal(await codeOf(open(`${old.url}#${key.publicKey}:stable`)), 'ROTREE_WRONG_NAME')
})

test('a version-2 tree read by a reader that knows only version 1: ROTREE_UNSUPPORTED_VERSION', async () => {
  const p = await publisher({ anchor: 'key' })
  await p.publish({ 'a.txt': 'x'.repeat(10_000) })
  const m = await mirror(p.out)
  const bytes = new Uint8Array(await (await fetch(m.url + 'fsinfo.json')).arrayBuffer())
  assert.throws(() => verifyFsinfo(bytes, { publicKey: p.k.K.publicKey }), { code: 'ROTREE_UNSUPPORTED_VERSION' })
  // and its pages are not version-1 pages
  const tree = await open(p.address(m.url))
  const root = tree.rootRecord.root
  const stored = await fs.readFile(path.join(p.out, 'h', root.hash))
  assert.throws(() => decodeDirPage(decodeBlobSync(stored, root.codec, root.size)), { code: 'ROTREE_BAD_FORMAT' })
  assert.equal(decodeDirPage(decodeBlobSync(stored, root.codec, root.size), { version: 2 }).entries[0].name, 'a.txt')
})

test('whole-file SHA-256: stat shows it, whole reads check it, a wrong one fails at the end with ROTREE_HASH_MISMATCH', async () => {
  const p = await publisher({ anchor: 'key' })
  const data = Buffer.from('compressible '.repeat(20_000))
  await p.publish({ 'f.txt': data, 'small.txt': 'tiny' })
  const m = await mirror(p.out)
  const tree = await open(p.address(m.url))
  const s = await tree.stat('/f.txt')
  assert.equal(s.sha256, sha(data))
  assert.equal(s.hash, sha(data))
  assert.equal((await tree.stat('/small.txt')).sha256, sha('tiny'))
  assert.deepEqual((await tree.readdir('/', { withFileTypes: true })).map(e => e.sha256), [sha(data), sha('tiny')])
  // the publisher signs a wrong SHA-256 for f.txt (every chunk still verifies)
  const entry = await tree.resolve('/f.txt')
  const root = await p.w.dir([{ name: 'f.txt', entry: { ...entry, sha256: sha('other') } }])
  m.set('/fsinfo.json', await p.w.publish({ root, seq: p.seq + 1, release: { seq: 2 }, relSigners: [p.k.K], tsSigners: [p.k.K], file: false }))
  await tree.refresh()
  assert.equal(await codeOf(tree.readFile('/f.txt')), 'ROTREE_HASH_MISMATCH')
  let got = 0
  await assert.rejects(async () => { for await (const b of tree.createReadStream('/f.txt')) got += b.length }, { code: 'ROTREE_HASH_MISMATCH' })
  assert.ok(got < data.length, 'the stream never looks complete')
  // a part of the file is not the whole file: no hash to check
  const part = []
  for await (const b of tree.readRange('/f.txt', { start: 10, end: 99 })) part.push(b)
  assert.equal(Buffer.concat(part).toString(), data.subarray(10, 100).toString())
})

// Until read-pipeline.js hands chunk-index children on whole (chunkSpans builds
// { hash, size } for a level-1 child and drops its stored size and codec), a
// compressed chunk under an index is fetched as if raw and refused
// (ROTREE_TRUNCATED): never wrong bytes, but no read either.
test('a compressed file of many chunks through its chunk index: whole and ranged reads', async () => {
  const p = await publisher({ anchor: 'key' })
  const data = Buffer.from(Array.from({ length: 40_000 }, (_, i) => `line ${i}\n`).join(''))
  await p.publish({ 'many.txt': { data, chunkSize: 8192 } })
  const m = await mirror(p.out)
  const tree = await open(p.address(m.url))
  const e = await tree.resolve('/many.txt')
  assert.ok(e.index && e.index.levels >= 1, 'a chunk index')
  assert.equal(sha(await tree.readFile('/many.txt')), sha(data))
  const parts = []
  for await (const b of tree.readRange('/many.txt', { start: 8000, end: 100_000 })) parts.push(b)
  assert.ok(Buffer.concat(parts).equals(data.subarray(8000, 100_001)))
})

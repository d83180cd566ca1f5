// The tree's transparency log (docs/FORMAT.md §13) as publishing writes it
// (lib/published/log.js) and `rotree log-audit` reads it over HTTP
// (rotree-client/log): three releases make three leaves whose tiles and
// checkpoint an independent RFC 6962 computation agrees with; a re-run logs
// nothing twice; a planted second root for one sequence is a split view; a
// flipped byte in a tile or the checkpoint is refused. Each publish writes
// log/fsinfo.proof, the tlog-proof of its fsinfo.json in its checkpoint, and
// a pull makes its own from the log it copied.
import { test, after } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { createHash } from 'node:crypto'
import { openTree } from 'rotree-client'
import { auditLog, logOrigin, checkLogProof } from 'rotree-client/log'
import {
  openNote, parseVerifierKey, encodeVerifierKey, parseCheckpoint, encodeBase64, signNote, signerOf, formatCheckpoint,
  encodeBundle, tilesForSize, tilePath, bundleOf, readTileData, arrayHashReader, storedHashes, treeHash, TILE_HEIGHT
} from 'rotree-client/tlog'
import { decodeFsinfo } from 'rotree-client/format'
import http from 'node:http'
import { tmpdir, writeTree, makeKey, buildTree } from '../helpers/fixtures.js'
import { logFsinfo, readLocalLog } from '../../lib/published/log.js'
import { writeHistory, listHistory } from '../../lib/published/history.js'
import { signFields } from '../../builder/sign-root.js'

const ROTREE = new URL('../../bin/rotree.js', import.meta.url).pathname
const cleanups = []
after(async () => { for (const c of cleanups.reverse()) await c() })
async function dir (prefix) { const d = await tmpdir(prefix); cleanups.push(() => fs.rm(d, { recursive: true, force: true })); return d }
const sha = b => createHash('sha256').update(b).digest()

// RFC 6962 §2.1 straight from the definition, with node:crypto: the reference
const leafH = e => sha(Buffer.concat([Buffer.from([0]), e]))
function mth (es) {
  if (es.length === 1) return leafH(es[0])
  let k = 1; while (k * 2 < es.length) k *= 2
  return sha(Buffer.concat([Buffer.from([1]), mth(es.slice(0, k)), mth(es.slice(k))]))
}

async function historyBytes (out) {
  const hs = (await listHistory(out)).reverse()
  return Promise.all(hs.map(h => fs.readFile(h.file)))
}

/** Three builds of a changing SRC into one OUT. */
async function threeReleases (version) {
  const src = await dir('rotree-log-src-'); const key = makeKey()
  const out = path.join(await dir('rotree-log-out-'), 'out')
  for (const s of ['one', 'two', 'three']) { await writeTree(src, { 'a.txt': s }); await buildTree(src, { key, out, version }) }
  return { src, out, key }
}

/** The plainest static host: any file under dir by its path, else 404 (the log needs nothing of rotree serve). */
async function serve (root) {
  const srv = http.createServer(async (req, res) => {
    const rel = decodeURIComponent(new URL(req.url, 'http://x').pathname).slice(1)
    if (rel.split('/').some(p => p === '..' || p.startsWith('.'))) return res.writeHead(404).end()
    try {
      const body = await fs.readFile(path.join(root, rel))
      res.writeHead(200, { 'Content-Length': body.length }).end(req.method === 'HEAD' ? undefined : body)
    } catch { res.writeHead(404).end() }
  })
  await new Promise(resolve => srv.listen(0, '127.0.0.1', resolve))
  return { url: `http://127.0.0.1:${srv.address().port}/`, close: () => new Promise(resolve => { srv.closeAllConnections(); srv.close(resolve) }) }
}

async function audit (out, key) {
  const srv = await serve(out)
  const tree = await openTree(`${srv.url}#${key.publicKey}`, { stateDir: await dir('rotree-log-state-'), timeoutMs: 5000 })
  try { return await auditLog(tree) } finally { tree.close(); await srv.close() }
}

test('three releases: three leaves, the tiles and checkpoint an independent computation gives, audit passes', async () => {
  const { out, key } = await threeReleases(2)
  const entries = await historyBytes(out)
  assert.equal(entries.length, 3)
  const current = await fs.readFile(path.join(out, 'fsinfo.json'))
  assert.deepEqual(entries[2], current)
  // level-0 tile: the three leaf hashes; the bundle: the three fsinfo.json texts, length-prefixed
  assert.deepEqual(await fs.readFile(path.join(out, 'log/tile/0/000.p/3')), Buffer.concat(entries.map(leafH)))
  const bundle = Buffer.concat(entries.flatMap(e => [Buffer.from([e.length >> 8, e.length & 0xff]), e]))
  assert.deepEqual(await fs.readFile(path.join(out, 'log/tile/entries/000.p/3')), bundle)
  // the tiles of the two smaller trees stay (a reader holding an older checkpoint still finds them)
  for (const w of [1, 2]) assert.deepEqual(await fs.readFile(path.join(out, `log/tile/0/000.p/${w}`)), Buffer.concat(entries.slice(0, w).map(leafH)))
  // the checkpoint: origin rotree/<anchor>, size 3, the RFC 6962 root, signed by the tree's key
  const note = await fs.readFile(path.join(out, 'log/checkpoint'))
  const origin = logOrigin(key.publicKey)
  const opened = openNote(note, [parseVerifierKey(encodeVerifierKey(origin, key.publicKey))])
  const cp = parseCheckpoint(opened.text)
  assert.equal(cp.origin, origin); assert.equal(cp.size, 3)
  assert.deepEqual(Buffer.from(cp.hash), mth(entries))
  const a = await audit(out, key)
  assert.deepEqual(a.problems, [])
  assert.equal(a.size, 3)
  assert.deepEqual(a.leaves.map(l => l.ok), [true, true, true])
  assert.deepEqual(a.current, { seq: JSON.parse(current).seq, logged: true })
  assert.equal(a.root, encodeBase64(mth(entries)))
})

test('each publish writes log/fsinfo.proof: the tlog-proof of its fsinfo.json in its checkpoint, verbatim, replacing the one before', async () => {
  const src = await dir('rotree-log-src-'); const key = makeKey()
  const out = path.join(await dir('rotree-log-out-'), 'out')
  const signers = { origin: logOrigin(key.publicKey), keys: [key.publicKey], nowMs: Date.now() }
  const proofs = []; const roots = []
  for (const s of ['one', 'two', 'three']) {
    await writeTree(src, { 'a.txt': s }); await buildTree(src, { key, out, version: 1 })
    const text = await fs.readFile(path.join(out, 'log', 'fsinfo.proof'), 'utf8')
    const fsinfoBytes = new Uint8Array(await fs.readFile(path.join(out, 'fsinfo.json')))
    const r = checkLogProof(text, { fsinfoBytes, ...signers })
    assert.deepEqual([r.index, r.size], [proofs.length, proofs.length + 1])
    // the checkpoint in it is log/checkpoint byte for byte
    assert.equal(text.slice(text.indexOf('\n\n') + 2), await fs.readFile(path.join(out, 'log', 'checkpoint'), 'utf8'))
    proofs.push(text); roots.push(fsinfoBytes)
  }
  assert.equal(new Set(proofs).size, 3)
  // the proof is of the current fsinfo.json only: an older one is not the leaf it names
  assert.throws(() => checkLogProof(proofs[2], { fsinfoBytes: roots[1], ...signers }), { code: 'ROTREE_SPLIT_VIEW' })
  assert.deepEqual((await fs.readdir(path.join(out, 'log'))).filter(n => n.startsWith('.')), [], 'no temporary file left')
  // a publish killed after the checkpoint, before the proof: the re-run writes it (the same bytes)
  await fs.rm(path.join(out, 'log', 'fsinfo.proof'))
  assert.deepEqual(await logFsinfo(out, roots[2], { keys: [key], fsync: false }), { size: 3, added: 0 })
  assert.equal(await fs.readFile(path.join(out, 'log', 'fsinfo.proof'), 'utf8'), proofs[2])
})

test('a re-run logs each fsinfo.json once; a root published without keys joins at the next publish; a second text for one seq is refused', async () => {
  const { src, out, key } = await threeReleases(1)
  const current = await fs.readFile(path.join(out, 'fsinfo.json'))
  // publish killed after the log was written, run again with the same bytes: nothing added
  assert.deepEqual(await logFsinfo(out, current, { keys: [key], fsync: false }), { size: 3, added: 0 })
  // a killed append left tiles beyond the checkpoint and a temp file: they are not the log
  await fs.writeFile(path.join(out, 'log/tile/0/000.p/4'), Buffer.alloc(32, 7))
  await fs.writeFile(path.join(out, 'log/tile/0/.tmp-999999-x'), 'junk')
  assert.equal((await readLocalLog(out)).size, 3)
  // a root signed elsewhere and installed (history, no log keys): the next publish logs it, then its own
  const info = decodeFsinfo(current)
  const f = { key: info.key, seq: info.seq + 1, issued: info.issued, expires: info.expires, root: info.root.hash, rootSize: info.root.size, rootMtime: info.rootMtime }
  await writeHistory(out, signFields(f, key.secretKey), false)
  await writeTree(src, { 'a.txt': 'four' })
  await buildTree(src, { key, out, version: 1 })
  const entries = await historyBytes(out)
  assert.equal(entries.length, 5)
  const log = await readLocalLog(out)
  assert.equal(log.size, 5)
  assert.deepEqual(log.entries.map(e => Buffer.from(e)), entries)
  // one seq, another text: refused, the log unchanged
  const other = signFields({ ...f, rootMtime: f.rootMtime + 1 }, key.secretKey)
  await assert.rejects(logFsinfo(out, other, { keys: [key], fsync: false }), { code: 'ROTREE_SPLIT_VIEW' })
  assert.equal((await readLocalLog(out)).size, 5)
  const a = await audit(out, key)
  assert.deepEqual(a.problems, [])
})

/** Replace OUT's log with one of `entries`, signed by `key` (what a thief of the key could publish). */
async function plantLog (out, key, entries) {
  await fs.rm(path.join(out, 'log'), { recursive: true, force: true })
  const stored = []; const read = arrayHashReader(stored)
  entries.forEach((e, i) => stored.push(...storedHashes(i, e, read)))
  const put = async (rel, bytes) => { await fs.mkdir(path.dirname(path.join(out, 'log', rel)), { recursive: true }); await fs.writeFile(path.join(out, 'log', rel), bytes) }
  for (const t of tilesForSize(TILE_HEIGHT, entries.length)) {
    await put(tilePath(t), readTileData(t, read))
    if (t.L === 0) await put(tilePath(bundleOf(t)), encodeBundle(entries.slice(t.N * 256, t.N * 256 + t.W)))
  }
  const origin = logOrigin(key.publicKey)
  await put('checkpoint', signNote(formatCheckpoint({ origin, size: entries.length, hash: treeHash(entries.length, read) }), [signerOf(origin, key)]))
}

test('a planted second root for one sequence is a split view, in the library and at the command line', async () => {
  const { out, key } = await threeReleases(1)
  const entries = (await historyBytes(out)).map(b => new Uint8Array(b))
  const info = decodeFsinfo(entries[1])
  const twin = new TextEncoder().encode(signFields({ key: info.key, seq: info.seq, issued: info.issued, expires: info.expires, root: info.root.hash, rootSize: info.root.size, rootMtime: info.rootMtime + 1 }, key.secretKey))
  await plantLog(out, key, [entries[0], entries[1], twin, entries[2]])
  const a = await audit(out, key)
  assert.ok(a.problems.some(p => p.code === 'ROTREE_SPLIT_VIEW' && p.seq === info.seq), JSON.stringify(a.problems))
  // the current fsinfo.json is not the one the log holds for its seq: a split view as well
  const cur = decodeFsinfo(entries[2])
  const other = new TextEncoder().encode(signFields({ key: cur.key, seq: cur.seq, issued: cur.issued, expires: cur.expires, root: cur.root.hash, rootSize: cur.root.size, rootMtime: cur.rootMtime + 1 }, key.secretKey))
  await plantLog(out, key, [entries[0], entries[1], other])
  const b = await audit(out, key)
  assert.ok(b.problems.some(p => p.code === 'ROTREE_SPLIT_VIEW' && p.seq === cur.seq), JSON.stringify(b.problems))
  const srv = await serve(out)
  try {
    const r = await promisify(execFile)(process.execPath, [ROTREE, 'log-audit', `${srv.url}#${key.publicKey}`, '--state-dir', await dir('rotree-log-state-')]).catch(e => e)
    assert.notEqual(r.code ?? 0, 0)
    assert.match(r.stdout, /PROBLEM ROTREE_SPLIT_VIEW/)
    assert.match(r.stderr, /ROTREE_SPLIT_VIEW/)
  } finally { await srv.close() }
})

const codeOf = err => err.code === 'ROTREE_ALL_MIRRORS_FAILED' ? err.errors[0].code : err.code

test('a flipped byte in a tile, an entry bundle or the checkpoint is refused', async () => {
  const { out, key } = await threeReleases(1)
  const flips = [
    ['log/tile/0/000.p/3', 5, 'ROTREE_HASH_MISMATCH'],
    ['log/tile/entries/000.p/3', 40, 'ROTREE_HASH_MISMATCH'],
    ['log/checkpoint', -20, 'ROTREE_BAD_SIGNATURE'], // in the signature
    ['log/checkpoint', 70, 'ROTREE_BAD_SIGNATURE'] // in the signed text
  ]
  for (const [rel, at, code] of flips) {
    const file = path.join(out, rel)
    const good = await fs.readFile(file)
    const bad = Buffer.from(good)
    const i = at < 0 ? bad.length + at : at
    bad[i] = bad[i] === 0x41 ? 0x42 : 0x41
    await fs.writeFile(file, bad)
    await assert.rejects(audit(out, key), err => { assert.equal(codeOf(err), code, `${rel}@${at}: ${err.message}`); return true })
    await fs.writeFile(file, good)
  }
  assert.deepEqual((await audit(out, key)).problems, [])
})

test('pull copies log/ and gc keeps it; the mirror\'s copy audits as the source', async () => {
  const { out, key } = await threeReleases(2)
  const { pull } = await import('../../mirror/pull.js')
  const { gc } = await import('../../builder/gc.js')
  const mirror = path.join(await dir('rotree-log-mirror-'), 'dir')
  const srv = await serve(out)
  try {
    const again = async () => pull({ address: `${srv.url}#${key.publicKey}`, dir: mirror, reader: { stateDir: await dir('rotree-log-state-') }, fsync: false })
    assert.deepEqual((await again()).log, { size: 3, copied: true, proof: true })
    // nothing new: the proof DIR holds still proves the fsinfo.json in the checkpoint, and is kept; a lost one is made again
    const before = await fs.stat(path.join(mirror, 'log', 'fsinfo.proof'))
    assert.deepEqual((await again()).log, { size: 3, copied: false, proof: true })
    assert.equal((await fs.stat(path.join(mirror, 'log', 'fsinfo.proof'))).ino, before.ino)
    await fs.writeFile(path.join(mirror, 'log', 'fsinfo.proof'), 'c2sp.org/tlog-proof@v1\nindex 0\n\nnot the checkpoint\n')
    assert.deepEqual((await again()).log, { size: 3, copied: false, proof: true })
  } finally { await srv.close() }
  // log/fsinfo.proof made again from the log the pull checked (not copied): byte for byte the source's
  for (const rel of ['log/checkpoint', 'log/fsinfo.proof', 'log/tile/0/000.p/3', 'log/tile/entries/000.p/3']) assert.deepEqual(await fs.readFile(path.join(mirror, rel)), await fs.readFile(path.join(out, rel)))
  await gc(out, { keep: 1, graceMs: 0, fsync: false })
  assert.equal((await readLocalLog(out)).size, 3)
  assert.deepEqual((await audit(mirror, key)).problems, [])
})

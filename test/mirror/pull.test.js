// `rotree pull`: a verified, incremental copy (FORMAT.md §8, docs/MIRRORING.md).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { tmpdir, writeTree, buildTree, serve, makeKey, prng, address } from '../helpers/fixtures.js'
import { checkPublished } from '../helpers/check-tree.js'
import { pull } from '../../mirror/pull.js'
import { fsck } from '../../mirror/fsck.js'
import { rotree, blobNames, strayNames, sum, reachable } from './helpers.js'
import { openTree } from 'rotree-client'
import { decodeRoot } from '../../lib/published/signed-roots.js'

// A text file of ~10 MB: more than 32 chunks, so it has a chunk index; lines,
// so a one-line edit is a one-line edit.
function logText (seed) {
  const lines = []
  const r = prng(12 << 20, seed).toString('base64')
  for (let i = 0; i * 76 < r.length; i++) lines.push(`${String(i).padStart(7, '0')} ${r.slice(i * 76, i * 76 + 76)}`)
  return lines.join('\n') + '\n'
}

async function site (t) {
  const dir = await tmpdir('rotree-pull-'); t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const src = path.join(dir, 'src')
  const files = {
    'README.md': '# site\n',
    'a/b/c/log.txt': logText('log'),
    'a/b/notes.txt': 'x'.repeat(10_000),
    'a/small.txt': 'small\n',
    'bin/tool': { data: prng(300_000, 'tool'), mode: 0o755 },
    'link': { symlink: 'a/small.txt' }
  }
  for (let i = 0; i < 20; i++) files[`many/f${i}.txt`] = `file ${i}\n`.repeat(i * 50 + 1)
  await writeTree(src, files)
  const key = makeKey()
  const out = path.join(dir, 'out')
  return { dir, src, out, key, state: path.join(dir, 'state'), mirror: path.join(dir, 'mirror') }
}

test('pull into an empty DIR copies the tree exactly; pulling again fetches nothing', { timeout: 60_000 }, async t => {
  const s = await site(t)
  await buildTree(s.src, { key: s.key, out: s.out })
  const srv = await serve(s.out); t.after(srv.close)
  const addr = address(srv.url, s.key.publicKey)

  const r1 = await pull({ address: addr, dir: s.mirror, reader: { stateDir: s.state }, fsync: false })
  assert.equal(r1.updated, true)
  assert.equal(r1.previousSeq, null)
  assert.deepEqual(await fs.readFile(path.join(s.mirror, 'fsinfo.json')), await fs.readFile(path.join(s.out, 'fsinfo.json')))
  const want = await reachable(s.out, await fs.readFile(path.join(s.out, 'fsinfo.json')), s.key.publicKey)
  assert.deepEqual(await blobNames(s.mirror), new Set(want.keys()))
  assert.equal(r1.fetched.blobs, want.size)
  assert.equal(r1.fetched.bytes, sum(want.values(), e => e.size))
  assert.equal(r1.present.blobs, 0)
  await checkPublished(s.mirror, s.key.publicKey)
  assert.deepEqual(await strayNames(s.mirror), [])
  assert.deepEqual((await fs.readdir(path.join(s.mirror, 'history'))).sort(), [`${r1.seq}.json`, 'index.json'])
  assert.deepEqual(JSON.parse(await fs.readFile(path.join(s.mirror, 'history', 'index.json'), 'utf8')).seqs, [r1.seq], 'the mirror lists its history for rotree log')

  // DIR is itself a mirror: a reader served from it gets the same bytes
  const copy = await serve(s.mirror); t.after(copy.close)
  const tree = await openTree(address(copy.url, s.key.publicKey), { stateDir: null })
  t.after(() => tree.close())
  assert.equal(Buffer.from(await tree.readFile('/a/b/c/log.txt')).toString(), await fs.readFile(path.join(s.src, 'a/b/c/log.txt'), 'utf8'))

  // idempotent: nothing moves but fsinfo.json
  const r2 = await pull({ address: addr, dir: s.mirror, reader: { stateDir: s.state }, fsync: false })
  assert.equal(r2.fetched.blobs, 0)
  assert.equal(r2.present.blobs, want.size)
  assert.equal(r2.updated, false)
  // fsinfo.json, and beside it trust/1.json (FORMAT.md §12.9: none yet, a 404), log/checkpoint (§13)
  // and trust/revoked.json (§12.12: any tree may be gated; none here, a 404)
  assert.equal(r2.requests, 4)

  // the CLI says the same
  const cli = await rotree(['pull', addr, s.mirror, '--json'], { env: { ROTREE_STATE: s.state } })
  assert.equal(cli.code, 0, cli.stderr)
  const j = JSON.parse(cli.stdout)
  assert.equal(j.fetched.blobs, 0); assert.equal(j.seq, r1.seq)
  const text = await rotree(['pull', addr, s.mirror], { env: { ROTREE_STATE: s.state } })
  assert.match(text.stdout, /fetched 0 blobs \(0 B\), already present \d+/)
})

test('P7: after a one-line change only the changed chunk, its index, the directory path and fsinfo.json move', { timeout: 60_000 }, async t => {
  const s = await site(t)
  await buildTree(s.src, { key: s.key, out: s.out })
  const srv = await serve(s.out); t.after(srv.close)
  const addr = address(srv.url, s.key.publicKey)
  await pull({ address: addr, dir: s.mirror, reader: { stateDir: s.state }, fsync: false })

  const before = await blobNames(s.out)
  const file = path.join(s.src, 'a/b/c/log.txt')
  const text = await fs.readFile(file, 'utf8')
  const at = text.indexOf('\n', text.length >> 1) + 1
  await fs.writeFile(file, text.slice(0, at) + 'one line changed by the publisher\n' + text.slice(at))
  const { result } = await buildTree(s.src, { key: s.key, out: s.out })
  const fresh = [...await blobNames(s.out)].filter(h => !before.has(h))
  const fsinfoSize = (await fs.stat(path.join(s.out, 'fsinfo.json'))).size
  // and the log (FORMAT.md §13): its checkpoint, the new partial tile and entry bundle (every fsinfo.json of the tile)
  let logSize = 0
  for (const f of ['checkpoint', 'tile/0/000.p/2', 'tile/entries/000.p/2']) logSize += (await fs.stat(path.join(s.out, 'log', f))).size

  const r = await pull({ address: addr, dir: s.mirror, reader: { stateDir: s.state }, fsync: false })
  assert.equal(r.seq, result.seq)
  assert.deepEqual(new Set(r.fetchedHashes), new Set(fresh), 'fetched exactly the new blobs')
  const want = await reachable(s.out, await fs.readFile(path.join(s.out, 'fsinfo.json')), s.key.publicKey)
  const kinds = fresh.map(h => want.get(h).kind).sort()
  // root, /a, /a/b, /a/b/c; the chunk-index pages on the way to the edit; the chunk(s) around it
  assert.deepEqual(kinds.filter(k => k === 'dir'), ['dir', 'dir', 'dir', 'dir'])
  const indexes = kinds.filter(k => k === 'cindex').length
  // one per level of the index tree, one more when the edit moved a content-defined cut between index pages
  assert.ok(indexes >= 1 && indexes <= 3, `${indexes} chunk-index pages changed`)
  const chunks = kinds.filter(k => k === 'data').length
  assert.ok(chunks >= 1 && chunks <= 2, `${chunks} data chunks changed`)
  const freshBytes = sum(fresh, h => want.get(h).size)
  assert.ok(r.bytesMoved <= freshBytes + fsinfoSize + logSize, `${r.bytesMoved} bytes moved, new blobs ${freshBytes} + fsinfo ${fsinfoSize} + log ${logSize}`)
  t.diagnostic(`P7: ${r.bytesMoved} bytes moved for a one-line change in a ${text.length}-byte file; new blobs ${fresh.length} (${chunks} chunk(s), ${indexes} chunk-index page(s), 4 directory pages) = ${freshBytes} bytes + fsinfo.json ${fsinfoSize} bytes; ${r.requests} requests`)
  await checkPublished(s.mirror, s.key.publicKey)
})

test('--gc keeps the blobs of the newest N roots and drops the rest, only after the new root is in place', { timeout: 60_000 }, async t => {
  const s = await site(t)
  await fs.mkdir(s.out)
  const srv = await serve(s.out); t.after(srv.close)
  const addr = address(srv.url, s.key.publicKey)
  // the builder's default format and its own sequence numbers (each above the last)
  const versions = []; const seqs = []
  for (let v = 1; v <= 3; v++) {
    await fs.writeFile(path.join(s.src, 'bin/tool'), prng(300_000, 'tool v' + v))
    await fs.writeFile(path.join(s.src, 'a/b/notes.txt'), `notes v${v}\n`.repeat(2000))
    seqs.push((await buildTree(s.src, { key: s.key, out: s.out })).result.seq)
    const bytes = await fs.readFile(path.join(s.out, 'fsinfo.json'))
    versions.push(new Set((await reachable(s.out, bytes, s.key.publicKey)).keys()))
    const r = await pull({ address: addr, dir: s.mirror, reader: { stateDir: s.state }, fsync: false, gc: true })
    assert.equal(r.gc.skipped, undefined)
  }
  // keep 2 (default): v3 and v2
  assert.deepEqual(await blobNames(s.mirror), new Set([...versions[2], ...versions[1]]))
  assert.deepEqual((await fs.readdir(path.join(s.mirror, 'history'))).sort(), [...seqs.map(n => `${n}.json`), 'index.json'].sort())
  // a re-signed root (same tree, new seq) does not use up a slot
  const resigned = (await buildTree(s.src, { key: s.key, out: s.out })).result.seq
  const same = await pull({ address: addr, dir: s.mirror, reader: { stateDir: s.state }, fsync: false, gc: true })
  assert.deepEqual(same.gc.kept.map(k => k.seq), [resigned, seqs[1]])
  assert.equal(same.gc.deleted, 0)

  // a kept root that cannot be walked from DIR stops gc from deleting anything
  const v2root = decodeRoot(await fs.readFile(path.join(s.mirror, 'history', `${seqs[1]}.json`))).root.hash
  assert.ok(!versions[2].has(v2root))
  await fs.rm(path.join(s.mirror, 'h', v2root))
  const blocked = await pull({ address: addr, dir: s.mirror, reader: { stateDir: s.state }, fsync: false, gc: true })
  assert.match(blocked.gc.skipped, new RegExp(`seq ${seqs[1]} cannot be walked`))
  assert.equal(blocked.gc.deleted, 0)

  // keep 1: only the current root's blobs stay
  const r = await pull({ address: addr, dir: s.mirror, reader: { stateDir: s.state }, fsync: false, gc: true, keep: 1 })
  assert.equal(r.gc.deleted, [...versions[1]].filter(h => !versions[2].has(h)).length - 1)
  assert.deepEqual(await blobNames(s.mirror), versions[2])
  await checkPublished(s.mirror, s.key.publicKey)
  const report = await fsck(s.mirror, { publicKey: s.key.publicKey })
  assert.equal(report.ok, true); assert.deepEqual(report.orphans, [])

  const cli = await rotree(['pull', addr, s.mirror, '--keep', '1'], { env: { ROTREE_STATE: s.state } })
  assert.equal(cli.code, 2) // --keep without --gc is a usage error
})

test('pull never moves DIR backwards and never pulls one tree over another', { timeout: 60_000 }, async t => {
  const s = await site(t)
  // the builder's default format and its own sequence numbers: the second build's is the higher
  await buildTree(s.src, { key: s.key, out: s.out })
  const old = path.join(s.dir, 'old'); await fs.cp(s.out, old, { recursive: true })
  await fs.writeFile(path.join(s.src, 'README.md'), '# site, v2\n')
  await buildTree(s.src, { key: s.key, out: s.out })
  const srv = await serve(s.out); t.after(srv.close)
  const oldSrv = await serve(old); t.after(oldSrv.close)
  await pull({ address: address(srv.url, s.key.publicKey), dir: s.mirror, reader: { stateDir: s.state }, fsync: false })
  const current = await fs.readFile(path.join(s.mirror, 'fsinfo.json'))

  // a reader state that never saw the newer root (stateDir: null): DIR's own fsinfo.json still refuses the older
  await assert.rejects(pull({ address: address(oldSrv.url, s.key.publicKey), dir: s.mirror, reader: { stateDir: null }, fsync: false }), { code: 'ROTREE_ROLLBACK' })
  assert.deepEqual(await fs.readFile(path.join(s.mirror, 'fsinfo.json')), current)
  // the persisted reader state refuses it too
  const cli = await rotree(['pull', address(oldSrv.url, s.key.publicKey), s.mirror], { env: { ROTREE_STATE: s.state } })
  assert.equal(cli.code, 1)
  assert.match(cli.stderr, /^rotree: ROTREE_ALL_MIRRORS_FAILED: .*ROTREE_ROLLBACK/)

  // another publisher's tree into this DIR: refused, DIR untouched
  const other = makeKey()
  const otherOut = path.join(s.dir, 'other')
  await buildTree(s.src, { key: other, out: otherOut })
  const otherSrv = await serve(otherOut); t.after(otherSrv.close)
  await assert.rejects(pull({ address: address(otherSrv.url, other.publicKey), dir: s.mirror, reader: { stateDir: null }, fsync: false }), { code: 'ROTREE_WRONG_KEY' })
  assert.deepEqual(await fs.readFile(path.join(s.mirror, 'fsinfo.json')), current)

  // a pull already running holds the lock
  await fs.writeFile(path.join(s.mirror, '.rotree-lock'), `${process.pid} test\n`)
  await assert.rejects(pull({ address: address(srv.url, s.key.publicKey), dir: s.mirror, reader: { stateDir: null }, fsync: false }), { code: 'ROTREE_LOCKED' })
  // ...and a stale one (its process is gone) is taken over
  await fs.writeFile(path.join(s.mirror, '.rotree-lock'), '999999999 rotree pull\n')
  const r = await pull({ address: address(srv.url, s.key.publicKey), dir: s.mirror, reader: { stateDir: null }, fsync: false })
  assert.equal(r.fetched.blobs, 0)
  await assert.rejects(fs.access(path.join(s.mirror, '.rotree-lock')))
})

test('a damaged blob already in DIR is fetched again, not trusted', { timeout: 60_000 }, async t => {
  const s = await site(t)
  await buildTree(s.src, { key: s.key, out: s.out })
  const srv = await serve(s.out); t.after(srv.close)
  const addr = address(srv.url, s.key.publicKey)
  await pull({ address: addr, dir: s.mirror, reader: { stateDir: s.state }, fsync: false })
  const want = await reachable(s.out, await fs.readFile(path.join(s.out, 'fsinfo.json')), s.key.publicKey)
  const page = [...want].find(([, e]) => e.kind === 'dir' && e.paths.includes('/a/b'))[0]
  const chunk = [...want].find(([, e]) => e.kind === 'data' && e.paths.includes('/bin/tool'))[0]
  const flip = async h => { const p = path.join(s.mirror, 'h', h); const b = await fs.readFile(p); b[7] ^= 1; await fs.writeFile(p, b) }
  await flip(page) // pages are always read, so a flipped page is always caught
  await fs.truncate(path.join(s.mirror, 'h', chunk), 100) // data: caught by size without --rehash
  const r = await pull({ address: addr, dir: s.mirror, reader: { stateDir: s.state }, fsync: false })
  assert.deepEqual(new Set(r.damaged.map(d => d.hash)), new Set([page, chunk]))
  assert.deepEqual(new Set(r.fetchedHashes), new Set([page, chunk]))
  await checkPublished(s.mirror, s.key.publicKey)
  // a same-size flip in a data chunk needs --rehash (or fsck) to be seen
  await flip(chunk)
  const quick = await pull({ address: addr, dir: s.mirror, reader: { stateDir: s.state }, fsync: false })
  assert.equal(quick.fetched.blobs, 0)
  const deep = await pull({ address: addr, dir: s.mirror, reader: { stateDir: s.state }, fsync: false, rehash: true })
  assert.deepEqual(deep.fetchedHashes, [chunk])
  await checkPublished(s.mirror, s.key.publicKey)
})

// Offline signing, resign and history (docs/DEPLOY.md): the secret key never
// has to be on the build host; a re-signed root is accepted by readers and
// makes the previous fsinfo.json a rollback; every published fsinfo.json is
// kept in OUT/history/.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { spawn } from 'node:child_process'
import { openTree } from 'rotree-client'
import { decodeRoot } from '../../lib/published/signed-roots.js'
import { tmpdir, writeTree, makeKey, serve, address, prng } from '../helpers/fixtures.js'
import { checkPublished } from '../helpers/check-tree.js'
import { build } from '../../builder/build.js'
import { signUnsigned, installSigned, resign, decodeUnsigned } from '../../builder/sign.js'
import { resignV2 } from '../../builder/release.js'
import { listHistory } from '../../lib/published/history.js'

const BIN = new URL('../../bin/rotree.js', import.meta.url).pathname

function rotree (args) {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
    const out = []; const err = []
    p.stdout.on('data', b => out.push(b)); p.stderr.on('data', b => err.push(b))
    p.on('error', reject)
    p.on('close', code => resolve({ code, stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString() }))
  })
}

const files = async out => (await fs.readdir(out)).sort()

// format 1 on purpose: its unsigned.json is a fsinfo.json without sig, signed with -o and installed
// with sign FILE --publish OUT (version 2's release flow is the next test)
test('build --unsigned, sign on another machine, publish: the CLI flow of docs/DEPLOY.md', { timeout: 60_000 }, async t => {
  const dir = await tmpdir(); t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const src = path.join(dir, 'src'); const out = path.join(dir, 'out'); const offline = path.join(dir, 'offline')
  await fs.mkdir(offline)
  await writeTree(src, { 'README': 'signed offline\n', 'data/blob.bin': prng(700_000, 'x') })
  const keyFile = path.join(offline, 'publisher.key')
  const kg = await rotree(['keygen', keyFile])
  const pub = kg.stdout.trim()

  // the build host has only the public key
  const b = await rotree(['build', src, out, '--unsigned', '--pubkey', pub, '--no-fsync', '--format', '1'])
  assert.equal(b.code, 0, b.stderr)
  assert.match(b.stdout, /NOT SIGNED/)
  assert.deepEqual(await files(out), ['.rotree', 'h', 'unsigned.json'])
  // a rebuild before it is signed keeps the pending root's format without --format
  const again1 = await rotree(['build', src, out, '--unsigned', '--pubkey', pub, '--no-fsync', '--json'])
  assert.equal(again1.code, 0, again1.stderr); assert.equal(JSON.parse(again1.stdout).version, 1)
  const unsigned = JSON.parse(await fs.readFile(path.join(out, 'unsigned.json'), 'utf8'))
  assert.deepEqual(Object.keys(unsigned), ['version', 'key', 'seq', 'issued', 'expires', 'root', 'rootSize', 'rootMtime'])
  assert.equal(unsigned.key, pub)

  // the signing machine sees only unsigned.json
  await fs.copyFile(path.join(out, 'unsigned.json'), path.join(offline, 'unsigned.json'))
  const s = await rotree(['sign', path.join(offline, 'unsigned.json'), '--key', keyFile, '-o', path.join(offline, 'fsinfo.json')])
  assert.equal(s.code, 0, s.stderr)
  const signed = JSON.parse(await fs.readFile(path.join(offline, 'fsinfo.json'), 'utf8'))
  assert.equal(signed.root, unsigned.root)
  assert.ok(signed.seq >= unsigned.seq)

  // back on the build host: check and publish
  await fs.copyFile(path.join(offline, 'fsinfo.json'), path.join(dir, 'fsinfo-from-offline.json'))
  const p = await rotree(['sign', path.join(dir, 'fsinfo-from-offline.json'), '--publish', out, '--no-fsync'])
  assert.equal(p.code, 0, p.stderr)
  assert.match(p.stdout, /published seq \d+/)
  assert.deepEqual(await files(out), ['.rotree', 'fsinfo.json', 'h', 'history'])
  assert.deepEqual(await fs.readFile(path.join(out, 'fsinfo.json')), await fs.readFile(path.join(offline, 'fsinfo.json')))
  assert.deepEqual(await fs.readFile(path.join(out, 'history', `${signed.seq}.json`)), await fs.readFile(path.join(out, 'fsinfo.json')))
  // publishing the same file again is a no-op
  const again = await rotree(['sign', path.join(dir, 'fsinfo-from-offline.json'), '--publish', out])
  assert.equal(again.code, 0, again.stderr); assert.match(again.stdout, /already publishes/)

  const srv = await serve(out); t.after(srv.close)
  const tree = await openTree(address(srv.url, pub), { stateDir: null }); t.after(() => tree.close())
  assert.equal(Buffer.from(await tree.readFile('/README')).toString(), 'signed offline\n')

  // usage errors exit 2
  assert.equal((await rotree(['build', src, out, '--unsigned'])).code, 2)
  assert.equal((await rotree(['sign', path.join(offline, 'unsigned.json'), '--key', keyFile])).code, 2)
})

// A build host (src, out) and a signing machine (offline) with the tree's key and another one
async function offlineSetup (t) {
  const dir = await tmpdir(); t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const src = path.join(dir, 'src'); const out = path.join(dir, 'out'); const offline = path.join(dir, 'offline')
  await fs.mkdir(offline)
  await writeTree(src, { 'README': 'signed offline\n', 'data/blob.bin': prng(700_000, 'x') })
  const keyFile = path.join(offline, 'publisher.key')
  const pub = (await rotree(['keygen', keyFile])).stdout.trim()
  const otherFile = path.join(offline, 'other.key')
  await rotree(['keygen', otherFile])
  return { dir, src, out, offline, keyFile, pub, otherFile }
}

test('format 2 (a new OUT\'s default): build --unsigned --pubkey, the release signed on another machine, published with the one key', { timeout: 60_000 }, async t => {
  const { dir, src, out, offline, keyFile, pub, otherFile } = await offlineSetup(t)

  const b = await rotree(['build', src, out, '--unsigned', '--pubkey', pub, '--no-fsync'])
  assert.equal(b.code, 0, b.stderr)
  assert.match(b.stdout, /NOT SIGNED: release \d+ waits/)
  assert.match(b.stdout, new RegExp(`address: <mirror-url>#${pub}\n$`))
  assert.deepEqual(await files(out), ['.rotree', 'h', 'unsigned.json'])
  // a release names no key: the single key the tree is to be signed by (its address, FORMAT.md
  // §12.5) is recorded beside it, as version 1's unsigned.json carries its key
  const unsigned = JSON.parse(await fs.readFile(path.join(out, 'unsigned.json'), 'utf8'))
  assert.equal(unsigned.version, 2); assert.equal(unsigned.key, pub); assert.deepEqual(unsigned.release.signatures, [])

  // the signing machine sees only unsigned.json: the release signature is checked against that key
  const copy = path.join(offline, 'unsigned.json')
  await fs.copyFile(path.join(out, 'unsigned.json'), copy)
  const wrong = await rotree(['sign', copy, '--key', otherFile, '--json'])
  assert.notEqual(wrong.code, 0); assert.match(wrong.stderr, /ROTREE_BAD_KEY/)
  const s = await rotree(['sign', copy, '--key', keyFile, '--json'])
  assert.equal(s.code, 0, s.stderr)
  assert.deepEqual([JSON.parse(s.stdout).have, JSON.parse(s.stdout).threshold], [1, 1])

  // back on the build host: fsinfo.json is signed by the timestamp role, the same one key here
  await fs.copyFile(copy, path.join(dir, 'release-from-offline.json'))
  const p = await rotree(['sign', path.join(dir, 'release-from-offline.json'), '--publish', out, '--timestamp-key', keyFile, '--no-fsync'])
  assert.equal(p.code, 0, p.stderr)
  assert.match(p.stdout, /published seq \d+/)
  // and the log, whose checkpoint the timestamp key in hand signs (FORMAT.md §13)
  assert.deepEqual(await files(out), ['.rotree', 'fsinfo.json', 'h', 'history', 'log'])
  const published = await checkPublished(out, pub)
  assert.equal(published.version, 2)

  const srv = await serve(out); t.after(srv.close)
  const tree = await openTree(address(srv.url, pub), { stateDir: null }); t.after(() => tree.close())
  assert.equal(Buffer.from(await tree.readFile('/README')).toString(), 'signed offline\n')

  // the key on the build host: one command signs the release and publishes it
  await writeTree(src, { 'README': 'second\n' })
  assert.equal((await rotree(['build', src, out, '--unsigned', '--pubkey', pub, '--no-fsync'])).code, 0)
  const both = await rotree(['sign', out, '--key', keyFile, '--publish', '--no-fsync'])
  assert.equal(both.code, 0, both.stderr)
  assert.ok((await checkPublished(out, pub)).seq > published.seq)
  await assert.rejects(fs.access(path.join(out, 'unsigned.json')), 'published: the pending release is gone')
})

test('format 2, fully offline: the commands of docs/DEPLOY.md, the key never on the build host', { timeout: 60_000 }, async t => {
  const { dir, src, out, offline, keyFile, pub, otherFile } = await offlineSetup(t)

  assert.equal((await rotree(['build', src, out, '--unsigned', '--pubkey', pub, '--no-fsync'])).code, 0)
  const copy = path.join(offline, 'unsigned.json')
  await fs.copyFile(path.join(out, 'unsigned.json'), copy)
  // another key cannot sign this tree's release
  const wrong = await rotree(['sign', copy, '--key', otherFile, '-o', path.join(offline, 'x.json')])
  assert.notEqual(wrong.code, 0); assert.match(wrong.stderr, /ROTREE_BAD_KEY/)
  await assert.rejects(fs.access(path.join(offline, 'x.json')))
  const s = await rotree(['sign', copy, '--key', keyFile, '-o', path.join(offline, 'fsinfo.json')])
  assert.equal(s.code, 0, s.stderr)
  assert.match(s.stdout, new RegExp(`address: <mirror-url>#${pub}\n$`))
  const signed = JSON.parse(await fs.readFile(path.join(offline, 'fsinfo.json'), 'utf8'))
  assert.equal(signed.version, 2)

  // back on the build host: checked against OUT's key and blobs, then published
  const back = path.join(dir, 'fsinfo-from-offline.json')
  await fs.copyFile(path.join(offline, 'fsinfo.json'), back)
  const p = await rotree(['sign', back, '--publish', out, '--no-fsync'])
  assert.equal(p.code, 0, p.stderr)
  assert.match(p.stdout, /published seq \d+/)
  assert.deepEqual(await files(out), ['.rotree', 'fsinfo.json', 'h', 'history'])
  assert.deepEqual(await fs.readFile(path.join(out, 'fsinfo.json')), await fs.readFile(back))
  assert.equal((await checkPublished(out, pub)).seq, signed.seq)
  assert.match((await rotree(['sign', back, '--publish', out])).stdout, /already publishes/)

  const srv = await serve(out); t.after(srv.close)
  const tree = await openTree(address(srv.url, pub), { stateDir: null }); t.after(() => tree.close())
  assert.equal(Buffer.from(await tree.readFile('/README')).toString(), 'signed offline\n')

  // refused: a fsinfo.json of another key's tree, and one whose blobs OUT lacks
  const other = path.join(dir, 'other-out')
  await writeTree(path.join(dir, 'src2'), { 'x': 'another tree\n'.repeat(400) })
  const pub2 = JSON.parse(await fs.readFile(otherFile, 'utf8')).publicKey
  assert.equal((await rotree(['build', path.join(dir, 'src2'), other, '--unsigned', '--pubkey', pub2, '--no-fsync'])).code, 0)
  assert.equal((await rotree(['sign', path.join(other, 'unsigned.json'), '--key', otherFile, '-o', path.join(dir, 'f2.json')])).code, 0)
  const foreign = await rotree(['sign', path.join(dir, 'f2.json'), '--publish', out, '--no-fsync'])
  assert.notEqual(foreign.code, 0, 'another key\'s fsinfo.json is not published over this tree')
  assert.deepEqual(await fs.readFile(path.join(out, 'fsinfo.json')), await fs.readFile(back))
  const fresh = path.join(dir, 'fresh-out')
  await fs.mkdir(fresh)
  await fs.copyFile(path.join(other, 'unsigned.json'), path.join(fresh, 'unsigned.json'))
  const missing = await rotree(['sign', path.join(dir, 'f2.json'), '--publish', fresh, '--no-fsync'])
  assert.notEqual(missing.code, 0, 'a root whose blobs are not in OUT is not published')
  await assert.rejects(fs.access(path.join(fresh, 'fsinfo.json')))
})

// format 1 on purpose: signUnsigned, decodeUnsigned and installSigned are version 1's offline
// signature (version 2's is the release flow above)
test('sign and install refuse what they must', { timeout: 60_000 }, async t => {
  const dir = await tmpdir(); t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const src = path.join(dir, 'src'); const out = path.join(dir, 'out')
  await writeTree(src, { 'a.txt': 'a', 'b.bin': prng(200_000, 'b') })
  const key = makeKey(); const other = makeKey()
  const now = Date.now()
  await build({ src, out, key: { publicKey: key.publicKey }, ttlMs: 3600e3, unsigned: true, fsync: false, now, version: 1 })
  const text = await fs.readFile(path.join(out, 'unsigned.json'))

  assert.throws(() => signUnsigned(text, other), { code: 'ROTREE_BAD_KEY' })
  assert.throws(() => decodeUnsigned('{"version":1}'), { code: 'ROTREE_BAD_FORMAT' })
  assert.throws(() => decodeUnsigned(JSON.stringify({ ...JSON.parse(text), extra: 1 })), { code: 'ROTREE_BAD_FORMAT' })
  assert.throws(() => signUnsigned(text, key, { now: now + 2 * 3600e3 }), { code: 'ROTREE_EXPIRED' })
  const late = signUnsigned(text, key, { now: now + 2 * 3600e3, ttlMs: 3600e3 }) // re-stamped
  assert.equal(late.fields.issued, new Date(now + 2 * 3600e3).toISOString())
  const { text: good } = signUnsigned(text, key, { now })
  assert.throws(() => decodeUnsigned(good), /already signed/)

  // a signature by another key, a tampered root, a missing blob
  const forged = signUnsigned(JSON.stringify({ ...JSON.parse(text), key: other.publicKey }), other, { now }).text
  await assert.rejects(installSigned(out, forged, { fsync: false }), { code: 'ROTREE_BAD_KEY' })
  const tampered = good.replace(/"rootMtime": -?\d+/, '"rootMtime": 1')
  await assert.rejects(installSigned(out, tampered, { fsync: false }), { code: 'ROTREE_BAD_SIGNATURE' })
  const root = JSON.parse(good).root
  await fs.rename(path.join(out, 'h', root), path.join(dir, 'root-blob'))
  await assert.rejects(installSigned(out, good, { fsync: false }), err => err.missing === true && err.code === 'ROTREE_TRUNCATED' && err.message.includes(root))
  await assert.rejects(fs.access(path.join(out, 'fsinfo.json')))
  await fs.rename(path.join(dir, 'root-blob'), path.join(out, 'h', root))

  const r = await installSigned(out, good, { fsync: false })
  assert.equal(r.already, false)
  await assert.rejects(fs.access(path.join(out, 'unsigned.json')), 'installed: the pending root is gone')
  await checkPublished(out, key.publicKey)
  // an older signed root cannot be installed over a newer one
  await resign(out, key, { ttlMs: 3600e3, fsync: false, now: now + 5000 })
  await assert.rejects(installSigned(path.join(out), (await fs.readFile(path.join(out, 'history', `${r.seq}.json`))), { fsync: false }), { code: 'ROTREE_ROLLBACK' })
})

// both formats: version 1's resign (sign.js) signs the root again; version 2's (release.js resignV2)
// signs a new fsinfo.json, here over a new release of the same root (the single key's release would
// expire before the new fsinfo.json: FORMAT.md §12.3)
for (const version of [1, 2]) {
  test(`resign: same root, same blobs, higher seq; readers accept it and then refuse the old fsinfo.json (format ${version})`, { timeout: 60_000 }, async t => {
    const dir = await tmpdir(); t.after(() => fs.rm(dir, { recursive: true, force: true }))
    const src = path.join(dir, 'src'); const out = path.join(dir, 'out'); const state = path.join(dir, 'state')
    await writeTree(src, { 'a.txt': 'a\n', 'big.bin': prng(2 << 20, 'big') })
    const key = makeKey()
    const now = Date.now()
    const one = await build({ src, out, key, ttlMs: 3600e3, fsync: false, now: now - 60_000, version })
    const resignWith = (k, o) => version === 1 ? resign(out, k, o) : resignV2(out, [k], o)
    const oldBytes = await fs.readFile(path.join(out, 'fsinfo.json'))
    const blobsBefore = await blobStats(out)

    const srv = await serve(out); t.after(srv.close)
    const tree = await openTree(address(srv.url, key.publicKey), { stateDir: state }); t.after(() => tree.close())
    assert.equal(tree.info.seq, one.seq)

    const r = await resignWith(key, { ttlMs: 7 * 86400e3, fsync: false, now })
    assert.ok(r.seq > one.seq)
    assert.equal(r.root, one.root)
    assert.deepEqual(await blobStats(out), blobsBefore, 'no blob written, touched or removed')
    const info = decodeRoot(await fs.readFile(path.join(out, 'fsinfo.json')))
    assert.equal(info.version, version)
    assert.equal(info.root.hash, one.root)
    assert.equal(info.info.expires, new Date(now + 7 * 86400e3).toISOString())
    assert.deepEqual((await listHistory(out)).map(h => h.seq), [r.seq, one.seq])

    assert.equal(await tree.refresh(), false) // false: the root did not change, only its signature
    assert.equal(tree.info.seq, r.seq)
    assert.equal(Buffer.from(await tree.readFile('/a.txt')).toString(), 'a\n')

    // a mirror still serving the old fsinfo.json is now a rollback for this reader
    const stale = path.join(dir, 'stale')
    await fs.mkdir(stale)
    await fs.symlink(path.join(out, 'h'), path.join(stale, 'h'))
    await fs.writeFile(path.join(stale, 'fsinfo.json'), oldBytes)
    const srv2 = await serve(stale); t.after(srv2.close)
    await assert.rejects(openTree(address(srv2.url, key.publicKey), { stateDir: state }), err => {
      const codes = [err.code, ...(err.errors ?? []).map(e => e.code)]
      return codes.includes('ROTREE_ROLLBACK')
    })

    // resign refuses another key, and a fsinfo.json this key did not sign
    await assert.rejects(resignWith(makeKey(), { ttlMs: 3600e3, fsync: false }), { code: 'ROTREE_BAD_KEY' })
    const j = JSON.parse(await fs.readFile(path.join(out, 'fsinfo.json'), 'utf8'))
    // version 2: the release changed (its root's mtime: a root whose blobs are all in h/), its
    // signatures no longer match
    const tampered = version === 1 ? { ...j, root: 'ab'.repeat(32) } : { ...j, release: { ...j.release, root: { ...j.release.root, mtime: 1 } } }
    await fs.writeFile(path.join(out, 'fsinfo.json'), JSON.stringify(tampered))
    const before = await listHistory(out)
    await assert.rejects(resignWith(key, { ttlMs: 3600e3, fsync: false }), { code: 'ROTREE_BAD_SIGNATURE' })
    assert.deepEqual(await listHistory(out), before, 'nothing published')
  })
}

test('rotree resign on the command line', { timeout: 30_000 }, async t => {
  const dir = await tmpdir(); t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const src = path.join(dir, 'src'); const out = path.join(dir, 'out'); const keyFile = path.join(dir, 'k')
  await writeTree(src, { 'a.txt': 'a' })
  const pub = (await rotree(['keygen', keyFile])).stdout.trim()
  assert.equal((await rotree(['build', src, out, '--key', keyFile, '--no-fsync'])).code, 0)
  // either format: the CLI re-signs as OUT's version says (version 2, a new OUT's default)
  const before = decodeRoot(await fs.readFile(path.join(out, 'fsinfo.json')))
  const r = await rotree(['resign', out, '--key', keyFile, '--ttl', '2d', '--json'])
  assert.equal(r.code, 0, r.stderr)
  const j = JSON.parse(r.stdout)
  assert.equal(j.previousSeq, before.seq); assert.ok(j.seq > before.seq); assert.equal(j.root, before.root.hash)
  assert.equal((await checkPublished(out, pub)).seq, j.seq)
  assert.equal((await rotree(['resign', out])).code, 2)
})

test('every publish is kept in history/, a seq is never reused, and history is never overwritten', async t => {
  const dir = await tmpdir(); t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const src = path.join(dir, 'src'); const out = path.join(dir, 'out')
  await writeTree(src, { 'a.txt': 'one' })
  const key = makeKey()
  const now = Date.now()
  const seqs = []
  for (let i = 0; i < 3; i++) {
    await writeTree(src, { 'a.txt': `version ${i}` })
    const r = await build({ src, out, key, ttlMs: 3600e3, fsync: false, now })
    seqs.push(r.seq)
    assert.deepEqual(await fs.readFile(path.join(out, 'history', `${r.seq}.json`)), await fs.readFile(path.join(out, 'fsinfo.json')))
  }
  // the same clock second three times: seq still increases
  assert.deepEqual(seqs, [seqs[0], seqs[0] + 1, seqs[0] + 2])
  // fsinfo.json lost: history still keeps the next number above everything published
  await fs.rm(path.join(out, 'fsinfo.json'))
  const r = await build({ src, out, key, ttlMs: 3600e3, fsync: false, now })
  assert.equal(r.seq, seqs[2] + 1)
  // a forced seq that history already holds is refused
  await assert.rejects(build({ src, out, key, ttlMs: 3600e3, fsync: false, now, seq: seqs[1] }), { code: 'ROTREE_USAGE' })
  const { writeHistory } = await import('../../lib/published/history.js')
  // another text at the same seq (a space after its first member name: either format's fsinfo.json)
  const text = await fs.readFile(path.join(out, 'history', `${seqs[0]}.json`), 'utf8')
  const other = text.replace(/^(\{\s*"[a-z]+")/, '$1 ')
  assert.notEqual(other, text)
  await assert.rejects(writeHistory(out, other, false), { code: 'ROTREE_FORK', historyConflict: true })
  // a folder built before history existed: its current root is recorded before it is replaced
  const legacy = path.join(dir, 'legacy')
  await build({ src, out: legacy, key, ttlMs: 3600e3, fsync: false, now })
  await fs.rm(path.join(legacy, 'history'), { recursive: true })
  const l1 = JSON.parse(await fs.readFile(path.join(legacy, 'fsinfo.json'), 'utf8')).seq
  const l2 = (await build({ src, out: legacy, key, ttlMs: 3600e3, fsync: false, now })).seq
  assert.deepEqual((await listHistory(legacy)).map(h => h.seq), [l2, l1])
})

async function blobStats (out) {
  const names = (await fs.readdir(path.join(out, 'h'))).sort()
  return Promise.all(names.map(async n => { const st = await fs.stat(path.join(out, 'h', n)); return [n, st.size, st.mtimeMs, st.ino] }))
}

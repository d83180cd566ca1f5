// docs/SECURITY.md, the matrix: every lie × every reader. With only the lying mirror, the read
// fails with the documented code and hands out no unverified byte (a stream
// or stdout may have carried a verified prefix; nothing else), and leaves no
// file behind; with an honest mirror beside the liar, it succeeds with the
// true bytes (unless the lie is a validly signed bad tree, which no mirror can
// fix). The lies of lies.js are about a version-1 tree, those of lies-v2.js
// about a version-2 tree with roles, thresholds and a rotated trust document
// (fixture-v2.js), those of lies-private.js about a private tree, those of
// lies-witnessed.js about the log of a tree whose trust document names
// witnesses (fixture-witnessed.js). The results are written into docs/SECURITY.md.
import { test, after } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { openTree } from 'rotree-client'
import { startLyingServer } from '../helpers/lying-server.js'
import { serve, address, tmpdir, writeTree } from '../helpers/fixtures.js'
import { makeFixture, TARGET } from './fixture.js'
import { LIES } from './lies.js'
import { makeFixtureV2, TARGET_V2 } from './fixture-v2.js'
import { LIES_V2 } from './lies-v2.js'
import { makeFixturePrivate, TARGET_P } from './fixture-private.js'
import { LIES_PRIVATE, appliesTo } from './lies-private.js'
import { makeFixtureWitnessed, TARGET_W } from './fixture-witnessed.js'
import { LIES_WITNESSED } from './lies-witnessed.js'
import { READERS as ALL_READERS } from './readers.js'
import { needs } from '../helpers/tools.js'
import { closeBrowserReader, browserReader } from './browser-reader.js'
import { writeSecurityDoc } from './security-doc.js'
import { decodeManifestPage, padme } from 'rotree-client/format'
import { generateKeyPair } from 'rotree-client/crypto'
import { build } from '../../builder/build.js'
import { signOut } from '../../builder/release.js'

// without Chromium every Node reader still runs; the browser's column is skipped in one line
const NO_BROWSER = needs('chromium')
const READERS = NO_BROWSER ? ALL_READERS.filter(r => r !== browserReader) : ALL_READERS

const TIMEOUT_S = 1
const ALL_LIES = [...LIES, ...LIES_V2, ...LIES_PRIVATE, ...LIES_WITNESSED]
const fx = await makeFixture()
const fx2 = await makeFixtureV2()
const fxP = await makeFixturePrivate()
const fxW = await makeFixtureWitnessed()
const honest = await serve(fx.out)
const honest2 = await serve(fx2.out)
const honestE = await serve(fx2.outE)
const honestP = await serve(fxP.out)
const honestW = await serve(fxW.out)
const results = []
after(async () => {
  await closeBrowserReader()
  await honest.close(); await honest2.close(); await honestE.close(); await honestP.close(); await honestW.close()
  await fx.cleanup(); await fx2.cleanup(); await fxP.cleanup(); await fxW.cleanup()
  // SECURITY.md is written only from a run of every reader, the browser's included
  const cells = ALL_LIES.reduce((n, lie) => n + READERS.filter(r => ofWorld(r, lie)).length, 0)
  if (READERS.length === ALL_READERS.length && results.length === cells) await writeSecurityDoc(results, { readers: READERS.map(r => r.id), lies: ALL_LIES })
})

// the trees the lies are about: version 1 at #<key>, version 2 (fixture-v2.js) at
// #t<hash>:stable, and its family E whose first trust document expired
const WORLDS = {
  v1: { fx, out: fx.out, honest, big: fx.big, path: TARGET, at: url => address(url, fx.key.publicKey) },
  v2: { fx: fx2, out: fx2.out, honest: honest2, big: fx2.big, path: TARGET_V2, at: url => `${url}#${fx2.fragment}` },
  E: { fx: fx2, out: fx2.outE, honest: honestE, big: fx2.big, path: TARGET_V2, at: url => `${url}#${fx2.fragmentE}` },
  // the private tree (fixture-private.js), read by reader A unless the lie names another
  P: { fx: fxP, out: fxP.out, honest: honestP, big: fxP.big, path: TARGET_P, at: url => `${url}#${fxP.fragment}`, reader: fxP.readers.A, private: true },
  // the witnessed tree (fixture-witnessed.js): its trust document names 3 witnesses, 2 required
  W: { fx: fxW, out: fxW.out, honest: honestW, big: fxW.big, path: TARGET_W, at: url => `${url}#${fxW.fragment}` }
}
// Chromium's first page pays its cold start (the browser's processes, the
// bundle's first compile), which on a loaded machine can hold a chunk past the
// 1 s each request is given: it is paid here, on an honest read checked byte
// for byte, so no lie's cell is timed against it.
test('the browser reader of the matrix reads the honest tree', { skip: NO_BROWSER }, async () => {
  const w = WORLDS.v1
  const r = await browserReader.run({ addr: w.at(w.honest.url), mirrors: [], seenAddr: null, timeoutS: 30, path: w.path })
  assert.equal(r.ok, true, `${r.code}${r.message ? ` (${r.message})` : ''}`)
  assert.ok(r.out.equals(w.big), 'the browser reader returned wrong bytes from the honest mirror')
})

const worldOf = lie => WORLDS[lie.family ?? (LIES_V2.includes(lie) ? 'v2' : LIES_PRIVATE.includes(lie) ? 'P' : LIES_WITNESSED.includes(lie) ? 'W' : 'v1')]
/** Is `reader` a reader of the lie's world (fsck --repair-from reads the private rows only)? */
const ofWorld = (reader, lie) => reader.only === undefined || (reader.only === 'private' && worldOf(lie).private === true)

/** The identity a read of a private tree is given (text and file): the world's reader, none, or removed reader C. */
function identityFor (lie, w) {
  if (!w.private || lie.identity === 'none') return { identity: null, identityFile: null }
  const r = lie.identity === 'removed' ? w.fx.readers.C : w.reader
  return { identity: r.identity, identityFile: r.file }
}

/** A fresh state dir (removed when its lie's test ends); for lies that need it, the reader has already accepted the newest root. */
const stateDirs = []
async function stateFor (lie, w) {
  const dir = await tmpdir('rotree-matrix-state-')
  stateDirs.push(dir)
  if (lie.seenNewer) (await openTree(w.at(w.honest.url), { stateDir: dir, identity: w.reader?.identity })).close()
  return dir
}
/** The same for readers whose state is not a folder (the browser): the address they open first. */
const seenFor = (lie, w) => lie.seenNewer ? w.at(w.honest.url) : null

function isPrefix (got, truth) { return got.length <= truth.length && truth.subarray(0, got.length).equals(got) }

for (const lie of ALL_LIES) {
  const w = worldOf(lie)
  test(`lie: ${lie.id} (${lie.what})`, { timeout: 120_000 }, async t => {
    const started = performance.now()
    // CORS as real mirrors send it: the browser reader's page is on another
    // origin (the honest serve() sends it already)
    const liar = await startLyingServer(w.out, { ...lie.lie(w.fx), cors: true })
    t.after(() => liar.close())
    t.after(() => Promise.all(stateDirs.splice(0).map(d => fs.rm(d, { recursive: true, force: true }))))
    const accepts = reader => reader.accepts ?? ((codes, got) => codes.includes(got))
    const ids = identityFor(lie, w)
    if (lie.because) {
      // refused by the rule the lie stands for, not by another with the same code
      await assert.rejects(openTree(w.at(liar.url), { stateDir: await stateFor(lie, w), timeoutMs: TIMEOUT_S * 1000, identity: ids.identity ?? undefined }), err => {
        const why = (err.errors ?? [err]).map(e => `${e.code}: ${e.message}`).join(' | ')
        assert.match(why, lie.because, `${lie.id} was refused for another reason: ${why}`)
        return true
      })
    }
    const times = []
    for (const reader of READERS.filter(r => ofWorld(r, lie))) {
      const t0 = performance.now()
      const cell = { lie: lie.id, threat: lie.threat, reader: reader.id }
      const applies = appliesTo(lie, reader)
      if (!applies.ok) {
        // not asked: the lie is about something this reader never fetches (lies-private.js)
        results.push({ ...cell, na: applies.why })
        continue
      }
      const asked = liar.requests.length
      const io = { ...ids, path: w.path, timeoutS: TIMEOUT_S, ...(reader.needsTarget ? { folder: w.fx.mirror, damage: lie.target(w.fx) } : {}) }
      // the liar alone
      const scratch = await tmpdir('rotree-matrix-scratch-')
      const alone = await reader.run({ ...io, addr: w.at(liar.url), mirrors: [], stateDir: await stateFor(lie, w), seenAddr: seenFor(lie, w), scratch })
      assert.equal(alone.ok, false, `${reader.id} accepted ${lie.id}`)
      assert.ok(accepts(reader)(lie.codes, alone.code), `${reader.id} under ${lie.id}: got ${alone.code}, expected ${lie.codes.join('|')}${alone.message ? ` (${alone.message})` : ''}`)
      // a reader the keyring does not name is told so, not that its mirrors failed (FORMAT.md §12.8)
      if (lie.codes.includes('ROTREE_NO_ACCESS') && alone.top !== undefined) assert.equal(alone.top, 'ROTREE_NO_ACCESS', `${reader.id} under ${lie.id}: ROTREE_NO_ACCESS came as ${alone.top}, a mirror fault`)
      assert.ok(isPrefix(alone.out, w.big), `${reader.id} under ${lie.id} handed out bytes that are not the true file's`)
      assert.deepEqual(alone.leftovers ?? [], [], `${reader.id} under ${lie.id} left files behind`)
      cell.alone = alone.code
      cell.prefix = alone.out.length
      // the liar and an honest mirror
      const scratch2 = await tmpdir('rotree-matrix-scratch-')
      const both = await reader.run({ ...io, addr: w.at(liar.url), mirrors: [w.honest.url], stateDir: await stateFor(lie, w), seenAddr: seenFor(lie, w), scratch: scratch2 })
      const refused = lie.id === 'malformed-tree' ? { why: 'the bad root is signed' } : lie.refusedWithHonest
      if (refused && (refused.readers ?? [reader.id]).includes(reader.id)) {
        // the publisher's key signed a bad tree with the highest sequence, or the reader is not one
        // of a private tree's readers: refusing is the only right answer
        assert.equal(both.ok, false, `${reader.id} accepted ${lie.id} with an honest mirror`)
        assert.ok(accepts(reader)(lie.codes, both.code), `${reader.id}: ${both.code}${both.message ? ` (${both.message})` : ''}`)
        assert.ok(isPrefix(both.out, w.big), `${reader.id} under ${lie.id} with an honest mirror handed out bytes that are not the true file's`)
        cell.withHonest = both.code
        cell.why = refused.why
      } else {
        assert.equal(both.ok, true, `${reader.id} failed under ${lie.id} with an honest mirror: ${both.code}${both.message ? ` (${both.message})` : ''}`)
        assert.ok(both.out.equals(w.big), `${reader.id} under ${lie.id} with an honest mirror returned wrong bytes`)
        cell.withHonest = 'ok'
      }
      // a private tree's readers read through the root: only a keyless copy asks for the manifest
      if (w.private && !reader.keyless) {
        const manifest = `/h/${w.fx.manifest}`
        assert.ok(!liar.requests.slice(asked).includes(manifest), `${reader.id} asked the liar for the manifest`)
      }
      await fs.rm(scratch, { recursive: true, force: true }); await fs.rm(scratch2, { recursive: true, force: true })
      results.push(cell)
      times.push(`${reader.id} ${Math.round(performance.now() - t0)}`)
    }
    // a forged document the server could not send would pass for a refusal
    if (w !== WORLDS.v1) assert.deepEqual(liar.problems, [], 'the lying server reported problems')
    t.diagnostic(`${lie.id}: ${Math.round(performance.now() - started)} ms (${times.join(', ')})`)
  })
}

// docs/SECURITY.md "Private trees: what each actor learns" (actors.js PRIVATE_ACTORS), on the
// matrix's private tree, with the library alone
test('private tree: a keyless mirror holds ciphertext of Padmé sizes, no name, and no handle of a sealed blob in fsinfo.json', async () => {
  const f = fxP
  const files = []
  for (const e of await fs.readdir(f.mirror, { recursive: true, withFileTypes: true })) if (e.isFile()) files.push(path.relative(f.mirror, path.join(e.parentPath ?? e.path, e.name)))
  const page = decodeManifestPage(await fs.readFile(path.join(f.mirror, 'h', f.manifest)))
  assert.equal(page.kind, 'leaf')
  // what the mirror keeps of the tree: the blobs the manifest lists, the manifest and the keyring
  assert.deepEqual(files.filter(p => p.startsWith('h/')).map(p => p.slice(2)).sort(), [...page.blobs.map(b => b.hash), f.manifest, f.keyring].sort())
  for (const b of page.blobs) assert.equal(padme(b.size - 16), b.size - 16, `h/${b.hash}: ${b.size} bytes is not a Padmé size and a tag`)
  for (const p of files) {
    const bytes = await fs.readFile(path.join(f.mirror, p))
    for (const name of ['big.bin', 'small.txt', 'readme.txt']) assert.ok(!bytes.includes(name), `${p} holds the name ${name}`)
  }
  const info = await fs.readFile(path.join(f.mirror, 'fsinfo.json'), 'utf8')
  for (const b of page.blobs) assert.ok(!info.includes(b.hash), `fsinfo.json names the sealed blob ${b.hash}`)
})

test('private tree: a removed reader reads a release of before its removal from a mirror that serves it, and nothing after', async () => {
  const f = fxP
  const liar = await startLyingServer(f.out, { fsinfo: () => ({ body: f.fsinfo.beforeRemove }) })
  try {
    const tree = await openTree(`${liar.url}#${f.fragment}`, { stateDir: null, identity: f.readers.C.identity })
    try { assert.equal(Buffer.from(await tree.readFile('/readme.txt')).toString(), 'one\n') } finally { tree.close() }
  } finally { await liar.close() }
  await assert.rejects(openTree(`${honestP.url}#${f.fragment}`, { stateDir: null, identity: f.readers.C.identity }), { code: 'ROTREE_NO_ACCESS' })
})

test('private tree: the timestamp key with the epoch key chooses who reads (a keyring for a stranger), not which root', async () => {
  const f = fxP
  const liar = await startLyingServer(f.out, { fsinfo: () => ({ body: f.fsinfo.otherReaders }) })
  try {
    const tree = await openTree(`${liar.url}#${f.fragment}`, { stateDir: null, identity: f.readers.X.identity })
    try { assert.ok(Buffer.from(await tree.readFile(TARGET_P)).equals(f.big), 'the stranger read other bytes') } finally { tree.close() }
    await assert.rejects(openTree(`${liar.url}#${f.fragment}`, { stateDir: null, identity: f.readers.A.identity }), { code: 'ROTREE_NO_ACCESS' })
  } finally { await liar.close() }
  // another root under the same release: the matrix's p-other-wrap (ROTREE_BAD_FORMAT)
})

// The offline path a private tree's release keys use (builder/release.js): OUT/unsigned.json keeps
// the release's manifest, so `rotree sign --publish` reads back the release its signatures cover.
test('private tree: build --unsigned, then sign --publish, publishes a private release', async t => {
  const dir = await tmpdir('rotree-matrix-private-offline-')
  t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const key = generateKeyPair()
  await writeTree(path.join(dir, 'src'), { 'a.txt': 'a\n' })
  const out = path.join(dir, 'out')
  await build({ src: path.join(dir, 'src'), out, key: { publicKey: key.publicKey }, version: 2, unsigned: true, ttlMs: 86400e3, fsync: false, threads: 0, private: true, readers: [fxP.readers.A.recipient] })
  await signOut({ out, keys: [key], timestampKeys: [key], publish: true, ttlMs: 86400e3, fsync: false })
  const srv = await serve(out)
  try {
    const tree = await openTree(`${srv.url}#${key.publicKey}`, { stateDir: null, identity: fxP.readers.A.identity })
    try { assert.equal(Buffer.from(await tree.readFile('/a.txt')).toString(), 'a\n') } finally { tree.close() }
  } finally { await srv.close() }
})

// fetchAll settles a few round trips after the first fsinfo.json that verifies; when _adopt then
// refuses every answer in hand (the liar's: ROTREE_NO_ACCESS here, ROTREE_ROLLBACK for a reader
// that saw the newer release), root-store.js waits for the mirrors still answering before it gives
// up, so a mirror faster than the honest one with a stale fsinfo.json does not decide. The
// matrix's honest mirror is fast; here it sends the true fsinfo.json a byte a millisecond.
test('private tree: a fast mirror\'s stale keyring does not decide ROTREE_NO_ACCESS while a slower mirror still answers', async t => {
  const f = fxP
  const liar = await startLyingServer(f.out, { fsinfo: () => ({ body: f.fsinfo.beforeAdd }) })
  const slow = await startLyingServer(f.out, { fsinfo: () => ({ drip: 1 }) })
  t.after(() => Promise.all([liar.close(), slow.close()]))
  const tree = await openTree(`${liar.url}#${f.fragment}`, { mirrors: [slow.url], stateDir: null, identity: f.readers.A.identity })
  try { assert.ok(Buffer.from(await tree.readFile(TARGET_P)).equals(f.big)) } finally { tree.close() }
})

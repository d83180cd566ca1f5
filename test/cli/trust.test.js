// The key commands of format version 2 as a publisher runs them (docs/FORMAT.md
// §12, DEPLOY.md's key ceremony): rotree keygen, trust init|sign|update|show|
// retire, build --unsigned / --key --timestamp-key, sign, resign; each
// result read by openTree over a static mirror of OUT, with a reader that
// keeps its state across the steps and a fresh one.
import { test, after } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { openTree } from 'rotree-client'
import { decodeFsinfoV2, decodeTrustDoc } from 'rotree-client/format'
import { tmpdir, writeTree } from '../helpers/fixtures.js'
import { startStaticMirror } from '../client/static-mirror.js'
import { rotree } from './helpers.js'

const cleanups = []
after(async () => { for (const c of cleanups.reverse()) await c() })

async function dir (prefix) { const d = await tmpdir(prefix); cleanups.push(() => fs.rm(d, { recursive: true, force: true })); return d }

/** `rotree …` that must succeed; returns stdout. */
async function ok (...args) {
  const r = await rotree(args)
  assert.equal(r.code, 0, `rotree ${args.join(' ')}\n${r.err}`)
  return r.out
}

/** `rotree …` that must fail with `code` (an error code on stderr). */
async function fails (code, ...args) {
  const r = await rotree(args)
  assert.notEqual(r.code, 0, `rotree ${args.join(' ')} should fail`)
  assert.match(r.err, new RegExp(code), r.err)
  return r
}

const lastLine = s => s.trimEnd().split('\n').at(-1)

/** Keys by name: K.key (secret), K.pub (what keygen prints), K.hex. */
async function keys (base, names) {
  const k = {}
  for (const n of names) {
    const file = path.join(base, `${n}.key`)
    const hex = (await ok('keygen', file)).trim()
    await fs.writeFile(path.join(base, `${n}.pub`), hex + '\n')
    k[n] = { key: file, pub: path.join(base, `${n}.pub`), hex }
  }
  return k
}

async function readAt (address, stateDir, file = '/a.txt') {
  const t = await openTree(address, { stateDir, timeoutMs: 5000, fsinfoSettleMs: 100 })
  try { return { text: Buffer.from(await t.readFile(file)).toString(), info: t.info } } finally { t.close() }
}

async function refusedAt (address, stateDir, code) {
  await assert.rejects(readAt(address, stateDir), err => {
    const codes = [err.code, ...(err.errors ?? []).map(e => e.code)]
    assert.ok(codes.includes(code), `expected ${code}, got ${codes.join(', ')}: ${err.message}`)
    return true
  })
}

test('k-of-n from the start: init, sign to the threshold, release signed by two keys, rotations followed, retirement', async () => {
  const base = await dir('rotree-trust-')
  const k = await keys(base, ['A', 'B', 'C', 'D', 'R1', 'R2', 'R3', 'T', 'T2', 'X'])
  const src = path.join(base, 'src'); const out = path.join(base, 'out')
  await writeTree(src, { 'a.txt': 'one\n', 'big.bin': Buffer.alloc(300_000, 7) })
  const mirror = await startStaticMirror(out); cleanups.push(() => mirror.close())
  const kept = await dir('rotree-trust-state-') // a reader that follows every step

  // trust document 1: 2 of A, B, C; release 2 of R1, R2; timestamp T
  const init = await ok('trust', 'init', out, '--root', k.A.pub, '--root', k.B.pub, '--root', k.C.pub, '--root-threshold', '2',
    '--release', k.R1.pub, '--release', k.R2.pub, '--release-threshold', '2', '--timestamp', k.T.pub, '--name', 'stable', '--url', mirror.url)
  const address = lastLine(init).replace(/^address: /, '')
  assert.match(address, /#t[0-9a-f]{64}:stable$/)
  // a key outside the roles signs for nothing: refused
  await fails('ROTREE_BAD_KEY', 'trust', 'sign', out, '--key', k.X.key)
  // nothing is published under the new address until its trust document 1 is
  await fails('which is not published yet', 'build', src, out, '--unsigned', '--no-fsync')
  await assert.rejects(fs.access(path.join(out, 'unsigned.json')))
  assert.match(await ok('trust', 'sign', out, '--key', k.A.key), /1 of 2 needed/)
  await assert.rejects(fs.access(path.join(out, 'trust', '1.json')), 'not published below the threshold')
  // signing twice with one key adds nothing
  assert.match(await ok('trust', 'sign', out, '--key', k.A.key), /no new signature/)
  const signed = await ok('trust', 'sign', out, '--key', k.B.key)
  assert.match(signed, /published .*trust\/1\.json/)
  assert.equal(lastLine(signed), `address: ${address}`, 'the address never changes')
  assert.equal(decodeTrustDoc(await fs.readFile(path.join(out, 'trust', '1.json'))).signatures.length, 2)

  // a release: built unsigned, one signature per release key, published with the timestamp key
  await ok('build', src, out, '--unsigned', '--no-fsync')
  await fails('ROTREE_BAD_KEY', 'sign', out, '--key', k.T.key) // not a release key
  assert.match(await ok('sign', out, '--key', k.R1.key), /1 of 2 release signatures/)
  await fails('ROTREE_THRESHOLD', 'sign', out, '--timestamp-key', k.T.key, '--publish')
  await assert.rejects(fs.access(path.join(out, 'fsinfo.json')), 'nothing published below the release threshold')
  const pub = await ok('sign', out, '--key', k.R2.key, '--timestamp-key', k.T.key, '--publish', '--url', mirror.url)
  assert.equal(lastLine(pub), `address: ${address}`)
  const info1 = decodeFsinfoV2(await fs.readFile(path.join(out, 'fsinfo.json')))
  assert.equal(info1.name, 'stable'); assert.equal(info1.trust.seq, 1)
  assert.equal((await readAt(address, kept)).text, 'one\n')
  assert.equal((await readAt(address, null)).text, 'one\n')
  // tree B at tree A's address: the same keys, another name, is refused
  await refusedAt(address.replace(/:stable$/, ':nightly'), null, 'ROTREE_WRONG_NAME')

  // trust show OUT and ADDR
  const shown = JSON.parse(await ok('trust', 'show', out, '--json'))
  assert.equal(shown.trust.seq, 1); assert.equal(shown.trust.roles.root.threshold, 2)
  assert.equal(shown.address, address, 'trust init --url is remembered')
  const remote = JSON.parse(await ok('trust', 'show', address, '--json', '--state-dir', await dir('rotree-trust-show-')))
  assert.equal(remote.trustSeq, 1); assert.equal(remote.name, 'stable')

  // rotation 2: C replaced by D, the timestamp key T by T2; needs 2 of document 1's roots and 2 of its own
  await ok('trust', 'update', out, '--add-root', k.D.pub, '--remove-root', k.C.pub, '--timestamp', k.T2.pub)
  assert.match(await ok('trust', 'sign', out, '--key', k.D.key), /0 of 2 needed from the root keys of trust document 1/)
  await ok('trust', 'sign', out, '--key', k.C.key) // an old key counts for document 1 only
  assert.match(await ok('trust', 'show', out), /pending: trust document 2/)
  assert.match(await ok('trust', 'sign', out, '--key', k.A.key), /published .*trust\/2\.json/)
  // the old timestamp key is no signer any more; the new one keeps the tree fresh
  await fails('ROTREE_BAD_KEY', 'resign', out, '--key', k.T.key)
  await ok('resign', out, '--key', k.T2.key, '--ttl', '1d', '--no-fsync')
  assert.equal((await readAt(address, kept)).info.trustSeq, 2, 'a reader that saw document 1 follows to 2')
  assert.equal((await readAt(address, null)).info.trustSeq, 2, 'a fresh reader walks 1 → 2')

  // rotation 3: the release keys change (R1, R2 → R3 alone); the current release is no longer signed by them
  await ok('trust', 'update', out, '--add-release', k.R3.pub, '--remove-release', k.R1.pub, '--remove-release', k.R2.pub, '--release-threshold', '1')
  await ok('trust', 'sign', out, '--key', k.A.key, '--key', k.B.key)
  await fails('ROTREE_THRESHOLD', 'resign', out, '--key', k.T2.key) // would be refused by readers: publish a new release
  await writeTree(src, { 'a.txt': 'two\n' })
  const built = JSON.parse(await ok('build', src, out, '--key', k.R3.key, '--timestamp-key', k.T2.key, '--json', '--no-fsync'))
  assert.equal(built.trustSeq, 3)
  const r3 = await readAt(address, kept)
  assert.equal(r3.text, 'two\n'); assert.equal(r3.info.trustSeq, 3)
  assert.equal((await readAt(address, null)).text, 'two\n')
  // a retired release key cannot sign a release any more
  await ok('build', src, out, '--unsigned', '--no-fsync')
  await fails('ROTREE_BAD_KEY', 'sign', out, '--key', k.R1.key)
  // signing a copy of unsigned.json on another machine (no trust/ beside it), then publishing it in OUT
  const offline = path.join(base, 'offline'); await fs.mkdir(offline)
  await fs.copyFile(path.join(out, 'unsigned.json'), path.join(offline, 'unsigned.json'))
  assert.match(await ok('sign', path.join(offline, 'unsigned.json'), '--key', k.R3.key), /counted where the release is published/)
  const copied = await ok('sign', path.join(offline, 'unsigned.json'), '--publish', out, '--timestamp-key', k.T2.key, '--no-fsync')
  assert.match(copied, /published seq/)
  assert.equal(lastLine(copied), `address: ${address}`)
  await assert.rejects(fs.access(path.join(out, 'unsigned.json')), 'the same release pending in OUT is superseded')

  // retirement: readers that follow, and fresh ones, refuse the tree with its own code
  await ok('trust', 'retire', out)
  await ok('trust', 'sign', out, '--key', k.A.key, '--key', k.D.key)
  assert.match(await ok('resign', out, '--key', k.T2.key), /retirement/)
  await refusedAt(address, kept, 'ROTREE_RETIRED')
  await refusedAt(address, null, 'ROTREE_RETIRED')
  await fails('ROTREE_RETIRED', 'build', src, out, '--key', k.R3.key, '--timestamp-key', k.T2.key, '--no-fsync')
})

test('a single key adopts roles: the address #<key> stays, document 1 needs that key, the lone key is then no signer', async () => {
  const base = await dir('rotree-trust-adopt-')
  const k = await keys(base, ['K', 'A', 'R', 'T'])
  const src = path.join(base, 'src'); const out = path.join(base, 'out')
  await writeTree(src, { 'a.txt': 'one\n' })
  const mirror = await startStaticMirror(out); cleanups.push(() => mirror.close())
  const kept = await dir('rotree-trust-state-')
  const b = await ok('build', src, out, '--key', k.K.key, '--name', 'nightly', '--no-fsync', '--url', mirror.url)
  const address = lastLine(b).replace(/^address: /, '')
  assert.equal(address, `${mirror.url}#${k.K.hex}:nightly`)
  assert.equal((await readAt(address, kept)).text, 'one\n')
  // a single-key version-2 tree: resign with its key re-signs the release and fsinfo.json
  await ok('resign', out, '--key', k.K.key, '--ttl', '2d', '--no-fsync')
  assert.equal((await readAt(address, kept)).text, 'one\n')

  const init = await ok('trust', 'init', out, '--root', k.A.pub, '--release', k.R.pub, '--timestamp', k.T.pub)
  assert.match(init, /its key .* must sign too, and the address stays the same/)
  assert.match(await ok('trust', 'sign', out, '--key', k.A.key), /0 of 1 needed from the address key/)
  assert.match(await ok('trust', 'sign', out, '--key', k.K.key), /published/)
  // the current release is K's alone, and K holds no role any more: resign refuses to carry
  // its root on (a thief of K could have dropped it into OUT); R must sign a new release
  assert.match((await fails('ROTREE_BAD_SIGNATURE', 'resign', out, '--key', k.T.key)).err, /no longer lists in any role/)
  await writeTree(src, { 'a.txt': 'two\n' })
  const b2 = await ok('build', src, out, '--key', k.R.key, '--timestamp-key', k.T.key, '--no-fsync', '--url', mirror.url)
  assert.equal(lastLine(b2), `address: ${address}`, 'the same address after adopting roles')
  const after = await readAt(address, kept)
  assert.equal(after.text, 'two\n'); assert.equal(after.info.trustSeq, 1)
  assert.equal((await readAt(address, null)).text, 'two\n')
  // the lone key K no longer publishes: its own release and fsinfo.json are refused by the publisher
  await fails('ROTREE_BAD_KEY', 'build', src, out, '--key', k.K.key, '--no-fsync')
})

test('keygen --passphrase seals the secret key; signing needs the passphrase', async () => {
  const base = await dir('rotree-trust-pass-')
  const file = path.join(base, 'sealed.key')
  const r = await rotree(['keygen', file, '--passphrase'], { env: { ROTREE_PASSPHRASE: 'correct horse' } })
  assert.equal(r.code, 0, r.err)
  const j = JSON.parse(await fs.readFile(file, 'utf8'))
  assert.equal(j.secretKey, undefined, 'no secret key in the clear')
  assert.equal(j.publicKey, r.out.trim())
  assert.equal((await fs.stat(file)).mode & 0o777, 0o600)
  const src = path.join(base, 'src'); await writeTree(src, { 'a.txt': 'x' })
  const wrong = await rotree(['build', src, path.join(base, 'out'), '--key', file, '--no-fsync'], { env: { ROTREE_PASSPHRASE: 'wrong' } })
  assert.equal(wrong.code, 1); assert.match(wrong.err, /ROTREE_BAD_KEY: .*wrong passphrase/)
  const right = await rotree(['build', src, path.join(base, 'out'), '--key', file, '--no-fsync'], { env: { ROTREE_PASSPHRASE: 'correct horse' } })
  assert.equal(right.code, 0, right.err)
  assert.equal(lastLine(right.out), `address: <mirror-url>#${j.publicKey}`)
  // a public key argument may be the sealed file itself (its public half needs no passphrase)
  const init = await rotree(['trust', 'init', path.join(base, 'o2'), '--root', file, '--release', j.publicKey, '--timestamp', file, '--json'], { env: { ROTREE_PASSPHRASE: '' } })
  assert.equal(init.code, 0, init.err)
  assert.deepEqual(JSON.parse(init.out).roles.root.keys, [j.publicKey])
})

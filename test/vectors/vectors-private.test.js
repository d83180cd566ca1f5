// The committed private-tree vectors (docs/FORMAT.md §10, private part;
// §12.8) against this implementation: the secrets are the documented ones;
// the blobs, keyring, wrapped root and commitment that private-writer.js
// made from the spec's text are what client-js seals, opens and unwraps; the
// tree reads back through a real server and rotree-client with a reader's
// identity and is refused without one; a keyless mirror pulls and fscks it;
// every tampered variant fails with its code; make-private.js regenerates
// them byte for byte.
import { test, describe, before, after } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { createHash } from 'node:crypto'
import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { Decrypter } from 'age-encryption'
import { openTree } from 'rotree-client'
import { verifyDecoded } from 'rotree-client/verify'
import { decodeFsinfoV2, openSealed, sealBlob, padme, fromHex, compareBytes, utf8 } from 'rotree-client/format'
import { openKeyring, unwrapRoot, encodeRootRef, rootCommit, recipientOf, identityScalar, decodeEpoch, walkManifest } from 'rotree-client/access'
import { publicKeyOf, gcmSeal, hmacSha256 } from 'rotree-client/crypto'
import { pull } from '../../mirror/pull.js'
import { fsck } from '../../mirror/fsck.js'
import { startStaticMirror } from '../client/static-mirror.js'
import { needs } from '../helpers/tools.js'
import { applyChanges } from './make.js'
import { makeVectorsPrivate, PRIVATE_SEED } from './make-private.js'
import { padme as specPadme } from './private-writer.js'
import { codeOf } from './offline-reader.js'

const HERE = path.join(path.dirname(fileURLToPath(import.meta.url)), 'private')
const TREE = path.join(HERE, 'tree')
const sha = b => createHash('sha256').update(b).digest('hex')
const V = JSON.parse(await fs.readFile(path.join(HERE, 'vectors.json'), 'utf8'))
const NOW = Date.parse(V.readerNow)
const ID = name => V.readers[name].identity
const NODE_CRYPTO = { hmac: hmacSha256, sha256: b => new Uint8Array(createHash('sha256').update(b).digest()), seal: gcmSeal }
const sealed = Object.entries(V.blobs).filter(([, b]) => b.key)
const blob = async hash => new Uint8Array(await fs.readFile(path.join(TREE, 'h', hash)))
// what the reader of §12.8 checks, in order: the handle, the tag, the padding, the inner codec
const refOf = (hash, b) => ({ hash, size: b.decodedSize, storedSize: b.size, codec: b.codec, key: b.key })

async function copyTree (prefix) {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), prefix))
  await fs.cp(TREE, dir, { recursive: true })
  return dir
}

/** Open the tree at dir through a static mirror with `identity` and read `read` (directories listed, files whole). */
async function readServed (dir, identity, read) {
  const srv = await startStaticMirror(dir)
  let tree
  try {
    return await codeOf(async () => {
      tree = await openTree(`${srv.url}#${V.fragment}`, { identity, stateDir: null, now: () => NOW, timeoutMs: 5000 })
      for (const p of read) {
        const s = await tree.stat(p)
        if (s.type === 'dir') await tree.readdir(p); else await tree.readFile(p)
      }
    })
  } finally { tree?.close(); await srv.close() }
}

/** A keyless mirror's pull of the tree at dir, through a static mirror, into a new folder: the error code and the folder. */
async function pullServed (dir) {
  const srv = await startStaticMirror(dir)
  const into = await fs.mkdtemp(path.join(os.tmpdir(), 'rotree-private-pull-'))
  try {
    const code = await codeOf(() => pull({ address: `${srv.url}#${V.fragment}`, dir: into, reader: { stateDir: null, now: () => NOW, timeoutMs: 5000 }, fsync: false }))
    return { code, into }
  } finally { await srv.close() }
}

test('the secrets are the documented ones: SHA-256("rotree test vector private <name>"), its first bytes', () => {
  for (const [name, hex] of Object.entries(V.secrets)) assert.equal(hex, sha(PRIVATE_SEED + name).slice(0, hex.length), name)
  assert.equal(V.keys.publisher.secretKey, sha(PRIVATE_SEED + 'publisher'))
  assert.equal(V.keys.publisher.publicKey, publicKeyOf(V.keys.publisher.secretKey))
  assert.equal(V.fragment, V.keys.publisher.publicKey)
  for (const [name, r] of Object.entries(V.readers)) {
    assert.equal(Buffer.from(identityScalar(r.identity)).toString('hex'), sha(PRIVATE_SEED + name), name)
    assert.equal(recipientOf(r.identity), r.recipient, name)
  }
})

describe('committed private-tree vectors', () => {
  test('every blob is named by the SHA-256 of its stored bytes; the tree is fsinfo.json and h/', async () => {
    const names = await fs.readdir(path.join(TREE, 'h'))
    assert.deepEqual(names.sort(), Object.keys(V.blobs).sort())
    for (const n of names) {
      const b = await blob(n)
      assert.equal(sha(b), n)
      assert.equal(b.length, V.blobs[n].size)
    }
    assert.deepEqual((await fs.readdir(TREE)).sort(), ['fsinfo.json', 'h'])
  })

  test('fsinfo.json: the recorded messages, a private release with its manifest, and access', async () => {
    const info = decodeFsinfoV2(await fs.readFile(path.join(TREE, 'fsinfo.json')))
    assert.equal(Buffer.from(info.message).toString(), V.fsinfo.signedMessage)
    assert.equal(Buffer.from(info.release.message).toString(), V.release.signedMessage)
    assert.deepEqual(info.release.root, { private: V.root.commit })
    assert.deepEqual(info.release.manifest, { hash: V.manifest.hash, size: V.manifest.size })
    assert.deepEqual(info.access, { epoch: V.keyring.epoch, keyring: { hash: V.keyring.hash, size: V.keyring.size }, root: V.root.wrapped })
    assert.match(V.fsinfo.signedMessage, /\naccess 1 [0-9a-f]{64} \d+ [A-Za-z0-9_-]+\n$/)
    assert.match(V.release.signedMessage, /\nroot private [0-9a-f]{64}\nmanifest [0-9a-f]{64} \d+\n$/)
  })

  test('the keyring: every listed reader opens the epoch key (this reader, age-encryption), a stranger gets ROTREE_NO_ACCESS', async () => {
    const ring = await blob(V.keyring.hash)
    const want = { epoch: V.keyring.epoch, key: fromHex(V.secrets['epoch-key']) }
    assert.equal(Buffer.from(ring.subarray(0, 22)).toString(), 'age-encryption.org/v1\n')
    for (const r of V.keyringReaders) {
      assert.deepEqual(await openKeyring(ring, ID(r)), want, r)
      const d = new Decrypter()
      d.addIdentity(ID(r))
      const payload = await d.decrypt(ring)
      assert.equal(Buffer.from(payload).toString('hex'), V.keyring.payload)
      assert.deepEqual(decodeEpoch(payload), want)
    }
    await assert.rejects(openKeyring(ring, ID('stranger')), { code: 'ROTREE_NO_ACCESS' })
    const header = Buffer.from(ring).toString('latin1').split('\n---')[0]
    for (const r of Object.values(V.readers)) assert.ok(!header.includes(r.recipient.slice(4, 20)), 'no recipient in the clear')
    assert.equal(header.split('\n').filter(l => l.startsWith('-> X25519 ')).length, padme(V.keyringReaders.length))
  })

  test('the age tool opens the keyring with reader-a\'s identity: the payload rtK 0x02 ‖ epoch ‖ key', { skip: needs('age') }, async t => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'rotree-private-age-'))
    t.after(() => fs.rm(dir, { recursive: true, force: true }))
    await fs.writeFile(path.join(dir, 'reader.key'), ID('reader-a') + '\n', { mode: 0o600 })
    const out = execFileSync('age', ['-d', '-i', path.join(dir, 'reader.key'), path.join(TREE, 'h', V.keyring.hash)])
    assert.equal(out.toString('hex'), V.keyring.payload)
    assert.ok(out.subarray(0, 4).equals(Buffer.from('rtK\x02', 'latin1')))
  })

  test('the root: its ref, commitment and wrapping, as the library encodes, commits and unwraps them', async () => {
    const ref = { hash: V.root.ref.hash, size: V.root.ref.decodedSize, storedSize: V.root.ref.size, codec: V.root.ref.codec, key: V.root.ref.key }
    const bytes = encodeRootRef(ref, V.root.mtime)
    assert.equal(Buffer.from(bytes).toString('hex'), V.root.rootRef)
    assert.equal(rootCommit(bytes), V.root.commit)
    assert.deepEqual(await unwrapRoot(fromHex(V.secrets['epoch-key']), V.root.wrapped, V.root.commit), { ref, mtime: V.root.mtime })
    await assert.rejects(unwrapRoot(fromHex(V.secrets['other-epoch-key']), V.root.wrapped, V.root.commit), { code: 'ROTREE_BAD_FORMAT' })
  })

  test('every sealed blob: opened with its key, sealed again by the library into the same bytes and key; Padmé as the spec says', async () => {
    assert.ok(sealed.length >= 8)
    const secret = fromHex(V.secrets['tree-secret'])
    for (const [hash, b] of sealed) {
      const stored = await blob(hash)
      const inner = await openSealed(stored, b.key)
      const again = sealBlob(inner, secret, NODE_CRYPTO)
      assert.equal(again.key, b.key, hash)
      assert.ok(Buffer.from(again.stored).equals(Buffer.from(stored)), hash)
      assert.equal(stored.length, padme(inner.length + 1) + 16)
      assert.equal((await verifyDecoded(stored, refOf(hash, b))).length, b.decodedSize, hash)
    }
    for (let L = 1; L < 300_000; L += L < 600 ? 1 : 331) assert.equal(padme(L), specPadme(L), `padme(${L})`)
  })

  test('the manifest lists every sealed blob once, with its stored size; not itself, not the keyring', async () => {
    const listed = []
    const pages = []
    await walkManifest({ hash: V.manifest.hash, size: V.manifest.size }, async ref => { pages.push(ref.hash); return blob(ref.hash) }, b => { listed.push(b) })
    assert.deepEqual(pages, [V.manifest.hash])
    assert.deepEqual(listed, sealed.map(([hash, b]) => ({ hash, size: b.size })).sort((a, b) => a.hash < b.hash ? -1 : 1))
    assert.equal(V.manifest.blobs, sealed.length)
  })
})

describe('committed private-tree vectors through a real server and rotree-client', () => {
  let srv, tree
  before(async () => {
    srv = await startStaticMirror(TREE)
    tree = await openTree(`${srv.url}#${V.fragment}`, { identity: ID('reader-a'), stateDir: null, now: () => NOW })
  })
  after(async () => { tree?.close(); await srv?.close() })

  const check = async p => {
    const want = V.paths[p]
    const s = await tree.lstat(p)
    assert.equal(s.type, want.type, p)
    assert.equal(s.mtimeMs, want.mtime, p)
    if (p !== '/') assert.equal(s.size, want.size, p)
    if (want.type === 'file') {
      assert.equal(s.exec, want.exec, p)
      assert.equal(s.sha256, want.sha256, p)
      assert.equal(sha(await tree.readFile(p)), want.sha256, p)
    }
    if (want.type === 'symlink') assert.equal(s.target, want.target, p)
    if (want.type === 'dir') {
      const kids = Object.keys(V.paths).filter(q => q !== '/' && path.posix.dirname(q) === p).map(q => path.posix.basename(q))
      assert.deepEqual(await tree.readdir(p), kids.sort((a, b) => compareBytes(utf8.encode(a), utf8.encode(b))), p)
    }
  }
  const plain = p => !p.startsWith('/pages') && p !== '/repeat.bin'

  test('every path of single-page directories and chunk-list files: metadata, SHA-256, listing and content', async () => {
    for (const p of Object.keys(V.paths).filter(plain)) await check(p)
    assert.equal(tree.info.version, 2)
  })

  // These two read through an index (a directory cut into leaves, a file's chunk index),
  // whose children's refs carry their keys in the blob (FORMAT.md §12.8). They fail while
  // decodeDirPage and decodeChunkIndex (client-js/src/format/dirpage.js, chunkindex.js)
  // leave the key out of the children they return.
  test('/pages: a directory of 400 files in sealed leaves under a sealed index page', async () => {
    assert.equal(V.blobs[V.paths['/pages'].dir.hash].kind, 'dir-index')
    for (const p of Object.keys(V.paths).filter(p => p.startsWith('/pages'))) await check(p)
  })

  test('/repeat.bin: 40 equal chunks (one sealed blob) under a sealed chunk index', async () => {
    assert.equal(V.paths['/repeat.bin'].storage, 'index')
    await check('/repeat.bin')
  })

  test('reader-b reads too; no identity, or the stranger\'s, is ROTREE_NO_ACCESS', async () => {
    assert.equal(await readServed(TREE, ID('reader-b'), ['/README', '/a/deep.txt']), 'no error')
    assert.equal(await readServed(TREE, undefined, ['/README']), 'ROTREE_NO_ACCESS')
    assert.equal(await readServed(TREE, ID('stranger'), ['/README']), 'ROTREE_NO_ACCESS')
  })
})

test('a keyless mirror pulls the tree (every blob, the manifest, the keyring) and fsck finds it whole', async t => {
  const { code, into } = await pullServed(TREE)
  t.after(() => fs.rm(into, { recursive: true, force: true }))
  assert.equal(code, 'no error')
  assert.deepEqual((await fs.readdir(path.join(into, 'h'))).sort(), Object.keys(V.blobs).sort())
  const r = await fsck(into, { publicKey: V.fragment, now: NOW, jobs: 1 })
  assert.equal(r.ok, true, JSON.stringify(r.problems))
  assert.equal(r.blobs.reachable, Object.keys(V.blobs).length)
})

describe('tampered private-tree variants fail with their code', async () => {
  const names = (await fs.readdir(path.join(HERE, 'tampered'))).filter(n => n.endsWith('.json')).sort()
  test('every variant listed in vectors.json is present', () => {
    assert.deepEqual(names.map(n => n.slice(0, -5)), [...V.tampered].sort())
  })
  for (const n of names) {
    const t = JSON.parse(await fs.readFile(path.join(HERE, 'tampered', n), 'utf8'))
    test(`${n.slice(0, -5)}: ${t.expect} (${t.reader})`, async () => {
      assert.equal(t.fragment, V.fragment)
      assert.equal(t.readerNow, V.readerNow)
      const dir = await copyTree('rotree-tampered-private-')
      try {
        await applyChanges(dir, t.changes)
        if (t.reader === 'identity') {
          assert.equal(await readServed(dir, ID(t.identity), t.read), t.expect, 'rotree-client')
          return
        }
        // a mirror without keys: pull refuses it, fsck reports what it could not walk
        const { code, into } = await pullServed(dir)
        await fs.rm(into, { recursive: true, force: true })
        assert.equal(code, t.expect, 'pull')
        const r = await fsck(dir, { publicKey: V.fragment, now: NOW, jobs: 1 })
        assert.equal(r.ok, false, 'fsck')
        assert.deepEqual([...new Set(r.unchecked.map(u => u.code))], [t.expect], 'fsck: ' + JSON.stringify(r.unchecked))
        // a reader does not read the manifest: the tree reads as before
        assert.equal(await readServed(dir, ID('reader-a'), ['/README', '/text.txt']), 'no error')
      } finally {
        await fs.rm(dir, { recursive: true, force: true })
      }
    })
  }
})

test('make-private.js regenerates the committed private-tree vectors byte for byte (FORMAT.md §1.6, §12.6)', { timeout: 120_000 }, async () => {
  const dest = await fs.mkdtemp(path.join(os.tmpdir(), 'rotree-vectors-private-regen-'))
  try {
    const r = await makeVectorsPrivate(dest)
    assert.equal(r.commit, V.root.commit)
    const list = async root => {
      const out = []
      for (const sub of ['tree', 'tree/h', 'tampered']) {
        for (const e of await fs.readdir(path.join(root, sub), { withFileTypes: true })) if (e.isFile()) out.push(sub + '/' + e.name)
      }
      return out.concat('vectors.json').sort()
    }
    const want = await list(HERE)
    assert.deepEqual(await list(dest), want)
    for (const f of want) {
      const [a, b] = await Promise.all([fs.readFile(path.join(HERE, f)), fs.readFile(path.join(dest, f))])
      assert.ok(a.equals(b), `${f} differs`)
    }
  } finally {
    await fs.rm(dest, { recursive: true, force: true })
  }
})

// The committed format-version-2 vectors (docs/FORMAT.md §10, version 2
// part) against this implementation: the trust chain, release and
// fsinfo.json verify with trust/roles.js, every blob decodes (and encodes
// back) with the format module, the tree reads back through a real server
// and the client library, every tampered variant fails with its code with
// both readers, and make-v2.js regenerates them byte for byte.
import { test, describe, before, after } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { createHash } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import { openTree } from 'rotree-client'
import { verifyFsinfo, verifyDecoded } from 'rotree-client/verify'
import { decodeDirPage, encodeDirPage, decodeChunkIndex, encodeChunkIndex, decodeFsinfoV2, decodeTrustDoc, compareBytes, utf8 } from 'rotree-client/format'
import { trustAnchorOf, trustHash } from 'rotree-client/trust'
import { publicKeyOf } from 'rotree-client/crypto'
import { startStaticMirror } from '../client/static-mirror.js'
import { applyChanges } from './make.js'
import { makeVectorsV2, V2_KEY_SEED } from './make-v2.js'
import { OfflineTree, codeOf, pick, STAT_KEYS } from './offline-reader.js'

const HERE = path.join(path.dirname(fileURLToPath(import.meta.url)), 'v2')
const TREE = path.join(HERE, 'tree')
const sha = b => createHash('sha256').update(b).digest('hex')
const V = JSON.parse(await fs.readFile(path.join(HERE, 'vectors.json'), 'utf8'))
const NOW = Date.parse(V.readerNow)
const V2 = { version: 2 }

async function copyTree (prefix) {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), prefix))
  await fs.cp(TREE, dir, { recursive: true })
  return dir
}

test('the v2 test keys are the ones documented: secret = SHA-256("rotree test vector v2 <name>")', () => {
  for (const [name, k] of Object.entries(V.keys)) {
    assert.equal(k.secretKey, sha(V2_KEY_SEED + name), name)
    assert.equal(k.publicKey, publicKeyOf(k.secretKey), name)
  }
})

describe('committed version-2 vectors', () => {
  test('every blob is named by the SHA-256 of its stored bytes; the trust documents are there', async () => {
    const names = await fs.readdir(path.join(TREE, 'h'))
    assert.deepEqual(names.sort(), Object.keys(V.blobs).sort())
    for (const n of names) {
      const b = await fs.readFile(path.join(TREE, 'h', n))
      assert.equal(sha(b), n)
      assert.equal(b.length, V.blobs[n].size)
    }
    assert.deepEqual((await fs.readdir(TREE)).sort(), ['fsinfo.json', 'h', 'trust'])
    assert.deepEqual((await fs.readdir(path.join(TREE, 'trust'))).sort(), V.trust.map(t => t.seq + '.json'))
  })

  test('the address certifies trust document 1; messages and hashes are the recorded ones', async () => {
    const docs = await Promise.all(V.trust.map(async t => decodeTrustDoc(await fs.readFile(path.join(TREE, 'trust', t.seq + '.json')))))
    assert.equal(V.fragment, trustAnchorOf(docs[0]) + ':stable')
    docs.forEach((d, i) => {
      assert.equal(trustHash(d), V.trust[i].hash)
      assert.equal(Buffer.from(d.message).toString(), V.trust[i].signedMessage)
    })
    const info = decodeFsinfoV2(await fs.readFile(path.join(TREE, 'fsinfo.json')))
    assert.equal(Buffer.from(info.message).toString(), V.fsinfo.signedMessage)
    assert.equal(Buffer.from(info.release.message).toString(), V.release.signedMessage)
    assert.equal(info.releaseHash, V.release.hash)
    assert.deepEqual(info.trust, { seq: 2, hash: V.trust[1].hash })
    assert.deepEqual(info.release.root, { hash: V.root.hash, size: V.root.size, codec: V.root.codec, decodedSize: V.root.decodedSize, mtime: V.root.mtime })
    await OfflineTree.openV2(TREE, V.fragment, NOW)
  })

  test('decoding every blob from the root gives every recorded path and reaches every blob', async () => {
    const t = await OfflineTree.openV2(TREE, V.fragment, NOW)
    const got = await t.walkAll()
    assert.deepEqual(Object.keys(got).sort(), Object.keys(V.paths).sort())
    for (const [p, want] of Object.entries(V.paths)) assert.deepEqual(got[p], pick(want, STAT_KEYS), p)
    assert.deepEqual([...t.reached].sort(), Object.keys(V.blobs).sort())
  })

  test('every page and chunk index encodes back to its decoded bytes (encode and decode side by side)', async () => {
    let n = 0
    for (const [hash, b] of Object.entries(V.blobs)) {
      if (b.kind === 'chunk') continue
      const decoded = await verifyDecoded(await fs.readFile(path.join(TREE, 'h', hash)), { hash, size: b.decodedSize, storedSize: b.size, codec: b.codec })
      const again = b.kind === 'chunk-index' ? encodeChunkIndex(decodeChunkIndex(decoded, V2), V2) : encodeDirPage(decodeDirPage(decoded, V2), V2)
      assert.ok(Buffer.from(again).equals(Buffer.from(decoded)), `${b.kind} ${hash}`)
      // and a version-1 decoder refuses a version-2 blob (FORMAT.md §6.1)
      assert.throws(() => b.kind === 'chunk-index' ? decodeChunkIndex(decoded) : decodeDirPage(decoded), { code: 'ROTREE_BAD_FORMAT' })
      n++
    }
    assert.ok(n >= 5)
  })

  test('a reader that knows only version 1 refuses the tree: ROTREE_UNSUPPORTED_VERSION', async () => {
    const bytes = await fs.readFile(path.join(TREE, 'fsinfo.json'))
    const key = V.keys['timestamp-2'].publicKey
    assert.throws(() => verifyFsinfo(bytes, { publicKey: key, now: NOW }), { code: 'ROTREE_UNSUPPORTED_VERSION' })
  })
})

describe('committed version-2 vectors through a real server and rotree-client', () => {
  let srv, tree
  before(async () => {
    srv = await startStaticMirror(TREE) // rotree serve has no trust/<seq>.json route yet
    tree = await openTree(`${srv.url}#${V.fragment}`, { stateDir: null, now: () => NOW })
  })
  after(async () => { tree?.close(); await srv?.close() })

  test('tree.info names the version, the tree, the release and the trust document', () => {
    const i = tree.info
    assert.equal(i.version, 2)
    assert.equal(i.name, 'stable')
    assert.equal(i.anchor, V.fragment.split(':')[0])
    assert.equal(i.key, null)
    assert.equal(i.root, V.root.hash)
    assert.equal(i.rootSize, V.root.size)
    assert.equal(i.seq, V.fsinfo.seq)
    assert.equal(i.releaseSeq, 1)
    assert.equal(i.trustSeq, 2)
  })

  test('every path: metadata, SHA-256, listing and content', async () => {
    for (const [p, want] of Object.entries(V.paths)) {
      const s = await tree.lstat(p)
      assert.equal(s.type, want.type, p)
      assert.equal(s.mtimeMs, want.mtime, p)
      if (p !== '/') assert.equal(s.size, want.size, p)
      if (want.type === 'file') {
        assert.equal(s.exec, want.exec, p)
        assert.equal(s.sha256, want.sha256, p)
        assert.equal(s.hash, want.sha256, p) // never a blob handle for a version-2 file
        assert.equal(sha(await tree.readFile(p)), want.sha256, p)
      }
      if (want.type === 'symlink') assert.equal(s.target, want.target, p)
      if (want.type === 'dir') {
        const names = await tree.readdir(p)
        const kids = Object.keys(V.paths).filter(q => q !== '/' && path.posix.dirname(q) === p).map(q => path.posix.basename(q))
        assert.deepEqual(names, kids.sort((a, b) => compareBytes(utf8.encode(a), utf8.encode(b))), p)
      }
    }
  })

  test('ranged reads of compressed chunks, across chunks and through the chunk index; whole streams check the SHA-256', async () => {
    for (const p of ['/text.txt', '/log.txt', '/repeat.bin']) {
      const whole = await tree.readFile(p)
      const size = V.paths[p].size
      for (const [start, end] of [[0, 0], [1000, 1999], [size - 10, size - 1], [65535, 300000], [262207, 262208 * 3 + 5]]) {
        if (end >= size) continue
        const parts = []
        for await (const b of tree.readRange(p, { start, end })) parts.push(b)
        assert.equal(sha(Buffer.concat(parts)), sha(whole.subarray(start, end + 1)), `${p} ${start}-${end}`)
      }
      const streamed = []
      for await (const b of tree.createReadStream(p)) streamed.push(b)
      assert.equal(sha(Buffer.concat(streamed)), V.paths[p].sha256, p)
    }
  })
})

describe('tampered version-2 variants fail with their code', async () => {
  const names = (await fs.readdir(path.join(HERE, 'tampered'))).filter(n => n.endsWith('.json')).sort()
  test('every variant listed in vectors.json is present', () => {
    assert.deepEqual(names.map(n => n.slice(0, -5)), [...V.tampered].sort())
  })
  for (const n of names) {
    const t = JSON.parse(await fs.readFile(path.join(HERE, 'tampered', n), 'utf8'))
    test(`${n.slice(0, -5)}: ${t.expect}`, async () => {
      const dir = await copyTree('rotree-tampered-v2-')
      try {
        await applyChanges(dir, t.changes)
        const now = Date.parse(t.readerNow)
        const offline = await codeOf(async () => {
          const o = await OfflineTree.openV2(dir, t.fragment, now)
          for (const p of t.read) await o.readPath(p)
        })
        assert.equal(offline, t.expect, 'offline reader')
        if (t.read.length && !t.read.includes('/')) {
          const o = await OfflineTree.openV2(dir, t.fragment, now)
          assert.equal(sha(await o.readPath('/README')), V.paths['/README'].sha256)
        }
        const srv = await startStaticMirror(dir)
        let tree
        try {
          const served = await codeOf(async () => {
            tree = await openTree(`${srv.url}#${t.fragment}`, { stateDir: null, now: () => now, timeoutMs: 5000 })
            for (const p of t.read) {
              const s = await tree.stat(p)
              if (s.type === 'dir') await tree.readdir(p); else await tree.readFile(p)
            }
          })
          assert.equal(served, t.expect, 'client')
        } finally { tree?.close(); await srv.close() }
      } finally {
        await fs.rm(dir, { recursive: true, force: true })
      }
    })
  }
})

test('make-v2.js regenerates the committed version-2 vectors byte for byte (FORMAT.md §1.6, §12.6)', { timeout: 120_000 }, async () => {
  const dest = await fs.mkdtemp(path.join(os.tmpdir(), 'rotree-vectors-v2-regen-'))
  try {
    const r = await makeVectorsV2(dest)
    assert.equal(r.root, V.root.hash)
    const list = async root => {
      const out = []
      for (const sub of ['tree', 'tree/h', 'tree/trust', 'tampered']) {
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

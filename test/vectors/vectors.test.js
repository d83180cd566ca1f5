// The committed test vectors (docs/FORMAT.md §10) against this implementation:
// they verify with verify.js, decode with the format decoders, read back through
// a real server and the client library, every tampered variant fails with its
// code, and test/vectors/make.js regenerates them byte for byte.
//
// OfflineTree (offline-reader.js) is a small second reader written from
// FORMAT.md §4 and §7 on top of the pure functions of verify.js (no client, no
// network): it is the reading algorithm of the spec, in code.
import { test, describe, before, after } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { createHash } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import { openTree } from 'rotree-client'
import { verifyFsinfo } from 'rotree-client/verify'
import { fsinfoMessage, Reader, Writer, toHex, fromHex, compareBytes, utf8, GEAR } from 'rotree-client/format'
import { publicKeyOf } from 'rotree-client/crypto'
import { serve, address } from '../helpers/fixtures.js'
import { makeVectors, applyChanges, SECRET_KEY } from './make.js'
import { OfflineTree, codeOf, pick, STAT_KEYS } from './offline-reader.js'

const HERE = path.dirname(fileURLToPath(import.meta.url))
const TREE = path.join(HERE, 'tree')
const sha = b => createHash('sha256').update(b).digest('hex')
const V = JSON.parse(await fs.readFile(path.join(HERE, 'vectors.json'), 'utf8'))
const NOW = Date.parse(V.readerNow)


async function copyTree (prefix) {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), prefix))
  await fs.cp(TREE, dir, { recursive: true })
  return dir
}

// ---- tests ------------------------------------------------------------------

test('GEAR is the first 4 bytes (big-endian) of SHA-256("rotree-gear" || byte i)', () => {
  assert.equal(GEAR.length, 256)
  for (let i = 0; i < 256; i++) {
    const h = createHash('sha256').update(Buffer.concat([Buffer.from('rotree-gear', 'ascii'), Buffer.of(i)])).digest()
    assert.equal(GEAR[i], h.readUInt32BE(0), `GEAR[${i}]`)
  }
})

test('the test key is the one documented: secret = SHA-256("rotree test vector key")', () => {
  assert.equal(V.secretKey, sha('rotree test vector key'))
  assert.equal(V.secretKey, SECRET_KEY)
  assert.equal(V.publicKey, publicKeyOf(V.secretKey))
})

test('varint and zig-zag vectors (FORMAT.md §3.1, §3.2)', () => {
  for (const [v, hex] of V.encodings.uint) {
    const w = new Writer(); w.uint(v); assert.equal(toHex(w.result()), hex, `uint ${v}`)
    const r = new Reader(fromHex(hex)); assert.equal(r.uint(), v); r.end()
  }
  for (const [v, hex] of V.encodings.sint) {
    const w = new Writer(); w.sint(v); assert.equal(toHex(w.result()), hex, `sint ${v}`)
    const r = new Reader(fromHex(hex)); assert.equal(r.sint(), v); r.end()
  }
  for (const [hex, why] of V.encodings.badUint) {
    assert.throws(() => new Reader(fromHex(hex)).uint(), { code: 'ROTREE_BAD_FORMAT' }, why)
  }
})

describe('committed vectors', () => {
  test('every blob file is named by the SHA-256 of its bytes', async () => {
    const names = await fs.readdir(path.join(TREE, 'h'))
    assert.deepEqual(names.sort(), Object.keys(V.blobs).sort())
    for (const n of names) {
      const b = await fs.readFile(path.join(TREE, 'h', n))
      assert.match(n, /^[0-9a-f]{64}$/)
      assert.equal(sha(b), n)
      assert.equal(b.length, V.blobs[n].size)
    }
    assert.deepEqual((await fs.readdir(TREE)).sort(), ['fsinfo.json', 'h'])
  })

  test('fsinfo.json verifies; the signed message and root are the recorded ones', async () => {
    const bytes = await fs.readFile(path.join(TREE, 'fsinfo.json'))
    const info = verifyFsinfo(bytes, { publicKey: V.publicKey, now: NOW })
    assert.equal(info.root.hash, V.root.hash)
    assert.equal(info.root.size, V.root.size)
    assert.equal(info.rootMtime, V.root.mtime)
    assert.equal(info.seq, V.fsinfo.seq)
    assert.equal(info.sig, V.fsinfo.sig)
    assert.equal(Buffer.from(info.message).toString('utf8'), V.fsinfo.signedMessage)
    assert.equal(Buffer.from(fsinfoMessage({ key: V.publicKey, ...V.fsinfo, root: V.root.hash, rootSize: V.root.size, rootMtime: V.root.mtime })).toString(), V.fsinfo.signedMessage)
    // still valid long after: the vectors do not expire with the calendar
    verifyFsinfo(bytes, { publicKey: V.publicKey, now: Date.UTC(2100, 0, 1) })
  })

  test('decoding every blob from the root gives every recorded path, and reaches every blob', async () => {
    const t = await OfflineTree.open(TREE, V.publicKey, NOW)
    const got = await t.walkAll()
    assert.deepEqual(Object.keys(got).sort(), Object.keys(V.paths).sort())
    for (const [p, want] of Object.entries(V.paths)) assert.deepEqual(got[p], pick(want, STAT_KEYS), p)
    assert.deepEqual([...t.reached].sort(), Object.keys(V.blobs).sort())
  })

  test('lookups and symlink resolution (offline reader)', async () => {
    const t = await OfflineTree.open(TREE, V.publicKey, NOW)
    for (const l of V.lookups) {
      if (l.error) { assert.equal(await codeOf(() => t.resolve(l.path, l.follow)), l.error, l.path); continue }
      const { entry, path: resolved } = await t.resolve(l.path, l.follow)
      assert.equal(resolved, l.expect.resolved, l.path)
      if (l.expect.sha256) assert.equal(sha(await t.read(entry)), l.expect.sha256, l.path)
      if (l.expect.type) assert.equal(entry.type, l.expect.type, l.path)
    }
  })
})

describe('committed vectors through a real server and rotree-client', () => {
  let srv, tree
  before(async () => {
    srv = await serve(TREE)
    tree = await openTree(address(srv.url, V.publicKey), { stateDir: null, now: () => NOW })
  })
  after(async () => { tree?.close(); await srv?.close() })

  test('the client accepts the recorded root', () => {
    assert.equal(tree.info.root, V.root.hash)
    assert.equal(tree.info.seq, V.fsinfo.seq)
  })

  test('every path: metadata, listing and content hash', async () => {
    for (const [p, want] of Object.entries(V.paths)) {
      const s = await tree.lstat(p)
      assert.equal(s.type, want.type, p)
      assert.equal(s.mtimeMs, want.mtime, p)
      if (p !== '/') assert.equal(s.size, want.size, p) // the root's entry count is not in fsinfo.json
      if (want.type === 'file') {
        assert.equal(s.exec, want.exec, p)
        assert.equal(sha(await tree.readFile(p)), want.sha256, p)
      }
      if (want.type === 'symlink') assert.equal(s.target, want.target, p)
      if (want.type === 'dir') {
        const names = await tree.readdir(p)
        const kids = Object.keys(V.paths).filter(q => q !== '/' && path.posix.dirname(q) === p).map(q => path.posix.basename(q))
        assert.deepEqual(names, kids.sort((a, b) => compareBytes(utf8.encode(a), utf8.encode(b))), p)
        assert.equal(names.length, want.size, p)
      }
    }
  })

  test('ranged reads across chunk boundaries and through the chunk index', async () => {
    for (const p of ['/random-600k.bin', '/repeat.bin']) {
      const whole = await tree.readFile(p)
      const size = V.paths[p].size
      for (const [start, end] of [[0, 0], [65535, 300000], [size - 10, size - 1], [262207, 262208 * 3 + 5]]) {
        if (end >= size) continue
        const parts = []
        for await (const b of tree.readRange(p, { start, end })) parts.push(b)
        assert.equal(sha(Buffer.concat(parts)), sha(whole.subarray(start, end + 1)), `${p} ${start}-${end}`)
      }
    }
  })

  test('lookups and symlink resolution (client)', async () => {
    for (const l of V.lookups) {
      if (l.error) {
        assert.equal(await codeOf(() => l.follow ? tree.stat(l.path) : tree.lstat(l.path)), l.error, l.path)
        continue
      }
      const s = l.follow ? await tree.stat(l.path) : await tree.lstat(l.path)
      if (l.expect.type) assert.equal(s.type, l.expect.type, l.path)
      if (l.expect.sha256) assert.equal(sha(await tree.readFile(l.path)), l.expect.sha256, l.path)
    }
  })
})

// What a reader that knows format version 2 reports where the vector speaks
// of a version-1 reader (FORMAT.md §10): "version": 2 on a version-1 body is,
// to a version-2 reader, a malformed version-2 fsinfo.json.
const V2_READER_EXPECT = { 'fsinfo-version-2': 'ROTREE_BAD_FORMAT' }

describe('tampered variants fail with their code', async () => {
  const names = (await fs.readdir(path.join(HERE, 'tampered'))).filter(n => n.endsWith('.json')).sort()
  test('every variant listed in vectors.json is present', () => {
    assert.deepEqual(names.map(n => n.slice(0, -5)), [...V.tampered].sort())
  })
  for (const n of names) {
    const t = JSON.parse(await fs.readFile(path.join(HERE, 'tampered', n), 'utf8'))
    test(`${n.slice(0, -5)}: ${t.expect}`, async () => {
      const dir = await copyTree('rotree-tampered-')
      try {
        await applyChanges(dir, t.changes)
        const now = Date.parse(t.readerNow)
        // the spec's reader, on the verification functions
        const offline = await codeOf(async () => {
          const o = await OfflineTree.open(dir, t.publicKey, now)
          for (const p of t.read) await o.readPath(p)
        })
        assert.equal(offline, t.expect, 'offline reader')
        if (t.read.length && !t.read.includes('/')) {
          // the root is fine: the untouched parts still read
          const o = await OfflineTree.open(dir, t.publicKey, now)
          assert.equal(sha(await o.readPath('/hello.txt')), V.paths['/hello.txt'].sha256)
        }
        // the client library against a real server
        const srv = await serve(dir)
        let tree
        try {
          const served = await codeOf(async () => {
            tree = await openTree(address(srv.url, t.publicKey), { stateDir: null, now: () => now, timeoutMs: 5000 })
            for (const p of t.read) {
              const s = await tree.stat(p)
              if (s.type === 'dir') await tree.readdir(p); else await tree.readFile(p)
            }
          })
          assert.equal(served, V2_READER_EXPECT[n.slice(0, -5)] ?? t.expect, 'client')
        } finally { tree?.close(); await srv.close() }
      } finally {
        await fs.rm(dir, { recursive: true, force: true })
      }
    })
  }
})

test('make.js regenerates the committed vectors byte for byte (determinism, FORMAT.md §1.6)', { timeout: 120_000 }, async () => {
  const dest = await fs.mkdtemp(path.join(os.tmpdir(), 'rotree-vectors-regen-'))
  try {
    const r = await makeVectors(dest)
    assert.equal(r.root, V.root.hash)
    const list = async (root) => {
      const out = []
      for (const sub of ['tree', 'tree/h', 'tampered']) {
        for (const e of await fs.readdir(path.join(root, sub), { withFileTypes: true })) if (e.isFile()) out.push(sub + '/' + e.name)
      }
      return out.concat('vectors.json').sort()
    }
    const want = await list(HERE); const got = await list(dest)
    assert.deepEqual(got, want)
    for (const f of want) {
      const [a, b] = await Promise.all([fs.readFile(path.join(HERE, f)), fs.readFile(path.join(dest, f))])
      assert.ok(a.equals(b), `${f} differs`)
    }
  } finally {
    await fs.rm(dest, { recursive: true, force: true })
  }
})

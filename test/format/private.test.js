// The blob-level parts of a private tree (FORMAT.md §12.8): Padmé, sealed
// blobs and their refs, and the manifest's pages.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createHash, randomBytes } from 'node:crypto'
import {
  padme, pad, unpad, sealBlob, openSealed, sealedSize, MAX_SEALED, MAX_BLOB, Writer, Reader, readRef, writeRef,
  buildManifest, decodeManifestPage, checkManifestPlacement, manifestChildExpectation, encodeManifestLeaf
} from 'rotree-client/format'
import { verifyChunk } from 'rotree-client/verify'
import { gcmSeal, hmacSha256 } from '../../client-js/src/crypto/aead-node.js'

const sha256 = b => new Uint8Array(createHash('sha256').update(b).digest())
const C = { hmac: hmacSha256, sha256, seal: gcmSeal }
const code = c => err => { assert.equal(err.code, c, err.message); return true }

test('Padmé: never smaller, at most 12% more, and one bucket per ⌊log2⌋ scale', () => {
  for (let L = 1; L < 70_000; L += L < 300 ? 1 : 97) {
    const p = padme(L)
    assert.ok(p >= L && p <= L * 1.12 + 1, `${L} → ${p}`)
    assert.equal(padme(p), p, `${p} is its own bucket`)
  }
  assert.equal(padme(262_144), 262_144)
  assert.equal(padme(262_145), 262_144 + 8192)
})

test('pad and unpad: one spelling of the padding', () => {
  for (const n of [0, 1, 15, 100, 4096]) {
    const inner = randomBytes(n)
    const p = pad(inner)
    assert.equal(p.length, padme(n + 1))
    assert.deepEqual(Buffer.from(unpad(p)), inner)
  }
  const p = pad(Uint8Array.of(1, 2, 3)) // padme(4) = 4: 1 2 3 0x80
  const longer = new Uint8Array(p.length + 1); longer.set(p)
  assert.throws(() => unpad(longer), code('ROTREE_BAD_FORMAT'), 'padded to another length')
  assert.throws(() => unpad(new Uint8Array(8)), code('ROTREE_BAD_FORMAT'), 'no marker')
})

test('a sealed blob: stored bytes named by their hash, opened by the key its ref carries, and nothing else', async () => {
  const secret = randomBytes(32)
  const inner = randomBytes(20_000)
  const a = sealBlob(inner, secret, C)
  const b = sealBlob(inner, secret, C)
  assert.deepEqual(a, b, 'convergent within a tree: the same bytes, the same key and ciphertext')
  assert.notDeepEqual(sealBlob(inner, randomBytes(32), C).key, a.key, 'another tree, another key')
  assert.equal(a.stored.length, sealedSize(inner.length))
  const ref = { hash: createHash('sha256').update(a.stored).digest('hex'), size: inner.length, storedSize: a.stored.length, codec: 'none', key: a.key }
  assert.deepEqual(Buffer.from(await verifyChunk(a.stored, ref)), inner)
  // the ref round-trips in a page
  const w = new Writer(); writeRef(w, ref, 2)
  assert.deepEqual(readRef(new Reader(w.result()), 2, MAX_BLOB), ref)
  // the hash first (a mirror's flip), then the key (a publisher's wrong key), then the size
  const flipped = Uint8Array.from(a.stored); flipped[5] ^= 1
  await assert.rejects(verifyChunk(flipped, ref), code('ROTREE_HASH_MISMATCH'))
  await assert.rejects(verifyChunk(a.stored, { ...ref, key: 'ee'.repeat(32) }), code('ROTREE_BAD_FORMAT'))
  await assert.rejects(verifyChunk(a.stored, { ...ref, size: inner.length + 1 }), code('ROTREE_BAD_FORMAT'))
  await assert.rejects(openSealed(a.stored, 'ee'.repeat(32)), code('ROTREE_BAD_FORMAT'))
  assert.ok(MAX_SEALED > MAX_BLOB)
})

test('the manifest: every blob once, in pages its index places, and an edit rewrites few pages', async () => {
  const pages = new Map()
  const put = async b => { const h = createHash('sha256').update(b).digest('hex'); pages.set(h, b); return { hash: h, size: b.length } }
  const blobs = Array.from({ length: 20_000 }, (_, i) => ({ hash: createHash('sha256').update('blob ' + i).digest('hex'), size: 1000 + (i % 5000) }))
  const top = await buildManifest(blobs, put)
  assert.equal(top.blobs, blobs.length)
  const seen = []
  async function walk (ref, expect) {
    const p = decodeManifestPage(pages.get(ref.hash))
    checkManifestPlacement(p, expect)
    if (p.kind === 'leaf') { seen.push(...p.blobs); return }
    for (let i = 0; i < p.children.length; i++) await walk(p.children[i], manifestChildExpectation(p, i, expect))
  }
  await walk(top, { blobs: top.blobs })
  assert.deepEqual(seen, [...blobs].sort((a, b) => a.hash < b.hash ? -1 : 1))
  assert.ok(pages.size > 3, 'more than one leaf')
  // one size changed: a leaf and its path change, not the rest
  const before = new Set(pages.keys())
  await buildManifest(blobs.map((b, i) => i === 123 ? { ...b, size: b.size + 1 } : b), put)
  assert.ok([...pages.keys()].filter(k => !before.has(k)).length <= 3)
  // an index cannot hide a blob: a child page that holds fewer than promised is refused
  let idx = decodeManifestPage(pages.get(top.hash))
  assert.equal(idx.kind, 'index')
  while (idx.level > 1) idx = decodeManifestPage(pages.get(idx.children[0].hash))
  const leaf = decodeManifestPage(pages.get(idx.children[0].hash))
  const short = decodeManifestPage(encodeManifestLeaf(leaf.blobs.slice(0, -1)))
  assert.throws(() => checkManifestPlacement(short, manifestChildExpectation(idx, 0)), code('ROTREE_BAD_FORMAT'))
  assert.throws(() => decodeManifestPage(encodeManifestLeaf([blobs[1], blobs[0]].sort((a, b) => a.hash < b.hash ? 1 : -1))), code('ROTREE_BAD_FORMAT'))
})

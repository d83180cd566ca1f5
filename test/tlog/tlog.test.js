// rotree-client/tlog against Go's sumdb/tlog and sumdb/note test vectors
// (test/vectors/tlog/README.md) and C2SP tlog-tiles' own examples.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import { publicKeyOf } from 'rotree-client/crypto'
import {
  leafHash, nodeHash, emptyHash, equalHash, storedHashIndex, splitStoredHashIndex, storedHashCount, storedHashes,
  arrayHashReader, treeHash, inclusionProof, consistencyProof, verifyInclusion, verifyConsistency,
  newTiles, tileForIndex, hashFromTile, readTileData, tilePath, parseTilePath, encodeBundle, decodeBundle,
  tileHashReader, treeHashFromTiles, parseVerifierKey, encodeVerifierKey, signerOf, signNote, openNote,
  formatCheckpoint, parseCheckpoint, decodeBase64, encodeBase64, toHex
} from 'rotree-client/tlog'

const dir = new URL('../vectors/tlog/', import.meta.url)
const NOTE = JSON.parse(fs.readFileSync(new URL('note.json', dir), 'utf8'))
const TLOG = JSON.parse(fs.readFileSync(new URL('tlog.json', dir), 'utf8'))
const enc = s => new TextEncoder().encode(s)

/** Go's PRIVATE+KEY+name+id+base64(0x01 ‖ seed) as a signer (for the vectors only). */
function goSigner (skey) {
  const [p1, p2, name, , ...rest] = skey.split('+')
  const key64 = rest.join('+')
  assert.equal(`${p1}+${p2}`, 'PRIVATE+KEY')
  const seed = toHex(decodeBase64(key64).subarray(1))
  return signerOf(name, { secretKey: seed, publicKey: publicKeyOf(seed) })
}

test('note: verifier keys parse, and every mangling is refused', () => {
  const v = parseVerifierKey(NOTE.peterVerifierKey)
  assert.equal(v.name, 'PeterNeumann')
  assert.equal(v.id, 0xc74f20a3)
  assert.equal(encodeVerifierKey(v.name, v.publicKey), NOTE.peterVerifierKey)
  const k = NOTE.peterVerifierKey
  for (let i = 0; i <= k.length; i++) {
    for (let j = i + 1; j <= k.length; j++) if (i !== 0 || j !== k.length) assert.throws(() => parseVerifierKey(k.slice(i, j)), /verifier/, k.slice(i, j))
  }
  for (let i = 0; i < k.length; i++) {
    const m = k.slice(0, i) + String.fromCharCode(k.charCodeAt(i) + 1) + k.slice(i + 1)
    assert.throws(() => parseVerifierKey(m), /verifier/, m)
  }
  for (const bad of NOTE.badVerifierKeys) assert.throws(() => parseVerifierKey(bad), /verifier/)
})

test('note: signing gives Go\'s bytes, and the signer\'s ID is the verifier\'s', () => {
  const s = goSigner(NOTE.peterSignerKey)
  assert.equal(s.id, parseVerifierKey(NOTE.peterVerifierKey).id)
  assert.equal(signNote(NOTE.text, [s]), NOTE.signed)
  assert.throws(() => signNote('abc', [s]), /malformed note/)
  assert.throws(() => signNote(NOTE.text, [{ ...s, name: 'bad name' }]), /invalid signer/)
})

test('note: open verifies known keys and keeps the others unverified, as Go does', () => {
  const peter = parseVerifierKey(NOTE.peterVerifierKey)
  const enoch = parseVerifierKey(NOTE.enochVerifierKey)
  const both = NOTE.text + '\n' + NOTE.peterSig + NOTE.enochSig
  let n = openNote(both, [peter])
  assert.equal(n.text, NOTE.text)
  assert.deepEqual(n.sigs, [NOTE.peter])
  assert.deepEqual(n.unverified, [NOTE.enoch])
  n = openNote(both, [peter, enoch])
  assert.deepEqual(n.sigs, [NOTE.peter, NOTE.enoch])
  assert.deepEqual(n.unverified, [])
  assert.throws(() => openNote(both, []), e => /note has no verifiable signatures/.test(e.message) && e.note.unverified.length === 2)
  assert.throws(() => openNote(NOTE.text + '\n' + NOTE.enochSig, [enoch, peter, enoch]), /ambiguous key EnochRoot\+af0cfe78/)
  openNote(NOTE.text + '\n' + NOTE.peterSig, [enoch, peter, enoch])
  assert.throws(() => openNote(NOTE.invalidSignature, [peter]), /invalid signature for key PeterNeumann\+c74f20a3/)
  // repeated lines: one verified, the unverified ones once each
  const sig = NOTE.enochSig
  n = openNote(NOTE.text + '\n' + NOTE.peterSig + NOTE.peterSig + sig + sig + sig.slice(0, 60) + 'ABCD' + sig.slice(60), [peter])
  assert.deepEqual(n.sigs, [NOTE.peter])
  assert.deepEqual(n.unverified.map(s => s.base64), [NOTE.enoch.base64, NOTE.enoch.base64.slice(0, 60 - 12) + 'ABCD' + NOTE.enoch.base64.slice(60 - 12)])
  for (const bad of NOTE.malformed) assert.throws(() => openNote(bad, [peter]), /^TlogError: malformed note$/, JSON.stringify(bad))
  for (const hex of NOTE.malformedHex) assert.throws(() => openNote(Buffer.from(hex, 'hex'), [peter]), /malformed note/)
  // a verifier key made here signs and opens its own notes
  const mine = signerOf('example.com/log', { secretKey: '11'.repeat(32), publicKey: publicKeyOf('11'.repeat(32)) })
  const v = parseVerifierKey(encodeVerifierKey('example.com/log', publicKeyOf('11'.repeat(32))))
  // a key whose base64 holds a + (Go cuts the text at the first two only)
  for (let i = 0; i < 64; i++) {
    const sk = i.toString(16).padStart(2, '0').repeat(32)
    const vk = encodeVerifierKey('k', publicKeyOf(sk))
    assert.equal(parseVerifierKey(vk).publicKey, publicKeyOf(sk))
  }
  assert.equal(openNote(signNote('hi\n', [mine]), [v]).sigs.length, 1)
})

test('checkpoint: Go\'s tree text formats and parses; bad ones are refused', () => {
  const t = TLOG.tree
  const hash = leafHash(enc(t.leaf))
  assert.equal(formatCheckpoint({ origin: t.origin, size: t.size, hash }), t.text)
  const c = parseCheckpoint(t.text)
  assert.equal(c.origin, t.origin); assert.equal(c.size, t.size); assert.ok(equalHash(c.hash, hash)); assert.deepEqual(c.extensions, [])
  for (const bad of TLOG.badTrees.slice(1)) assert.throws(() => parseCheckpoint(bad), /malformed checkpoint/)
  assert.notEqual(parseCheckpoint(TLOG.badTrees[0]).origin, t.origin) // another origin: the caller compares it
  // C2SP: extension lines after the hash, each non-empty; the text ends in a newline
  assert.deepEqual(parseCheckpoint(t.text + 'JOE\n').extensions, ['JOE'])
  for (const bad of [t.text + 'JOE', t.text + '\n', t.text.replace('123456789012', '0123456789012'), t.text.slice(0, -1)]) assert.throws(() => parseCheckpoint(bad), /malformed checkpoint/)
})

test('tile paths: Go\'s vectors in C2SP spelling, and tlog-tiles\' own examples', () => {
  for (const { path, tile } of TLOG.tilePaths) {
    const f = path.split('/')
    const c2sp = ['tile', f[2] === 'data' ? 'entries' : f[2], ...f.slice(3)].join('/')
    const h = Number(f[1])
    if (tile === null) { assert.throws(() => parseTilePath(c2sp, h), /malformed tile path/); continue }
    assert.equal(tilePath(tile), c2sp)
    assert.deepEqual(parseTilePath(c2sp, h), tile)
  }
  assert.equal(tilePath({ H: 8, L: 0, N: 1234067, W: 256 }), 'tile/0/x001/x234/067')
  for (const bad of ['tile/0/1', 'tile/00/001', 'tile/0/001.p/0', 'tile/0/001.p/256', 'tile/0/001.p/05', 'tile/0/x000/001', 'tile/64/001', 'tile/0/001/']) assert.throws(() => parseTilePath(bad), /malformed/, bad)
  const widths = size => newTiles(8, 0, size).map(t => `${t.L}:${t.W}`)
  const w70000 = widths(70000)
  assert.equal(w70000.filter(w => w === '0:256').length, 273)
  assert.deepEqual(w70000.filter(w => w !== '0:256'), ['0:112', '1:256', '1:17', '2:1'])
  assert.deepEqual(widths(256), ['0:256', '1:1'])
  for (const { height, old, size, count } of TLOG.newTiles) assert.equal(newTiles(height, old, size).length, count, `${old}→${size}`)
})

test('stored hash indexes split back; the empty tree hashes to SHA-256 of nothing', () => {
  for (let l = 0; l < 10; l++) for (let n = 0; n < 100; n++) assert.deepEqual(splitStoredHashIndex(storedHashIndex(l, n)), { level: l, n })
  assert.equal(toHex(treeHash(0, () => [])), 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855')
  assert.ok(equalHash(emptyHash(), treeHash(0, () => [])))
})

test('entry bundles: 2-byte big-endian lengths', () => {
  const es = [enc('a'), new Uint8Array(0), new Uint8Array(300).fill(7)]
  const b = encodeBundle(es)
  assert.deepEqual([...b.subarray(0, 3)], [0, 1, 97])
  assert.deepEqual(decodeBundle(b, 3).map(e => [...e]), es.map(e => [...e]))
  assert.throws(() => decodeBundle(b, 2), /holds 3/)
  assert.throws(() => decodeBundle(b.subarray(0, b.length - 1)), /ends inside/)
  assert.throws(() => encodeBundle([new Uint8Array(65536)]), /over/)
})

// RFC 6962 §2.1 MTH, straight from the definition: the reference the log is checked against
function mth (leaves) {
  if (leaves.length === 0) return emptyHash()
  if (leaves.length === 1) return leafHash(leaves[0])
  let k = 1; while (k * 2 < leaves.length) k *= 2
  return nodeHash(mth(leaves.slice(0, k)), mth(leaves.slice(k)))
}

test('Go\'s TestTree: 100 leaves, tile height 2, every tree hash, tile and proof', () => {
  const { height: H, leaves: count } = TLOG.treeTest
  const stored = []; const leaves = []; const roots = []; const tiles = new Map()
  const read = arrayHashReader(stored)
  const corrupt = (p, check) => {
    for (const h of p) { h[0] ^= 1; assert.throws(check); h[0] ^= 1 }
  }
  for (let i = 0; i < count; i++) {
    const data = enc(TLOG.treeTest.leafFormat.replace('%d', i))
    leaves.push(data)
    const old = stored.length
    stored.push(...storedHashes(i, data, read))
    assert.equal(storedHashCount(i + 1), stored.length)
    const th = treeHash(i + 1, read)
    assert.ok(equalHash(th, mth(leaves)), `tree hash of ${i + 1}`)
    roots.push(th)
    for (const t of newTiles(H, i, i + 1)) {
      const d = readTileData(t, read)
      const prev = tiles.get(tilePath({ ...t, W: t.W - 1 }))
      if (prev) assert.deepEqual(d.subarray(0, prev.length), prev, `${tilePath(t)} extends the tile before it`)
      tiles.set(tilePath(t), d)
    }
    for (const t of newTiles(H, 0, i + 1)) assert.deepEqual(tiles.get(tilePath(t)), readTileData(t, read))
    for (let j = old; j < stored.length; j++) {
      const { tile } = tileForIndex(H, j)
      assert.ok(equalHash(hashFromTile(tile, tiles.get(tilePath(tile)), j), stored[j]))
    }
    assert.ok(equalHash(treeHashFromTiles(i + 1, tiles, H), th))
    const thr = tileHashReader(i + 1, tiles, H)
    assert.throws(() => thr([(i + 1) * 2 + 10]), /not in a tree/)
    for (let j = 0; j <= i; j++) {
      const lh = leafHash(leaves[j])
      for (const r of [read, thr]) {
        const p = inclusionProof(i + 1, j, r)
        verifyInclusion(p, i + 1, j, lh, th)
        corrupt(p, () => verifyInclusion(p, i + 1, j, lh, th))
      }
      if (j < i) assert.throws(() => verifyInclusion(inclusionProof(i + 1, j, read), i + 1, j, lh, roots[i - 1]), /does not verify/)
      assert.ok(equalHash(treeHash(j + 1, thr), roots[j]))
      const c = consistencyProof(i + 1, j + 1, thr)
      verifyConsistency(c, i + 1, j + 1, th, roots[j])
      corrupt(c, () => verifyConsistency(c, i + 1, j + 1, th, roots[j]))
      if (j < i) assert.throws(() => verifyConsistency(c, i + 1, j + 1, th, roots[j + 1]), /does not verify/)
    }
  }
})

test('base64 is the canonical padded kind only', () => {
  assert.equal(encodeBase64(enc('hi')), 'aGk=')
  assert.deepEqual([...decodeBase64('aGk=')], [104, 105])
  for (const bad of ['aGk', 'aGl=', 'aG k=', 'aGk==', '=aGk']) assert.equal(decodeBase64(bad), null, bad)
})

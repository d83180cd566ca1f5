// The keyring of a private tree (FORMAT.md §12.8): an age file of the epoch
// key, one X25519 stanza per reader under one ephemeral share, padded to
// padme(readers) stanzas. Opened by this reader's fast path, by
// age-encryption's own Decrypter and by the `age` tool alike.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { execFileSync } from 'node:child_process'
import { Decrypter, generateX25519Identity, generateHybridIdentity, identityToRecipient } from 'age-encryption'
import { sealKeyring, openKeyring, recipientOf, decodeEpoch, wrapRoot, unwrapRoot, encodeRootRef, rootCommit } from 'rotree-client/access'
import { padme } from 'rotree-client/format'
import { tmpdir } from '../helpers/fixtures.js'
import { needs } from '../helpers/tools.js'

const ids = await Promise.all(Array.from({ length: 5 }, () => generateX25519Identity()))
const KEY = Uint8Array.from({ length: 32 }, (_, i) => i)

test('every reader opens the epoch key; another identity gets ROTREE_NO_ACCESS', async () => {
  const ring = await sealKeyring({ epoch: 7, key: KEY, readers: ids.map(recipientOf) })
  for (const id of ids) {
    const { epoch, key } = await openKeyring(ring, id)
    assert.equal(epoch, 7)
    assert.deepEqual(key, KEY)
  }
  await assert.rejects(openKeyring(ring, await generateX25519Identity()), { code: 'ROTREE_NO_ACCESS' })
})

test('age-encryption\'s Decrypter opens the same keyring: the fast path reads age as age does', async () => {
  const ring = await sealKeyring({ epoch: 2, key: KEY, readers: ids.map(recipientOf) })
  for (const id of ids) {
    const d = new Decrypter()
    d.addIdentity(id)
    assert.deepEqual(decodeEpoch(await d.decrypt(ring)), { epoch: 2, key: KEY })
  }
})

test('the age tool opens the keyring with a reader\'s identity file', { skip: needs('age') }, async t => {
  const dir = await tmpdir('rotree-keyring-')
  t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const ring = await sealKeyring({ epoch: 9, key: KEY, readers: ids.map(recipientOf) })
  await fs.writeFile(path.join(dir, 'keyring'), ring)
  await fs.writeFile(path.join(dir, 'reader.key'), ids[3] + '\n', { mode: 0o600 })
  const out = execFileSync('age', ['-d', '-i', path.join(dir, 'reader.key'), path.join(dir, 'keyring')])
  assert.deepEqual(decodeEpoch(new Uint8Array(out)), { epoch: 9, key: KEY })
})

test('stanzas: one shared ephemeral share, padme(readers) of them, no recipient in the clear', async () => {
  for (const n of [1, 5, 17, 100]) {
    const all = await Promise.all(Array.from({ length: n }, () => generateX25519Identity()))
    const ring = await sealKeyring({ epoch: 1, key: KEY, readers: all.map(recipientOf) })
    const header = Buffer.from(ring).toString('latin1').split('\n---')[0]
    const stanzas = header.split('\n').filter(l => l.startsWith('-> '))
    assert.equal(stanzas.length, padme(n), `${n} readers`)
    assert.equal(new Set(stanzas).size, 1, 'every stanza line is the same: "-> X25519 <one share>"')
    for (const r of all.map(recipientOf)) assert.ok(!header.includes(r.slice(4, 20)), 'no recipient text in the header')
    // and each reader finds its own
    assert.deepEqual((await openKeyring(ring, all[n - 1])).key, KEY)
  }
})

test('a hybrid post-quantum reader (age1pq1…) beside X25519 readers', async () => {
  const pq = await generateHybridIdentity()
  const ring = await sealKeyring({ epoch: 4, key: KEY, readers: [...ids.map(recipientOf), await identityToRecipient(pq)] })
  assert.deepEqual((await openKeyring(ring, pq)).key, KEY)
  assert.deepEqual((await openKeyring(ring, ids[0])).key, KEY)
})

test('a damaged keyring is ROTREE_BAD_FORMAT, not access refused', async () => {
  const ring = await sealKeyring({ epoch: 1, key: KEY, readers: ids.map(recipientOf) })
  const mac = Buffer.from(ring).indexOf('\n--- ') + 6
  const bad = Uint8Array.from(ring); bad[mac] = bad[mac] === 0x41 ? 0x42 : 0x41 // the header MAC
  await assert.rejects(openKeyring(bad, ids[0]), { code: 'ROTREE_BAD_FORMAT' })
  const tail = Uint8Array.from(ring); tail[tail.length - 1] ^= 1 // the payload's tag
  await assert.rejects(openKeyring(tail, ids[0]), { code: 'ROTREE_BAD_FORMAT' })
})

test('the root wrapped under the epoch key opens only to the root the release commits to', async () => {
  const ref = { hash: 'ab'.repeat(32), size: 700, storedSize: 784, codec: 'deflate-raw', key: 'cd'.repeat(32) }
  const bytes = encodeRootRef(ref, -12345)
  const commit = rootCommit(bytes)
  const wrapped = wrapRoot(KEY, bytes)
  assert.deepEqual(await unwrapRoot(KEY, wrapped, commit), { ref, mtime: -12345 })
  assert.notEqual(wrapRoot(KEY, bytes), wrapped, 'a random nonce each time')
  await assert.rejects(unwrapRoot(KEY, wrapped, 'ee'.repeat(32)), { code: 'ROTREE_BAD_FORMAT' })
  await assert.rejects(unwrapRoot(new Uint8Array(32), wrapped, commit), { code: 'ROTREE_BAD_FORMAT' })
})

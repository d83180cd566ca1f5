// Sealed key files (builder/keys.js): the scrypt parameters are the ones
// keygen writes, never what the file asks for, so an edited key file cannot
// make opening it cost gigabytes of memory and minutes of work.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { tmpdir } from '../helpers/fixtures.js'
import { writeKeyFile, readKeyFile, readPublicKey } from '../../builder/keys.js'

const PASS = 'correct horse'

// Refused at once or not: the refusal, or 'still running' if none came within `ms`.
function within (promise, ms) {
  let timer
  const late = new Promise(resolve => { timer = setTimeout(() => resolve('still running'), ms) })
  return Promise.race([promise.then(() => 'opened', err => err), late]).finally(() => clearTimeout(timer))
}

test('a sealed key opens; one edited to other scrypt parameters is refused as ROTREE_BAD_KEY before scrypt runs', { timeout: 60_000 }, async t => {
  const dir = await tmpdir('rotree-keys-')
  t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const file = path.join(dir, 'sealed.key')
  const { publicKey } = await writeKeyFile(file, { passphrase: PASS })
  const j = JSON.parse(await fs.readFile(file, 'utf8'))
  assert.deepEqual([j.sealed.kdf, j.sealed.N, j.sealed.r, j.sealed.p], ['scrypt', 2 ** 16, 8, 1], 'what keygen writes')
  const k = await readKeyFile(file, { passphrase: PASS })
  assert.equal(k.publicKey, publicKey)
  await assert.rejects(readKeyFile(file, { passphrase: 'wrong' }), { code: 'ROTREE_BAD_KEY', message: /wrong passphrase/ })

  const edits = [
    { N: 2 ** 20, r: 32, p: 16 }, // the most the previous check let through: 4 GiB, sixteen times over
    { N: 2 ** 17 }, { r: 16 }, { p: 2 }, { N: 2 ** 14 }, // any other cost, dearer or cheaper
    { N: '65536' }, { r: undefined }
  ]
  for (const edit of edits) {
    const bad = path.join(dir, 'edited.key')
    await fs.writeFile(bad, JSON.stringify({ ...j, sealed: { ...j.sealed, ...edit } }), { mode: 0o600 })
    let asked = 0
    const askPassphrase = async () => { asked++; return PASS }
    const what = JSON.stringify(edit)
    for (const o of [{ passphrase: PASS }, { askPassphrase }]) {
      const r = await within(readKeyFile(bad, o), 1000)
      assert.ok(r instanceof Error, `${what}: refused at once, not ${r}`)
      assert.equal(r.code, 'ROTREE_BAD_KEY', what)
      assert.match(r.message, /asks for scrypt .*; this version opens only N = 65536, r = 8, p = 1/, what)
    }
    assert.equal(asked, 0, `${what}: no passphrase asked for a key file that cannot be opened`)
  }
})

test('a public key argument that is a small-order or non-canonical point is refused (FORMAT.md §1.4)', async t => {
  const dir = await tmpdir('rotree-keys-')
  t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const weak = [
    '01' + '00'.repeat(31), // the identity
    '01' + '00'.repeat(30) + '80', // the identity, its other spelling
    'ec' + 'ff'.repeat(30) + '7f', // order 2
    'ee' + 'ff'.repeat(30) + '7f' // y = p + 1: a second spelling of the identity
  ]
  for (const k of weak) {
    await assert.rejects(readPublicKey(k, '--release'), { code: 'ROTREE_BAD_KEY', message: /small order|not canonical/ }, k)
    const file = path.join(dir, 'weak.pub')
    await fs.writeFile(file, k + '\n')
    await assert.rejects(readPublicKey(file), { code: 'ROTREE_BAD_KEY' }, k)
  }
  const { publicKey } = await writeKeyFile(path.join(dir, 'real.key'), {})
  assert.equal(await readPublicKey(publicKey), publicKey)
  assert.equal(await readPublicKey(path.join(dir, 'real.key')), publicKey)
})

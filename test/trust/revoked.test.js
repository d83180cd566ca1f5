// Revoked grants (docs/FORMAT.md §12.12): `rotree grant revoke OUT GRANT`
// writes trust/revoked.json signed by the access role; a gated edge's
// exchange then gives no token to that grant or to any delegation below it,
// still gives them to other grants, refuses to go on with a list that does
// not verify or is older than one it read (a rollback), and the verifier
// refuses a list for another tree or without the role's signatures.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { generateKeyPair } from 'rotree-client/crypto'
import { decodeGrant, tokenRequest, unsignedGrant, signGrant, encodeGrant, decodeRevoked, verifyRevoked, verifyGrant, grantHash } from 'rotree-client/grant'
import { tmpdir, writeTree } from '../helpers/fixtures.js'
import { readKeyFile } from '../../builder/keys.js'
import { createRotreeServer } from '../../server/index.js'
import { rotree } from '../cli/helpers.js'

async function ok (...args) {
  const r = await rotree(args)
  assert.equal(r.code, 0, `rotree ${args.join(' ')}\n${r.err}`)
  return r.out
}

test('grant revoke: the exchange refuses the revoked grant and its delegates, admits others, and fails closed on a bad or older list', async t => {
  const d = await tmpdir('rotree-revoked-')
  t.after(() => fs.rm(d, { recursive: true, force: true }))
  const p = n => path.join(d, n)
  await writeTree(p('src'), { 'a.txt': 'hello\n' })
  const pub = {}
  for (const n of ['tree', 'alice', 'bob', 'ci', 'other']) pub[n] = (await ok('keygen', p(`${n}.key`))).trim()
  await ok('build', p('src'), p('out'), '--key', p('tree.key'))
  for (const n of ['alice', 'bob']) await ok('grant', 'issue', p('out'), '--to', pub[n], '--ttl', '2d', '--key', p('tree.key'), '-o', p(`${n}.grant`))
  await ok('grant', 'delegate', p('alice.grant'), '--grant-key', p('alice.key'), '--to', pub.ci, '--ttl', '1d', '-o', p('ci.grant'))
  let r = await rotree(['grant', 'revoke', p('out'), p('alice.grant'), '--key', p('other.key')])
  assert.equal(r.code, 1); assert.match(r.err, /not in the access role/)
  r = await rotree(['grant', 'revoke', p('out')])
  assert.equal(r.code, 2)
  const out = await ok('grant', 'revoke', p('out'), p('alice.grant'), '--key', p('tree.key'))
  assert.match(out, /revoked [0-9a-f]{64} \(holder [0-9a-f]{64}\).*1 grant listed/)
  const first = await fs.readFile(p('out/trust/revoked.json'))
  const list = decodeRevoked(first)
  assert.deepEqual(list.grants.map(e => e.hash), [grantHash(decodeGrant(await fs.readFile(p('alice.grant'))))])

  let offset = 0
  const srv = await createRotreeServer({ dir: p('out'), gate: { secret: 'd'.repeat(64), now: () => Date.now() + offset, accessLog: null } })
  const { url } = await srv.listen({ port: 0, host: '127.0.0.1' })
  t.after(() => srv.close({ timeoutMs: 1000 }))
  const keys = {}
  for (const n of ['alice', 'bob', 'ci']) keys[n] = (await readKeyFile(p(`${n}.key`))).secretKey
  const ask = async n => {
    const res = await fetch(`${url}.rotree/token`, { method: 'POST', body: tokenRequest(decodeGrant(await fs.readFile(p(`${n}.grant`))), keys[n], { now: Date.now() + offset }) })
    return { status: res.status, json: await res.json() }
  }
  let x = await ask('alice')
  assert.equal(x.status, 403); assert.equal(x.json.code, 'ROTREE_NO_ACCESS'); assert.match(x.json.message, /the grant \([0-9a-f]{64}\) is revoked/)
  x = await ask('ci')
  assert.equal(x.status, 403); assert.match(x.json.message, /revoked/, 'a delegation below a revoked grant')
  assert.equal((await ask('bob')).status, 200)

  // a second revocation keeps the first; an older list put back (a rollback) stops the exchange, as a forged one does
  await ok('grant', 'revoke', p('out'), p('bob.grant'), '--key', p('tree.key'))
  assert.equal(decodeRevoked(await fs.readFile(p('out/trust/revoked.json'))).grants.length, 2)
  offset = 61e3
  assert.equal((await ask('bob')).status, 403)
  await fs.writeFile(p('out/trust/revoked.json'), first)
  offset = 122e3
  assert.equal((await ask('bob')).status, 500, 'an older list is not taken')
  const forged = JSON.parse(first)
  forged.grants = []
  await fs.writeFile(p('out/trust/revoked.json'), JSON.stringify(forged))
  assert.equal((await ask('alice')).status, 500, 'a list whose signature fails is not taken')
})

test('verifyRevoked: another tree\'s list, too few signatures; verifyGrant refuses a revoked parent', () => {
  const tree = generateKeyPair(); const holder = generateKeyPair(); const delegate = generateKeyPair()
  const now = Date.now()
  const iso = ms => new Date(ms).toISOString()
  const g = decodeGrant(encodeGrant(signGrant(unsignedGrant({ anchor: tree.publicKey, holder: holder.publicKey, issued: iso(now - 1000), expires: iso(now + 86400e3) }), [tree.secretKey])))
  const child = decodeGrant(encodeGrant(signGrant(unsignedGrant({ anchor: tree.publicKey, holder: delegate.publicKey, issued: iso(now - 1000), expires: iso(now + 3600e3), parent: g }), [holder.secretKey])))
  const access = { threshold: 1, keys: [tree.publicKey] }
  const o = { anchor: tree.publicKey, name: '', access, now }
  assert.equal(verifyGrant(child, o).holder, delegate.publicKey)
  assert.throws(() => verifyGrant(child, { ...o, revoked: new Set([grantHash(g)]) }), e => e.code === 'ROTREE_NO_ACCESS' && /the grant .* is revoked/.test(e.message))
  assert.throws(() => verifyGrant(child, { ...o, revoked: new Set([grantHash(child)]) }), e => e.code === 'ROTREE_NO_ACCESS' && /delegation 1 .* is revoked/.test(e.message))
  const list = decodeRevoked(JSON.stringify({ type: 'rotree-revoked', version: 2, anchor: tree.publicKey, name: '', issued: iso(now), grants: [{ hash: grantHash(g), expires: g.expires }], signatures: [] }))
  const signed = signGrant(list, [tree.secretKey])
  assert.deepEqual([...verifyRevoked(signed, o).hashes], [grantHash(g)])
  assert.throws(() => verifyRevoked(list, o), e => e.code === 'ROTREE_THRESHOLD')
  assert.throws(() => verifyRevoked(signGrant(list, [holder.secretKey]), o), e => e.code === 'ROTREE_THRESHOLD')
  assert.throws(() => verifyRevoked(signed, { ...o, name: 'other' }), e => e.code === 'ROTREE_WRONG_NAME')
  assert.throws(() => decodeRevoked(JSON.stringify({ type: 'rotree-revoked', version: 2, anchor: tree.publicKey, name: '', issued: iso(now), grants: [{ hash: 'b'.repeat(64), expires: g.expires }, { hash: 'a'.repeat(64), expires: g.expires }], signatures: [] })), /sorted/)
})

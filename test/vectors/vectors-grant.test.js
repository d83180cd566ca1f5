// The committed grant vectors (docs/FORMAT.md §10, grants) against this
// implementation: the messages are the documented text, the signatures
// verify with the trust module's verifier, and make-grant.js regenerates the
// file byte for byte.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import { decodeTrustDoc } from 'rotree-client/format'
import { decodeGrant, verifyGrant, verifyTokenRequest, accessRoleOf, grantHash } from 'rotree-client/grant'
import { parseFragment, trustAnchorOf } from 'rotree-client/trust'
import { verifySignature } from 'rotree-client/crypto'
import { makeGrantVectors, VECTORS_FILE } from './make-grant.js'

const V = JSON.parse(await fs.readFile(VECTORS_FILE, 'utf8'))
const NOW = Date.parse(V.verifyAt)
const str = b => Buffer.from(b).toString('utf8')

test('make-grant.js regenerates the committed vectors byte for byte', () => {
  assert.equal(JSON.stringify(makeGrantVectors(), null, 2) + '\n', JSON.stringify(V, null, 2) + '\n')
})

test('the trust document with an access role: its message has the access line, its hash is the anchor', () => {
  const doc = decodeTrustDoc(V.trust.text)
  assert.equal(str(doc.message), V.trust.message)
  assert.match(V.trust.message, /\naccess 1 [0-9a-f]{64}\n$/)
  assert.equal(trustAnchorOf(doc), V.trust.anchor)
  assert.deepEqual(doc.roles.access, { threshold: 1, keys: [V.keys.access.publicKey] })
})

test('the grant and the delegated grant: exact messages, signatures, and the verifier\'s verdict', () => {
  const doc = decodeTrustDoc(V.trust.text)
  const access = accessRoleOf(doc, parseFragment(V.trust.anchor).anchor)
  const g = decodeGrant(V.grant.text)
  assert.equal(str(g.message), V.grant.message)
  assert.equal(grantHash(g), V.grant.hash)
  assert.ok(verifySignature(V.grant.sig, g.message, V.keys.access.publicKey))
  const d = decodeGrant(V.delegated.text)
  assert.equal(str(d.message), V.delegated.message)
  assert.equal(grantHash(d), V.delegated.hash)
  assert.match(V.delegated.message, new RegExp(`\nparent ${V.grant.hash}\n$`))
  assert.ok(verifySignature(V.delegated.sig, d.message, V.keys.holder.publicKey))
  const tree = { anchor: V.tree.anchor, name: V.tree.name, access, now: NOW }
  assert.deepEqual(verifyGrant(g, tree), { holder: V.keys.holder.publicKey, expiresMs: Date.parse('2027-01-31T00:00:00.000Z'), expires: '2027-01-31T00:00:00.000Z', scope: '/', depth: 0 })
  assert.deepEqual(verifyGrant(V.delegated.text, tree), { holder: V.keys.delegate.publicKey, expiresMs: Date.parse('2027-01-03T00:00:00.000Z'), expires: '2027-01-03T00:00:00.000Z', scope: '/', depth: 1 })
})

test('the token request: the documented message, signed by the delegate', () => {
  const doc = decodeTrustDoc(V.trust.text)
  const body = JSON.parse(V.tokenRequest.body)
  assert.ok(verifySignature(body.sig, Buffer.from(V.tokenRequest.message), V.keys.delegate.publicKey))
  const v = verifyTokenRequest(V.tokenRequest.body, { anchor: V.tree.anchor, name: 'docs', access: doc.roles.access, now: NOW, seen: new Map() })
  assert.equal(v.holder, V.keys.delegate.publicKey)
})

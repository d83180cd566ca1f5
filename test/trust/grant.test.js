// The grant verifier (client-js/src/trust/grant.js, docs/FORMAT.md §12.10–12.11):
// what it admits, and every widening, forgery and replay it refuses, each as
// ROTREE_NO_ACCESS with a message naming why.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { generateKeyPair } from 'rotree-client/crypto'
import { decodeTrustDoc, encodeTrustDoc } from 'rotree-client/format'
import { unsignedGrant, signGrant, encodeGrant, decodeGrant, verifyGrant, verifyTokenRequest, accessRoleOf, tokenRequest, MAX_GRANT_CHAIN } from 'rotree-client/grant'

const T0 = Date.parse('2027-03-01T00:00:00.000Z')
const iso = ms => new Date(ms).toISOString()
const DAY = 86400e3
const tree = generateKeyPair()
const holder = generateKeyPair()
const other = generateKeyPair()
const anchor = tree.publicKey
const access = accessRoleOf(null, { kind: 'key', key: anchor })
const ctx = (o = {}) => ({ anchor, name: '', access, now: T0 + DAY, ...o })

function issue ({ by = [tree.secretKey], to = holder.publicKey, from = T0, days = 30, scope = '/', name = '', a = anchor, parent = null } = {}) {
  return decodeGrant(encodeGrant(signGrant(unsignedGrant({ anchor: a, name, holder: to, scope, issued: iso(from), expires: iso(from + days * DAY), parent }), by)))
}
const refused = (fn, re) => assert.throws(fn, err => err.code === 'ROTREE_NO_ACCESS' && re.test(err.message), re.source)

test('a grant from the single key admits its holder until it expires', () => {
  const v = verifyGrant(issue(), ctx())
  assert.equal(v.holder, holder.publicKey)
  assert.equal(v.expires, iso(T0 + 30 * DAY))
  refused(() => verifyGrant(issue(), ctx({ now: T0 + 31 * DAY })), /expired/)
  refused(() => verifyGrant(issue({ from: T0 + 5 * DAY }), ctx()), /in the future/)
})

test('a forged grant (signed by another key, or altered after signing) is refused', () => {
  refused(() => verifyGrant(issue({ by: [other.secretKey] }), ctx()), /not signed by the tree's access role/)
  const j = JSON.parse(encodeGrant(issue({ days: 1 })))
  j.expires = iso(T0 + 365 * DAY)
  refused(() => verifyGrant(JSON.stringify(j), ctx()), /not signed by the tree's access role/)
  refused(() => verifyGrant('{"type":"rotree-grant"}', ctx()), /malformed/)
})

test('a grant for another tree (family or name) is refused', () => {
  refused(() => verifyGrant(issue({ name: 'stable' }), ctx()), /is for tree .*:stable, not /)
  refused(() => verifyGrant(issue({ a: other.publicKey, by: [other.secretKey] }), ctx()), /is for tree/)
})

test('the access role of a trust document counts, with its threshold; a document without one grants no one', () => {
  const a1 = generateKeyPair(); const a2 = generateKeyPair()
  const r = k => ({ threshold: 1, keys: [k] })
  const doc = decodeTrustDoc(encodeTrustDoc({ seq: 1, expires: iso(T0 + 365 * DAY), roles: { root: r(tree.publicKey), release: r(tree.publicKey), timestamp: r(tree.publicKey), access: { threshold: 2, keys: [a1.publicKey, a2.publicKey].sort() } } }))
  const role = accessRoleOf(doc, { kind: 'trust', hash: 'x' })
  assert.equal(role.threshold, 2)
  refused(() => verifyGrant(issue({ by: [a1.secretKey] }), ctx({ access: role })), /1 valid signature of its keys, 2 required/)
  assert.equal(verifyGrant(issue({ by: [a1.secretKey, a2.secretKey] }), ctx({ access: role })).holder, holder.publicKey)
  // the tree's own key no longer grants once a document rules
  refused(() => verifyGrant(issue(), ctx({ access: role })), /not signed by the tree's access role/)
  const plain = decodeTrustDoc(encodeTrustDoc({ seq: 1, expires: iso(T0 + 365 * DAY), roles: { root: r(tree.publicKey), release: r(tree.publicKey), timestamp: r(tree.publicKey) } }))
  assert.equal(accessRoleOf(plain, { kind: 'key', key: anchor }), null)
  refused(() => verifyGrant(issue(), ctx({ access: null })), /has no access role/)
  // a document without the role signs exactly what it signed before the role existed
  assert.doesNotMatch(Buffer.from(plain.message).toString(), /access/)
})

test('delegation narrows: a child may not outlive, leave the tree or widen the scope of its parent', () => {
  const parent = issue({ days: 10 })
  const d = generateKeyPair()
  const child = o => issue({ by: [holder.secretKey], to: d.publicKey, days: 2, parent, ...o })
  const v = verifyGrant(child(), ctx())
  assert.equal(v.holder, d.publicKey); assert.equal(v.depth, 1); assert.equal(v.expires, iso(T0 + 2 * DAY))
  // the effective expiry is the earliest in the chain
  assert.equal(verifyGrant(child({ days: 10 }), ctx()).expires, iso(T0 + 10 * DAY))
  refused(() => verifyGrant(child({ days: 11 }), ctx()), /after its parent/)
  refused(() => verifyGrant(child({ by: [other.secretKey] }), ctx()), /not signed by its parent's holder/)
  refused(() => verifyGrant(child({ name: 'other' }), ctx()), /is for tree/)
  const narrow = issue({ scope: '/docs/' })
  refused(() => verifyGrant(issue({ by: [holder.secretKey], to: d.publicKey, days: 1, parent: narrow, scope: '/' }), ctx()), /beyond its parent's \/docs\//)
  // subtree scopes are reserved: admitted by no edge yet
  refused(() => verifyGrant(narrow, ctx()), /subtree scopes are reserved/)
})

test(`chains are at most ${MAX_GRANT_CHAIN} grants long`, () => {
  let g = issue({ days: 10 })
  let key = holder
  for (let i = 1; i < MAX_GRANT_CHAIN; i++) {
    const next = generateKeyPair()
    g = issue({ by: [key.secretKey], to: next.publicKey, days: 5, parent: g })
    key = next
  }
  assert.equal(verifyGrant(g, ctx()).depth, MAX_GRANT_CHAIN - 1)
  // one more level, built by hand: the library's own constructors refuse it
  const j = { ...JSON.parse(encodeGrant(g)), holder: other.publicKey, parent: JSON.parse(encodeGrant(g)) }
  assert.throws(() => decodeGrant(j), { code: 'ROTREE_BAD_FORMAT' })
  refused(() => verifyGrant(JSON.stringify(j), ctx()), /malformed: grant: a chain longer/)
})

test('token requests: signed by the holder, fresh, never replayed', () => {
  const g = issue()
  const now = T0 + DAY
  const seen = new Map()
  const c = { ...ctx(), seen }
  assert.equal(verifyTokenRequest(tokenRequest(g, holder.secretKey, { now }), c).holder, holder.publicKey)
  const body = tokenRequest(g, holder.secretKey, { now })
  verifyTokenRequest(body, c)
  refused(() => verifyTokenRequest(body, c), /replay/)
  refused(() => verifyTokenRequest(tokenRequest(g, other.secretKey, { now }), c), /not signed by the grant's holder/)
  refused(() => verifyTokenRequest(tokenRequest(g, holder.secretKey, { now: now - 10 * 60e3 }), c), /from this edge's clock/)
  refused(() => verifyTokenRequest(tokenRequest(g, holder.secretKey, { now: now + 10 * 60e3 }), c), /from this edge's clock/)
  // a nonce is forgotten once its request could no longer be accepted anyway
  verifyTokenRequest(tokenRequest(g, holder.secretKey, { now: now + 60e3 }), { ...c, now: now + 60e3 })
  assert.ok([...seen.values()].every(t => t > now))
  verifyTokenRequest(tokenRequest(g, holder.secretKey, { now: now + 5 * 60e3 }), { ...c, now: now + 5 * 60e3 })
  assert.equal(seen.size, 1)
})

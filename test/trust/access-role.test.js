// The optional access role of a trust document (docs/FORMAT.md §12.2, §12.10)
// as the publisher writes it: `trust init` names it, `trust update` carries it
// over or changes it, and the reader's decoder and walk accept the chain.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { tmpdir, makeKey } from '../helpers/fixtures.js'
import { initTrust, signTrust, updateTrust, trustInForce } from '../../builder/trust-publish.js'
import { accessRoleOf } from 'rotree-client/grant'
import { parseFragment } from 'rotree-client/trust'

test('trust init names an access role; update keeps it, adds and removes its keys', async () => {
  const out = await tmpdir()
  const [root, rel, ts, a1, a2] = [makeKey(), makeKey(), makeKey(), makeKey(), makeKey()]
  await initTrust(out, { root: [root.publicKey], release: [rel.publicKey], timestamp: [ts.publicKey], access: [a1.publicKey] })
  await signTrust(out, [root], { fsync: false })
  let f = await trustInForce(out)
  assert.deepEqual(f.trust.roles.access, { threshold: 1, keys: [a1.publicKey] })
  assert.deepEqual(accessRoleOf(f.trust, parseFragment(f.anchor).anchor), { threshold: 1, keys: [a1.publicKey] })
  // an update that does not mention it keeps it
  await updateTrust(out, { addRelease: [a2.publicKey] })
  await signTrust(out, [root], { fsync: false })
  f = await trustInForce(out)
  assert.deepEqual(f.trust.roles.access, { threshold: 1, keys: [a1.publicKey] })
  // rotated: a2 in, a1 out
  await updateTrust(out, { addAccess: [a2.publicKey], removeAccess: [a1.publicKey] })
  await signTrust(out, [root], { fsync: false })
  f = await trustInForce(out)
  assert.deepEqual(f.trust.roles.access, { threshold: 1, keys: [a2.publicKey] })
  // removing its last key drops the role: the tree grants no one
  await updateTrust(out, { removeAccess: [a2.publicKey] })
  await signTrust(out, [root], { fsync: false })
  f = await trustInForce(out)
  assert.equal(f.trust.roles.access, undefined)
  assert.equal(accessRoleOf(f.trust, parseFragment(f.anchor).anchor), null)
})

test('a family without an access role writes the documents it always wrote', async () => {
  const out = await tmpdir()
  const k = makeKey()
  await initTrust(out, { root: [k.publicKey], release: [k.publicKey], timestamp: [k.publicKey] })
  await signTrust(out, [k], { fsync: false })
  const f = await trustInForce(out)
  assert.equal(f.trust.roles.access, undefined)
  assert.doesNotMatch(Buffer.from(f.trust.message).toString(), /access/)
})

// The key scenarios of TUF's conformance suite (root rotation, thresholds,
// duplicate key ids, fast-forward recovery, rollback, expiry), ported to
// rotree's trust documents, releases and fsinfo.json: pure functions of
// client-js/src/trust/roles.js, no I/O. docs/TRUST.md rules 10–14.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import {
  parseFragment, acceptTrustStep, walkTrust, verifyFsinfoV2, verifyHistoryEntryV2, advanceState, trustAnchorOf, anchorText, MAX_TRUST_STEPS
} from 'rotree-client/trust'
import { checkFreshness } from 'rotree-client/verify'
import { keys, role, trustDoc, fsinfo, T0, DAY } from './helpers.js'

const clock = { now: T0 + 3600e3, skewMs: 300e3, graceMs: 0, checkFreshness }
const code = c => err => { assert.equal(err.code, c, err.message); return true }

function family () {
  const [A, B, C, D, E] = keys(5)
  const [R1, R2] = keys(2)
  const [T] = keys(1)
  const doc1 = trustDoc({ seq: 1, root: role([A, B, C], 2), release: role([R1, R2], 2), timestamp: role([T]) }, [A, B])
  return { A, B, C, D, E, R1, R2, T, doc1, anchor: { kind: 'trust', hash: trustAnchorOf(doc1).slice(1) } }
}

test('addresses: a key, a trust anchor, a name; anything else is refused', () => {
  const k = 'ab'.repeat(32)
  assert.deepEqual(parseFragment(k).anchor, { kind: 'key', key: k })
  assert.equal(parseFragment(k).name, '')
  assert.deepEqual(parseFragment('t' + k + ':nightly'), { anchor: { kind: 'trust', hash: k }, name: 'nightly', id: 't' + k + ':nightly' })
  for (const bad of [k.slice(1), 'x' + k, k + ':', k + ':Bad Name', k + ':' + 'a'.repeat(65), k + ':-x']) {
    assert.throws(() => parseFragment(bad), code('ROTREE_BAD_ADDRESS'), bad)
  }
})

test('document 1: certified by the anchor hash and its own root threshold', () => {
  const f = family()
  assert.equal(acceptTrustStep(null, f.doc1, f.anchor), f.doc1)
  // the same roles signed by one root key only: below its own threshold
  const weak = trustDoc({ seq: 1, root: role([f.A, f.B, f.C], 2), release: role([f.R1, f.R2], 2), timestamp: role([f.T]) }, [f.A])
  assert.throws(() => acceptTrustStep(null, weak, { kind: 'trust', hash: trustAnchorOf(weak).slice(1) }), code('ROTREE_THRESHOLD'))
  // another family's document 1 at this address
  const other = family()
  assert.throws(() => acceptTrustStep(null, other.doc1, f.anchor), code('ROTREE_THRESHOLD'))
})

test('a single key adopts roles: its first trust document is signed by it', () => {
  const [K, A] = keys(2)
  const anchor = { kind: 'key', key: K.publicKey }
  const doc1 = trustDoc({ seq: 1, root: role([A]), release: role([A]), timestamp: role([A]) }, [A, K])
  assert.equal(acceptTrustStep(null, doc1, anchor), doc1)
  const unsignedByK = trustDoc({ seq: 1, root: role([A]), release: role([A]), timestamp: role([A]) }, [A])
  assert.throws(() => acceptTrustStep(null, unsignedByK, anchor), code('ROTREE_THRESHOLD'))
})

test('root rotation 1-of-1: the new key needs the old key and itself', () => {
  const [A, B] = keys(2)
  const anchor = { kind: 'key', key: A.publicKey }
  const d1 = trustDoc({ seq: 1, root: role([A]), release: role([A]), timestamp: role([A]) }, [A])
  const d2 = trustDoc({ seq: 2, root: role([B]), release: role([B]), timestamp: role([B]) }, [A, B])
  assert.equal(walkTrust(null, [d1, d2], anchor), d2)
  const missingOld = trustDoc({ seq: 2, root: role([B]), release: role([B]), timestamp: role([B]) }, [B])
  assert.throws(() => walkTrust(null, [d1, missingOld], anchor), code('ROTREE_THRESHOLD'))
  const missingNew = trustDoc({ seq: 2, root: role([B]), release: role([B]), timestamp: role([B]) }, [A])
  assert.throws(() => walkTrust(null, [d1, missingNew], anchor), code('ROTREE_THRESHOLD'))
})

test('3-of-5: one key replaced, and all keys replaced, each step with both thresholds', () => {
  const ks = keys(10)
  const [K0, K1, K2, K3, K4, K5, K6, K7, K8, K9] = ks
  const rel = role([K0])
  const d1 = trustDoc({ seq: 1, root: role([K0, K1, K2, K3, K4], 3), release: rel, timestamp: rel }, [K0, K1, K2])
  const anchor = { kind: 'trust', hash: trustAnchorOf(d1).slice(1) }
  // K4 replaced by K5: old threshold from K0..K2, new threshold from K0, K1, K5
  const d2 = trustDoc({ seq: 2, root: role([K0, K1, K2, K3, K5], 3), release: rel, timestamp: rel }, [K0, K1, K2, K5])
  assert.equal(walkTrust(null, [d1, d2], anchor), d2)
  // every key replaced at once: 3 old + 3 new
  const d3 = trustDoc({ seq: 3, root: role([K5, K6, K7, K8, K9], 3), release: rel, timestamp: rel }, [K0, K1, K2, K6, K7, K8])
  assert.equal(walkTrust(d2, [d3], anchor), d3)
  // all replaced, but only 2 of the old keys signed
  const short = trustDoc({ seq: 3, root: role([K5, K6, K7, K8, K9], 3), release: rel, timestamp: rel }, [K0, K1, K6, K7, K8])
  assert.throws(() => walkTrust(d2, [short], anchor), code('ROTREE_THRESHOLD'))
})

test('threshold raised and lowered', () => {
  const [A, B, C] = keys(3)
  const anchor = { kind: 'key', key: A.publicKey }
  const r = role([A])
  const d1 = trustDoc({ seq: 1, root: role([A, B, C], 1), release: r, timestamp: r }, [A])
  const up = trustDoc({ seq: 2, root: role([A, B, C], 3), release: r, timestamp: r }, [A, B, C])
  assert.equal(walkTrust(null, [d1, up], anchor), up)
  const upShort = trustDoc({ seq: 2, root: role([A, B, C], 3), release: r, timestamp: r }, [A, B])
  assert.throws(() => walkTrust(null, [d1, upShort], anchor), code('ROTREE_THRESHOLD'))
  const down = trustDoc({ seq: 3, root: role([A, B, C], 1), release: r, timestamp: r }, [A, B, C])
  assert.equal(walkTrust(up, [down], anchor), down)
  const downShort = trustDoc({ seq: 3, root: role([A, B, C], 1), release: r, timestamp: r }, [A])
  assert.throws(() => walkTrust(up, [downShort], anchor), code('ROTREE_THRESHOLD'))
})

test('duplicate key ids count once; an invalid signature beside valid ones is ignored', () => {
  const [A, B, C] = keys(3)
  const r = role([A])
  const dup = trustDoc({ seq: 1, root: role([A, B, C], 2), release: r, timestamp: r }, [A, A, A])
  assert.throws(() => acceptTrustStep(null, dup, { kind: 'trust', hash: trustAnchorOf(dup).slice(1) }), code('ROTREE_THRESHOLD'))
  const withBad = trustDoc({ seq: 1, root: role([A, B, C], 2), release: r, timestamp: r }, [A, B], { bad: [C] })
  assert.equal(acceptTrustStep(null, withBad, { kind: 'trust', hash: trustAnchorOf(withBad).slice(1) }), withBad)
  // a key outside the role signing does not count either
  const [X] = keys(1)
  const outsider = trustDoc({ seq: 1, root: role([A, B, C], 2), release: r, timestamp: r }, [A, X])
  assert.throws(() => acceptTrustStep(null, outsider, { kind: 'trust', hash: trustAnchorOf(outsider).slice(1) }), code('ROTREE_THRESHOLD'))
})

test('the walk is consecutive and bounded', () => {
  const [A] = keys(1)
  const r = role([A])
  const anchor = { kind: 'key', key: A.publicKey }
  const docs = Array.from({ length: MAX_TRUST_STEPS + 1 }, (_, i) => trustDoc({ seq: i + 1, root: r, release: r, timestamp: r }, [A]))
  assert.throws(() => walkTrust(null, docs, anchor), code('ROTREE_BAD_FORMAT'))
  assert.throws(() => walkTrust(null, [docs[0], docs[2]], anchor), code('ROTREE_BAD_FORMAT'))
  assert.throws(() => walkTrust(null, [docs[1]], anchor), code('ROTREE_BAD_FORMAT'))
})

test('fsinfo.json: timestamp threshold, release threshold, the name', () => {
  const f = family()
  const ok = fsinfo({ name: 'stable', trust: f.doc1 }, { tsSigners: [f.T], relSigners: [f.R1, f.R2] })
  verifyFsinfoV2(ok, { anchor: f.anchor, name: 'stable', trust: f.doc1, ...clock })
  const oneRelease = fsinfo({ name: 'stable', trust: f.doc1 }, { tsSigners: [f.T], relSigners: [f.R1] })
  assert.throws(() => verifyFsinfoV2(oneRelease, { anchor: f.anchor, name: 'stable', trust: f.doc1, ...clock }), code('ROTREE_THRESHOLD'))
  // a stolen timestamp key cannot invent a release
  const invented = fsinfo({ name: 'stable', trust: f.doc1 }, { tsSigners: [f.T], relSigners: [f.T] })
  assert.throws(() => verifyFsinfoV2(invented, { anchor: f.anchor, name: 'stable', trust: f.doc1, ...clock }), code('ROTREE_THRESHOLD'))
  const noTs = fsinfo({ name: 'stable', trust: f.doc1 }, { tsSigners: [f.R1], relSigners: [f.R1, f.R2] })
  assert.throws(() => verifyFsinfoV2(noTs, { anchor: f.anchor, name: 'stable', trust: f.doc1, ...clock }), code('ROTREE_THRESHOLD'))
  // tree B served at tree A's address
  const nightly = fsinfo({ name: 'nightly', trust: f.doc1 }, { tsSigners: [f.T], relSigners: [f.R1, f.R2] })
  assert.throws(() => verifyFsinfoV2(nightly, { anchor: f.anchor, name: 'stable', trust: f.doc1, ...clock }), code('ROTREE_WRONG_NAME'))
  const mixed = fsinfo({ name: 'stable', trust: f.doc1, release: { name: 'nightly' } }, { tsSigners: [f.T], relSigners: [f.R1, f.R2] })
  assert.throws(() => verifyFsinfoV2(mixed, { anchor: f.anchor, name: 'stable', trust: f.doc1, ...clock }), code('ROTREE_WRONG_NAME'))
})

test('expiry: fsinfo.json, the release and the final trust document', () => {
  const f = family()
  const late = { ...clock, now: T0 + 2 * DAY }
  const expiredTs = fsinfo({ name: 'x', trust: f.doc1 }, { tsSigners: [f.T], relSigners: [f.R1, f.R2] })
  assert.throws(() => verifyFsinfoV2(expiredTs, { anchor: f.anchor, name: 'x', trust: f.doc1, ...late }), code('ROTREE_EXPIRED'))
  const expiredRel = fsinfo({ name: 'x', trust: f.doc1, expires: T0 + 10 * DAY, release: { expires: T0 + DAY } }, { tsSigners: [f.T], relSigners: [f.R1, f.R2] })
  assert.throws(() => verifyFsinfoV2(expiredRel, { anchor: f.anchor, name: 'x', trust: f.doc1, ...late }), code('ROTREE_EXPIRED'))
  const shortTrust = trustDoc({ seq: 1, root: role([f.A, f.B, f.C], 2), release: role([f.R1, f.R2], 2), timestamp: role([f.T]), expires: T0 + DAY }, [f.A, f.B])
  const info = fsinfo({ name: 'x', trust: shortTrust, expires: T0 + 10 * DAY }, { tsSigners: [f.T], relSigners: [f.R1, f.R2] })
  const anchor = { kind: 'trust', hash: trustAnchorOf(shortTrust).slice(1) }
  assert.throws(() => verifyFsinfoV2(info, { anchor, name: 'x', trust: shortTrust, ...late }), code('ROTREE_EXPIRED'))
})

test('a retired family: no release keys, refused with its own code', () => {
  const f = family()
  const d2 = trustDoc({ seq: 2, root: role([f.A, f.B, f.C], 2), release: { threshold: 0, keys: [] }, timestamp: role([f.T]) }, [f.A, f.B])
  assert.equal(walkTrust(f.doc1, [d2], f.anchor), d2)
  const info = fsinfo({ name: '', trust: d2 }, { tsSigners: [f.T], relSigners: [f.R1, f.R2] })
  assert.throws(() => verifyFsinfoV2(info, { anchor: f.anchor, name: '', trust: d2, ...clock }), code('ROTREE_RETIRED'))
})

test('rollback and forks: release and timestamp sequences never go back', () => {
  const f = family()
  const mk = (seq, relSeq, root = 'ab'.repeat(32)) => fsinfo({ trust: f.doc1, seq, release: { seq: relSeq, root } }, { tsSigners: [f.T], relSigners: [f.R1, f.R2] })
  const roles = f.doc1.roles
  let { state } = advanceState(null, mk(10, 3), roles)
  assert.equal(advanceState(state, mk(11, 3), roles).newer, true)
  assert.throws(() => advanceState(state, mk(9, 3), roles), code('ROTREE_ROLLBACK'))
  assert.throws(() => advanceState(state, mk(12, 2), roles), code('ROTREE_ROLLBACK'))
  assert.throws(() => advanceState(state, mk(12, 3, 'cd'.repeat(32)), roles), code('ROTREE_FORK'))
  state = advanceState(state, mk(12, 4), roles).state
  assert.equal(state.release.seq, 4)
})

test('trust documents never go back; a single-key fsinfo.json after adoption is refused', () => {
  const [K, A] = keys(2)
  const anchor = { kind: 'key', key: K.publicKey }
  const r = role([A])
  const d1 = trustDoc({ seq: 1, root: r, release: r, timestamp: r }, [A, K])
  const d2 = trustDoc({ seq: 2, root: r, release: r, timestamp: r, expires: Date.UTC(2027, 5, 1) }, [A])
  const under2 = fsinfo({ trust: d2, seq: 5 }, { tsSigners: [A], relSigners: [A] })
  const { state } = advanceState(null, under2, d2.roles)
  const under1 = fsinfo({ trust: d1, seq: 6 }, { tsSigners: [A], relSigners: [A] })
  assert.throws(() => advanceState(state, under1, d1.roles), code('ROTREE_ROLLBACK'))
  // the lone address key, retired as a signer once the tree adopted roles
  const lone = fsinfo({ trust: null, seq: 7 }, { tsSigners: [K], relSigners: [K] })
  assert.throws(() => verifyFsinfoV2(lone, { anchor, name: '', trust: d2, ...clock }), code('ROTREE_ROLLBACK'))
  assert.throws(() => advanceState(state, lone, { release: role([K]), timestamp: role([K]) }), code('ROTREE_ROLLBACK'))
})

test('fast-forward recovery: a rotated timestamp or release key drops that role\'s sequence', () => {
  const f = family()
  const [T2, R3] = keys(2)
  // a compromised timestamp key signed a huge sequence number
  const attack = fsinfo({ trust: f.doc1, seq: Number.MAX_SAFE_INTEGER - 1, release: { seq: 1e9 } }, { tsSigners: [f.T], relSigners: [f.R1, f.R2] })
  const { state } = advanceState(null, attack, f.doc1.roles)
  // without rotation the honest publisher is locked out
  const honest = fsinfo({ trust: f.doc1, seq: 100, release: { seq: 5 } }, { tsSigners: [f.T], relSigners: [f.R1, f.R2] })
  assert.throws(() => advanceState(state, honest, f.doc1.roles), code('ROTREE_ROLLBACK'))
  // rotate the timestamp key and every release key that signed it (new trust document)
  const R4 = keys(1)[0]
  const d2 = trustDoc({ seq: 2, root: role([f.A, f.B, f.C], 2), release: role([R3, R4], 2), timestamp: role([T2]) }, [f.A, f.B])
  walkTrust(f.doc1, [d2], f.anchor)
  const after = fsinfo({ trust: d2, seq: 101, release: { seq: 5 } }, { tsSigners: [T2], relSigners: [R3, R4] })
  verifyFsinfoV2(after, { anchor: f.anchor, name: '', trust: d2, ...clock })
  const next = advanceState(state, after, d2.roles)
  assert.equal(next.state.timestamp.seq, 101)
  assert.equal(next.state.release.seq, 5)
  // and the retired timestamp key is never accepted again: it is not in d2's role
  const byOld = fsinfo({ trust: d2, seq: 102, release: { seq: 5 } }, { tsSigners: [f.T], relSigners: [R3, R4] })
  assert.throws(() => verifyFsinfoV2(byOld, { anchor: f.anchor, name: '', trust: d2, ...clock }), code('ROTREE_THRESHOLD'))
})

test('fsinfo.json v2 decoding: the private-tree members, strict members', async () => {
  const { decodeFsinfoV2 } = await import('rotree-client/format')
  const f = family()
  const ok = fsinfo({ trust: f.doc1 }, { tsSigners: [f.T], relSigners: [f.R1, f.R2] })
  const json = JSON.parse(new TextDecoder().decode(new TextEncoder().encode(JSON.stringify({
    version: 2, anchor: ok.anchor, name: '', trust: ok.trust, seq: ok.seq, issued: ok.issued, expires: ok.expires,
    release: { anchor: ok.anchor, name: '', seq: 1, expires: ok.release.expires, root: ok.release.root, signatures: [] }, signatures: []
  }))))
  decodeFsinfoV2(JSON.stringify(json))
  // FORMAT.md §12.8: access belongs to a private release only, with exactly its members
  const access = { epoch: 1, keyring: { hash: 'ab'.repeat(32), size: 100 }, root: 'AAAA' }
  assert.throws(() => decodeFsinfoV2(JSON.stringify({ ...json, access: { hash: 'ab'.repeat(32), size: 1 } })), code('ROTREE_BAD_FORMAT'))
  assert.throws(() => decodeFsinfoV2(JSON.stringify({ ...json, access })), code('ROTREE_BAD_FORMAT'))
  const priv = { ...json, access, release: { ...json.release, root: { private: 'cd'.repeat(32) }, manifest: { hash: 'ef'.repeat(32), size: 10 } } }
  assert.deepEqual(decodeFsinfoV2(JSON.stringify(priv)).access, access)
  assert.throws(() => decodeFsinfoV2(JSON.stringify({ ...priv, access: undefined })), code('ROTREE_BAD_FORMAT'))
  assert.throws(() => decodeFsinfoV2(JSON.stringify({ ...priv, release: { ...priv.release, manifest: undefined } })), code('ROTREE_BAD_FORMAT'))
  assert.throws(() => decodeFsinfoV2(JSON.stringify({ ...json, extra: 1 })), code('ROTREE_BAD_FORMAT'))
  assert.throws(() => decodeFsinfoV2(JSON.stringify({ ...json, version: 3 })), code('ROTREE_UNSUPPORTED_VERSION'))
  const badCodec = { ...json, release: { ...json.release, root: { ...json.release.root, codec: 'zstd' } } }
  assert.throws(() => decodeFsinfoV2(JSON.stringify(badCodec)), code('ROTREE_BAD_FORMAT'))
  const noneMismatch = { ...json, release: { ...json.release, root: { ...json.release.root, decodedSize: 101 } } }
  assert.throws(() => decodeFsinfoV2(JSON.stringify(noneMismatch)), code('ROTREE_BAD_FORMAT'))
})

test('the order of the checks: the name first, retirement before anything the answer says, an older trust document is behind', async () => {
  const { checkAddress } = await import('rotree-client/trust')
  const f = family()
  const d2 = trustDoc({ seq: 2, root: role([f.A, f.B, f.C], 2), release: role([f.R1, f.R2], 2), timestamp: role([f.T]) }, [f.A, f.B])
  const retired = trustDoc({ seq: 3, root: role([f.A, f.B, f.C], 2), release: { threshold: 0, keys: [] }, timestamp: role([f.T]) }, [f.A, f.B])
  walkTrust(f.doc1, [d2, retired], f.anchor)
  const under1 = fsinfo({ name: 'x', trust: f.doc1 }, { tsSigners: [f.T], relSigners: [f.R1, f.R2] })
  // a reader that has seen the retirement: an fsinfo.json under document 1 is refused as retired, not as behind
  assert.throws(() => verifyFsinfoV2(under1, { anchor: f.anchor, name: 'x', trust: retired, ...clock }), code('ROTREE_RETIRED'))
  // even one that is unsigned: retirement comes before the signatures
  const unsigned = fsinfo({ name: 'x', trust: f.doc1 }, { tsSigners: [], relSigners: [] })
  assert.throws(() => verifyFsinfoV2(unsigned, { anchor: f.anchor, name: 'x', trust: retired, ...clock }), code('ROTREE_RETIRED'))
  // but another tree's name is refused first, before any document is fetched for it
  assert.throws(() => checkAddress(under1, f.anchor, 'y'), code('ROTREE_WRONG_NAME'))
  assert.throws(() => verifyFsinfoV2(under1, { anchor: f.anchor, name: 'y', trust: retired, ...clock }), code('ROTREE_WRONG_NAME'))
  // not retired: an answer under an older document than the newest trusted is behind
  assert.throws(() => verifyFsinfoV2(under1, { anchor: f.anchor, name: 'x', trust: d2, ...clock }), code('ROTREE_ROLLBACK'))
  // and one that names a document the chain did not reach is malformed
  const under2 = fsinfo({ name: 'x', trust: d2 }, { tsSigners: [f.T], relSigners: [f.R1, f.R2] })
  assert.throws(() => verifyFsinfoV2(under2, { anchor: f.anchor, name: 'x', trust: f.doc1, ...clock }), code('ROTREE_BAD_FORMAT'))
  verifyFsinfoV2(under2, { anchor: f.anchor, name: 'x', trust: d2, ...clock })
})

test('a role\'s sequence holds while any key that signed it stays: adding a key does not let a timestamp key serve an older release', () => {
  const f = family()
  const [R3] = keys(1)
  const newer = fsinfo({ trust: f.doc1, seq: 50, release: { seq: 7 } }, { tsSigners: [f.T], relSigners: [f.R1, f.R2] })
  const { state } = advanceState(null, newer, f.doc1.roles)
  // the root keys add a third release key; R1 and R2 stay
  const d2 = trustDoc({ seq: 2, root: role([f.A, f.B, f.C], 2), release: role([f.R1, f.R2, R3], 2), timestamp: role([f.T]) }, [f.A, f.B])
  walkTrust(f.doc1, [d2], f.anchor)
  // the timestamp key re-signs the older, unexpired release 6 under document 2
  const older = fsinfo({ trust: d2, seq: 51, release: { seq: 6, root: 'cd'.repeat(32) } }, { tsSigners: [f.T], relSigners: [f.R1, f.R2] })
  const v = verifyFsinfoV2(older, { anchor: f.anchor, name: '', trust: d2, ...clock })
  assert.throws(() => advanceState(state, older, d2.roles, v.signers), code('ROTREE_ROLLBACK'))
  // one signer rotated away, the other kept: still held
  const d3 = trustDoc({ seq: 3, root: role([f.A, f.B, f.C], 2), release: role([f.R2, R3], 2), timestamp: role([f.T]) }, [f.A, f.B])
  const olderUnder3 = fsinfo({ trust: d3, seq: 52, release: { seq: 6, root: 'cd'.repeat(32) } }, { tsSigners: [f.T], relSigners: [f.R2, R3] })
  assert.throws(() => advanceState(state, olderUnder3, d3.roles), code('ROTREE_ROLLBACK'))
  // the state records who signed
  assert.deepEqual(state.release.signers, [f.R1.publicKey, f.R2.publicKey].sort())
  assert.deepEqual(state.timestamp.signers, [f.T.publicKey])
})

test('families that share keys: a release, an fsinfo.json or a trust document of one is refused at the other\'s address', () => {
  // one organisation's root, release and timestamp keys over two projects
  const [A, B, R, T] = keys(4)
  const F1 = trustDoc({ seq: 1, root: role([A, B], 2), release: role([R]), timestamp: role([T]), expires: T0 + 400 * DAY }, [A, B])
  const G1 = trustDoc({ seq: 1, root: role([A, B], 2), release: role([R]), timestamp: role([T]), expires: T0 + 500 * DAY }, [A, B])
  const F = { kind: 'trust', hash: trustAnchorOf(F1).slice(1) }
  const G = { kind: 'trust', hash: trustAnchorOf(G1).slice(1) }
  const G2 = trustDoc({ seq: 2, prev: G1, root: role([A, B], 2), release: role([R]), timestamp: role([T]) }, [A, B])
  // G's document 2 is signed by the very root keys F's document 1 names, but follows G's document 1
  assert.throws(() => acceptTrustStep(F1, G2, F), code('ROTREE_WRONG_KEY'))
  assert.equal(acceptTrustStep(G1, G2, G), G2)
  // G's release and fsinfo.json, by the shared release and timestamp keys, at F's address (same name, same seq)
  const gRelease = fsinfo({ trust: G1, name: 'stable' }, { tsSigners: [T], relSigners: [R] })
  assert.equal(gRelease.anchor, anchorText(G))
  assert.throws(() => verifyFsinfoV2(gRelease, { anchor: F, name: 'stable', trust: F1, ...clock }), code('ROTREE_WRONG_KEY'))
  // a timestamp key of F re-wrapping G's release (the release message binds G's anchor) is refused too
  const rewrapped = fsinfo({ anchor: F, trust: F1, name: 'stable', release: { anchor: anchorText(G) } }, { tsSigners: [T], relSigners: [R] })
  assert.throws(() => verifyFsinfoV2(rewrapped, { anchor: F, name: 'stable', trust: F1, ...clock }), code('ROTREE_WRONG_KEY'))
  // and F's own, for contrast
  verifyFsinfoV2(fsinfo({ trust: F1, name: 'stable' }, { tsSigners: [T], relSigners: [R] }), { anchor: F, name: 'stable', trust: F1, ...clock })
})

test('history: a single key rotated away vouches for no entry signed by it alone', () => {
  const [K, A] = keys(2)
  const anchor = { kind: 'key', key: K.publicKey }
  const r = role([A])
  const d1 = trustDoc({ seq: 1, root: r, release: r, timestamp: r }, [A, K])
  // an old entry from before the adoption, or one the stolen key forged: they look alike
  const lone = fsinfo({ trust: null, seq: 3 }, { tsSigners: [K], relSigners: [K] })
  assert.equal(verifyHistoryEntryV2(lone, { anchor, name: '', trust: null }).roles.release.keys[0], K.publicKey)
  // document 1 no longer lists K in any role: refused
  assert.throws(() => verifyHistoryEntryV2(lone, { anchor, name: '', trust: null, newest: d1 }), code('ROTREE_THRESHOLD'))
  // a document that keeps K as a root key keeps such entries
  const keeps = trustDoc({ seq: 1, root: role([A, K]), release: r, timestamp: r }, [A, K])
  verifyHistoryEntryV2(lone, { anchor, name: '', trust: null, newest: keeps })
  // entries under a document are judged by that document's keys
  const under1 = fsinfo({ anchor, trust: d1, seq: 4 }, { tsSigners: [A], relSigners: [A] })
  verifyHistoryEntryV2(under1, { anchor, name: '', trust: d1, newest: d1 })
})

test('small-order and non-canonical keys are refused wherever a key is read', async () => {
  const { weakKeyReason } = await import('rotree-client/format')
  const ed = await import('@noble/ed25519')
  const torsion = ed.Point.fromHex('c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a')
  const hexLE = b => Buffer.from(b).toString('hex')
  // all eight points of small order, in both sign spellings
  const weak = []
  let q = ed.Point.ZERO
  for (let i = 0; i < 8; i++) {
    q = q.add(torsion)
    const b = q.toBytes()
    weak.push(hexLE(b))
    b[31] ^= 0x80
    weak.push(hexLE(b))
  }
  // every y ≥ p (p = 2^255 - 19), both signs: second spellings of y − p
  for (let lo = 0xed; lo <= 0xff; lo++) {
    const b = Buffer.alloc(32, 0xff); b[0] = lo; b[31] = 0x7f
    weak.push(hexLE(b)); b[31] = 0xff; weak.push(hexLE(b))
  }
  for (const k of weak) {
    assert.ok(weakKeyReason(k), k)
    assert.throws(() => parseFragment(k), code('ROTREE_BAD_ADDRESS'), k)
  }
  assert.ok(weak.includes('01' + '00'.repeat(31)) && weak.includes('01' + '00'.repeat(30) + '80'))
  // real keys pass
  for (const k of keys(64)) assert.equal(weakKeyReason(k.publicKey), null)
  // a trust document naming the identity twice (two spellings) as release keys does not decode
  const [A] = keys(1)
  const ids = ['01' + '00'.repeat(31), '01' + '00'.repeat(30) + '80'].sort()
  assert.throws(() => trustDoc({ seq: 1, root: role([A]), release: { threshold: 2, keys: ids }, timestamp: role([A]) }, [A]), code('ROTREE_BAD_FORMAT'))
})

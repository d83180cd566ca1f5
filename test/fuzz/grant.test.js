// Property-based fuzzing of the grant parser and verifier (docs/FORMAT.md
// §12.10–12.12): random and mutated grants, token requests and revocation
// lists decode or are refused with a typed format error, never crash; the
// verifier refuses them with ROTREE_NO_ACCESS (a list: ROTREE_THRESHOLD or
// ROTREE_WRONG_NAME) and never admits a grant or a list whose signed text
// changed.
// FUZZ_RUNS sets the number of cases (npm run fuzz sets it high).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fc from 'fast-check'
import { generateKeyPair } from 'rotree-client/crypto'
import { decodeGrant, decodeTokenRequest, encodeGrant, unsignedGrant, signGrant, verifyGrant, verifyTokenRequest, tokenRequest, decodeRevoked, encodeRevoked, verifyRevoked, grantHash } from 'rotree-client/grant'

const RUNS = Number(process.env.FUZZ_RUNS || 300)
const FORMAT_CODES = new Set(['ROTREE_BAD_FORMAT', 'ROTREE_UNSUPPORTED_VERSION'])
const T0 = Date.parse('2027-03-01T00:00:00.000Z')
const tree = generateKeyPair(); const holder = generateKeyPair(); const d = generateKeyPair()
const access = { threshold: 1, keys: [tree.publicKey] }
const ctx = { anchor: tree.publicKey, name: '', access, now: T0 + 3600e3 }
const root = signGrant(unsignedGrant({ anchor: tree.publicKey, holder: holder.publicKey, issued: new Date(T0).toISOString(), expires: new Date(T0 + 10 * 86400e3).toISOString() }), [tree.secretKey])
const child = signGrant(unsignedGrant({ anchor: tree.publicKey, holder: d.publicKey, issued: new Date(T0).toISOString(), expires: new Date(T0 + 86400e3).toISOString(), parent: root }), [holder.secretKey])
const SEEDS = [encodeGrant(root), encodeGrant(child)]

function decodesOrRefuses (fn, input) {
  try { return fn(input) } catch (err) {
    if (!FORMAT_CODES.has(err.code)) throw new Error(`decoder threw ${err.name} ${err.code}: ${err.message}`)
    return null
  }
}

const mutate = (text, edits) => {
  const b = Buffer.from(text)
  for (const [at, v] of edits) b[at % b.length] = v
  return b
}

test('grants: random bytes and JSON decode or are refused, never crash', () => {
  fc.assert(fc.property(fc.oneof(fc.uint8Array({ maxLength: 512 }), fc.json().map(s => Buffer.from(s))), bytes => {
    decodesOrRefuses(decodeGrant, bytes)
    decodesOrRefuses(decodeTokenRequest, bytes)
  }), { numRuns: RUNS })
})

test('grants: mutated signed grants are refused as ROTREE_NO_ACCESS unless the signed text is unchanged', () => {
  fc.assert(fc.property(fc.constantFrom(...SEEDS), fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 4 }), (seed, edits) => {
    const bytes = mutate(seed, edits)
    const g = decodesOrRefuses(decodeGrant, bytes)
    try {
      const v = verifyGrant(bytes, ctx)
      // admitted: then what was signed is what the seed signed (only JSON layout or unsigned bytes moved)
      const want = decodeGrant(seed)
      assert.ok(g !== null)
      assert.deepEqual(Buffer.from(g.message), Buffer.from(want.message))
      assert.equal(v.holder, want.holder)
    } catch (err) {
      if (err.code !== 'ROTREE_NO_ACCESS') throw err
    }
  }), { numRuns: RUNS })
})

test('grants: structured members of any value are refused or decode, never crash', () => {
  const base = JSON.parse(SEEDS[1])
  const members = Object.keys(base)
  fc.assert(fc.property(fc.constantFrom(...members), fc.jsonValue(), (m, value) => {
    decodesOrRefuses(decodeGrant, { ...base, [m]: value })
    decodesOrRefuses(decodeGrant, { ...base, parent: { ...base.parent, [m]: value } })
  }), { numRuns: RUNS })
})

test('token requests: mutated bodies are refused as ROTREE_NO_ACCESS unless the signed text is unchanged', () => {
  const body = tokenRequest(decodeGrant(SEEDS[1]), d.secretKey, { now: ctx.now })
  fc.assert(fc.property(fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 4 }), edits => {
    const bytes = mutate(body, edits)
    try {
      const v = verifyTokenRequest(bytes, { ...ctx, seen: new Map() })
      assert.deepEqual(Buffer.from(decodeTokenRequest(bytes).message), Buffer.from(decodeTokenRequest(body).message))
      assert.equal(v.holder, d.publicKey)
    } catch (err) {
      if (err.code !== 'ROTREE_NO_ACCESS') throw err
    }
  }), { numRuns: RUNS })
})

test('revocation lists: random and mutated lists decode or are refused, and count only with the signed text unchanged', () => {
  const list = decodeRevoked(JSON.stringify({ type: 'rotree-revoked', version: 2, anchor: tree.publicKey, name: '', issued: new Date(T0).toISOString(), grants: [grantHash(root), grantHash(child)].sort().map(hash => ({ hash, expires: root.expires })), signatures: [] }))
  const text = encodeRevoked(signGrant(list, [tree.secretKey]))
  const want = Buffer.from(decodeRevoked(text).message)
  fc.assert(fc.property(fc.oneof(fc.uint8Array({ maxLength: 512 }), fc.json().map(s => Buffer.from(s))), bytes => { decodesOrRefuses(decodeRevoked, bytes) }), { numRuns: RUNS })
  fc.assert(fc.property(fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 4 }), edits => {
    const r = decodesOrRefuses(decodeRevoked, mutate(text, edits))
    if (r === null) return
    try {
      verifyRevoked(r, ctx)
      assert.deepEqual(Buffer.from(r.message), want)
    } catch (err) {
      if (err.code !== 'ROTREE_THRESHOLD' && err.code !== 'ROTREE_WRONG_NAME') throw err
    }
  }), { numRuns: RUNS })
})

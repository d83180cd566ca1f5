// Who may fetch a gated tree (FORMAT.md §12.10–12.11, docs/TRUST.md rule 20):
// the one place that decides whether a grant, and a token request made with
// it, admit a key. Pure functions over decoded documents, the tree's verified
// trust state and a clock; every refusal is ROTREE_NO_ACCESS, never a mirror
// fault.
//
// A grant chain is read from the first grant (signed by the access role of
// the tree's newest trust document, or by a single-key tree's key) down to
// the one presented; each delegated grant is signed by its parent's holder
// and may only narrow: the same tree, a scope within the parent's, an expiry
// no later than the parent's. The result is the last holder and the earliest
// expiry of the chain.
import { NoAccessError, ThresholdError, WrongNameError } from '../errors.js'
import { verifySignature, sign, publicKeyOf } from '#ed25519'
import { decodeGrant, decodeTokenRequest, decodeRevoked, grantHash, grantJson, tokenRequestMessage, scopeWithin, MAX_GRANT_CHAIN } from '../format/grant.js'
import { validSigners } from './roles.js'

export { decodeGrant, decodeTokenRequest, encodeGrant, grantJson, grantHash, grantMessage, unsignedGrant, tokenRequestMessage, MAX_GRANT_CHAIN, MAX_GRANT, GRANT_TYPE, decodeRevoked, encodeRevoked, revokedMessage, REVOKED_TYPE, MAX_REVOKED } from '../format/grant.js'

/** How far in the future a grant may be issued, or a token request timed (clock skew). */
export const GRANT_SKEW_MS = 5 * 60e3
/** How old a token request may be (and how long an edge remembers its nonce): replays are bounded by this window. */
export const PROOF_WINDOW_MS = 2 * 60e3

const refuse = (message, cause) => { throw new NoAccessError(message, cause ? { cause } : undefined) }

/**
 * The access role of a tree: the newest trusted trust document's `access`
 * (null: it has none, and no grant admits anyone), or, for a tree that never
 * adopted a trust document, its address key (a single key holds every role).
 * @param {object|null} trust the newest trusted trust document (walkTrust), null for a single-key tree
 * @param {{ kind: 'key', key: string } | { kind: 'trust', hash: string }} anchor
 * @returns {{ threshold: number, keys: string[] } | null}
 */
export function accessRoleOf (trust, anchor) {
  if (trust) return trust.roles.access ?? null
  return anchor.kind === 'key' ? { threshold: 1, keys: [anchor.key] } : null
}

/** The chain, first grant first. */
function chainOf (grant) {
  const chain = []
  for (let g = grant; g; g = g.parent) chain.unshift(g)
  return chain
}

/**
 * Check a grant against a tree's access role at `now`.
 * @param {object|Uint8Array|string} grant decodeGrant()'s value, or its JSON
 * @param {{ anchor: string, name: string, access: { threshold: number, keys: string[] } | null, now: number, skewMs?: number, revoked?: Set<string> | null }} o
 *   anchor: the tree's anchor as an address spells it (anchorText); access: accessRoleOf();
 *   revoked: grant hashes of a verified revocation list (verifyRevoked), refused wherever they are in the chain
 * @returns {{ holder: string, expiresMs: number, expires: string, scope: string, depth: number }}
 */
export function verifyGrant (grant, { anchor, name, access, now, skewMs = GRANT_SKEW_MS, revoked = null }) {
  let g = grant
  if (!g || typeof g.message === 'undefined') {
    try { g = decodeGrant(grant) } catch (err) { refuse(`the grant is malformed: ${err.message}`, err) }
  }
  const chain = chainOf(g)
  if (chain.length > MAX_GRANT_CHAIN) refuse(`the grant is delegated more than ${MAX_GRANT_CHAIN - 1} times`)
  if (access === null || access === undefined) refuse(`tree ${anchor}:${name} has no access role: its trust document grants no one`)
  let expiresMs = Infinity
  let expires = ''
  for (let i = 0; i < chain.length; i++) {
    const c = chain[i]
    const what = i === 0 ? 'the grant' : `delegation ${i}`
    // the tree comes from the edge's own verified state, never from the grant
    if (c.anchor !== anchor || c.name !== name) refuse(`${what} is for tree ${c.anchor}:${c.name}, not ${anchor}:${name}`)
    if (i === 0) {
      const n = validSigners(c.message, c.signatures, access).size
      if (n < access.threshold) refuse(`${what} is not signed by the tree's access role (${n} valid signature${n === 1 ? '' : 's'} of its keys, ${access.threshold} required)`)
    } else {
      const p = chain[i - 1]
      if (c.parentHash !== grantHash(p)) refuse(`${what} does not name its parent`)
      if (!c.signatures.some(s => s.key === p.holder && verifySignature(s.sig, c.message, p.holder))) refuse(`${what} is not signed by its parent's holder ${p.holder}`)
      if (c.expiresMs > p.expiresMs) refuse(`${what} expires at ${c.expires}, after its parent (${p.expires}): a delegation may not outlive what it was given`)
      if (!scopeWithin(c.scope, p.scope)) refuse(`${what} covers ${c.scope}, beyond its parent's ${p.scope}`)
    }
    if (revoked?.has(grantHash(c))) refuse(`${what} (${grantHash(c)}) is revoked by the tree's access role (FORMAT.md §12.12)`)
    if (c.issuedMs > now + skewMs) refuse(`${what} is issued at ${c.issued}, in the future`)
    if (c.expiresMs <= now) refuse(`${what} expired at ${c.expires}`)
    if (c.expiresMs < expiresMs) { expiresMs = c.expiresMs; expires = c.expires }
  }
  const last = chain.at(-1)
  // FORMAT.md §12.10: subtree scopes are reserved; an edge admits whole-tree grants only
  if (last.scope !== '/') refuse(`the grant covers ${last.scope}: subtree scopes are reserved, this version admits whole-tree grants ("/") only`)
  return { holder: last.holder, expiresMs, expires, scope: last.scope, depth: chain.length - 1 }
}

/**
 * Check a token request (FORMAT.md §12.11): its grant (verifyGrant), the
 * holder's signature over the request, its time within PROOF_WINDOW_MS of
 * `now`, and its nonce unseen. `seen` remembers nonces (a Map nonce → time
 * it may be forgotten); the caller keeps one per edge.
 * @param {Uint8Array|string} body
 * @param {{ anchor: string, name: string, access: object|null, now: number, seen: Map<string, number>, windowMs?: number, revoked?: Set<string> | null }} o
 * @returns {ReturnType<typeof verifyGrant>}
 */
export function verifyTokenRequest (body, { anchor, name, access, now, seen, windowMs = PROOF_WINDOW_MS, revoked = null }) {
  let r
  try { r = decodeTokenRequest(body) } catch (err) { refuse(`the token request is malformed: ${err.message}`, err) }
  const v = verifyGrant(r.grant, { anchor, name, access, now, revoked })
  if (!verifySignature(r.sig, r.message, v.holder)) refuse(`the token request is not signed by the grant's holder ${v.holder}`)
  if (Math.abs(r.timeMs - now) > windowMs) refuse(`the token request is timed ${r.time}, more than ${windowMs / 1000} s from this edge's clock`)
  for (const [n, until] of seen) if (until <= now) seen.delete(n)
  if (seen.has(r.nonce)) refuse('the token request was seen before (a replay)')
  seen.set(r.nonce, r.timeMs + windowMs)
  return v
}

/**
 * Check a revocation list (FORMAT.md §12.12) against a tree's access role:
 * for this tree, signed by the role's threshold. The grant hashes it names
 * (entries past their grant's expiry included: harmless). A list that fails
 * is the edge operator's fault, never a reader's: ROTREE_WRONG_NAME or
 * ROTREE_THRESHOLD, and the edge then gives no token at all.
 * @param {object|Uint8Array|string} list decodeRevoked()'s value, or its JSON
 * @param {{ anchor: string, name: string, access: { threshold: number, keys: string[] } | null }} o
 * @returns {{ hashes: Set<string>, issuedMs: number, issued: string }}
 */
export function verifyRevoked (list, { anchor, name, access }) {
  const r = list?.message ? list : decodeRevoked(list)
  if (r.anchor !== anchor || r.name !== name) throw new WrongNameError(`the revocation list is for tree ${r.anchor}:${r.name}, not ${anchor}:${name}`)
  const n = access ? validSigners(r.message, r.signatures, access).size : 0
  if (!access || n < access.threshold) throw new ThresholdError(`the revocation list is not signed by the tree's access role (${n} valid signature${n === 1 ? '' : 's'}${access ? `, ${access.threshold} required` : '; the tree has no access role'})`)
  return { hashes: new Set(r.grants.map(g => g.hash)), issuedMs: r.issuedMs, issued: r.issued }
}

const hex = b => Array.from(b, x => x.toString(16).padStart(2, '0')).join('')

/**
 * A grant with signatures added by `secretKeys` (hex ed25519 seeds): the
 * access keys for a first grant, the parent's holder for a delegation.
 * @param {object} g decodeGrant()/unsignedGrant()'s value
 */
export function signGrant (g, secretKeys) {
  const sigs = [...g.signatures]
  for (const sk of secretKeys) {
    const key = publicKeyOf(sk)
    if (!sigs.some(s => s.key === key)) sigs.push({ key, sig: sign(g.message, sk) })
  }
  return { ...g, signatures: sigs }
}

/**
 * The body of a token request (FORMAT.md §12.11), signed by the grant's
 * holder: JSON text for POST /.rotree/token.
 * @param {object} grant decodeGrant()'s value @param {string} secretKey the holder's, hex
 * @param {{ now?: number, nonce?: string }} [o]
 */
export function tokenRequest (grant, secretKey, { now = Date.now(), nonce } = {}) {
  nonce ??= hex(globalThis.crypto.getRandomValues(new Uint8Array(16)))
  const time = new Date(now).toISOString()
  const message = tokenRequestMessage({ anchor: grant.anchor, name: grant.name, grantHash: grantHash(grant), time, nonce })
  return JSON.stringify({ grant: grantJson(grant), time, nonce, sig: sign(message, secretKey) })
}

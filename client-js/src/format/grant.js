// FORMAT.md §12.10: a grant, the signed document that lets one Ed25519 key
// fetch a tree's blobs from a gated edge until it expires, and the token
// request (§12.11) a holder signs to trade its grant for an edge token.
// Shape only: whose signatures count is trust/grant.js's decision.
//
//   {
//     "type": "rotree-grant",
//     "version": 2,
//     "anchor": "<64 hex key | t + 64 hex trust hash>",   the tree family (FORMAT.md §12.5)
//     "name": "<tree name>",                             "" for an unnamed tree
//     "holder": "<64 hex ed25519 public key>",
//     "scope": "/",                                     the whole tree; "/a/b/" subtrees reserved
//     "issued": "<ISO time>",
//     "expires": "<ISO time>",
//     "parent": null | { <the grant this one is delegated from> },
//     "signatures": [ { "key": <hex>, "sig": <hex> }, … ]
//   }
//
// The signed message (ASCII, LF line ends):
//
//   "rotree-grant-v2" LF
//   "tree "    <anchor> ":" <name>                    LF
//   "holder "  <64 hex>                               LF
//   "scope "   <scope>                                LF
//   "issued "  <ISO time, as in the JSON>             LF
//   "expires " <ISO time, as in the JSON>             LF
//   "parent "  (<64 hex: SHA-256 of the parent's message> | "-") LF
import { BadFormatError, UnsupportedVersionError } from '../errors.js'
import { utf8, decodeUtf8 } from './bytes.js'
import { object, publicKey, isoTime, treeName, signatures, jsonText } from './signed-doc.js'
import { sha256HexSync } from '#sha256'

export const GRANT_TYPE = 'rotree-grant'
/** Grants in one chain, the first (issued by the access role) included. */
export const MAX_GRANT_CHAIN = 4
/** Bytes of a grant's JSON, its parents inline included. */
export const MAX_GRANT = 16 * 1024
// a scope is "/" or a path of safe components ending in "/" (reserved: FORMAT.md §12.10)
const SCOPE_RE = /^\/(?:[A-Za-z0-9._~-]+\/){0,32}$/
const ANCHOR_RE = /^t?[0-9a-f]{64}$/
const MEMBERS = ['type', 'version', 'anchor', 'name', 'holder', 'scope', 'issued', 'expires', 'parent', 'signatures']

/** The exact bytes a grant's signers sign. @param {{ anchor: string, name: string, holder: string, scope: string, issued: string, expires: string, parentHash: string|null }} g */
export function grantMessage ({ anchor, name, holder, scope, issued, expires, parentHash }) {
  return utf8.encode(`rotree-grant-v2\ntree ${anchor}:${name}\nholder ${holder}\nscope ${scope}\nissued ${issued}\nexpires ${expires}\nparent ${parentHash ?? '-'}\n`)
}

/** SHA-256 (hex) of a decoded grant's message: how a child names its parent and a token request its grant. */
export function grantHash (grant) { return sha256HexSync(grant.message) }

function decodeLevel (j, depth) {
  const what = depth === 0 ? 'grant' : `grant (parent ${depth})`
  object(j, what, MEMBERS)
  if (j.type !== GRANT_TYPE) throw new BadFormatError(`${what}: type is not ${JSON.stringify(GRANT_TYPE)}`)
  if (!Number.isInteger(j.version)) throw new BadFormatError(`${what}: version missing`)
  if (j.version !== 2) throw new UnsupportedVersionError(`${what}: format version ${j.version}; this reader knows 2`)
  if (typeof j.anchor !== 'string' || !ANCHOR_RE.test(j.anchor)) throw new BadFormatError(`${what}: anchor is not a 64-hex key or t and a 64-hex trust hash`)
  treeName(j.name, `${what}: name`)
  publicKey(j.holder, `${what}: holder`)
  if (typeof j.scope !== 'string' || !SCOPE_RE.test(j.scope)) throw new BadFormatError(`${what}: scope is not "/" or a path ending in "/"`)
  const issuedMs = isoTime(j.issued, `${what}: issued`)
  const expiresMs = isoTime(j.expires, `${what}: expires`)
  if (expiresMs <= issuedMs) throw new BadFormatError(`${what}: expires is not after issued`)
  let parent = null
  if (j.parent !== null) {
    if (depth + 1 >= MAX_GRANT_CHAIN) throw new BadFormatError(`grant: a chain longer than ${MAX_GRANT_CHAIN} grants`)
    parent = decodeLevel(j.parent, depth + 1)
  }
  const g = {
    anchor: j.anchor, name: j.name, holder: j.holder, scope: j.scope, issued: j.issued, issuedMs, expires: j.expires, expiresMs,
    parent, signatures: signatures(j.signatures, what)
  }
  g.parentHash = parent === null ? null : grantHash(parent)
  g.message = grantMessage(g)
  return g
}

/**
 * Strict parse of a grant and its inline parents (at most MAX_GRANT_CHAIN in
 * all): shape only; ROTREE_BAD_FORMAT otherwise.
 * @param {Uint8Array|string|object} input JSON text or bytes, or the parsed object
 */
export function decodeGrant (input) {
  let j = input
  if (typeof input === 'string' || input instanceof Uint8Array) {
    const bytes = typeof input === 'string' ? utf8.encode(input) : input
    if (bytes.length > MAX_GRANT) throw new BadFormatError(`grant larger than ${MAX_GRANT} bytes`)
    try { j = JSON.parse(decodeUtf8(bytes)) } catch (err) { throw new BadFormatError('grant is not JSON', { cause: err }) }
  }
  return decodeLevel(j, 0)
}

/** The grant as a plain JSON value (its parents inline). */
export function grantJson (g) {
  return {
    type: GRANT_TYPE, version: 2, anchor: g.anchor, name: g.name, holder: g.holder, scope: g.scope,
    issued: g.issued, expires: g.expires, parent: g.parent ? grantJson(g.parent) : null, signatures: g.signatures ?? []
  }
}

/** The JSON text of a grant, as the reference tools write it. */
export function encodeGrant (g) { return jsonText(grantJson(g)) }

/** A grant's fields, unsigned, with its message: what `rotree grant issue|delegate` sign. */
export function unsignedGrant ({ anchor, name = '', holder, scope = '/', issued, expires, parent = null }) {
  return decodeGrant(JSON.parse(encodeGrant({ anchor, name, holder, scope, issued, expires, parent, signatures: [] })))
}

/** Does scope `inner` lie within scope `outer` (both "/"-terminated paths)? */
export function scopeWithin (inner, outer) { return inner.startsWith(outer) }

// FORMAT.md §12.11: the token request a holder signs
//
//   "rotree-token-request-v2" LF
//   "tree "  <anchor> ":" <name> LF
//   "grant " <64 hex: grantHash of the grant presented> LF
//   "time "  <ISO time> LF
//   "nonce " <32 hex> LF
const NONCE_RE = /^[0-9a-f]{32}$/
const REQUEST_MEMBERS = ['grant', 'time', 'nonce', 'sig']
export const MAX_TOKEN_REQUEST = MAX_GRANT + 1024

/** The exact bytes a holder signs to ask for an edge token. */
export function tokenRequestMessage ({ anchor, name, grantHash, time, nonce }) {
  return utf8.encode(`rotree-token-request-v2\ntree ${anchor}:${name}\ngrant ${grantHash}\ntime ${time}\nnonce ${nonce}\n`)
}

/**
 * Strict parse of a token request body: { grant, time, nonce, sig }.
 * @param {Uint8Array|string} input
 */
export function decodeTokenRequest (input) {
  const bytes = typeof input === 'string' ? utf8.encode(input) : input
  if (bytes.length > MAX_TOKEN_REQUEST) throw new BadFormatError(`token request larger than ${MAX_TOKEN_REQUEST} bytes`)
  let j
  try { j = JSON.parse(decodeUtf8(bytes)) } catch (err) { throw new BadFormatError('token request is not JSON', { cause: err }) }
  object(j, 'token request', REQUEST_MEMBERS)
  const grant = decodeGrant(j.grant)
  const timeMs = isoTime(j.time, 'token request: time')
  if (typeof j.nonce !== 'string' || !NONCE_RE.test(j.nonce)) throw new BadFormatError('token request: nonce is not 32 lowercase hex digits')
  if (typeof j.sig !== 'string' || !/^[0-9a-f]{128}$/.test(j.sig)) throw new BadFormatError('token request: sig is not 128 lowercase hex digits')
  const r = { grant, time: j.time, timeMs, nonce: j.nonce, sig: j.sig }
  r.message = tokenRequestMessage({ anchor: grant.anchor, name: grant.name, grantHash: grantHash(grant), time: j.time, nonce: j.nonce })
  return r
}

// FORMAT.md §12.12: the revocation list, trust/revoked.json, signed by the
// access role; an edge's exchange gives no token to a grant chain that holds
// a grant it names.
//
//   { "type": "rotree-revoked", "version": 2, "anchor": …, "name": …, "issued": "<ISO time>",
//     "grants": [ { "hash": "<64 hex grantHash>", "expires": "<ISO time>" }, … ], "signatures": [ … ] }
//
// The signed message (ASCII, LF line ends), one grant line per entry in the JSON's order:
//
//   "rotree-revoked-v2" LF
//   "tree "   <anchor> ":" <name>         LF
//   "issued " <ISO time>                  LF
//   ("grant " <64 hex> " " <ISO time>     LF)*
export const REVOKED_TYPE = 'rotree-revoked'
/** Bytes of a revocation list: about 100 bytes an entry. */
export const MAX_REVOKED = 1 << 20
const REVOKED_MEMBERS = ['type', 'version', 'anchor', 'name', 'issued', 'grants', 'signatures']

/** The exact bytes the access role signs for a revocation list. */
export function revokedMessage ({ anchor, name, issued, grants }) {
  return utf8.encode(`rotree-revoked-v2\ntree ${anchor}:${name}\nissued ${issued}\n${grants.map(g => `grant ${g.hash} ${g.expires}\n`).join('')}`)
}

/**
 * Strict parse of a revocation list: shape only (trust/grant.js checks whose
 * signatures count). Entries sorted by hash, each once.
 * @param {Uint8Array|string|object} input
 */
export function decodeRevoked (input) {
  let j = input
  if (typeof input === 'string' || input instanceof Uint8Array) {
    const bytes = typeof input === 'string' ? utf8.encode(input) : input
    if (bytes.length > MAX_REVOKED) throw new BadFormatError(`revocation list larger than ${MAX_REVOKED} bytes`)
    try { j = JSON.parse(decodeUtf8(bytes)) } catch (err) { throw new BadFormatError('revocation list is not JSON', { cause: err }) }
  }
  object(j, 'revocation list', REVOKED_MEMBERS)
  if (j.type !== REVOKED_TYPE) throw new BadFormatError(`revocation list: type is not ${JSON.stringify(REVOKED_TYPE)}`)
  if (j.version !== 2) throw new UnsupportedVersionError(`revocation list: format version ${j.version}; this reader knows 2`)
  if (typeof j.anchor !== 'string' || !ANCHOR_RE.test(j.anchor)) throw new BadFormatError('revocation list: anchor is not a 64-hex key or t and a 64-hex trust hash')
  treeName(j.name, 'revocation list: name')
  const issuedMs = isoTime(j.issued, 'revocation list: issued')
  if (!Array.isArray(j.grants)) throw new BadFormatError('revocation list: grants is not a list')
  const grants = j.grants.map((e, i) => {
    object(e, `revocation list: grants[${i}]`, ['hash', 'expires'])
    if (typeof e.hash !== 'string' || !/^[0-9a-f]{64}$/.test(e.hash)) throw new BadFormatError(`revocation list: grants[${i}].hash is not 64 lowercase hex digits`)
    if (i > 0 && e.hash <= j.grants[i - 1].hash) throw new BadFormatError('revocation list: grants are not sorted by hash, each once')
    return { hash: e.hash, expires: e.expires, expiresMs: isoTime(e.expires, `revocation list: grants[${i}].expires`) }
  })
  const r = { anchor: j.anchor, name: j.name, issued: j.issued, issuedMs, grants, signatures: signatures(j.signatures, 'revocation list') }
  r.message = revokedMessage(r)
  return r
}

/** The JSON text of a revocation list, as the reference tools write it. */
export function encodeRevoked (r) {
  return jsonText({ type: REVOKED_TYPE, version: 2, anchor: r.anchor, name: r.name, issued: r.issued, grants: r.grants.map(g => ({ hash: g.hash, expires: g.expires })), signatures: r.signatures ?? [] })
}

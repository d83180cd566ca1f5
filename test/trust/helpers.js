// Keys, trust documents, releases and fsinfo.json of format version 2, signed
// in memory, for the role and rotation tests.
import { generateKeyPair, sign } from 'rotree-client/crypto'
import { encodeTrustDoc, decodeTrustDoc, encodeFsinfoV2, decodeFsinfoV2, releaseMessage } from 'rotree-client/format'
import { trustHash, anchorText } from 'rotree-client/trust'

export const T0 = Date.UTC(2026, 0, 1)
export const DAY = 86400e3
export const iso = ms => new Date(ms).toISOString()

/** n fresh key pairs. */
export function keys (n) { return Array.from({ length: n }, () => generateKeyPair()) }
const pubs = ks => ks.map(k => k.publicKey).sort()

export function role (ks, threshold = 1) { return { threshold, keys: pubs(ks) } }

// the newest document made of each seq (a later document's default
// predecessor), and the family anchor ('t' + the hash of document 1) of each
// document by its hash (an fsinfo.json's default anchor)
const lastBySeq = new Map()
const familyByHash = new Map()

/** The anchor of the family `doc` belongs to, as the address spells it (a doc 1 hash: 't…'). */
export function familyOf (doc) { return familyByHash.get(trustHash(doc)) }

/**
 * A decoded trust document signed by `signers` (key pairs; a signer may
 * appear twice; `bad` adds a garbage signature for that key). `prev`: the
 * document it follows (or its hash); by default the newest made of seq − 1.
 */
export function trustDoc ({ seq, prev, root, release, timestamp, expires = T0 + 365 * DAY }, signers, { bad = [] } = {}) {
  prev ??= seq === 1 ? null : lastBySeq.get(seq - 1)
  const prevHash = prev == null ? null : typeof prev === 'string' ? prev : trustHash(prev)
  const fields = { seq, prev: prevHash, expires: iso(expires), roles: { root, release, timestamp } }
  const unsigned = decodeTrustDoc(encodeTrustDoc(fields))
  const signatures = signers.map(k => ({ key: k.publicKey, sig: sign(unsigned.message, k.secretKey) }))
  for (const k of bad) signatures.push({ key: k.publicKey, sig: 'ab'.repeat(64) })
  const text = encodeTrustDoc({ ...fields, signatures })
  const doc = decodeTrustDoc(text)
  lastBySeq.set(seq, doc)
  familyByHash.set(trustHash(doc), prevHash === null ? 't' + trustHash(doc) : familyByHash.get(prevHash))
  return doc
}

/**
 * A decoded fsinfo.json v2 with its release. `anchor` (a string or
 * parseFragment's object): by default the family of `trust`, or the first
 * timestamp signer's key for a single-key tree.
 */
export function fsinfo ({ anchor, name = '', trust = null, seq = 1, issued = T0, expires = T0 + DAY, release = {} }, { tsSigners, relSigners }) {
  anchor = anchor === undefined ? (trust ? familyOf(trust) : tsSigners[0].publicKey) : typeof anchor === 'string' ? anchor : anchorText(anchor)
  const rel = {
    anchor: release.anchor ?? anchor,
    name: release.name ?? name,
    seq: release.seq ?? 1,
    expires: iso(release.expires ?? T0 + 30 * DAY),
    root: { hash: release.root ?? 'ab'.repeat(32), size: 100, codec: 'none', decodedSize: 100, mtime: 0 }
  }
  rel.signatures = relSigners.map(k => ({ key: k.publicKey, sig: sign(releaseMessage(rel), k.secretKey) }))
  const fields = { anchor, name, trust: trust && { seq: trust.seq, hash: trustHash(trust) }, seq, issued: iso(issued), expires: iso(expires), release: rel }
  const unsigned = decodeFsinfoV2(encodeFsinfoV2(fields))
  const signatures = tsSigners.map(k => ({ key: k.publicKey, sig: sign(unsigned.message, k.secretKey) }))
  return decodeFsinfoV2(encodeFsinfoV2({ ...fields, signatures }))
}

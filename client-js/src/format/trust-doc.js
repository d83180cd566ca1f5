// FORMAT.md §12.2: the trust document, `trust/<seq>.json`: which keys hold
// each role of a tree family, and how many of them must sign. Signed by the
// root role (the threshold of the previous document's root keys and of its
// own: docs/TRUST.md rule 10).
//
//   {
//     "type": "rotree-trust",
//     "version": 2,
//     "seq": 2,                                   1, 2, 3, … with no gaps
//     "prev": <hex>,                              the hash of document seq − 1; null in document 1
//     "expires": "2027-11-23T00:00:00.000Z",
//     "roles": {
//       "root":      { "threshold": 2, "keys": [<hex>, <hex>, <hex>] },
//       "release":   { "threshold": 2, "keys": [<hex>, <hex>] },
//       "timestamp": { "threshold": 1, "keys": [<hex>] },
//       "access":    { "threshold": 1, "keys": [<hex>] }     optional (FORMAT.md §12.10)
//     },
//     "witnesses": { "threshold": 2, "list": [                                 optional (FORMAT.md §13.1)
//       { "name": "w1.example/w", "url": "https://w1.example/w", "key": <hex> }, … ] },
//     "signatures": [ { "key": <hex>, "sig": <hex> }, … ]
//   }
//
// Keys in a role are sorted and distinct. A document whose release role has no
// keys (threshold 0) retires every tree the family publishes. `prev` chains
// each document to the one before it, so two families that share root keys
// (one organisation's offline keys over several projects) cannot pass each
// other's documents off as their own (docs/TRUST.md rule 10).
//
// The signed message (ASCII, LF line ends, keys in the order of the list):
//
//   "rotree-trust-v2" LF
//   "seq "       <decimal>                          LF
//   "prev "      (<64 hex> | "-")                   LF
//   "expires "   <ISO time, as in the JSON>         LF
//   "root "      <threshold> (" " <key>)*           LF
//   "release "   <threshold> (" " <key>)*           LF
//   "timestamp " <threshold> (" " <key>)*           LF
//   "access "    <threshold> (" " <key>)*           LF   only when the role is there
//   "witnesses " <threshold> (" " <name> " " <key> " " <url>)*  LF   only when there are witnesses
//
// The anchor of an address that certifies a k-of-n root from the start
// ("#t<64 hex>", FORMAT.md §12.5) is the SHA-256 of document 1's message.
import { BadFormatError, UnsupportedVersionError } from '../errors.js'
import { utf8 } from './bytes.js'
import { parseObject, object, safeInt, isoTime, keyList, signatures, jsonText, dec, hex64, publicKey } from './signed-doc.js'

const fail = message => { throw new BadFormatError(message) }

export const TRUST_TYPE = 'rotree-trust'
export const MAX_TRUST_DOC = 64 * 1024
export const ROLES = ['root', 'release', 'timestamp']
/** Roles a document may leave out: without `access`, its message is exactly what it was before the role existed. */
export const OPTIONAL_ROLES = ['access']

const MEMBERS = ['type', 'version', 'seq', 'prev', 'expires', 'roles', 'witnesses', 'signatures']
/** At most this many witnesses; a witness name is a C2SP key name (no space, no +), a URL http(s) without space. */
export const MAX_WITNESSES = 32
const WITNESS_NAME = /^[\x21-\x2a\x2c-\x7e]{1,128}$/
const WITNESS_URL = /^https?:\/\/[\x21-\x7e]{1,1000}$/

/** The exact bytes each root key signs. */
export function trustMessage ({ seq, prev, expires, roles, witnesses = null }) {
  const line = r => `${r} ${roles[r].threshold}${roles[r].keys.map(k => ' ' + k).join('')}\n`
  const names = roles.access ? [...ROLES, 'access'] : ROLES
  const w = witnesses ? `witnesses ${witnesses.threshold}${witnesses.list.map(x => ` ${x.name} ${x.key} ${x.url}`).join('')}\n` : ''
  return utf8.encode(`rotree-trust-v2\nseq ${dec(seq)}\nprev ${prev ?? '-'}\nexpires ${expires}\n${names.map(line).join('')}${w}`)
}

/**
 * The witnesses member (FORMAT.md §13.1): 1–32 witnesses sorted by name, names
 * and keys distinct, and how many must cosign a checkpoint (1 … their number).
 * @returns {{ threshold: number, list: { name: string, url: string, key: string }[] } | null}
 */
export function witnessList (v, what = 'trust document: witnesses') {
  if (v === undefined || v === null) return null
  object(v, what, ['threshold', 'list'])
  if (!Array.isArray(v.list) || v.list.length < 1 || v.list.length > MAX_WITNESSES) throw new BadFormatError(`${what}.list is not a list of 1 to ${MAX_WITNESSES} witnesses`)
  const list = v.list.map((x, i) => {
    object(x, `${what}.list[${i}]`, ['name', 'url', 'key'])
    if (typeof x.name !== 'string' || !WITNESS_NAME.test(x.name)) throw new BadFormatError(`${what}.list[${i}].name is not a key name (printable ASCII, no space, no +)`)
    if (typeof x.url !== 'string' || !WITNESS_URL.test(x.url)) throw new BadFormatError(`${what}.list[${i}].url is not an http(s) URL without spaces`)
    return { name: x.name, url: x.url, key: publicKey(x.key, `${what}.list[${i}].key`) }
  })
  for (let i = 1; i < list.length; i++) if (!(list[i - 1].name < list[i].name)) throw new BadFormatError(`${what}.list is not sorted by name and distinct`)
  if (new Set(list.map(x => x.key)).size !== list.length) throw new BadFormatError(`${what}: two witnesses share a key`)
  const threshold = safeInt(v.threshold, `${what}.threshold`, 1, list.length)
  return { threshold, list }
}

/**
 * Strict parse of a trust document: shape only (thresholds within their key
 * counts, sorted keys); the trust module counts signatures.
 * @param {Uint8Array|string} input
 */
export function decodeTrustDoc (input) {
  const j = parseObject(input, MAX_TRUST_DOC, 'trust document')
  if (j.type !== TRUST_TYPE) throw new BadFormatError(`trust document: type is not ${JSON.stringify(TRUST_TYPE)}`)
  if (!Number.isInteger(j.version)) throw new BadFormatError('trust document: version missing')
  if (j.version !== 2) throw new UnsupportedVersionError(`trust document format version ${j.version}; this reader knows 2`)
  object(j, 'trust document', MEMBERS)
  const seq = safeInt(j.seq, 'trust document: seq', 1)
  // document 1 has no predecessor; every later one names its own
  const prev = seq === 1
    ? (j.prev === null ? null : fail('trust document 1: prev is not null'))
    : hex64(j.prev, `trust document ${seq}: prev`)
  const expiresMs = isoTime(j.expires, 'trust document: expires')
  object(j.roles, 'trust document: roles', [...ROLES, ...OPTIONAL_ROLES])
  const roles = {}
  for (const r of [...ROLES, ...OPTIONAL_ROLES.filter(o => j.roles[o] !== undefined)]) {
    const v = object(j.roles[r], `trust document: roles.${r}`, ['threshold', 'keys'])
    const keys = keyList(v.keys, `trust document: roles.${r}.keys`)
    // FORMAT.md §12.2: only the release role may be empty (a retired family)
    const min = r === 'release' ? 0 : 1
    const threshold = safeInt(v.threshold, `trust document: roles.${r}.threshold`, min, keys.length)
    if (keys.length > 0 && threshold === 0) throw new BadFormatError(`trust document: roles.${r} has keys but threshold 0`)
    if (keys.length < min) throw new BadFormatError(`trust document: roles.${r} has no keys`)
    roles[r] = { threshold, keys }
  }
  if (j.witnesses === null) throw new BadFormatError('trust document: witnesses is null (leave it out)')
  const witnesses = witnessList(j.witnesses)
  const doc = { seq, prev, expires: j.expires, expiresMs, roles, witnesses, signatures: signatures(j.signatures, 'trust document') }
  doc.message = trustMessage(doc)
  return doc
}

/** The JSON text of a trust document (with whatever signatures it has so far). */
export function encodeTrustDoc ({ seq, prev = null, expires, roles, witnesses = null, signatures = [] }) {
  const r = {}
  for (const name of [...ROLES, ...OPTIONAL_ROLES.filter(o => roles[o])]) r[name] = { threshold: roles[name].threshold, keys: [...roles[name].keys].sort() }
  const w = witnesses ? { witnesses: { threshold: witnesses.threshold, list: [...witnesses.list].sort((a, b) => a.name < b.name ? -1 : 1).map(({ name, url, key }) => ({ name, url, key })) } } : {}
  return jsonText({ type: TRUST_TYPE, version: 2, seq, prev, expires, roles: r, ...w, signatures })
}

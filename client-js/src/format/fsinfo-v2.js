// FORMAT.md §12.3 and §12.4: fsinfo.json of format version 2, which carries
// the release it makes current.
//
// A release is what the release role signs, once per published tree version,
// offline: the tree's name, a release sequence number, an expiry and the root.
// fsinfo.json is what the timestamp role signs, online and often: which
// release is current, under which trust document, until when.
//
//   {
//     "version": 2,
//     "anchor": "t<hex>",                     the family: its address anchor (FORMAT.md §12.5)
//     "name": "stable",                       "" for an unnamed tree
//     "trust": { "seq": 3, "hash": <hex> },   null for a single-key tree (§12.5)
//     "seq": 1767225600,                      timestamp sequence, never goes back
//     "issued": <ISO time>, "expires": <ISO time>,
//     "release": {
//       "anchor": "t<hex>", "name": "stable", "seq": 17, "expires": <ISO time>,
//       "root": { "hash": <hex>, "size": 625, "codec": "deflate-raw", "decodedSize": 2011, "mtime": 1748779260000 },
//       "signatures": [ { "key": <hex>, "sig": <hex> }, … ]
//     },
//     "signatures": [ { "key": <hex>, "sig": <hex> }, … ]
//   }
//
// trust.hash is the SHA-256 of the named trust document's message (§12.2).
// Both messages bind the family's anchor as well as the tree's name: a
// release or timestamp key two families share cannot carry one family's
// release or fsinfo.json over to the other (docs/TRUST.md rules 1 and 12).
// release message:                       fsinfo message:
//   "rotree-release-v2" LF                 "rotree-fsinfo-v2" LF
//   "anchor " <anchor> LF                  "anchor " <anchor> LF
//   "name " <name> LF                      "name " <name> LF
//   "seq " <decimal> LF                    "trust " (<seq> " " <hash> | "-") LF
//   "expires " <ISO time> LF               "seq " <decimal> LF
//   "root " <hash> " " <size> " "          "issued " <ISO time> LF
//          <codec> " " <decodedSize> " "   "expires " <ISO time> LF
//          <mtime> LF                      "release " <SHA-256 of the release message, hex> LF
//      | "root private " <commit> LF       "access " (<epoch> " " <keyring hash> " "
//   "manifest " (<hash> " " <size> | "-") LF        <keyring size> " " <wrapped root> | "-") LF
//
// A private tree (FORMAT.md §12.8) names its root by a commitment (`private`),
// its manifest in the release, and in fsinfo.json the keyring and the root
// wrapped under the epoch key (`access`).
import { BadFormatError, UnsupportedVersionError } from '../errors.js'
import { utf8 } from './bytes.js'
import { MAX_BLOB, MAX_KEYRING } from './limits.js'
import { CODECS } from './codec-names.js'
import { sha256HexSync } from '#sha256'
import { parseObject, object, hex64, safeInt, isoTime, treeName, signatures, jsonText, dec } from './signed-doc.js'

export const MAX_FSINFO_V2 = 16 * 1024

const MEMBERS = ['version', 'anchor', 'name', 'trust', 'seq', 'issued', 'expires', 'release', 'access', 'signatures']
const RELEASE_MEMBERS = ['anchor', 'name', 'seq', 'expires', 'root', 'manifest', 'signatures']
// FORMAT.md §12.8: a private tree's access member
const ACCESS_MEMBERS = ['epoch', 'keyring', 'root']
const B64URL = /^[A-Za-z0-9_-]+$/
// what a wrapped root ref may take: nonce, a ref with its key and an mtime, the tag
const MAX_WRAPPED_ROOT = 256
// FORMAT.md §12.5: a key, or "t" and the hash of trust document 1
const ANCHOR_RE = /^t?[0-9a-f]{64}$/

function anchor (v, what) {
  if (typeof v !== 'string' || !ANCHOR_RE.test(v)) throw new BadFormatError(`${what} is not an anchor (64 hex, or t and 64 hex)`)
  return v
}
const ROOT_MEMBERS = ['hash', 'size', 'codec', 'decodedSize', 'mtime']

/** The exact bytes each release key signs. */
export function releaseMessage ({ anchor, name, seq, expires, root, manifest = null }) {
  // FORMAT.md §12.8: a private tree's root is named by a commitment, and it names its manifest
  const r = root.private !== undefined ? `private ${root.private}` : `${root.hash} ${dec(root.size)} ${root.codec} ${dec(root.decodedSize)} ${dec(root.mtime)}`
  const m = manifest ? `${manifest.hash} ${dec(manifest.size)}` : '-'
  return utf8.encode(`rotree-release-v2\nanchor ${anchor}\nname ${name}\nseq ${dec(seq)}\nexpires ${expires}\nroot ${r}\nmanifest ${m}\n`)
}

/** The exact bytes each timestamp key signs; `releaseHash` is SHA-256(releaseMessage) in hex. */
export function fsinfoV2Message ({ anchor, name, trust, seq, issued, expires, access = null }, releaseHash) {
  const t = trust ? `${dec(trust.seq)} ${trust.hash}` : '-'
  const a = access ? `${dec(access.epoch)} ${access.keyring.hash} ${dec(access.keyring.size)} ${access.root}` : '-'
  return utf8.encode(`rotree-fsinfo-v2\nanchor ${anchor}\nname ${name}\ntrust ${t}\nseq ${dec(seq)}\nissued ${issued}\nexpires ${expires}\nrelease ${releaseHash}\naccess ${a}\n`)
}

/** { hash, size } of a blob stored as it is (the manifest's top page, the keyring). */
function plainRef (v, what, max) {
  object(v, what, ['hash', 'size'])
  return { hash: hex64(v.hash, `${what}.hash`), size: safeInt(v.size, `${what}.size`, 1, max) }
}

function decodeAccess (v) {
  object(v, 'fsinfo.json: access', ACCESS_MEMBERS)
  if (typeof v.root !== 'string' || !B64URL.test(v.root) || v.root.length > MAX_WRAPPED_ROOT) throw new BadFormatError('fsinfo.json: access.root is not a wrapped root (base64url)')
  return {
    epoch: safeInt(v.epoch, 'fsinfo.json: access.epoch', 1),
    keyring: plainRef(v.keyring, 'fsinfo.json: access.keyring', MAX_KEYRING),
    root: v.root
  }
}

function decodeRoot (v) {
  if (v !== null && typeof v === 'object' && Object.hasOwn(v, 'private')) {
    object(v, 'fsinfo.json: release.root', ['private'])
    return { private: hex64(v.private, 'fsinfo.json: release.root.private') }
  }
  object(v, 'fsinfo.json: release.root', ROOT_MEMBERS)
  const root = {
    hash: hex64(v.hash, 'fsinfo.json: release.root.hash'),
    size: safeInt(v.size, 'fsinfo.json: release.root.size', 1, MAX_BLOB),
    codec: v.codec,
    decodedSize: safeInt(v.decodedSize, 'fsinfo.json: release.root.decodedSize', 1, MAX_BLOB),
    mtime: safeInt(v.mtime, 'fsinfo.json: release.root.mtime', Number.MIN_SAFE_INTEGER)
  }
  if (!CODECS.includes(root.codec)) throw new BadFormatError(`fsinfo.json: release.root.codec ${JSON.stringify(v.codec)} is not one of ${CODECS.join(', ')}`)
  if (root.codec === 'none' && root.decodedSize !== root.size) throw new BadFormatError('fsinfo.json: an uncompressed root has decodedSize ≠ size')
  return root
}

export function decodeRelease (v) {
  object(v, 'fsinfo.json: release', RELEASE_MEMBERS)
  const r = {
    anchor: anchor(v.anchor, 'fsinfo.json: release.anchor'),
    name: treeName(v.name, 'fsinfo.json: release.name'),
    seq: safeInt(v.seq, 'fsinfo.json: release.seq'),
    expires: v.expires,
    expiresMs: isoTime(v.expires, 'fsinfo.json: release.expires'),
    root: decodeRoot(v.root),
    manifest: v.manifest === undefined ? null : plainRef(v.manifest, 'fsinfo.json: release.manifest', MAX_BLOB),
    signatures: signatures(v.signatures, 'fsinfo.json: release')
  }
  // FORMAT.md §12.8: a private root and a manifest come together
  if ((r.root.private !== undefined) !== (r.manifest !== null)) throw new BadFormatError('fsinfo.json: a release names a manifest exactly when its root is private')
  r.message = releaseMessage(r)
  return r
}

/**
 * FORMAT.md §6.1: the format version of an fsinfo.json (of any version),
 * read before anything else so a reader can dispatch on it. Bounded by the
 * larger version's size limit; each version's decoder applies its own.
 * @param {Uint8Array|string} input @returns {number}
 */
export function fsinfoVersion (input) {
  const j = parseObject(input, MAX_FSINFO_V2, 'fsinfo.json')
  if (!Number.isInteger(j.version)) throw new BadFormatError('fsinfo.json: version missing')
  return j.version
}

/**
 * Strict parse of a version-2 fsinfo.json: shape only; the trust module
 * (client-js/src/trust/roles.js) checks names, signatures, times, sequences.
 * @param {Uint8Array|string} input
 */
export function decodeFsinfoV2 (input) {
  const j = parseObject(input, MAX_FSINFO_V2, 'fsinfo.json')
  if (!Number.isInteger(j.version)) throw new BadFormatError('fsinfo.json: version missing')
  if (j.version !== 2) throw new UnsupportedVersionError(`fsinfo.json format version ${j.version}; this decoder reads 2`)
  object(j, 'fsinfo.json', MEMBERS)
  let trust = null
  if (j.trust !== null) {
    object(j.trust, 'fsinfo.json: trust', ['seq', 'hash'])
    trust = { seq: safeInt(j.trust.seq, 'fsinfo.json: trust.seq', 1), hash: hex64(j.trust.hash, 'fsinfo.json: trust.hash') }
  }
  const info = {
    version: 2,
    anchor: anchor(j.anchor, 'fsinfo.json: anchor'),
    name: treeName(j.name, 'fsinfo.json: name'),
    trust,
    seq: safeInt(j.seq, 'fsinfo.json: seq'),
    issued: j.issued,
    expires: j.expires,
    issuedMs: isoTime(j.issued, 'fsinfo.json: issued'),
    expiresMs: isoTime(j.expires, 'fsinfo.json: expires'),
    release: decodeRelease(j.release),
    access: j.access === undefined ? null : decodeAccess(j.access),
    signatures: signatures(j.signatures, 'fsinfo.json')
  }
  if (info.expiresMs <= info.issuedMs) throw new BadFormatError('fsinfo.json: expires is not after issued')
  if ((info.access !== null) !== (info.release.root.private !== undefined)) throw new BadFormatError('fsinfo.json: access is given exactly for a private release')
  info.releaseHash = sha256HexSync(info.release.message)
  info.message = fsinfoV2Message(info, info.releaseHash)
  return info
}

/** The JSON text of a version-2 fsinfo.json. */
export function encodeFsinfoV2 ({ anchor, name, trust, seq, issued, expires, release, access = null, signatures = [] }) {
  const { root } = release
  return jsonText({
    version: 2,
    anchor,
    name,
    trust: trust ? { seq: trust.seq, hash: trust.hash } : null,
    seq,
    issued,
    expires,
    release: {
      anchor: release.anchor,
      name: release.name,
      seq: release.seq,
      expires: release.expires,
      root: root.private !== undefined ? { private: root.private } : { hash: root.hash, size: root.size, codec: root.codec, decodedSize: root.decodedSize, mtime: root.mtime },
      ...(release.manifest ? { manifest: { hash: release.manifest.hash, size: release.manifest.size } } : {}),
      signatures: release.signatures ?? []
    },
    ...(access ? { access: { epoch: access.epoch, keyring: { hash: access.keyring.hash, size: access.keyring.size }, root: access.root } } : {}),
    signatures
  })
}

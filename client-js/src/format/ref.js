// A blob reference inside a binary blob (FORMAT.md §1.3, §12.6), for both
// format versions. Every blob kind (entry.js, dirpage.js, chunkindex.js)
// reads and writes its refs here, so the two versions differ in one place.
//
//   version 1:  ref := hash[32] uint(storedSize)
//   version 2:  ref := hash[32] uint(storedSize) u8(codec) [uint(decodedSize) if codec ≠ 0]
//                      [key[32] if codec has bit 0x10: a private tree's sealed blob, §12.8]
//
// A decoded ref is what a reader needs to fetch and use the blob:
//   version 1:  { hash, size }                          size: the blob's bytes
//   version 2:  { hash, size, storedSize, codec[, key] } size: the DECODED bytes (what
//               offsets, clipping and placement use); storedSize: the bytes on the
//               wire and the transfer cap; codec: 'none' | 'deflate-raw', the codec
//               of the bytes (inside the seal, for a sealed blob); key: 64 hex, the
//               AES-256-GCM key of a sealed blob
// so code that computes offsets from `size` works unchanged on either version,
// and `codec` being present marks a version-2 ref (verify.js decodes it).
import { BadFormatError } from '../errors.js'
import { toHex, fromHex } from './bytes.js'
import { HASH_LEN, MAX_BLOB } from './limits.js'
import { CODECS, CODEC_ID, CODEC_ENCRYPTED_BIT } from './codec-names.js'
import { MAX_SEALED } from './seal.js'

/** The blob magics' fourth byte, and what `{ version }` options accept. */
export const VERSIONS = Object.freeze([1, 2])

/** @param {{ version?: number }} [o] @returns {1|2} */
export function versionOf (o) {
  const v = o?.version ?? 1
  if (v !== 1 && v !== 2) throw new RangeError('format version must be 1 or 2, got ' + v)
  return v
}

/**
 * Read one ref. `max` bounds the size the referencing context allows
 * (CHUNK_MAX for a data chunk, MAX_BLOB for a page or an index): in version 1
 * the blob's size, in version 2 the decoded size (the stored size of any blob
 * is at most MAX_BLOB).
 * @param {import('./bytes.js').Reader} r @param {1|2} version @param {number} max
 */
export function readRef (r, version, max) {
  const hash = toHex(r.bytes(HASH_LEN))
  if (version === 1) {
    const size = r.uint(max)
    if (size === 0) r.fail('empty blob reference')
    return { hash, size }
  }
  const storedSize = r.uint(MAX_SEALED)
  if (storedSize === 0) r.fail('empty blob reference')
  const id = r.byte()
  if (id & CODEC_ENCRYPTED_BIT) {
    // FORMAT.md §12.8: a sealed blob; its decoded size and key follow
    const codec = CODECS[id & ~CODEC_ENCRYPTED_BIT]
    if (codec === undefined) r.fail(`unknown codec ${id}`)
    const size = r.uint(max)
    if (size === 0) r.fail('empty decoded blob')
    return { hash, size, storedSize, codec, key: toHex(r.bytes(32)) }
  }
  if (storedSize > MAX_BLOB) r.fail(`value ${storedSize} above limit ${MAX_BLOB}`)
  const codec = CODECS[id]
  if (codec === undefined) r.fail(`unknown codec ${id}`)
  if (id === 0) {
    if (storedSize > max) r.fail(`value ${storedSize} above limit ${max}`)
    return { hash, size: storedSize, storedSize, codec }
  }
  const size = r.uint(max)
  if (size === 0) r.fail('empty decoded blob')
  return { hash, size, storedSize, codec }
}

/**
 * Write one ref. A version-2 ref takes { hash, size, storedSize, codec } as
 * readRef returns it; `codec` defaults to 'none' (storedSize = size).
 * @param {import('./bytes.js').Writer} w @param {{ hash: string, size: number, storedSize?: number, codec?: string }} ref @param {1|2} version
 */
export function writeRef (w, ref, version) {
  w.bytes(fromHex(ref.hash))
  if (version === 1) {
    if (ref.codec !== undefined && ref.codec !== 'none') throw new RangeError('a version-1 ref cannot carry a codec')
    w.uint(ref.storedSize ?? ref.size)
    return
  }
  const codec = ref.codec ?? 'none'
  const id = CODEC_ID[codec]
  if (id === undefined) throw new RangeError('unknown codec ' + codec)
  const stored = ref.storedSize ?? ref.size
  if (ref.key !== undefined) {
    w.uint(stored); w.byte(id | CODEC_ENCRYPTED_BIT); w.uint(ref.size); w.bytes(fromHex(ref.key))
    return
  }
  w.uint(stored); w.byte(id)
  if (id === 0) {
    if (stored !== ref.size) throw new RangeError('an uncompressed ref has storedSize ≠ size')
  } else {
    w.uint(ref.size)
  }
}

/** The fields of a ref as a reader uses them (drops `bytes`, `entries`, names…). */
export function refOf (c) {
  if (c.codec === undefined) return { hash: c.hash, size: c.size }
  return c.key === undefined ? { hash: c.hash, size: c.size, storedSize: c.storedSize, codec: c.codec } : { hash: c.hash, size: c.size, storedSize: c.storedSize, codec: c.codec, key: c.key }
}

/**
 * The root ref of a version-2 release (FORMAT.md §12.3: JSON members hash,
 * size = stored bytes, codec, decodedSize) in the decoded form above.
 */
export function refOfReleaseRoot (root) {
  if (root.codec === 'none' && root.decodedSize !== root.size) throw new BadFormatError('an uncompressed root has decodedSize ≠ size')
  return { hash: root.hash, size: root.decodedSize, storedSize: root.size, codec: root.codec }
}

/**
 * The root of a version-2 release as a tool without reader keys walks it:
 * refOfReleaseRoot for a public release; for a private one (FORMAT.md
 * §12.8) its manifest's top page, marked `manifest`, with the keyring
 * fsinfo.json's `access` names (null for a release not published yet).
 * @param {{ root: object, manifest?: { hash: string, size: number } | null }} release
 * @param {{ keyring: { hash: string, size: number } } | null} [access]
 */
export function keylessRoot (release, access = null) {
  if (release.root.private === undefined) return refOfReleaseRoot(release.root)
  return { hash: release.manifest.hash, size: release.manifest.size, manifest: true, keyring: access ? { hash: access.keyring.hash, size: access.keyring.size } : null }
}

// Publishing a format-version-2 tree signed by one key (docs/FORMAT.md
// §12.5): the key of a `#<key>` address holds every role until the tree
// adopts a trust document, so it signs both the release (§12.3) and
// fsinfo.json (§12.4), whose `trust` is null. The text is recorded in
// history/ and renamed into place by lib/published/publish.js, as a
// version-1 root is.
//
//   publishSingleKeyV2(out, { rootRef, key, name, ttlMs, now, fsync })
//
// The release and fsinfo.json carry the same sequence number (nextSeq:
// above every number published or recorded in OUT, so neither ever goes
// back) and the same expiry, now + ttlMs: nothing is valid longer than the
// publisher asked. Trees with trust documents (several roles, thresholds)
// are published elsewhere; this module is the single-key case only.
import { UsageError } from 'rotree-client/errors'
import { encodeFsinfoV2, decodeFsinfoV2, releaseMessage } from 'rotree-client/src/format/fsinfo-v2.js'
import { nextSeq, publishFsinfo, removeUnsigned } from '../lib/published/publish.js'
import { sign, publicKeyOf } from './ed25519-node.js'

/**
 * The release's root member (FORMAT.md §12.6, JSON form) from a build's root
 * ref: `size` is the stored size, `decodedSize` the page's bytes.
 * @param {{ hash: string, size: number, storedSize?: number, codec?: string, mtime: number }} rootRef
 *   size decoded; storedSize and codec when the page is stored compressed (walk.js)
 */
export function releaseRoot (rootRef) {
  const codec = rootRef.codec ?? 'none'
  return { hash: rootRef.hash, size: rootRef.storedSize ?? rootRef.size, codec, decodedSize: rootRef.size, mtime: rootRef.mtime }
}

/**
 * The signed text of a single-key version-2 fsinfo.json: a release of
 * `rootRef` named `name`, both signed by `key`.
 * @param {object} o
 * @param {{ hash: string, size: number, storedSize?: number, codec?: string, mtime: number }} o.rootRef
 * @param {{ secretKey: string, publicKey: string }} o.key
 * @param {string} [o.name=''] the tree's name (FORMAT.md §12.1)
 * @param {number} o.seq the release's and fsinfo.json's sequence number
 * @param {number} o.now issued, ms @param {number} o.ttlMs valid for, ms
 * @returns {string}
 */
export function signSingleKeyV2 ({ rootRef, key, name = '', seq, now, ttlMs }) {
  if (publicKeyOf(key.secretKey) !== key.publicKey) throw new UsageError('the secret key does not match its public key')
  const issued = new Date(now).toISOString()
  const expires = new Date(now + ttlMs).toISOString()
  const release = { name, seq, expires, root: releaseRoot(rootRef) }
  release.signatures = [{ key: key.publicKey, sig: sign(releaseMessage(release), key.secretKey) }]
  const fields = { name, trust: null, seq, issued, expires, release }
  // decoding the unsigned text checks every member (a bad name, a bad root) and gives the message
  const { message } = decodeFsinfoV2(encodeFsinfoV2(fields))
  return encodeFsinfoV2({ ...fields, signatures: [{ key: key.publicKey, sig: sign(message, key.secretKey) }] })
}

/**
 * Sign and publish a version-2 root with one key: OUT/fsinfo.json (and
 * history/<seq>.json). The blobs must already be durable in OUT/h.
 * @param {string} out the published folder
 * @param {object} o
 * @param {{ hash: string, size: number, storedSize?: number, codec?: string, mtime: number }} o.rootRef
 *   the root directory's top page (size decoded) and the root's mtime (ms)
 * @param {{ secretKey: string, publicKey: string }} o.key
 * @param {string} [o.name=''] the tree's name; readers open it as <url>#<key>:<name>
 * @param {number} o.ttlMs how long fsinfo.json and the release are valid
 * @param {number} [o.now] clock, ms (issued)
 * @param {number} [o.seq] force a sequence number (it must be above every one OUT published)
 * @param {boolean} [o.fsync=true]
 * @returns {Promise<{ seq: number, expires: string, text: string }>}
 */
export async function publishSingleKeyV2 (out, { rootRef, key, name = '', ttlMs, now = Date.now(), seq: forced, fsync = true }) {
  const { seq: auto, last } = await nextSeq(out, now)
  const seq = forced ?? auto
  if (seq <= last) throw new UsageError(`sequence ${seq} is not above ${last}, already published in ${out}`)
  const text = signSingleKeyV2({ rootRef, key, name, seq, now, ttlMs })
  await publishFsinfo(out, text, fsync)
  await removeUnsigned(out) // a pending offline-signed root is older than this one
  return { seq, expires: new Date(now + ttlMs).toISOString(), text }
}

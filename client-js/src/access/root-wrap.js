// FORMAT.md §12.8: the root of a private tree, hidden. The release signs a
// commitment to the root's ref (its handle, sizes, codec, key, mtime), and
// fsinfo.json's `access.root` carries that ref wrapped under the epoch key:
//
//   rootRef := ref (format/ref.js, with its key) ‖ sint(mtime)
//   commit  := SHA-256("rotree-private-root-v1" LF ‖ rootRef)                     hex, in the release
//   wrapped := base64url(nonce[12] ‖ AES-256-GCM(epoch key, nonce, rootRef))     in fsinfo.json
//
// A reader unwraps it and checks the commitment: whoever can sign fsinfo.json
// and holds the epoch key can choose who reads, not which root is read.
import { base64urlnopad } from '@scure/base'
import { BadFormatError } from '../errors.js'
import { Reader, Writer, utf8 } from '../format/bytes.js'
import { readRef, writeRef } from '../format/ref.js'
import { MAX_BLOB } from '../format/limits.js'
import { gcmOpen, gcmSeal } from '#aead'
import { sha256HexSync } from '#sha256'

const COMMIT_PREFIX = utf8.encode('rotree-private-root-v1\n')

/** rootRef's bytes: the ref, with its key, and the root's mtime. */
export function encodeRootRef (ref, mtime) {
  const w = new Writer()
  writeRef(w, ref, 2)
  w.sint(mtime)
  return w.result()
}

export function decodeRootRef (bytes) {
  const r = new Reader(bytes)
  const ref = readRef(r, 2, MAX_BLOB)
  const mtime = r.sint()
  r.end()
  if (ref.key === undefined) throw new BadFormatError('the wrapped root is not a sealed blob\'s ref')
  return { ref, mtime }
}

/** The release's `private` member for a root ref (hex). */
export function rootCommit (rootRefBytes) {
  const b = new Uint8Array(COMMIT_PREFIX.length + rootRefBytes.length)
  b.set(COMMIT_PREFIX, 0); b.set(rootRefBytes, COMMIT_PREFIX.length)
  return sha256HexSync(b)
}

/** access.root: rootRef wrapped under the epoch key with a random nonce. */
export function wrapRoot (epochKey, rootRefBytes) {
  const nonce = globalThis.crypto.getRandomValues(new Uint8Array(12))
  const sealed = gcmSeal(epochKey, nonce, rootRefBytes)
  const out = new Uint8Array(12 + sealed.length)
  out.set(nonce, 0); out.set(sealed, 12)
  return base64urlnopad.encode(out)
}

/**
 * The root ref access.root wraps, checked against the release's commitment.
 * @param {Uint8Array} epochKey @param {string} wrapped @param {string} commit 64 hex
 * @returns {Promise<{ ref: object, mtime: number }>}
 */
export async function unwrapRoot (epochKey, wrapped, commit) {
  let bytes
  try { bytes = base64urlnopad.decode(wrapped) } catch { throw new BadFormatError('fsinfo.json: access.root is not base64url') }
  if (bytes.length < 12 + 16) throw new BadFormatError('fsinfo.json: access.root is too short')
  const plain = await gcmOpen(epochKey, bytes.subarray(0, 12), bytes.subarray(12))
  if (plain === null) throw new BadFormatError('fsinfo.json: access.root does not open under the keyring\'s epoch key')
  if (rootCommit(plain) !== commit) throw new BadFormatError('the root the keyring gives is not the one the release signs (its commitment differs)')
  return decodeRootRef(plain)
}

// FORMAT.md §6: fsinfo.json, the one signed, mutable file (SFSRO's FSINFO).
//
// The signature does not cover the JSON text. It covers a fixed ASCII message
// rebuilt from the validated fields, so whitespace, key order or number
// spelling cannot change what was signed, and each field has one spelling:
//
//   "rotree-fsinfo-v1\n"
//   "key "     <64 hex>            "\n"
//   "seq "     <decimal, no sign, no leading zeros> "\n"
//   "issued "  <ISO-8601 UTC, as Date.prototype.toISOString> "\n"
//   "expires " <ISO-8601 UTC>      "\n"
//   "root "    <64 hex> " " <decimal blob size> " " <root mtime, signed decimal ms> "\n"
//
// ed25519 signs those bytes; "sig" is the 64-byte signature (R || S) in hex.
import { BadFormatError, UnsupportedVersionError } from '../errors.js'
import { utf8, decodeUtf8 } from './bytes.js'
import { FORMAT_VERSION, MAX_BLOB, MAX_FSINFO } from './limits.js'
import { isoTime, publicKey } from './signed-doc.js'

const FIELDS = ['version', 'key', 'seq', 'issued', 'expires', 'root', 'rootSize', 'rootMtime', 'sig']
const HEX64 = /^[0-9a-f]{64}$/
const HEX128 = /^[0-9a-f]{128}$/

/** The exact bytes ed25519 signs (see the header comment). */
export function fsinfoMessage ({ key, seq, issued, expires, root, rootSize, rootMtime }) {
  return utf8.encode(
    `rotree-fsinfo-v${FORMAT_VERSION}\nkey ${key}\nseq ${seq}\nissued ${issued}\nexpires ${expires}\nroot ${root} ${rootSize} ${rootMtime}\n`)
}

/**
 * Strict parse. Checks shape only; verify.js checks signature, key, time and sequence.
 * @param {Uint8Array|string} input
 */
export function decodeFsinfo (input) {
  const bytes = typeof input === 'string' ? utf8.encode(input) : input
  if (bytes.length > MAX_FSINFO) throw new BadFormatError(`fsinfo.json larger than ${MAX_FSINFO} bytes`)
  let j
  try { j = JSON.parse(decodeUtf8(bytes)) } catch (err) { throw new BadFormatError('fsinfo.json is not JSON', { cause: err }) }
  if (j === null || typeof j !== 'object' || Array.isArray(j)) throw new BadFormatError('fsinfo.json is not an object')
  // FORMAT.md §6.1: the version is checked first, so a future format fails with a clear message
  if (!Number.isInteger(j.version)) throw new BadFormatError('fsinfo.json: version missing')
  if (j.version !== FORMAT_VERSION) throw new UnsupportedVersionError(`fsinfo.json format version ${j.version}; this reader knows ${FORMAT_VERSION}`)
  for (const k of Object.keys(j)) if (!FIELDS.includes(k)) throw new BadFormatError(`fsinfo.json: unknown field ${JSON.stringify(k)}`)
  publicKey(j.key, 'fsinfo.json: key')
  if (!Number.isSafeInteger(j.seq) || j.seq < 0) throw new BadFormatError('fsinfo.json: seq is not a non-negative integer')
  const issuedMs = isoTime(j.issued, 'fsinfo.json: issued') // one spelling only: what toISOString prints
  const expiresMs = isoTime(j.expires, 'fsinfo.json: expires')
  if (expiresMs <= issuedMs) throw new BadFormatError('fsinfo.json: expires is not after issued')
  if (typeof j.root !== 'string' || !HEX64.test(j.root)) throw new BadFormatError('fsinfo.json: root is not 64 hex digits')
  if (!Number.isSafeInteger(j.rootSize) || j.rootSize < 1 || j.rootSize > MAX_BLOB) throw new BadFormatError('fsinfo.json: rootSize out of range')
  if (!Number.isSafeInteger(j.rootMtime)) throw new BadFormatError('fsinfo.json: rootMtime is not an integer')
  if (typeof j.sig !== 'string' || !HEX128.test(j.sig)) throw new BadFormatError('fsinfo.json: sig is not 128 hex digits')
  return {
    version: j.version, key: j.key, seq: j.seq, issued: j.issued, expires: j.expires,
    issuedMs, expiresMs, root: { hash: j.root, size: j.rootSize }, rootMtime: j.rootMtime, sig: j.sig,
    message: fsinfoMessage(j)
  }
}

/**
 * fsinfo.json text for already-signed fields (the builder signs fsinfoMessage()).
 * @param {{ key: string, seq: number, issued: string, expires: string, root: string, rootSize: number, rootMtime: number, sig: string }} f
 */
export function encodeFsinfo (f) {
  const o = { version: FORMAT_VERSION, key: f.key, seq: f.seq, issued: f.issued, expires: f.expires, root: f.root, rootSize: f.rootSize, rootMtime: f.rootMtime, sig: f.sig }
  return JSON.stringify(o, null, 2) + '\n'
}

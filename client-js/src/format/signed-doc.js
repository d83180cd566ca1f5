// FORMAT.md §12: what every signed JSON document of format version 2 shares
// (trust documents, releases, fsinfo.json): strict member checks, one
// spelling per value, and a signature list.
//
// A document never signs its JSON text. Each type rebuilds a fixed ASCII
// message from its validated members (as fsinfo.json v1 does, FORMAT.md §6),
// so re-serialising the JSON cannot change what was signed. The signature
// list is outside the message:
//
//   "signatures": [ { "key": <64 hex ed25519 public key>, "sig": <128 hex> }, … ]
//
// at most MAX_SIGNATURES entries. Which keys count, and how many must, is the
// trust module's business (client-js/src/trust/roles.js), not the decoder's.
import { BadFormatError } from '../errors.js'
import { utf8, decodeUtf8 } from './bytes.js'
import { weakKeyReason } from './public-key.js'

export const HEX64 = /^[0-9a-f]{64}$/
export const HEX128 = /^[0-9a-f]{128}$/
export const MAX_SIGNATURES = 32
export const MAX_ROLE_KEYS = 32
// FORMAT.md §12.1: a tree name is short, lowercase, and safe in a URL
// fragment, a file name and a log line.
export const NAME_RE = /^(?:[a-z0-9][a-z0-9._-]{0,63})?$/

/** Parse at most `max` bytes of UTF-8 JSON into a plain object. */
export function parseObject (input, max, what) {
  const bytes = typeof input === 'string' ? utf8.encode(input) : input
  if (bytes.length > max) throw new BadFormatError(`${what} larger than ${max} bytes`)
  let j
  try { j = JSON.parse(decodeUtf8(bytes)) } catch (err) { throw new BadFormatError(`${what} is not JSON`, { cause: err }) }
  return object(j, what)
}

/** A plain JSON object whose members are exactly `allowed` (optional ones may be absent). */
export function object (v, what, allowed) {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new BadFormatError(`${what} is not an object`)
  if (allowed) for (const k of Object.keys(v)) if (!allowed.includes(k)) throw new BadFormatError(`${what}: unknown member ${JSON.stringify(k)}`)
  return v
}

export function hex64 (v, what) {
  if (typeof v !== 'string' || !HEX64.test(v)) throw new BadFormatError(`${what} is not 64 lowercase hex digits`)
  return v
}

/** An ed25519 public key: 64 lowercase hex, canonical and not of small order (format/public-key.js). */
export function publicKey (v, what) {
  hex64(v, what)
  const weak = weakKeyReason(v)
  if (weak) throw new BadFormatError(`${what} ${weak}`)
  return v
}

export function safeInt (v, what, min = 0, max = Number.MAX_SAFE_INTEGER) {
  if (!Number.isSafeInteger(v) || v < min || v > max) throw new BadFormatError(`${what} is not an integer in ${min}…${max}`)
  return v
}

/** An ISO-8601 UTC time in the one spelling Date.prototype.toISOString prints; returns ms. */
export function isoTime (v, what) {
  if (typeof v !== 'string') throw new BadFormatError(`${what} is not a string`)
  const ms = Date.parse(v)
  if (!Number.isFinite(ms) || isoString(ms) !== v) throw new BadFormatError(`${what} is not an ISO-8601 UTC time`)
  return ms
}

const pad = (n, width) => String(n).padStart(width, '0')

/**
 * What Date.prototype.toISOString prints for a valid time (ECMA-262
 * §21.4.1.32: a six-digit signed year outside 0…9999), spelled out: V8's
 * first toISOString() in a process is slow (docs/BENCHMARKS.md P3t), on the
 * path of every openTree(). test/format/format.test.js compares the two.
 * @param {number} ms
 */
export function isoString (ms) {
  const d = new Date(ms)
  const y = d.getUTCFullYear()
  const year = y >= 0 && y <= 9999 ? pad(y, 4) : (y < 0 ? '-' : '+') + pad(Math.abs(y), 6)
  return `${year}-${pad(d.getUTCMonth() + 1, 2)}-${pad(d.getUTCDate(), 2)}T${pad(d.getUTCHours(), 2)}:${pad(d.getUTCMinutes(), 2)}:${pad(d.getUTCSeconds(), 2)}.${pad(d.getUTCMilliseconds(), 3)}Z`
}

export function treeName (v, what) {
  if (typeof v !== 'string' || !NAME_RE.test(v)) throw new BadFormatError(`${what} is not a tree name ([a-z0-9][a-z0-9._-]*, at most 64 characters)`)
  return v
}

/** The signature list: [{ key, sig }], as written (duplicates are kept: the counter counts each key once). */
export function signatures (v, what) {
  if (!Array.isArray(v) || v.length > MAX_SIGNATURES) throw new BadFormatError(`${what}.signatures is not a list of at most ${MAX_SIGNATURES}`)
  return v.map((s, i) => {
    object(s, `${what}.signatures[${i}]`, ['key', 'sig'])
    hex64(s.key, `${what}.signatures[${i}].key`)
    if (typeof s.sig !== 'string' || !HEX128.test(s.sig)) throw new BadFormatError(`${what}.signatures[${i}].sig is not 128 lowercase hex digits`)
    return { key: s.key, sig: s.sig }
  })
}

/** A key list: distinct ed25519 public keys (publicKey), sorted (one spelling per set). */
export function keyList (v, what) {
  if (!Array.isArray(v) || v.length > MAX_ROLE_KEYS) throw new BadFormatError(`${what} is not a list of at most ${MAX_ROLE_KEYS} keys`)
  v.forEach((k, i) => publicKey(k, `${what}[${i}]`))
  for (let i = 1; i < v.length; i++) if (!(v[i - 1] < v[i])) throw new BadFormatError(`${what} is not sorted and distinct`)
  return [...v]
}

/** The message line for a decimal integer: no sign, no leading zeros. */
export const dec = n => String(n)

/** JSON text as the reference builder writes every document: two-space indent, final newline. */
export const jsonText = o => JSON.stringify(o, null, 2) + '\n'

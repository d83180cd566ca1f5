// C2SP tlog-cosignature, the Ed25519 `cosignature/v1` type: a witness's
// signed-note signature over a checkpoint, with a time. The key ID is
//
//   SHA-256(<name> ‖ 0x0A ‖ 0x04 ‖ 32-byte Ed25519 public key)[0:4]
//
// the signature `timestamp (u64, big-endian) ‖ Ed25519 signature` over
//
//   "cosignature/v1" LF "time " <timestamp, decimal> LF <the checkpoint note text>
//
// and a verifier key `<name>+<8 hex key ID>+<base64(0x04 ‖ public key)>`.
// A cosigner and a cosignature verifier are a note signer and verifier
// (note.js), so signNote and openNote take them beside the log's keys.
import { sha256Sync } from '#sha256'
import { sign as ed25519Sign, verifySignature } from '#ed25519'
import { TlogError } from './hash.js'
import { toHex, fromHex, encodeBase64, decodeBase64, isValidKeyName, openNote } from './note.js'

export const ALG_COSIGNATURE_V1 = 4
const SIG_PREFIX = '\u2014 '
const utf8 = new TextEncoder()
const hex8 = id => id.toString(16).padStart(8, '0')

/** The key ID of an Ed25519 cosigner: SHA-256(name ‖ 0x0A ‖ 0x04 ‖ public key)[0:4] as a uint32. */
export function cosignatureKeyId (name, publicKey) {
  const n = utf8.encode(name)
  const b = new Uint8Array(n.length + 2 + publicKey.length)
  b.set(n); b[n.length] = 0x0a; b[n.length + 1] = ALG_COSIGNATURE_V1; b.set(publicKey, n.length + 2)
  const d = sha256Sync(b)
  return ((d[0] << 24) | (d[1] << 16) | (d[2] << 8) | d[3]) >>> 0
}

/** The bytes a cosigner signs: the header line, the time line, then the checkpoint text. */
export function cosignedMessage (text, timestamp) {
  const body = typeof text === 'string' ? utf8.encode(text) : text
  const head = utf8.encode(`cosignature/v1\ntime ${timestamp}\n`)
  const out = new Uint8Array(head.length + body.length)
  out.set(head); out.set(body, head.length)
  return out
}

function checkTime (t) {
  if (!Number.isSafeInteger(t) || t < 0) throw new TlogError(`a cosignature time is whole seconds, not ${t}`)
}

/** The verifier key text of an Ed25519 cosigner (32 bytes or 64 hex). */
export function encodeCosignatureVerifierKey (name, publicKey) {
  const pub = typeof publicKey === 'string' ? fromHex(publicKey) : publicKey
  if (pub.length !== 32) throw new TlogError('an Ed25519 public key is 32 bytes')
  if (!isValidKeyName(name)) throw new TlogError(`invalid key name ${JSON.stringify(name)}`)
  const key = new Uint8Array(33); key[0] = ALG_COSIGNATURE_V1; key.set(pub, 1)
  return `${name}+${hex8(cosignatureKeyId(name, pub))}+${encodeBase64(key)}`
}

/**
 * A cosignature verifier for a name and an Ed25519 public key (64 hex):
 * { name, id, publicKey, verify(text, sig) }, sig being timestamp ‖ signature
 * as a note line carries it after the key ID.
 */
export function cosignatureVerifierOf (name, publicKey) {
  if (!isValidKeyName(name)) throw new TlogError(`invalid key name ${JSON.stringify(name)}`)
  const id = cosignatureKeyId(name, fromHex(publicKey))
  const verify = (text, sig) => {
    if (sig.length !== 72) return false
    const t = readTime(sig)
    return t !== null && verifySignature(toHex(sig.subarray(8)), cosignedMessage(text, t), publicKey)
  }
  return { name, id, publicKey, verify }
}

/** A cosignature verifier from its key text; TlogError for anything malformed or of another type. */
export function parseCosignatureVerifierKey (vkey) {
  const [name, id16, ...rest] = String(vkey).split('+')
  const key = rest.length ? decodeBase64(rest.join('+')) : null
  if (!/^[0-9a-f]{8}$/.test(id16 ?? '') || key === null || key.length !== 33 || !isValidKeyName(name)) throw new TlogError('malformed verifier id')
  if (key[0] !== ALG_COSIGNATURE_V1) throw new TlogError('not a cosignature/v1 verifier key (type 0x04)')
  const v = cosignatureVerifierOf(name, toHex(key.subarray(1)))
  if (parseInt(id16, 16) !== v.id) throw new TlogError('invalid verifier hash')
  return v
}

// the u64 timestamp of timestamp ‖ signature; null above 2^53 (no time this reads means)
function readTime (sig) {
  const t = new DataView(sig.buffer, sig.byteOffset, 8).getBigUint64(0)
  return t <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(t) : null
}

/**
 * A cosigner: a note signer ({ name, id, sign(text) }) whose signature is
 * timestamp ‖ Ed25519 signature; `now` gives the time in seconds (default: the clock).
 * @param {string} name @param {{ secretKey: string, publicKey: string }} key hex
 * @param {() => number} [now]
 */
export function cosignerOf (name, { secretKey, publicKey }, now = () => Math.floor(Date.now() / 1000)) {
  if (!isValidKeyName(name)) throw new TlogError(`invalid key name ${JSON.stringify(name)}`)
  const id = cosignatureKeyId(name, fromHex(publicKey))
  const sign = text => {
    const t = now()
    checkTime(t)
    const sig = fromHex(ed25519Sign(cosignedMessage(text, t), secretKey))
    const out = new Uint8Array(72)
    new DataView(out.buffer).setBigUint64(0, BigInt(t))
    out.set(sig, 8)
    return out
  }
  return { name, id, sign }
}

/** The signature line `— <name> <base64(key ID ‖ timestamp ‖ signature)>` LF of a cosigner over a checkpoint text. */
export function cosignatureLine (text, cosigner) {
  if (typeof text !== 'string' || !text.endsWith('\n')) throw new TlogError('malformed note')
  const sig = cosigner.sign(utf8.encode(text))
  const b = new Uint8Array(4 + sig.length)
  new DataView(b.buffer).setUint32(0, cosigner.id)
  b.set(sig, 4)
  return `${SIG_PREFIX}${cosigner.name} ${encodeBase64(b)}\n`
}

/** The time (seconds) a note signature's base64 (key ID ‖ timestamp ‖ signature) carries, or null. */
export function cosignatureTime (base64) {
  const raw = decodeBase64(base64)
  return raw === null || raw.length !== 76 ? null : readTime(raw.subarray(4))
}

/**
 * The cosignatures on a signed note by `cosigners` (cosignature verifiers)
 * that verify: [{ name, id, time, base64 }], each key once. The log's own
 * signature is not checked here (readCheckpoint does); a known cosigner's
 * signature that fails is a TlogError, as openNote makes it.
 * @param {Uint8Array|string} note @param {ReturnType<typeof cosignatureVerifierOf>[]} cosigners
 */
export function verifyCosignatures (note, cosigners) {
  let opened
  try { opened = openNote(note, cosigners) } catch (err) {
    if (err.message === 'note has no verifiable signatures') return []
    throw err
  }
  return opened.sigs.map(s => ({ ...s, time: cosignatureTime(s.base64) }))
}

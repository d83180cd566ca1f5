// C2SP signed-note: a UTF-8 text ending in a newline, a blank line, then
// one or more lines `— <key name> <base64(key ID ‖ signature)>`. Ed25519
// note keys only (signature type 0x01): key ID = the first 4 bytes of
// SHA-256(key name ‖ 0x0A ‖ 0x01 ‖ public key), and a verifier key is written
// `<name>+<8 hex key ID>+<base64(0x01 ‖ public key)>`. Parsing refuses what Go's
// golang.org/x/mod/sumdb/note refuses, with its messages ("malformed note").
import { sha256Sync } from '#sha256'
import { sign as ed25519Sign, verifySignature } from '#ed25519'
import { TlogError } from './hash.js'

const ALG_ED25519 = 1
const MAX_SIGNATURES = 100
const SIG_PREFIX = '\u2014 '
const utf8 = new TextEncoder()
const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })
// Go's unicode.IsSpace
const SPACE = /[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]/u

export const toHex = b => Array.from(b, x => x.toString(16).padStart(2, '0')).join('')
export function fromHex (s) {
  if (!/^([0-9a-f]{2})*$/.test(s)) throw new TlogError('not lowercase hex')
  const out = new Uint8Array(s.length / 2)
  for (let i = 0; i < out.length; i++) out[i] = parseInt(s.slice(2 * i, 2 * i + 2), 16)
  return out
}

/** Standard padded base64 of bytes. */
export function encodeBase64 (bytes) {
  let s = ''
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000))
  return btoa(s)
}

/** Standard padded base64, canonical only (it encodes back to the same text); null when not. */
export function decodeBase64 (text) {
  if (typeof text !== 'string' || text.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(text)) return null
  let bin
  try { bin = atob(text) } catch { return null }
  const out = new Uint8Array(bin.length)
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i)
  return encodeBase64(out) === text ? out : null
}

/** A key name a note may carry: non-empty, no Unicode space, no `+`. */
export function isValidKeyName (name) { return typeof name === 'string' && name !== '' && !SPACE.test(name) && !name.includes('+') && name.isWellFormed() }

/** The key ID of an Ed25519 note key: SHA-256(name ‖ 0x0A ‖ 0x01 ‖ public key)[0:4] as a uint32. */
export function noteKeyId (name, publicKey) {
  const key = new Uint8Array(1 + publicKey.length)
  key[0] = ALG_ED25519
  key.set(publicKey, 1)
  return keyHash(name, key)
}

function keyHash (name, key) {
  const n = utf8.encode(name)
  const b = new Uint8Array(n.length + 1 + key.length)
  b.set(n); b[n.length] = 0x0a; b.set(key, n.length + 1)
  const d = sha256Sync(b)
  return ((d[0] << 24) | (d[1] << 16) | (d[2] << 8) | d[3]) >>> 0
}

const hex8 = id => id.toString(16).padStart(8, '0')

/** The verifier key text `name+keyid+base64(0x01 ‖ key)` of an Ed25519 public key (32 bytes or 64 hex). */
export function encodeVerifierKey (name, publicKey) {
  const pub = typeof publicKey === 'string' ? fromHex(publicKey) : publicKey
  if (pub.length !== 32) throw new TlogError('an Ed25519 public key is 32 bytes')
  if (!isValidKeyName(name)) throw new TlogError(`invalid key name ${JSON.stringify(name)}`)
  const key = new Uint8Array(33); key[0] = ALG_ED25519; key.set(pub, 1)
  return `${name}+${hex8(noteKeyId(name, pub))}+${encodeBase64(key)}`
}

/**
 * A verifier from its key text (Go's NewVerifier): { name, id, publicKey (64
 * hex), verify(message, signature) }. Throws TlogError for anything malformed.
 */
export function parseVerifierKey (vkey) {
  // as Go's strings.Cut, twice: the base64 key may hold a + itself
  const [name, id16, ...rest] = String(vkey).split('+')
  const key = rest.length ? decodeBase64(rest.join('+')) : null
  if (!/^[0-9a-f]{8}$/.test(id16 ?? '') || key === null || key.length === 0 || !isValidKeyName(name)) throw new TlogError('malformed verifier id')
  const id = parseInt(id16, 16)
  if (id !== keyHash(name, key)) throw new TlogError('invalid verifier hash')
  if (key[0] !== ALG_ED25519) throw new TlogError('unknown verifier algorithm')
  if (key.length !== 33) throw new TlogError('malformed verifier id')
  return verifierOf(name, toHex(key.subarray(1)))
}

/** A verifier for a name and an Ed25519 public key (64 hex), its ID computed. */
export function verifierOf (name, publicKey) {
  if (!isValidKeyName(name)) throw new TlogError(`invalid key name ${JSON.stringify(name)}`)
  const id = noteKeyId(name, fromHex(publicKey))
  return { name, id, publicKey, verify: (msg, sig) => sig.length === 64 && verifySignature(toHex(sig), msg, publicKey) }
}

/** A signer for a name and an Ed25519 key pair (hex, the secret key its 32-byte seed). */
export function signerOf (name, { secretKey, publicKey }) {
  if (!isValidKeyName(name)) throw new TlogError(`invalid key name ${JSON.stringify(name)}`)
  return { name, id: noteKeyId(name, fromHex(publicKey)), sign: msg => fromHex(ed25519Sign(msg, secretKey)) }
}

/**
 * The signed note of `text` (which must end in a newline): the text, a blank
 * line and one signature line per signer, in order.
 */
export function signNote (text, signers) {
  if (typeof text !== 'string' || !text.endsWith('\n')) throw new TlogError('malformed note')
  const msg = utf8.encode(text)
  let out = text + '\n'
  for (const s of signers) {
    if (!isValidKeyName(s.name)) throw new TlogError('invalid signer')
    const sig = s.sign(msg)
    const b = new Uint8Array(4 + sig.length)
    new DataView(b.buffer).setUint32(0, s.id)
    b.set(sig, 4)
    out += `${SIG_PREFIX}${s.name} ${encodeBase64(b)}\n`
  }
  return out
}

/**
 * Open a signed note (Go's note.Open): { text, sigs, unverified }, where
 * sigs are the signatures by `verifiers` that verify (each key once) and
 * unverified the lines by other keys. Throws TlogError: "malformed note"
 * for bad syntax, "invalid signature for key …" when a known key's signature
 * fails, "note has no verifiable signatures" (with .note) when no known key
 * signed it, "ambiguous key …" when two verifiers share a name and ID.
 * @param {Uint8Array|string} msg
 * @param {{ name: string, id: number, verify: Function }[]} verifiers
 */
export function openNote (msg, verifiers) {
  const bytes = typeof msg === 'string' ? utf8.encode(msg) : msg
  let s
  try { s = strictUtf8.decode(bytes) } catch { throw new TlogError('malformed note') }
  if (/[\u0000-\u0009\u000b-\u001f]/.test(s)) throw new TlogError('malformed note')
  const split = s.lastIndexOf('\n\n')
  if (split < 0) throw new TlogError('malformed note')
  const text = s.slice(0, split + 1)
  let sigs = s.slice(split + 2)
  if (sigs.length === 0 || !sigs.endsWith('\n')) throw new TlogError('malformed note')
  const textBytes = utf8.encode(text)
  const note = { text, sigs: [], unverified: [] }
  const seen = new Set(); const seenUnverified = new Set()
  let numSig = 0
  while (sigs.length > 0) {
    const i = sigs.indexOf('\n')
    const line = sigs.slice(0, i)
    sigs = sigs.slice(i + 1)
    if (!line.startsWith(SIG_PREFIX)) throw new TlogError('malformed note')
    const rest = line.slice(SIG_PREFIX.length)
    const sp = rest.indexOf(' ')
    const name = sp < 0 ? rest : rest.slice(0, sp)
    const b64 = sp < 0 ? '' : rest.slice(sp + 1)
    const raw = decodeBase64(b64)
    if (raw === null || !isValidKeyName(name) || b64 === '' || raw.length < 5) throw new TlogError('malformed note')
    const id = new DataView(raw.buffer, raw.byteOffset).getUint32(0)
    if (++numSig > MAX_SIGNATURES) throw new TlogError('malformed note')
    const known = verifiers.filter(v => v.name === name && v.id === id)
    if (known.length === 0) {
      if (!seenUnverified.has(rest)) { seenUnverified.add(rest); note.unverified.push({ name, id, base64: b64 }) }
      continue
    }
    if (known.length > 1) throw new TlogError(`ambiguous key ${name}+${hex8(id)}`)
    const k = `${name}+${hex8(id)}`
    if (seen.has(k)) continue
    seen.add(k)
    if (!known[0].verify(textBytes, raw.subarray(4))) throw new TlogError(`invalid signature for key ${k}`)
    note.sigs.push({ name, id, base64: b64 })
  }
  if (note.sigs.length === 0) {
    const err = new TlogError('note has no verifiable signatures')
    err.note = note
    throw err
  }
  return note
}

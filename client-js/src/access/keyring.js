// FORMAT.md §12.8: the keyring of a private tree, an age file (age-encryption.org/v1)
// whose payload is the epoch key; how a reader opens it (keyring-seal.js
// seals it, through the `age-encryption` package):
//
//   payload := 72 74 4b 02 ‖ uint(epoch) ‖ epoch key[32]
//
// One X25519 stanza per reader, no recipient ids. All X25519 stanzas share
// one ephemeral share (BatchX25519Recipient), so a reader computes one X25519
// and tries its one wrap key on the stanza bodies (FastX25519Identity)
// instead of one X25519 per stanza; the `age` tool does not care and opens it
// as any age file. The count of stanzas is padded to padme(readers) with
// stanzas of random bodies under the same share. Hybrid post-quantum
// recipients (age1pq1…) get age's own stanzas.
//
// The stanzas are in the order of a value only each reader can compute
// (HKDF of its shared secret, "rotree-keyring-order"), so a reader starts
// at the position its own value predicts and finds its stanza after about
// √N tries instead of N/2; to anyone else the order is a random permutation
// (dummy stanzas get random values), so it tells nothing about who reads.
//
// Each reader's wrap key is age's: HKDF-SHA256(X25519(e, R), salt = share ‖ R,
// "age-encryption.org/v1/X25519"), ChaCha20-Poly1305 with a zero nonce over the
// 16-byte file key. A shared ephemeral keeps every reader's shared secret its
// own (X25519(e, R) differs per R), and the salt binds the recipient.
import { x25519 } from '../crypto/x25519.js'
import { chacha20poly1305, chacha20 } from '@noble/ciphers/chacha.js'
import { poly1305 } from '@noble/ciphers/_poly1305.js'
import { hkdf } from '@noble/hashes/hkdf.js'
import { sha256 } from '@noble/hashes/sha2.js'
import { bech32, base64nopad } from '@scure/base'
import { BadFormatError, NoAccessError } from '../errors.js'
import { Reader, Writer, utf8, decodeUtf8 } from '../format/bytes.js'
import { hmacSha256 } from '#aead'
import { padme } from '../format/seal.js'
import { MAX_READERS } from '../format/limits.js'

const KEYRING_MAGIC = Uint8Array.of(0x72, 0x74, 0x4b, 0x02)
export const LABEL = utf8.encode('age-encryption.org/v1/X25519')
export const ZERO_NONCE = new Uint8Array(12)

/** The 32-byte X25519 public key of an `age1…` recipient; a typed error for anything else. */
export function recipientKey (s) {
  let r
  try { r = bech32.decodeToBytes(s) } catch { r = null }
  if (!r || !s.startsWith('age1') || r.prefix !== 'age' || r.bytes.length !== 32) throw new BadFormatError(`not an age X25519 recipient (age1…): ${JSON.stringify(String(s).slice(0, 80))}`)
  return r.bytes
}

/** The 32-byte scalar of an `AGE-SECRET-KEY-1…` identity. */
export function identityScalar (s) {
  let r
  try { r = bech32.decodeToBytes(s) } catch { r = null }
  if (!r || !s.startsWith('AGE-SECRET-KEY-1') || r.prefix.toUpperCase() !== 'AGE-SECRET-KEY-' || r.bytes.length !== 32) throw new BadFormatError('not an age X25519 identity (AGE-SECRET-KEY-1…)')
  return r.bytes
}

/** The age1… recipient of an identity. */
export function recipientOf (identity) {
  return bech32.encodeFromBytes('age', x25519.getPublicKey(identityScalar(identity)))
}

/** The keyring's payload: the epoch and its key. */
export function encodeEpoch (epoch, key) {
  const w = new Writer()
  w.bytes(KEYRING_MAGIC); w.uint(epoch); w.bytes(key)
  return w.result()
}

export function decodeEpoch (bytes) {
  if (bytes.length < 4 || bytes[0] !== 0x72 || bytes[1] !== 0x74 || bytes[2] !== 0x4b || bytes[3] !== 0x02) throw new BadFormatError('the keyring does not hold an epoch key (bad magic)')
  const r = new Reader(bytes)
  r.pos = 4
  const epoch = r.uint()
  const key = r.bytes(32)
  r.end()
  return { epoch, key }
}

/**
 * An X25519 identity that finds its stanza with one X25519 per distinct
 * ephemeral share: age's Identity interface.
 */
class FastX25519Identity {
  constructor (identity) {
    this.scalar = identityScalar(identity)
    this.R = x25519.getPublicKey(this.scalar)
  }

  unwrapFileKey (stanzas) {
    const groups = new Map() // share (base64) → the bodies of the X25519 stanzas under it, in order
    for (const s of stanzas) {
      if (s.args[0] !== 'X25519' || s.args.length !== 2 || s.body.length !== 32) continue
      let g = groups.get(s.args[1])
      if (g === undefined) groups.set(s.args[1], g = [])
      g.push(s.body)
    }
    for (const [arg, bodies] of groups) {
      let share
      try { share = base64nopad.decode(arg) } catch { continue }
      const fileKey = this.openGroup(share, bodies, b => b)
      if (fileKey !== null) return fileKey
    }
    return null
  }

  /**
   * This identity's file key among `bodies`, stanzas under one ephemeral
   * `share` (body(i) gives the i-th as 32 bytes, or null), tried from where
   * this identity's order value puts it, outwards; null when none opens.
   */
  openGroup (share, bodies, body) {
    if (share.length !== 32) return null
    const salt = new Uint8Array(64); salt.set(share); salt.set(this.R, 32)
    let secret
    try { secret = x25519.getSharedSecret(this.scalar, share) } catch { return null } // a low-order share
    const opener = stanzaOpener(hkdf(sha256, secret, salt, LABEL, 32))
    const n = bodies.length
    const at = Math.min(n - 1, Math.floor(orderOf(secret, salt) * n))
    for (let d = 0; d < n; d++) {
      for (const i of d === 0 ? [at] : [at - d, at + d]) {
        if (i < 0 || i >= n) continue
        const b = body(bodies[i])
        const fileKey = b !== null && b.length === 32 ? opener(b) : null
        if (fileKey !== null) return fileKey
      }
    }
    return null
  }
}

/**
 * The epoch key a keyring holds for `identity` (an AGE-SECRET-KEY-1… or
 * AGE-SECRET-KEY-PQ-1… string); ROTREE_NO_ACCESS when the identity opens
 * none of its stanzas.
 *
 * An X25519 identity reads the age file here (openX25519): age's header
 * parser handles a stanza at a time through streams, which for the 10,000
 * stanzas of a large keyring costs more than the whole open may
 * (docs/BENCHMARKS.md P17), while finding one stanza needs only a scan for
 * line ends. The header MAC and the payload are checked as age-encryption
 * checks them (age-encryption.org/v1); test/access/keyring.test.js opens the
 * same keyrings with age-encryption and with the `age` tool. Other
 * identities (hybrid post-quantum) go through age-encryption's Decrypter.
 * @param {Uint8Array} keyring verified by hash @param {string} identity
 * @returns {Promise<{ epoch: number, key: Uint8Array }>}
 */
export async function openKeyring (keyring, identity) {
  if (identity.startsWith('AGE-SECRET-KEY-1')) return decodeEpoch(openX25519(keyring, new FastX25519Identity(identity)))
  // age-encryption (Node; the browser build reads X25519 identities only: #age-pq)
  const { Decrypter } = await import('#age-pq')
  const d = new Decrypter()
  d.addIdentity(identity)
  let payload
  try {
    payload = await d.decrypt(keyring, 'uint8array')
  } catch (err) {
    if (/no identity matched/i.test(err.message)) throw noAccess(err)
    throw new BadFormatError(`the keyring is not an age file this reader opens: ${err.message}`, { cause: err })
  }
  return decodeEpoch(payload)
}

const noAccess = cause => new NoAccessError('this identity is not one of the tree\'s readers: the keyring holds no epoch key for it', { cause })
const INTRO = utf8.encode('age-encryption.org/v1')
const HEADER_LABEL = utf8.encode('header')
const PAYLOAD_LABEL = utf8.encode('payload')
const STREAM_CHUNK = 64 * 1024

/**
 * age-encryption.org/v1 for one X25519 identity: the header's stanzas found
 * by line ends (bodies decoded only when tried), the file key from this
 * identity's stanza, the header MAC, and a payload of one STREAM chunk.
 * @returns {Uint8Array} the payload
 */
function openX25519 (bytes, identity) {
  const bad = why => new BadFormatError(`the keyring is not an age file: ${why}`)
  const lines = lineReader(bytes)
  if (!sameBytes(lines.next(), INTRO)) throw bad('no age-encryption.org/v1 line')
  // X25519 stanzas grouped by their share, read as bytes (one X25519 per share, FastX25519Identity)
  const groups = []
  let macLine
  for (;;) {
    const line = lines.next()
    if (line === null) throw bad('no MAC line')
    if (line[0] === 0x2d && line[1] === 0x2d && line[2] === 0x2d && line[3] === 0x20) { macLine = line; break } // "--- "
    if (!(line[0] === 0x2d && line[1] === 0x3e && line[2] === 0x20)) throw bad('a header line that is neither a stanza nor the MAC') // "-> "
    let last = null
    for (;;) {
      const b = lines.next()
      if (b === null) throw bad('a stanza without its body')
      last = b
      if (b.length < 64) break
    }
    // "-> X25519 <share>" with a one-line body: age's X25519 stanza; anything else is another identity's
    if (!startsWith(line, X25519_ARGS) || line.length !== X25519_ARGS.length + 43 || last.length !== 43) continue
    const share = line.subarray(X25519_ARGS.length)
    let g = groups.at(-1)
    if (g === undefined || !sameBytes(g.share, share)) groups.push(g = { share, bodies: [] })
    g.bodies.push(last)
  }
  let fileKey = null
  for (const g of groups) {
    const share = b64(g.share)
    fileKey = share === null ? null : identity.openGroup(share, g.bodies, b64)
    if (fileKey !== null) break
  }
  if (fileKey === null) throw noAccess()
  // the MAC covers the header up to and including "---"
  const headerNoMAC = bytes.subarray(0, macLine.byteOffset - bytes.byteOffset + 3)
  let mac
  try { mac = base64nopad.decode(decodeUtf8(macLine.subarray(4))) } catch { throw bad('a malformed MAC') }
  const want = hmacSha256(hkdf(sha256, fileKey, undefined, HEADER_LABEL, 32), headerNoMAC)
  if (!sameBytes(mac, want)) throw bad('the header MAC does not verify')
  const rest = bytes.subarray(lines.pos)
  if (rest.length < 16 + 16 || rest.length > 16 + STREAM_CHUNK + 16) throw bad('a payload that is not one STREAM chunk')
  const nonce = rest.subarray(0, 16)
  const streamNonce = new Uint8Array(12)
  streamNonce[11] = 1 // the last (and only) chunk
  try {
    return chacha20poly1305(hkdf(sha256, fileKey, nonce, PAYLOAD_LABEL, 32), streamNonce).decrypt(rest.subarray(16))
  } catch { throw bad('the payload does not decrypt') }
}

const X25519_ARGS = utf8.encode('-> X25519 ')
const startsWith = (a, prefix) => a.length >= prefix.length && sameBytes(a.subarray(0, prefix.length), prefix)
/** Base64 (no padding) bytes decoded; null when they are not. */
function b64 (ascii) { try { return base64nopad.decode(decodeUtf8(ascii)) } catch { return null } }

/** Lines of `bytes` split at LF, as views; next() is null past the last LF; pos: where the next line starts. */
function lineReader (bytes) {
  return {
    pos: 0,
    next () {
      const end = bytes.indexOf(0x0a, this.pos)
      if (end < 0) return null
      const line = bytes.subarray(this.pos, end)
      this.pos = end + 1
      return line
    }
  }
}

function sameBytes (a, b) {
  if (a === null || a.length !== b.length) return false
  let d = 0
  for (let i = 0; i < a.length; i++) d |= a[i] ^ b[i]
  return d === 0
}

export function randomBytes (n) { return globalThis.crypto.getRandomValues(new Uint8Array(n)) }

const ORDER_LABEL = utf8.encode('rotree-keyring-order')
/** A reader's place in [0, 1), from its shared secret: a PRF value nobody else can compute. */
export function orderOf (secret, salt) { return toUnit(hkdf(sha256, secret, salt, ORDER_LABEL, 7)) }
export function randomOrder () { return toUnit(randomBytes(7)) }
/** 52 bits of `b` as a number in [0, 1). */
function toUnit (b) { return ((b[0] & 0x0f) * 2 ** 48 + b[1] * 2 ** 40 + b[2] * 2 ** 32 + b[3] * 2 ** 24 + b[4] * 2 ** 16 + b[5] * 2 ** 8 + b[6]) / 2 ** 52 }

/**
 * ChaCha20-Poly1305 opening of 32-byte stanza bodies under one key and the
 * zero nonce: the keystream and the Poly1305 key are the same for every
 * body, so they are computed once and each try costs one Poly1305 of 32
 * bytes. The file key, or null when the tag does not verify.
 */
function stanzaOpener (key) {
  const ks = chacha20(key, ZERO_NONCE, new Uint8Array(128))
  const polyKey = ks.subarray(0, 32) // block 0 (RFC 8439 §2.6)
  const stream = ks.subarray(64, 80) // block 1 encrypts the 16-byte file key
  const msg = new Uint8Array(32) // ciphertext (16, no padding needed), le64(0) AAD length, le64(16)
  msg[24] = 16
  return body => {
    msg.set(body.subarray(0, 16), 0)
    const tag = poly1305(msg, polyKey)
    let diff = 0
    for (let i = 0; i < 16; i++) diff |= tag[i] ^ body[16 + i]
    if (diff !== 0) return null
    const out = new Uint8Array(16)
    for (let i = 0; i < 16; i++) out[i] = body[i] ^ stream[i]
    return out
  }
}


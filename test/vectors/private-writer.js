// A private tree (docs/FORMAT.md §12.8) written from the spec, apart from the
// builder and with every random value given: the private test vectors
// (make-private.js) publish with it. The sealing, the age keyring, the
// wrapped root and its commitment are written here with node:crypto from
// §12.8's text (not with client-js's sealBlob, sealKeyring or wrapRoot, so the
// vectors check those against the spec); pages, refs, the manifest and
// fsinfo.json use the format module's encoders, as v2-writer.js does.
//
//   const w = new PrivateWriter(out, { secret })      // out/h/<sha256>: sealed blobs
//   const root = await w.dir([...specs])              // v2-writer.js entry specs; refs carry keys
//   const rootRef = encodeRootRef(root, mtime)        // rotree-client/access
//   const keyring = ageKeyring({ epoch, epochKey, readers: [scalar…], fileKey, ephemeral, nonce })
//   wrapRoot(epochKey, nonce12, rootRef); rootCommit(rootRef)
import crypto from 'node:crypto'
import fs from 'node:fs/promises'
import path from 'node:path'
import { bech32 } from '@scure/base'
import { packBlob } from 'rotree-client/codec'
import { encodeFsinfoV2, decodeFsinfoV2, releaseMessage, buildManifest, decodeDirPage, decodeChunkIndex, Reader, readRef, MAX_BLOB, CHUNK_MAX } from 'rotree-client/format'
import { verifyDecoded } from 'rotree-client/verify'
import { sign } from 'rotree-client/crypto'
import { V2Writer, V2, iso } from './v2-writer.js'

const sha256 = b => crypto.createHash('sha256').update(b).digest()
const hmac = (key, b) => crypto.createHmac('sha256', key).update(b).digest()
const hkdf = (ikm, salt, info, n) => Buffer.from(crypto.hkdfSync('sha256', ikm, salt, Buffer.from(info), n))
const b64 = b => Buffer.from(b).toString('base64').replace(/=+$/, '')
const b64url = b => Buffer.from(b).toString('base64url')

/** Padmé, FORMAT.md §12.8: L rounded up to end in E − S zero bits, E = ⌊log2 L⌋, S = ⌊log2 E⌋ + 1. */
export function padme (L) {
  if (L < 2) return L
  const E = Math.floor(Math.log2(L))
  const S = Math.floor(Math.log2(E)) + 1
  const unit = 2 ** (E - S)
  return Math.ceil(L / unit) * unit
}

/** padded := inner ‖ 0x80 ‖ 0x00*, padme(len(inner) + 1) bytes; `to` pads to another length (a tampered blob). */
export function pad (inner, { to = padme(inner.length + 1), marker = 0x80 } = {}) {
  const out = Buffer.alloc(to)
  Buffer.from(inner).copy(out)
  out[inner.length] = marker
  return out
}

/** key := HMAC-SHA256(tree secret, "rotree-blob-key-v1" ‖ SHA-256(inner)). */
export const blobKey = (secret, inner) => hmac(secret, Buffer.concat([Buffer.from('rotree-blob-key-v1'), sha256(inner)]))

/** AES-256-GCM with a 12-byte nonce: ciphertext ‖ 16-byte tag. */
export function gcm (key, nonce, plain) {
  const c = crypto.createCipheriv('aes-256-gcm', key, nonce)
  return Buffer.concat([c.update(plain), c.final(), c.getAuthTag()])
}

/** stored := AES-256-GCM(key, 12 zero bytes, padded). */
export const sealPadded = (key, padded) => gcm(key, Buffer.alloc(12), padded)

/** A blob's inner bytes sealed under the key the tree secret gives them: { stored, key (hex) }. */
export function seal (inner, secret) {
  const key = blobKey(secret, inner)
  return { stored: sealPadded(key, pad(inner)), key: key.toString('hex') }
}

// ---- X25519 and age (age-encryption.org/v1), with node:crypto
const PKCS8_X25519 = Buffer.from('302e020100300506032b656e04220420', 'hex')
const SPKI_X25519 = Buffer.from('302a300506032b656e032100', 'hex')
const privateKey = scalar => crypto.createPrivateKey({ key: Buffer.concat([PKCS8_X25519, scalar]), format: 'der', type: 'pkcs8' })
const publicKey = raw => crypto.createPublicKey({ key: Buffer.concat([SPKI_X25519, raw]), format: 'der', type: 'spki' })
export const x25519Public = scalar => crypto.createPublicKey(privateKey(scalar)).export({ format: 'der', type: 'spki' }).subarray(SPKI_X25519.length)
const x25519 = (scalar, pub) => crypto.diffieHellman({ privateKey: privateKey(scalar), publicKey: publicKey(pub) })

/** An age identity (AGE-SECRET-KEY-1…) and its recipient (age1…) from a 32-byte scalar. */
export function ageKeys (scalar) {
  return {
    identity: bech32.encode('age-secret-key-', bech32.toWords(scalar), false).toUpperCase(),
    recipient: bech32.encode('age', bech32.toWords(x25519Public(scalar)), false)
  }
}

function chachaSeal (key, nonce, plain) {
  const c = crypto.createCipheriv('chacha20-poly1305', key, nonce, { authTagLength: 16 })
  return Buffer.concat([c.update(plain), c.final(), c.getAuthTag()])
}

/** 52 bits of b as a number in [0, 1): a stanza's place (client-js/src/access/keyring.js orders by it). */
const toUnit = b => ((b[0] & 0x0f) * 2 ** 48 + b[1] * 2 ** 40 + b[2] * 2 ** 32 + b[3] * 2 ** 24 + b[4] * 2 ** 16 + b[5] * 2 ** 8 + b[6]) / 2 ** 52

/** The keyring's payload: 72 74 4b 02 ‖ uint(epoch) ‖ epoch key[32] (uint: a varint, FORMAT.md §3.1). */
export function epochPayload (epoch, epochKey) {
  const v = []
  for (let n = epoch; ; n = Math.floor(n / 128)) { if (n < 128) { v.push(n); break } v.push((n % 128) | 0x80) }
  return Buffer.concat([Buffer.from([0x72, 0x74, 0x4b, 0x02, ...v]), epochKey])
}

/**
 * The keyring (FORMAT.md §12.8): an age file of `payload`, one X25519 stanza
 * per reader under one ephemeral share, no recipient ids, padme(readers)
 * stanzas (random bodies from `filler`), in the order of each stanza's
 * HKDF(shared secret, share ‖ R, "rotree-keyring-order") value.
 * @param {{ payload: Buffer, readers: Buffer[] (X25519 public keys), fileKey: Buffer (16), ephemeral: Buffer (32), nonce: Buffer (16), filler: (i: number) => Buffer (39 bytes) }} o
 */
export function ageKeyring ({ payload, readers, fileKey, ephemeral, nonce, filler }) {
  const share = x25519Public(ephemeral)
  const stanzas = readers.map(R => {
    const secret = x25519(ephemeral, R)
    const salt = Buffer.concat([share, R])
    const wrapKey = hkdf(secret, salt, 'age-encryption.org/v1/X25519', 32)
    return { order: toUnit(hkdf(secret, salt, 'rotree-keyring-order', 7)), body: chachaSeal(wrapKey, Buffer.alloc(12), fileKey) }
  })
  for (let i = readers.length; i < padme(readers.length); i++) {
    const r = filler(i)
    stanzas.push({ order: toUnit(r.subarray(32, 39)), body: r.subarray(0, 32) })
  }
  stanzas.sort((a, b) => a.order - b.order)
  const header = 'age-encryption.org/v1\n' + stanzas.map(s => `-> X25519 ${b64(share)}\n${b64(s.body)}\n`).join('') + '---'
  const mac = hmac(hkdf(fileKey, Buffer.alloc(0), 'header', 32), Buffer.from(header))
  const streamNonce = Buffer.alloc(12); streamNonce[11] = 1 // chunk 0, the last
  const body = chachaSeal(hkdf(fileKey, nonce, 'payload', 32), streamNonce, payload)
  return Buffer.concat([Buffer.from(`${header} ${b64(mac)}\n`), nonce, body])
}

/** access.root := base64url(nonce[12] ‖ AES-256-GCM(epoch key, nonce, rootRef)). */
export const wrapRoot = (epochKey, nonce, rootRef) => b64url(Buffer.concat([nonce, gcm(epochKey, nonce, rootRef)]))

/** The release's `private`: SHA-256("rotree-private-root-v1" LF ‖ rootRef), hex. */
export const rootCommit = rootRef => sha256(Buffer.concat([Buffer.from('rotree-private-root-v1\n'), rootRef])).toString('hex')

/**
 * The children's refs of a version-2 directory index page ('dir') or chunk
 * index ('cindex'), read with readRef whole, keys included (FORMAT.md §12.6
 * grammar; the page checked by decodeDirPage or decodeChunkIndex first).
 * decodeDirPage and decodeChunkIndex leave a child's key out of what they
 * return (client-js/src/format/dirpage.js, chunkindex.js), so a writer that
 * walks what it wrote reads the refs here.
 */
export function indexChildren (decoded, kind) {
  const r = new Reader(decoded)
  r.pos = 4
  const level = r.uint()
  const count = r.uint()
  const children = []
  for (let i = 0; i < count; i++) {
    if (kind === 'dir') r.lbytes(1024)
    const ref = readRef(r, 2, kind === 'cindex' && level === 1 ? CHUNK_MAX : MAX_BLOB)
    if (kind === 'dir' || level > 1) r.uint()
    children.push(ref)
  }
  r.end()
  return { level, children }
}

export class PrivateWriter extends V2Writer {
  /** @param {string} out @param {{ secret: Buffer, anchor?: string }} o secret: the tree secret (32 bytes) */
  constructor (out, { secret, anchor }) {
    super(out, { anchor })
    this.secret = secret
  }

  /** A blob as a private tree's builder stores it: packBlob's inner bytes, sealed; its ref, with the key. */
  async put (bytes) {
    const { stored: inner, codec } = packBlob(bytes)
    const s = seal(inner, this.secret)
    return { hash: await this.putStored(s.stored), size: bytes.length, storedSize: s.stored.length, codec, key: s.key }
  }

  /** A sealed blob from its inner bytes and a key of our choosing, padded as given (tampered variants). */
  async putSealedWith (inner, key, padOpts) {
    const stored = sealPadded(key, pad(inner, padOpts))
    return { hash: await this.putStored(stored), storedSize: stored.length }
  }

  /**
   * Every blob `root` reaches (hash → { ref, kind }): pages decrypted and decoded
   * from out/h with the keys their parents give, chunks listed, never opened.
   */
  async reachable (root) {
    const out = new Map()
    const refOf = c => ({ hash: c.hash, size: c.size, storedSize: c.storedSize, codec: c.codec, key: c.key })
    const open = async (ref, kind) => {
      out.set(ref.hash, { ref, kind })
      return verifyDecoded(new Uint8Array(await fs.readFile(path.join(this.out, 'h', ref.hash))), ref)
    }
    const dir = async ref => {
      const decoded = await open(ref, 'dir')
      const page = decodeDirPage(decoded, V2)
      out.get(ref.hash).kind = page.kind === 'leaf' ? 'dir-leaf' : 'dir-index'
      if (page.kind === 'index') { for (const c of indexChildren(decoded, 'dir').children) await dir(c); return }
      for (const e of page.entries) {
        if (e.dir) await dir(refOf(e.dir))
        for (const c of [...(e.chunks ?? []), ...(e.lead ? [e.lead] : [])]) out.set(c.hash, { ref: refOf(c), kind: 'chunk' })
        if (e.index) await cindex(refOf(e.index))
      }
    }
    const cindex = async ref => {
      const decoded = await open(ref, 'chunk-index')
      decodeChunkIndex(decoded, V2)
      const { level, children } = indexChildren(decoded, 'cindex')
      for (const c of children) {
        if (level === 1) out.set(c.hash, { ref: c, kind: 'chunk' }); else await cindex(c)
      }
    }
    await dir(root)
    return out
  }

  /** The manifest of every blob `root` reaches, its pages stored as they are: { hash, size, blobs }. */
  async manifest (root) {
    const blobs = [...(await this.reachable(root)).values()].map(b => ({ hash: b.ref.hash, size: b.ref.storedSize }))
    return buildManifest(blobs, async page => ({ hash: await this.putStored(page), size: page.length }))
  }

  /** A blob stored as it is (the keyring, a manifest page): { hash, size }. */
  async putPlain (bytes) { return { hash: await this.putStored(bytes), size: bytes.length } }

  /**
   * fsinfo.json of a private single-key tree (FORMAT.md §12.4, §12.8): the
   * release names `commit` and `manifest`, `access` the epoch, the keyring and
   * the wrapped root; both signed by `signer`. Written unless `file` is false.
   */
  async publishPrivate ({ signer, name = '', commit, manifest, access, seq, issued, expires, release = {}, file = true }) {
    const anchor = signer.publicKey
    const rel = { anchor, name, seq: release.seq ?? 1, expires: iso(release.expires ?? expires), root: { private: commit }, manifest: { hash: manifest.hash, size: manifest.size } }
    rel.signatures = [{ key: signer.publicKey, sig: sign(releaseMessage(rel), signer.secretKey) }]
    const fields = { anchor, name, trust: null, seq, issued: iso(issued), expires: iso(expires), release: rel, access }
    const { message } = decodeFsinfoV2(encodeFsinfoV2(fields))
    const text = encodeFsinfoV2({ ...fields, signatures: [{ key: signer.publicKey, sig: sign(message, signer.secretKey) }] })
    if (file) { await this.made; await fs.writeFile(path.join(this.out, 'fsinfo.json'), text) }
    return text
  }
}

// FORMAT.md §12.8: how a publisher seals a keyring (keyring.js says how it is
// laid out and opened), through the `age-encryption` package: one X25519
// stanza per reader under one shared ephemeral share (BatchX25519Recipient),
// padded to padme(readers) stanzas, in an order only each reader can
// predict; hybrid post-quantum readers get age's own stanzas. Node only: a
// reader never loads it. `age-encryption` (with ML-KEM, ~60 modules) is
// loaded by the first keyring sealed, not by this module: `rotree build` of a
// public tree imports it too (docs/BENCHMARKS.md P6, notes).
const age = () => import('age-encryption')
import { x25519 } from '../crypto/x25519.js'
import { chacha20poly1305 } from '@noble/ciphers/chacha.js'
import { hkdf } from '@noble/hashes/hkdf.js'
import { sha256 } from '@noble/hashes/sha2.js'
import { base64nopad } from '@scure/base'
import { padme } from '../format/seal.js'
import { MAX_READERS } from '../format/limits.js'
import { recipientKey, encodeEpoch, orderOf, randomOrder, randomBytes, LABEL, ZERO_NONCE } from './keyring.js'

/**
 * Every X25519 reader under one ephemeral share, plus stanzas of random
 * bodies up to padme(readers): age's Recipient interface.
 */
class BatchX25519Recipient {
  constructor (keys, Stanza) { this.keys = keys; this.Stanza = Stanza }

  async wrapFileKey (fileKey) {
    const e = x25519.utils.randomSecretKey()
    const share = x25519.getPublicKey(e)
    const arg = base64nopad.encode(share)
    const secrets = await sharedSecrets(e, this.keys)
    const Stanza = this.Stanza
    const out = this.keys.map((R, i) => {
      const salt = new Uint8Array(64); salt.set(share); salt.set(R, 32)
      const key = hkdf(sha256, secrets[i], salt, LABEL, 32)
      return { order: orderOf(secrets[i], salt), stanza: new Stanza(['X25519', arg], chacha20poly1305(key, ZERO_NONCE).encrypt(fileKey)) }
    })
    for (let i = this.keys.length; i < padme(this.keys.length); i++) out.push({ order: randomOrder(), stanza: new Stanza(['X25519', arg], randomBytes(32)) })
    return out.sort((a, b) => a.order - b.order).map(x => x.stanza)
  }
}

/**
 * The keyring of an epoch: an age file of the epoch key for each reader.
 * @param {{ epoch: number, key: Uint8Array, readers: string[] }} o readers: age1… X25519 and age1pq1… hybrid recipients
 * @returns {Promise<Uint8Array>}
 */
export async function sealKeyring ({ epoch, key, readers }) {
  if (readers.length === 0) throw new RangeError('a keyring for no reader')
  if (readers.length > MAX_READERS) throw new RangeError(`more than ${MAX_READERS} readers`)
  const x = []
  const { Encrypter, Stanza } = await age()
  const e = new Encrypter()
  for (const r of readers) {
    if (r.startsWith('age1pq1')) e.addRecipient(r)
    else x.push(recipientKey(r))
  }
  if (x.length) e.addRecipient(new BatchX25519Recipient(x, Stanza))
  return e.encrypt(encodeEpoch(epoch, key))
}

/** X25519(e, R) for each reader: WebCrypto where it has X25519 (Node, recent browsers), else @noble/curves. */
async function sharedSecrets (e, keys) {
  const subtle = globalThis.crypto?.subtle
  if (subtle) {
    try {
      const pkcs8 = new Uint8Array([0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x6e, 0x04, 0x22, 0x04, 0x20, ...e])
      const priv = await subtle.importKey('pkcs8', pkcs8, { name: 'X25519' }, false, ['deriveBits'])
      return await Promise.all(keys.map(async R => {
        const pub = await subtle.importKey('raw', R, { name: 'X25519' }, false, [])
        return new Uint8Array(await subtle.deriveBits({ name: 'X25519', public: pub }, priv, 256))
      }))
    } catch (err) {
      if (!(err?.name === 'NotSupportedError' || err instanceof TypeError || err?.name === 'DataError')) throw err
    }
  }
  return keys.map(R => x25519.getSharedSecret(e, R))
}

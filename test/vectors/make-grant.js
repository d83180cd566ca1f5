// The grant test vectors (docs/FORMAT.md §10, grants; §12.10–12.11): fixed
// keys, a trust document with an access role, a grant, a delegated grant and
// a token request, with their exact signed messages and signatures (ed25519
// is deterministic, so the file is reproducible byte for byte).
//
//   node test/vectors/make-grant.js     rewrites test/vectors/grant/vectors.json
import fs from 'node:fs/promises'
import { createHash } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import { publicKeyOf, sign } from 'rotree-client/crypto'
import { encodeTrustDoc, decodeTrustDoc } from 'rotree-client/format'
import { unsignedGrant, signGrant, encodeGrant, decodeGrant, grantHash, tokenRequest } from 'rotree-client/grant'
import { trustAnchorOf } from 'rotree-client/trust'

export const GRANT_KEY_SEED = 'rotree test vector grant '
const sha256hex = s => createHash('sha256').update(s).digest('hex')
const keyPair = secretKey => ({ secretKey, publicKey: publicKeyOf(secretKey) })
export const KEYS = Object.fromEntries(['root', 'access', 'holder', 'delegate'].map(n => [n, keyPair(sha256hex(GRANT_KEY_SEED + n))]))
const text = bytes => Buffer.from(bytes).toString('utf8')

export function makeGrantVectors () {
  const K = KEYS
  const role = k => ({ threshold: 1, keys: [k.publicKey] })
  // a family whose document 1 names an access role (its address: #t<hash>:docs)
  const unsignedDoc = decodeTrustDoc(encodeTrustDoc({ seq: 1, expires: '2030-01-01T00:00:00.000Z', roles: { root: role(K.root), release: role(K.root), timestamp: role(K.root), access: role(K.access) } }))
  const trustText = encodeTrustDoc({ ...unsignedDoc, signatures: [{ key: K.root.publicKey, sig: sign(unsignedDoc.message, K.root.secretKey) }] })
  const trust = decodeTrustDoc(trustText)
  const anchor = trustAnchorOf(trust)
  const grant = signGrant(unsignedGrant({ anchor, name: 'docs', holder: K.holder.publicKey, issued: '2027-01-01T00:00:00.000Z', expires: '2027-01-31T00:00:00.000Z' }), [K.access.secretKey])
  const grantText = encodeGrant(grant)
  const delegated = signGrant(unsignedGrant({ anchor, name: 'docs', holder: K.delegate.publicKey, issued: '2027-01-02T00:00:00.000Z', expires: '2027-01-03T00:00:00.000Z', parent: decodeGrant(grantText) }), [K.holder.secretKey])
  const delegatedText = encodeGrant(delegated)
  const request = tokenRequest(decodeGrant(delegatedText), K.delegate.secretKey, { now: Date.parse('2027-01-02T12:00:00.000Z'), nonce: '00112233445566778899aabbccddeeff' })
  return {
    comment: 'docs/FORMAT.md §10 (grants): secret keys are SHA-256("rotree test vector grant <name>"); every message is the exact signed text',
    keys: K,
    trust: { text: trustText, message: text(trust.message), anchor },
    tree: { anchor, name: 'docs' },
    verifyAt: '2027-01-02T12:00:00.000Z',
    grant: { text: grantText, message: text(decodeGrant(grantText).message), hash: grantHash(decodeGrant(grantText)), sig: grant.signatures[0].sig },
    delegated: { text: delegatedText, message: text(decodeGrant(delegatedText).message), hash: grantHash(decodeGrant(delegatedText)), sig: delegated.signatures[0].sig },
    tokenRequest: { body: request, message: `rotree-token-request-v2\ntree ${anchor}:docs\ngrant ${grantHash(decodeGrant(delegatedText))}\ntime 2027-01-02T12:00:00.000Z\nnonce 00112233445566778899aabbccddeeff\n` }
  }
}

export const VECTORS_FILE = fileURLToPath(new URL('grant/vectors.json', import.meta.url))

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await fs.writeFile(VECTORS_FILE, JSON.stringify(makeGrantVectors(), null, 2) + '\n')
  console.log(`wrote ${VECTORS_FILE}`)
}

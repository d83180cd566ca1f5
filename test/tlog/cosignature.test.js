// rotree-client/tlog: C2SP tlog-cosignature (Ed25519 cosignature/v1) against
// test/vectors/tlog/cosignature.json, and the tlog-witness add-checkpoint
// checks a witness makes (checkAddCheckpoint), status by status.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import {
  cosignerOf, cosignatureLine, cosignatureVerifierOf, parseCosignatureVerifierKey, encodeCosignatureVerifierKey,
  cosignatureTime, cosignedMessage, verifyCosignatures, parseVerifierKey, signerOf, signNote, openNote, formatCheckpoint,
  arrayHashReader, storedHashes, treeHash, consistencyProof, formatAddCheckpoint, parseAddCheckpoint, checkAddCheckpoint,
  emptyHash, decodeBase64
} from 'rotree-client/tlog'
import { publicKeyOf } from 'rotree-client/crypto'

const V = JSON.parse(fs.readFileSync(new URL('../vectors/tlog/cosignature.json', import.meta.url), 'utf8'))
const enc = s => new TextEncoder().encode(s)

test('cosignature: the signed message and line are the specification\'s', () => {
  const { made } = V
  assert.equal(new TextDecoder().decode(cosignedMessage(made.checkpoint, made.time)), made.message)
  const c = cosignerOf(made.name, { secretKey: made.secretKey, publicKey: made.publicKey }, () => made.time)
  assert.equal(cosignatureLine(made.checkpoint, c), made.line)
  assert.equal(encodeCosignatureVerifierKey(made.name, made.publicKey), made.verifierKey)
  const v = parseCosignatureVerifierKey(made.verifierKey)
  assert.equal(v.id, c.id)
  assert.deepEqual(verifyCosignatures(made.checkpoint + '\n' + made.line, [v]).map(s => s.time), [made.time])
  // the spec's example line: key ID, then the time of its example message
  const specLine = V.spec.signed.trim().split('\n').at(-1)
  const b64 = specLine.split(' ').at(-1)
  assert.equal(Buffer.from(decodeBase64(b64).subarray(0, 4)).toString('hex'), V.spec.witnessKeyId)
  assert.equal(cosignatureTime(b64), V.spec.witnessTime)
  assert.equal(new TextDecoder().decode(cosignedMessage(V.spec.checkpoint, V.spec.witnessTime)), V.spec.message)
})

test('cosignature: a log key is not a cosigner key, and a changed time or text fails', () => {
  const { made } = V
  const key = { secretKey: made.secretKey, publicKey: made.publicKey }
  // the same key and name as a plain note key (type 0x01) has another ID: the line is not its
  assert.notEqual(signerOf(made.name, key).id, cosignerOf(made.name, key).id)
  assert.throws(() => parseVerifierKey(made.verifierKey), /unknown verifier algorithm/)
  assert.throws(() => parseCosignatureVerifierKey(parseVerifierKeyText(made)), /type 0x04/)
  const v = cosignatureVerifierOf(made.name, made.publicKey)
  const raw = decodeBase64(made.line.trim().split(' ').at(-1))
  const sig = raw.subarray(4)
  assert.ok(v.verify(enc(made.checkpoint), sig))
  const later = sig.slice(); later[7] ^= 1
  assert.ok(!v.verify(enc(made.checkpoint), later))
  assert.ok(!v.verify(enc(made.checkpoint.replace('20852163', '20852164')), sig))
  assert.throws(() => openNote(made.checkpoint.replace('20852163', '20852164') + '\n' + made.line, [v]), /invalid signature/)
  assert.deepEqual(verifyCosignatures(made.checkpoint + '\n' + made.line, [cosignatureVerifierOf('other.example/w', made.publicKey)]), [])
})

function parseVerifierKeyText (made) {
  // the same key written as an ordinary note verifier key (type 0x01)
  const s = signerOf(made.name, { secretKey: made.secretKey, publicKey: made.publicKey })
  const k = new Uint8Array(33); k[0] = 1; k.set(Buffer.from(made.publicKey, 'hex'), 1)
  return `${made.name}+${s.id.toString(16).padStart(8, '0')}+${Buffer.from(k).toString('base64')}`
}

// a log of n leaves and its signed checkpoints
const LOG_KEY = { secretKey: '11'.repeat(32) }
LOG_KEY.publicKey = publicKeyOf(LOG_KEY.secretKey)
const ORIGIN = 'example.com/log'
function logOf (leaves) {
  const stored = []
  const read = arrayHashReader(stored)
  leaves.forEach((l, i) => stored.push(...storedHashes(i, enc(l), read)))
  const note = n => signNote(formatCheckpoint({ origin: ORIGIN, size: n, hash: treeHash(n, read) }), [signerOf(ORIGIN, LOG_KEY)])
  return { read, note, hash: n => treeHash(n, read) }
}

test('witness: add-checkpoint bodies round-trip, and malformed ones are refused', () => {
  const log = logOf(['a', 'b', 'c'])
  const body = formatAddCheckpoint({ oldSize: 2, proof: consistencyProof(3, 2, log.read), note: log.note(3) })
  const r = parseAddCheckpoint(body)
  assert.equal(r.oldSize, 2); assert.equal(r.note, log.note(3)); assert.equal(r.proof.length, consistencyProof(3, 2, log.read).length)
  for (const bad of ['old 01\n\n' + log.note(3), 'old -1\n\n', 'older 1\n\n', 'old 1\nnot base64\n\n', 'old 1\n' + 'AAAA\n' + '\n']) {
    assert.throws(() => parseAddCheckpoint(bad), /malformed/, bad)
  }
  assert.throws(() => parseAddCheckpoint('old 1\n' + `${Buffer.alloc(32).toString('base64')}\n`.repeat(64) + '\n'), /63/)
})

test('witness: checkAddCheckpoint answers 404, 403, 400, 409, 422 and accepts a consistent checkpoint', () => {
  const log = logOf(['a', 'b', 'c', 'd', 'e'])
  const verifiers = o => o === ORIGIN ? [parseVerifierKey(`${ORIGIN}+${signerOf(ORIGIN, LOG_KEY).id.toString(16).padStart(8, '0')}+${Buffer.concat([Buffer.from([1]), Buffer.from(LOG_KEY.publicKey, 'hex')]).toString('base64')}`)] : null
  let state = null
  const latest = () => state
  const status = req => { try { checkAddCheckpoint(req, verifiers, latest); return 200 } catch (err) { return err.status } }
  assert.equal(status({ oldSize: 0, proof: [], note: log.note(2).replace(ORIGIN, 'other.example/log') }), 404)
  const other = { secretKey: '22'.repeat(32) }; other.publicKey = publicKeyOf(other.secretKey)
  const forged = signNote(formatCheckpoint({ origin: ORIGIN, size: 2, hash: log.hash(2) }), [signerOf(ORIGIN, other)])
  assert.equal(status({ oldSize: 0, proof: [], note: forged }), 403)
  assert.equal(status({ oldSize: 3, proof: [], note: log.note(2) }), 400)
  assert.equal(status({ oldSize: 0, proof: [log.hash(1)], note: log.note(2) }), 422)
  const ok = checkAddCheckpoint({ oldSize: 0, proof: [], note: log.note(2) }, verifiers, latest)
  assert.equal(ok.size, 2)
  state = { size: 2, hash: ok.hash }
  let err
  try { checkAddCheckpoint({ oldSize: 0, proof: [], note: log.note(4) }, verifiers, latest) } catch (e) { err = e }
  assert.equal(err.status, 409); assert.equal(err.size, 2)
  assert.equal(status({ oldSize: 2, proof: consistencyProof(4, 2, log.read), note: log.note(4) }), 200)
  // a forked log: the same key signs a tree that does not extend the one cosigned
  const fork = logOf(['a', 'x', 'c', 'd'])
  assert.equal(status({ oldSize: 2, proof: consistencyProof(4, 2, fork.read), note: fork.note(4) }), 422)
  assert.equal(status({ oldSize: 2, proof: [], note: fork.note(2) }), 422)
  assert.equal(status({ oldSize: 2, proof: [], note: log.note(2) }), 200)
  // size 0 must carry the empty tree's hash
  state = null
  const zero = h => signNote(formatCheckpoint({ origin: ORIGIN, size: 0, hash: h }), [signerOf(ORIGIN, LOG_KEY)])
  assert.equal(status({ oldSize: 0, proof: [], note: zero(emptyHash()) }), 200)
  assert.equal(status({ oldSize: 0, proof: [], note: zero(log.hash(1)) }), 422)
})

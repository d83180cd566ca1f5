// `rotree witness` (lib/witness/witness.js): a real witness process on
// loopback, spoken to over HTTP as C2SP tlog-witness says; its state
// survives a restart, and a forked log is refused.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import {
  arrayHashReader, storedHashes, treeHash, consistencyProof, formatCheckpoint, signNote, signerOf, encodeVerifierKey,
  formatAddCheckpoint, parseCosignatureVerifierKey, verifyCosignatures
} from 'rotree-client/tlog'
import { publicKeyOf } from 'rotree-client/crypto'
import { tmpdir } from '../helpers/fixtures.js'
import { rotree, start } from '../cli/helpers.js'
import { createWitness, parseLogList } from '../../lib/witness/witness.js'

const enc = s => new TextEncoder().encode(s)
const ORIGIN = 'example.com/log'
const LOG_KEY = { secretKey: '33'.repeat(32) }
LOG_KEY.publicKey = publicKeyOf(LOG_KEY.secretKey)
const VKEY = encodeVerifierKey(ORIGIN, LOG_KEY.publicKey)

function logOf (leaves) {
  const stored = []
  const read = arrayHashReader(stored)
  leaves.forEach((l, i) => stored.push(...storedHashes(i, enc(l), read)))
  const note = n => signNote(formatCheckpoint({ origin: ORIGIN, size: n, hash: treeHash(n, read) }), [signerOf(ORIGIN, LOG_KEY)])
  return { read, note }
}

const post = (url, body) => fetch(`${url}/add-checkpoint`, { method: 'POST', body }).then(async r => ({ status: r.status, type: r.headers.get('content-type'), text: await r.text() }))

test('rotree witness: cosigns, answers 409 with its size, refuses a fork, and remembers across a restart', async t => {
  const dir = await tmpdir('rotree-witness-')
  t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const keyFile = path.join(dir, 'w.key')
  assert.equal((await rotree(['keygen', keyFile])).code, 0)
  const args = ['witness', '--key', keyFile, '--state', path.join(dir, 'state'), '--name', 'w.example/1', '--log', `${ORIGIN}=${VKEY}`, '--port', '0']
  const READY = /verifier key: (\S+)\n/ // printed after the "at URL" line
  let w = await start(t, args, { ready: READY })
  let url = /at (http:\/\/\S+)/.exec(w.output().out)[1]
  const vkey = w.match[1]
  const cosigner = parseCosignatureVerifierKey(vkey)
  const log = logOf(['a', 'b', 'c', 'd', 'e', 'f'])

  let r = await post(url, formatAddCheckpoint({ oldSize: 0, proof: [], note: log.note(3) }))
  assert.equal(r.status, 200, r.text)
  assert.match(r.text, /^— w\.example\/1 \S+\n$/)
  assert.equal(verifyCosignatures(log.note(3) + r.text, [cosigner]).length, 1)
  // the same size again, or a stale old size: 409 with the size it holds
  r = await post(url, formatAddCheckpoint({ oldSize: 0, proof: [], note: log.note(5) }))
  assert.equal(r.status, 409); assert.equal(r.text, '3\n'); assert.equal(r.type, 'text/x.tlog.size')
  r = await post(url, formatAddCheckpoint({ oldSize: 3, proof: consistencyProof(5, 3, log.read), note: log.note(5) }))
  assert.equal(r.status, 200, r.text)
  // unknown log, bad body, bad signature
  assert.equal((await post(url, formatAddCheckpoint({ oldSize: 0, proof: [], note: log.note(5).replaceAll(ORIGIN, 'other.example/log') }))).status, 404)
  assert.equal((await post(url, 'garbage')).status, 400)
  const forged = log.note(5).replace(/ \S+\n$/, ` ${Buffer.alloc(68, 1).toString('base64')}\n`)
  assert.equal((await post(url, formatAddCheckpoint({ oldSize: 5, proof: [], note: forged }))).status, 403)

  // restart: the state is on disk
  w.proc.kill('SIGTERM'); await w.exited
  w = await start(t, args, { ready: READY })
  url = /at (http:\/\/\S+)/.exec(w.output().out)[1]
  r = await post(url, formatAddCheckpoint({ oldSize: 0, proof: [], note: log.note(6) }))
  assert.equal(r.status, 409); assert.equal(r.text, '5\n')
  // a fork signed by the log's own key: not consistent with size 5
  const fork = logOf(['a', 'b', 'c', 'X', 'e', 'f', 'g'])
  assert.equal((await post(url, formatAddCheckpoint({ oldSize: 5, proof: consistencyProof(7, 5, fork.read), note: fork.note(7) }))).status, 422)
  assert.equal((await post(url, formatAddCheckpoint({ oldSize: 5, proof: [], note: fork.note(5) }))).status, 422)
  r = await post(url, formatAddCheckpoint({ oldSize: 5, proof: consistencyProof(6, 5, log.read), note: log.note(6) }))
  assert.equal(r.status, 200, r.text)
  // monitoring: the latest cosigned checkpoint, with the log's and the witness's lines
  const { createHash } = await import('node:crypto')
  const got = await fetch(`${url}/${createHash('sha256').update(ORIGIN).digest('hex')}/checkpoint`).then(x => x.text())
  assert.equal(got, log.note(6) + r.text)
})

test('witness: concurrent requests for one log are serialized: one of two racing old sizes wins, the other gets 409', async t => {
  const dir = await tmpdir('rotree-witness-')
  t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const key = { secretKey: '44'.repeat(32) }; key.publicKey = publicKeyOf(key.secretKey)
  const w = await createWitness({ name: 'w.example/2', key, stateDir: dir, logs: parseLogList([`${ORIGIN}=${LOG_KEY.publicKey}`]), fsync: false })
  const log = logOf(['a', 'b', 'c', 'd'])
  assert.equal((await w.addCheckpoint(formatAddCheckpoint({ oldSize: 0, proof: [], note: log.note(1) }))).status, 200)
  const rs = await Promise.all([2, 3, 4].map(n => w.addCheckpoint(formatAddCheckpoint({ oldSize: 1, proof: consistencyProof(n, 1, log.read), note: log.note(n) }))))
  assert.deepEqual(rs.map(r => r.status).sort(), [200, 409, 409])
  assert.throws(() => parseLogList([`${ORIGIN}=${encodeVerifierKey('other.example/log', LOG_KEY.publicKey)}`]), /not example\.com\/log/)
})

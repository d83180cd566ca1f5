// The private tree of the matrix (docs/FORMAT.md §12.8) and what its lies
// serve. Published with the real publisher, as fixture-v2.js is (rotree trust
// init|sign, build --private --key R --timestamp-key T, access add|remove,
// resign), under a trust document with one root key, one release key and one
// timestamp key, so that the timestamp key's powers are its own.
//
//   release 1  readers B and C (epoch 1), readme "one": fsinfo.beforeRemove
//   access remove C: epoch 2
//   release 2  reader B (epoch 2), readme "two": fsinfo.beforeAdd
//   access add A (epoch 2, a new keyring), resign: the honest fsinfo.json,
//              release 2 for readers A and B
//
// A is the reader every cell reads with; C was removed; a reader without an
// identity is a fourth, and X a stranger. Tree Q, built apart from the same
// files with its own secret and the same readers (A, B), gives blobs that a
// mirror can serve in place of P's at the same size: its sealed chunk of the
// same bytes and its keyring. A mirror folder (`mirror`), pulled keyless from
// the honest folder, is what `rotree fsck --repair-from` repairs in the
// matrix. The fsinfo.json a stolen timestamp key signs (with the epoch key of
// OUT/.rotree/private.json where it needs one) are made here too.
import fs from 'node:fs/promises'
import { createHash } from 'node:crypto'
import path from 'node:path'
import { generateX25519Identity, identityToRecipient } from 'age-encryption'
import { tmpdir, writeTree, prng, serve } from '../helpers/fixtures.js'
import { generateKeyPair, sign } from 'rotree-client/crypto'
import { decodeFsinfoV2, encodeFsinfoV2, fromHex } from 'rotree-client/format'
import { decodeRootRef, wrapRoot, sealKeyring } from 'rotree-client/access'
import { build } from '../../builder/build.js'
import { initTrust, signTrust } from '../../builder/trust-publish.js'
import { changeAccess } from '../../builder/access.js'
import { resignV2 } from '../../builder/release.js'
import { readPrivate } from '../../builder/private-tree.js'
import { pageLoader } from '../../lib/published/index.js'
import { runCli } from './readers.js'

export const TARGET_P = '/data/big.bin'
const DAY = 86400e3
const TTL = 7 * DAY
const NAME = 'private'

/** An age identity file's text and its recipient, written to `dir`/<name>.key (0600). */
async function reader (dir, name) {
  const identity = await generateX25519Identity()
  const file = path.join(dir, `${name}.key`)
  await fs.writeFile(file, `# ${name}\n${identity}\n`, { mode: 0o600 })
  return { name, identity: `# ${name}\n${identity}\n`, file, recipient: await identityToRecipient(identity) }
}

/**
 * A private release of SRC into OUT under the trust document in force, signed by R and T at once
 * (`build --key R --timestamp-key T`: `build --unsigned` then `sign` cannot publish a private
 * release yet, its unsigned.json loses the manifest: see the matrix's report).
 */
async function release (src, out, k, now, readers) {
  await build({ src, out, key: k.R, timestampKeys: [k.T], version: 2, name: NAME, ttlMs: TTL, now, fsync: false, threads: 0, private: true, readers })
  return fs.readFile(path.join(out, 'fsinfo.json'))
}

/** The sealed /data page and the middle chunk of /data/big.bin under the root `rootHex` of OUT's private state. */
async function blobsOf (out, rootHex) {
  const { ref } = decodeRootRef(fromHex(rootHex))
  const load = pageLoader(out)
  const root = await load(ref, 'dir')
  const dataRef = root.entries.find(e => e.name === 'data').dir
  const data = await load(dataRef, 'dir')
  const chunks = data.entries.find(e => e.name === 'big.bin').chunks
  return { dataPage: dataRef.hash, middle: chunks[chunks.length >> 1] }
}

/** fsinfo.json re-signed by the timestamp key T with `change` applied to its fields (seq + 1, fresh times). */
function resigned (text, k, now, change) {
  const j = JSON.parse(text)
  const fields = change({ ...j, seq: j.seq + 1, issued: new Date(now).toISOString(), expires: new Date(now + TTL).toISOString() })
  const { message } = decodeFsinfoV2(encodeFsinfoV2(fields))
  return Buffer.from(encodeFsinfoV2({ ...fields, signatures: [{ key: k.T.publicKey, sig: sign(message, k.T.secretKey) }] }))
}

export async function makeFixturePrivate () {
  const dir = await tmpdir('rotree-matrix-private-')
  const src = path.join(dir, 'src'); const out = path.join(dir, 'out'); const outQ = path.join(dir, 'out-q')
  const big = prng(3 * 1024 * 1024 + 777, 'matrix-big-private')
  await writeTree(src, { 'data/big.bin': big, 'data/small.txt': 'small\n', 'readme.txt': 'one\n' })
  const k = { root: generateKeyPair(), R: generateKeyPair(), T: generateKeyPair() }
  const [A, B, C, X] = await Promise.all(['reader-a', 'reader-b', 'reader-c', 'stranger-x'].map(n => reader(dir, n)))
  const now = Date.now()

  const init = await initTrust(out, { root: [k.root.publicKey], rootThreshold: 1, release: [k.R.publicKey], releaseThreshold: 1, timestamp: [k.T.publicKey], name: NAME, now })
  await signTrust(out, [k.root], { fsync: false })
  // release 1: readers B and C
  const beforeRemove = await release(src, out, k, now - 120_000, [B.recipient, C.recipient])
  // C removed (a new epoch), then release 2 for B
  await changeAccess(out, 'remove', [C.recipient], { fsync: false })
  await writeTree(src, { 'readme.txt': 'two\n' })
  const beforeAdd = await release(src, out, k, now - 60_000, [])
  // A added: the same epoch key, a new keyring, published by a resign over the same release
  await changeAccess(out, 'add', [A.recipient], { fsync: false })
  await resignV2(out, [k.T], { ttlMs: TTL, now, fsync: false })
  const current = await fs.readFile(path.join(out, 'fsinfo.json'))
  const state = await readPrivate(out)
  const info = decodeFsinfoV2(current)
  const addInfo = decodeFsinfoV2(beforeAdd)
  const oldInfo = decodeFsinfoV2(beforeRemove)
  if (addInfo.release.root.private !== info.release.root.private || addInfo.access.epoch !== info.access.epoch) throw new Error('adding a reader changed the release or the epoch')
  const rootHex = state.roots[info.release.root.private]
  const oldRootHex = state.roots[oldInfo.release.root.private]
  const p = await blobsOf(out, rootHex)

  // tree Q: the same files, its own secret, readers A and B (a keyring of as many stanzas as P's)
  await build({ src, out: outQ, key: generateKeyPair(), version: 2, name: NAME, ttlMs: TTL, now, fsync: false, threads: 0, private: true, readers: [A.recipient, B.recipient] })
  const q = await blobsOf(outQ, Object.values((await readPrivate(outQ)).roots).at(-1))
  const qInfo = decodeFsinfoV2(await fs.readFile(path.join(outQ, 'fsinfo.json')))
  const h = (o, hash) => fs.readFile(path.join(o, 'h', hash))
  const qChunk = await h(outQ, q.middle.hash)
  const qKeyring = await h(outQ, qInfo.access.keyring.hash)
  if (qChunk.length !== p.middle.storedSize) throw new Error(`tree Q's chunk is ${qChunk.length} bytes, P's ${p.middle.storedSize}: the lie needs them equal`)
  if (qKeyring.length !== info.access.keyring.size) throw new Error(`tree Q's keyring is ${qKeyring.length} bytes, P's ${info.access.keyring.size}: the lie needs them equal`)
  // release 1's manifest lists as many blobs (only the readme and the pages above it changed)
  if (oldInfo.release.manifest.size !== info.release.manifest.size) throw new Error(`release 1's manifest is ${oldInfo.release.manifest.size} bytes, release 2's ${info.release.manifest.size}: the lie needs them equal`)

  // what a stolen timestamp key signs, alone: the current release and its wrapped root with
  // the keyring of the same epoch from before A was added
  const oldKeyring = resigned(current, k, now, f => ({ ...f, access: { ...f.access, keyring: addInfo.access.keyring } }))
  // ... with the epoch key of OUT/.rotree/private.json too: the current release, its access.root
  // wrapping release 1's root (another commitment)
  const epochKey = fromHex(state.epochKey)
  const otherWrap = resigned(current, k, now, f => ({ ...f, access: { ...f.access, root: wrapRoot(epochKey, fromHex(oldRootHex)) } }))
  // ... and the current release for a keyring of its own, sealed for the stranger X
  // (an orphan in the honest folder, which only this fsinfo.json names)
  const ring = await sealKeyring({ epoch: state.epoch, key: epochKey, readers: [X.recipient] })
  const ringHash = createHash('sha256').update(ring).digest('hex')
  await fs.writeFile(path.join(out, 'h', ringHash), ring)
  const otherReaders = resigned(current, k, now, f => ({ ...f, access: { ...f.access, keyring: { hash: ringHash, size: ring.length } } }))

  // the mirror folder fsck repairs: a keyless pull of the honest folder
  const mirror = path.join(dir, 'mirror')
  const srv = await serve(out)
  try {
    const r = await runCli(['pull', `${srv.url}#${init.anchor}:${NAME}`, mirror, '--state-dir', path.join(dir, 'pull-state')])
    if (r.code !== 0) throw new Error(`pulling the private tree's mirror folder failed: ${r.stderr}`)
  } finally { await srv.close() }

  return {
    dir, src, out, mirror, big, keys: k,
    fragment: `${init.anchor}:${NAME}`,
    readers: { A, B, C, X },
    epochs: { removed: oldInfo.access.epoch, now: state.epoch },
    dataPage: p.dataPage,
    middle: p.middle.hash,
    keyring: info.access.keyring.hash,
    manifest: info.release.manifest.hash,
    oldManifest: oldInfo.release.manifest.hash,
    q: { chunk: qChunk, keyring: qKeyring },
    fsinfo: { current, beforeRemove, beforeAdd, oldKeyring, otherWrap, otherReaders },
    cleanup: () => fs.rm(dir, { recursive: true, force: true })
  }
}

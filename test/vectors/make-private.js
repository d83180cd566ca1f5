// The private-tree test vectors (docs/FORMAT.md §10, private part; §12.8),
// into test/vectors/private/:
//
//   tree/fsinfo.json, tree/h/<hex>   a small private tree: sealed blobs, a keyring, a manifest
//   vectors.json                     what a reader must see in it, and every secret behind it
//   tampered/<name>.json             variants that must fail, with their code
//
// Written by `node test/vectors/make.js` (with the other vectors) through
// private-writer.js, which seals, writes the age keyring and wraps the root
// from §12.8's text with node:crypto. Every value a builder draws at random
// (the tree secret, the epoch key, age's file key, ephemeral share and
// payload nonce, the nonce of the wrapped root) is fixed here, so running it
// again gives the same bytes (for this Node's zlib: FORMAT.md §12.6).
//
// THE SECRETS ARE PUBLIC AND FOR TESTS ONLY: each is SHA-256 of the ASCII
// string "rotree test vector private <name>" (its first 16 or 12 bytes where
// fewer are needed).
import fs from 'node:fs/promises'
import path from 'node:path'
import { createHash } from 'node:crypto'
import { buildDirectory, decodeDirPage, decodeFsinfoV2, encodeManifestLeaf, encodeManifestIndex, toHex } from 'rotree-client/format'
import { encodeRootRef } from 'rotree-client/access'
import { packBlob } from 'rotree-client/codec'
import { verifyDecoded } from 'rotree-client/verify'
import { keyPair, V2 } from './v2-writer.js'
import { PrivateWriter, ageKeys, ageKeyring, epochPayload, wrapRoot, rootCommit, blobKey, x25519Public, padme, indexChildren } from './private-writer.js'
import { text, describeSpec } from './make-v2.js'
import { prng } from './make.js'

const sha256 = b => createHash('sha256').update(b).digest()

export const PRIVATE_SEED = 'rotree test vector private '
/** A fixed secret: SHA-256("rotree test vector private <name>"), its first n bytes. */
export const secret = (name, n = 32) => sha256(PRIVATE_SEED + name).subarray(0, n)

const PUBLISHER = keyPair(secret('publisher').toString('hex'))
const READER_NAMES = ['reader-a', 'reader-b', 'stranger']
export const READERS = Object.fromEntries(READER_NAMES.map(n => [n, ageKeys(secret(n))]))
const EPOCH = 1

export const NOW = Date.UTC(2026, 0, 1) // the publisher's clock
export const LATER = Date.UTC(2126, 0, 1) // every expiry
export const READER_NOW = Date.UTC(2026, 0, 2)
const T0 = Date.UTC(2025, 5, 1, 12, 0, 0)
const ROOT_MTIME = T0 + 60000

// the values a builder draws at random, fixed (each: secret(name, length))
const SECRETS = {
  'tree-secret': 32, // the tree secret every blob key comes from (OUT/.rotree/private.json)
  'epoch-key': 32, // epoch 1's key
  'file-key': 16, // age's file key of the keyring
  ephemeral: 32, // age's ephemeral X25519 secret: its share is the one every stanza names
  'payload-nonce': 16, // age's payload nonce
  'wrap-nonce': 12, // the nonce of access.root
  'other-tree-secret': 32, // tampered variants: another tree's secret
  'other-epoch-key': 32 // tampered variants: a key that is not the epoch's
}
const S = Object.fromEntries(Object.entries(SECRETS).map(([n, len]) => [n, secret(n, len)]))
/** A tampered variant's own age values and wrap nonce (never one nonce over two messages under one key). */
const variantSecret = (variant, name) => secret(`${name} ${variant}`, SECRETS[name])

function keyringFor ({ readers = ['reader-a', 'reader-b'], epoch = EPOCH, epochKey = S['epoch-key'], variant = null } = {}) {
  const v = name => variant ? variantSecret(variant, name) : S[name]
  return ageKeyring({
    payload: epochPayload(epoch, epochKey),
    readers: readers.map(r => x25519Public(secret(r))),
    fileKey: v('file-key'),
    ephemeral: v('ephemeral'),
    nonce: v('payload-nonce'),
    filler: i => Buffer.concat([secret(`filler ${variant ?? ''} ${i}`), secret(`filler order ${variant ?? ''} ${i}`, 7)]) // padme(2) = 2: none here
  })
}

function sourceSpec () {
  const pages = []
  for (let i = 0; i < 400; i++) {
    const line = `private page file ${i}\n`
    pages.push({ name: `p-${String(i).padStart(3, '0')}.txt`, file: line.repeat(Math.ceil(500 / line.length)).slice(0, 500), mtime: T0 })
  }
  const block = prng('rotree private vector block', 1024)
  return [
    { name: 'README', file: 'rotree private-tree test vectors: see docs/FORMAT.md §10 and §12.8.\n', mtime: T0 },
    { name: 'text.txt', file: text('rotree private vector text', 20000), mtime: T0 + 500 }, // one chunk, inner deflate-raw: codec 0x11
    { name: 'random.bin', file: prng('rotree private vector random', 20000), mtime: T0 }, // one chunk, inner as it is: codec 0x10
    { name: 'repeat.bin', file: Buffer.concat(Array(40).fill(block)), chunkSize: 1024, mtime: T0, exec: true }, // 40 equal chunks: one sealed blob under a chunk index
    { name: 'link-to-text', symlink: 'text.txt', mtime: T0 },
    { name: 'a', dir: [{ name: 'deep.txt', file: 'deep and private\n', mtime: T0 + 3000 }, { name: 'up', symlink: '../README', mtime: T0 }], mtime: T0 + 61000 },
    { name: 'pages', dir: pages, mtime: T0 + 64000 } // leaves under an index page, their refs keyed
  ]
}

/** How every path is stored (its refs, with their keys), walked with the keys: path → storage. */
async function storageOf (dir, root) {
  const storage = { '/': { storage: 'dir', dir: root } }
  const page = async ref => verifyDecoded(new Uint8Array(await fs.readFile(path.join(dir, 'h', ref.hash))), ref)
  const refOf = c => ({ hash: c.hash, size: c.size, storedSize: c.storedSize, codec: c.codec, key: c.key })
  async function walk (ref, prefix) {
    const decoded = await page(ref)
    const p = decodeDirPage(decoded, V2)
    if (p.kind === 'index') { for (const c of indexChildren(decoded, 'dir').children) await walk(c, prefix); return }
    for (const e of p.entries) {
      const at = (prefix === '/' ? '' : prefix) + '/' + e.name
      if (e.type === 'dir') { storage[at] = { storage: 'dir', dir: refOf(e.dir) }; await walk(refOf(e.dir), at) }
      if (e.type === 'symlink') storage[at] = { storage: 'symlink' }
      if (e.type !== 'file') continue
      if (e.inline) storage[at] = { storage: 'inline' }
      if (e.chunks) storage[at] = { storage: 'chunks', chunks: e.chunks.map(refOf) }
      if (e.index) storage[at] = { storage: 'index', index: { ...refOf(e.index), levels: e.index.levels }, lead: refOf(e.lead) }
    }
  }
  await walk(root, '/')
  return storage
}

/**
 * The tampered variants: files replacing those of tree/ (new blobs, a new
 * fsinfo.json signed by the public test key) or bytes flipped in place.
 */
async function tamperedVariants ({ dir, specs, rootEntries, storage, real }) {
  const v = []
  const add = (name, description, expect, reader, read, changes) => v.push({ name, description, expect, reader, read, changes })
  const before = new Set(await fs.readdir(path.join(dir, 'h')))
  const fsinfoChange = utf8 => ({ op: 'replace', file: 'fsinfo.json', utf8 })
  const spec = name => specs.find(s => s.name === name)
  const publish = (w, o) => w.publishPrivate({ signer: PUBLISHER, seq: real.seq, issued: NOW, expires: LATER, commit: real.commit, manifest: real.manifest, access: real.access, file: false, ...o })

  /** New blobs written by the variant into tree/h: listed as changes, then taken out of tree/h again. */
  async function newBlobs () {
    const changes = []
    for (const f of (await fs.readdir(path.join(dir, 'h'))).sort()) {
      if (before.has(f)) continue
      changes.push({ op: 'replace', file: 'h/' + f, hex: toHex(await fs.readFile(path.join(dir, 'h', f))) })
      await fs.rm(path.join(dir, 'h', f))
    }
    return changes
  }

  /** A root whose entries `change` alters (their pages sealed again), its manifest, wrapped and committed, signed. */
  async function withRoot (name, description, expect, read, change) {
    const w = new PrivateWriter(dir, { secret: S['tree-secret'] })
    const entries = []
    for (const e of rootEntries) entries.push(change[e.name] ? await change[e.name]({ ...e }, w) : e)
    const root = await buildDirectory(entries, b => w.put(b), V2)
    const rootRef = Buffer.from(encodeRootRef(root, ROOT_MTIME))
    const manifest = await w.manifest(root)
    const access = { ...real.access, root: wrapRoot(S['epoch-key'], variantSecret(name, 'wrap-nonce'), rootRef) }
    const text = await publish(w, { commit: rootCommit(rootRef), manifest, access })
    add(name, description, expect, 'identity', read, [...await newBlobs(), fsinfoChange(text)])
  }

  const chunkOf = p => storage[p].chunks[0]
  const inner = name => Buffer.from(packBlob(Buffer.from(spec(name).file)).stored)

  add('sealed-chunk-flip', 'one byte of the sealed (encrypted) chunk of /random.bin flipped', 'ROTREE_HASH_MISMATCH', 'identity', ['/random.bin'],
    [{ op: 'flip', file: 'h/' + chunkOf('/random.bin').hash, offset: Math.floor(chunkOf('/random.bin').storedSize / 2), xor: 1 }])

  // the chunk sealed under the key another tree's secret gives its bytes; the ref keeps this tree's key
  await withRoot('sealed-under-other-key', '/text.txt\'s chunk sealed under the key another tree secret gives the same inner bytes; the root entry names the new blob (its handle and stored size) with this tree\'s key: the GCM tag does not verify; the root page sealed again, re-wrapped, re-signed',
    'ROTREE_BAD_FORMAT', ['/text.txt'], {
      'text.txt': async (e, w) => {
        const i = inner('text.txt')
        const other = await w.putSealedWith(i, blobKey(S['other-tree-secret'], i))
        return { ...e, chunks: [{ ...e.chunks[0], ...other }] }
      }
    })
  const rawInner = inner('random.bin')
  if (packBlob(Buffer.from(spec('random.bin').file)).codec !== 'none' || rawInner.at(-1) === 0x80 || rawInner.at(-1) === 0) throw new Error('random.bin: unexpected inner bytes')
  for (const [name, description, padOpts] of [
    ['padding-too-long', 'padded with 64 zero bytes more than padme gives (marker in place)', { to: padme(rawInner.length + 1) + 64 }],
    ['padding-no-marker', 'padded to the right length with 0x01 where the 0x80 marker goes', { marker: 0x01 }]
  ]) {
    await withRoot(name, `/random.bin's chunk ${description}, sealed under its right key (the tag verifies); the root entry names the new blob; the root page sealed again, re-wrapped, re-signed`,
      'ROTREE_BAD_FORMAT', ['/random.bin'], {
        'random.bin': async (e, w) => {
          const other = await w.putSealedWith(rawInner, blobKey(S['tree-secret'], rawInner), padOpts)
          return { ...e, chunks: [{ ...e.chunks[0], ...other }] }
        }
      })
  }

  const w = new PrivateWriter(dir, { secret: S['tree-secret'] })
  // access.root: another root, under the right key; the same root under another key
  const aRef = Buffer.from(encodeRootRef(storage['/a'].dir, spec('a').mtime))
  add('access-root-other-root', 'fsinfo.json\'s access.root wraps the ref of /a (a real sealed page of the tree) under the epoch key; the release still commits to the real root; re-signed',
    'ROTREE_BAD_FORMAT', 'identity', ['/'], [fsinfoChange(await publish(w, { access: { ...real.access, root: wrapRoot(S['epoch-key'], variantSecret('access-root-other-root', 'wrap-nonce'), aRef) } }))])
  add('access-root-other-epoch-key', 'fsinfo.json\'s access.root wraps the real root ref under a key that is not the epoch\'s; re-signed',
    'ROTREE_BAD_FORMAT', 'identity', ['/'], [fsinfoChange(await publish(w, { access: { ...real.access, root: wrapRoot(S['other-epoch-key'], variantSecret('access-root-other-epoch-key', 'wrap-nonce'), real.rootRef) } }))])

  // the keyring: without the reader; of another epoch; flipped
  for (const [name, description, expect, o] of [
    ['keyring-without-reader', 'a keyring for the stranger only (the same epoch key), named by fsinfo.json; re-signed', 'ROTREE_NO_ACCESS', { readers: ['stranger'] }],
    ['keyring-other-epoch', 'a keyring for the same readers holding the same key as epoch 2, while fsinfo.json names epoch 1; re-signed', 'ROTREE_BAD_FORMAT', { epoch: 2 }]
  ]) {
    const kr = await w.putPlain(keyringFor({ ...o, variant: name }))
    const text = await publish(w, { access: { ...real.access, keyring: kr } })
    add(name, description, expect, 'identity', ['/'], [...await newBlobs(), fsinfoChange(text)])
  }
  add('keyring-flip', 'the last byte of the keyring (its payload\'s tag) flipped', 'ROTREE_HASH_MISMATCH', 'identity', ['/'],
    [{ op: 'flip', file: 'h/' + real.access.keyring.hash, offset: real.access.keyring.size - 1, xor: 1 }])

  // the manifest: an index whose second leaf lacks a blob the index counts
  const listed = [...real.blobs].sort()
  const k = Math.floor(listed.length / 2)
  const leaf1 = encodeManifestLeaf(listed.slice(0, k).map(h => ({ hash: h, size: real.sizes.get(h) })))
  const leaf2 = encodeManifestLeaf(listed.slice(k, -1).map(h => ({ hash: h, size: real.sizes.get(h) })))
  const l1 = await w.putPlain(leaf1); const l2 = await w.putPlain(leaf2)
  const top = await w.putPlain(encodeManifestIndex(1, [
    { firstHash: listed[0], hash: l1.hash, size: l1.size, blobs: k },
    { firstHash: listed[k], hash: l2.hash, size: l2.size, blobs: listed.length - k } // one more than the leaf holds
  ]))
  const text = await publish(w, { manifest: top })
  add('manifest-missing-blob', `the release names a manifest index of two leaves whose second leaf lacks the last of the ${listed.length} blobs, which the index still counts; re-signed. Read without a key, as a mirror does (pull, fsck); a reader with its identity does not read the manifest and reads the tree`,
    'ROTREE_BAD_FORMAT', 'keyless', [], [...await newBlobs(), fsinfoChange(text)])
  return v
}

/**
 * Generate the private-tree vectors into dest (tree/, vectors.json, tampered/).
 * @param {string} dest
 */
export async function makeVectorsPrivate (dest) {
  const treeDir = path.join(dest, 'tree')
  await fs.rm(treeDir, { recursive: true, force: true })
  await fs.rm(path.join(dest, 'tampered'), { recursive: true, force: true })
  await fs.mkdir(path.join(dest, 'tampered'), { recursive: true })
  const w = new PrivateWriter(treeDir, { secret: S['tree-secret'] })
  const specs = sourceSpec()
  const rootEntries = []
  for (const s of specs) rootEntries.push(await w.entry(s))
  const root = await buildDirectory(rootEntries, b => w.put(b), V2)
  const rootRef = Buffer.from(encodeRootRef(root, ROOT_MTIME))
  const commit = rootCommit(rootRef)
  const reached = await w.reachable(root)
  const manifest = await w.manifest(root)
  const keyring = await w.putPlain(keyringFor())
  const wrapped = wrapRoot(S['epoch-key'], S['wrap-nonce'], rootRef)
  const access = { epoch: EPOCH, keyring, root: wrapped }
  const seq = Math.floor(NOW / 1000)
  const fsinfoText = await w.publishPrivate({ signer: PUBLISHER, commit, manifest, access, seq, issued: NOW, expires: LATER })
  const info = decodeFsinfoV2(fsinfoText)

  const storage = await storageOf(treeDir, root)
  const paths = describeSpec(specs, ROOT_MTIME)
  for (const [p, s] of Object.entries(storage)) Object.assign(paths[p], s)
  const files = (await fs.readdir(path.join(treeDir, 'h'))).sort()
  const blobs = {}
  for (const [hash, { ref, kind }] of reached) {
    const stored = await fs.readFile(path.join(treeDir, 'h', hash))
    blobs[hash] = { kind, size: stored.length, codec: ref.codec, decodedSize: ref.size, key: ref.key }
  }
  // the manifest's pages and the keyring are stored as they are
  const manifestPages = files.filter(f => !blobs[f] && f !== keyring.hash)
  if (manifestPages.length !== 1 || manifestPages[0] !== manifest.hash) throw new Error('expected a manifest of one leaf')
  blobs[manifest.hash] = { kind: 'manifest-leaf', size: manifest.size, codec: null }
  blobs[keyring.hash] = { kind: 'keyring', size: keyring.size, codec: null }
  for (const f of files) if (!blobs[f]) throw new Error('unreachable blob ' + f)
  // what the vectors are for: check that they cover what they claim to
  const kinds = Object.values(blobs)
  if (blobs[storage['/text.txt'].chunks[0].hash].codec !== 'deflate-raw') throw new Error('text.txt: inner bytes not compressed')
  if (blobs[storage['/random.bin'].chunks[0].hash].codec !== 'none') throw new Error('random.bin: inner bytes compressed')
  if (storage['/repeat.bin'].storage !== 'index') throw new Error('repeat.bin has no chunk index')
  if (kinds.filter(b => b.kind === 'chunk' && b.decodedSize === 1024).length !== 1) throw new Error('repeat.bin\'s 40 equal chunks are not one blob')
  if (blobs[storage['/pages'].dir.hash].kind !== 'dir-index') throw new Error('/pages has no index page')

  const real = { seq, commit, manifest, access, rootRef, blobs: new Set(reached.keys()), sizes: new Map([...reached].map(([h, b]) => [h, b.ref.storedSize])) }
  const variants = await tamperedVariants({ dir: treeDir, specs, rootEntries, storage, real })
  await fs.rm(path.join(treeDir, 'trust'), { recursive: true, force: true }) // a single-key tree: no trust documents
  const fragment = PUBLISHER.publicKey
  const vectors = {
    comment: 'rotree private-tree test vectors, generated by test/vectors/make.js (make-private.js); docs/FORMAT.md §10 explains every field. ' +
      'Every secret is SHA-256 of the ASCII string "rotree test vector private <name>" (its first bytes where fewer are needed): public, for tests only.',
    formatVersion: 2,
    fragment,
    keys: { publisher: PUBLISHER },
    secrets: Object.fromEntries(Object.entries(S).map(([n, b]) => [n, b.toString('hex')])),
    readers: READERS,
    keyringReaders: ['reader-a', 'reader-b'],
    builderNow: new Date(NOW).toISOString(),
    readerNow: new Date(READER_NOW).toISOString(),
    release: { signedMessage: Buffer.from(info.release.message).toString('utf8') },
    fsinfo: { seq: info.seq, signedMessage: Buffer.from(info.message).toString('utf8') },
    root: { ref: { hash: root.hash, size: root.storedSize, codec: root.codec, decodedSize: root.size, key: root.key }, mtime: ROOT_MTIME, rootRef: rootRef.toString('hex'), commit, wrapped },
    keyring: { hash: keyring.hash, size: keyring.size, epoch: EPOCH, payload: epochPayload(EPOCH, S['epoch-key']).toString('hex') },
    manifest: { hash: manifest.hash, size: manifest.size, blobs: manifest.blobs },
    paths,
    blobs: Object.fromEntries(Object.keys(blobs).sort().map(h => [h, blobs[h]])),
    tampered: variants.map(t => t.name)
  }
  await fs.writeFile(path.join(dest, 'vectors.json'), JSON.stringify(vectors, null, 2) + '\n')
  for (const t of variants) {
    const doc = { description: t.description, expect: t.expect, fragment, readerNow: vectors.readerNow, reader: t.reader, identity: t.reader === 'identity' ? 'reader-a' : null, read: t.read, changes: t.changes }
    await fs.writeFile(path.join(dest, 'tampered', t.name + '.json'), JSON.stringify(doc, null, 2) + '\n')
  }
  return { commit, blobs: files.length, fragment }
}

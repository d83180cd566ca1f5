// The format-version-2 test vectors (docs/FORMAT.md §10, version 2 part),
// into test/vectors/v2/:
//
//   tree/fsinfo.json, tree/trust/<n>.json, tree/h/<hex>   a small version-2 tree
//   vectors.json                                          what a reader must see in it
//   tampered/<name>.json                                  variants that must fail, with their code
//
// Written by `node test/vectors/make.js` (with the version-1 vectors) through
// v2-writer.js: the format module's encoders, packBlob's compression rule and
// ed25519 signatures, with fixed keys, contents, mtimes and clock, so running
// it again gives the same bytes (for this Node's zlib: FORMAT.md §12.6).
//
// THE KEYS ARE PUBLIC AND FOR TESTS ONLY: each secret key is SHA-256 of the
// ASCII string "rotree test vector v2 <name>".
import fs from 'node:fs/promises'
import path from 'node:path'
import { createHash } from 'node:crypto'
import { deflateRawSync } from 'node:zlib'
import { encodeLeaf, encodeEntry, buildDirectory, decodeDirPage, decodeChunkIndex, decodeFsinfoV2, toHex, fromHex, INLINE_MAX_V2, MAX_DIRECT_CHUNKS } from 'rotree-client/format'
import { trustAnchorOf, trustHash } from 'rotree-client/trust'
import { decodeBlobSync } from 'rotree-client/codec'
import { V2Writer, V2, keyPair, role, RETIRED } from './v2-writer.js'
import { prng, repeatBlock } from './make.js'

const sha256hex = b => createHash('sha256').update(b).digest('hex')

export const V2_KEY_SEED = 'rotree test vector v2 '
const KEY_NAMES = ['root-a', 'root-b', 'root-c', 'root-d', 'release-1', 'release-2', 'release-3', 'timestamp-1', 'timestamp-2', 'other-root']
export const KEYS = Object.fromEntries(KEY_NAMES.map(n => [n, keyPair(sha256hex(V2_KEY_SEED + n))]))
const K = KEYS

export const NOW = Date.UTC(2026, 0, 1) // the publisher's clock
export const LATER = Date.UTC(2126, 0, 1) // every expiry: the vectors never expire in practice
export const READER_NOW = Date.UTC(2026, 0, 2)
const T0 = Date.UTC(2025, 5, 1, 12, 0, 0)
export const NAME = 'stable'

// doc 1: root A, B, C (2 of 3); doc 2 rotates C out for D and the release and timestamp keys
const ROLES_1 = { root: role([K['root-a'], K['root-b'], K['root-c']], 2), release: role([K['release-1'], K['release-2']], 2), timestamp: role([K['timestamp-1']]) }
const ROLES_2 = { root: role([K['root-a'], K['root-b'], K['root-d']], 2), release: role([K['release-1'], K['release-3']], 2), timestamp: role([K['timestamp-2']]) }
const SIGNERS_1 = [K['root-a'], K['root-b']]
const SIGNERS_2 = [K['root-a'], K['root-b'], K['root-d']] // 2 of doc 1's root keys and 2 of its own
const REL_2 = [K['release-1'], K['release-3']]
const TS_2 = [K['timestamp-2']]

/** Pseudo-English that deflate compresses about 3×: words picked by prng bytes. */
export function text (seed, n) {
  const words = ['tree', 'mirror', 'blob', 'signed', 'root', 'page', 'chunk', 'hash', 'reader', 'verified', 'key', 'release', 'the', 'a', 'of', 'and']
  const r = prng(seed, n)
  let s = ''
  for (let i = 0; s.length < n; i++) s += (i % 12 === 11 ? '.\n' : ' ') + words[r[i % n] & 15]
  return Buffer.from(s.slice(0, n))
}

function sourceSpec () {
  const B = repeatBlock()
  const repeated = Buffer.alloc(B.length * (MAX_DIRECT_CHUNKS + 1))
  for (let o = 0; o < repeated.length; o += B.length) B.copy(repeated, o)
  const pages = []
  for (let i = 0; i < 400; i++) {
    const line = `page file ${i}\n`
    pages.push({ name: `p-${String(i).padStart(3, '0')}.txt`, file: line.repeat(Math.ceil(500 / line.length)).slice(0, 500), mtime: T0 })
  }
  return [
    { name: 'README', file: 'rotree format-version-2 test vectors: see docs/FORMAT.md §10.\n', mtime: T0 },
    { name: 'text.txt', file: text('rotree v2 vector text', 20000), mtime: T0 + 500 }, // one chunk, stored compressed
    { name: 'random.bin', file: prng('rotree v2 vector random', 20000), mtime: T0 }, // one chunk, incompressible: stored raw
    { name: 'inline-max.txt', file: text('rotree v2 vector inline', INLINE_MAX_V2), mtime: T0 }, // the largest inline file (§12.6)
    { name: 'inline-max+1.txt', file: text('rotree v2 vector inline', INLINE_MAX_V2 + 1), mtime: T0 }, // the smallest chunked one
    { name: 'log.txt', file: text('rotree v2 vector log', 600 * 1024), mtime: T0, exec: true }, // a chunk list of compressed chunks
    { name: 'repeat.bin', file: repeated, mtime: T0 }, // 33 chunks: a chunk index (its top page compressed)
    { name: 'link-to-text', symlink: 'text.txt', mtime: T0 },
    { name: 'a', dir: [{ name: 'deep.txt', file: 'deep\n', mtime: T0 + 3000 }, { name: 'up', symlink: '../README', mtime: T0 }], mtime: T0 + 61000 },
    { name: 'pages', dir: pages, mtime: T0 + 64000 } // two compressed leaves under an index page
  ]
}

/** Every blob reachable from the root with its kind, stored size, codec and decoded size; every path with its storage. */
async function describe (dir, rootRef) {
  const blobs = {}
  const storage = {}
  const read = async ref => {
    const stored = await fs.readFile(path.join(dir, 'h', ref.hash))
    blobs[ref.hash] = { kind: null, size: stored.length, codec: ref.codec, decodedSize: ref.size }
    return decodeBlobSync(stored, ref.codec, ref.size)
  }
  async function walkDir (ref, prefix) {
    const page = decodeDirPage(await read(ref), V2)
    blobs[ref.hash].kind = page.kind === 'leaf' ? 'dir-leaf' : 'dir-index'
    if (page.kind === 'index') { for (const c of page.children) await walkDir(c, prefix); return }
    for (const e of page.entries) {
      const p = (prefix === '/' ? '' : prefix) + '/' + e.name
      if (e.type === 'dir') { storage[p] = { storage: 'dir', dir: e.dir }; await walkDir(e.dir, p) }
      if (e.type === 'symlink') storage[p] = { storage: 'symlink' }
      if (e.type !== 'file') continue
      if (e.inline) storage[p] = { storage: 'inline' }
      if (e.chunks) {
        storage[p] = { storage: 'chunks', chunks: e.chunks }
        for (const c of e.chunks) { await read(c); blobs[c.hash].kind = 'chunk' }
      }
      if (e.index) { storage[p] = { storage: 'index', index: e.index }; await walkIndex(e.index) }
    }
  }
  async function walkIndex (ref) {
    const idx = decodeChunkIndex(await read(ref), V2)
    Object.assign(blobs[ref.hash], { kind: 'chunk-index', level: idx.level })
    for (const c of idx.children) {
      const child = { hash: c.hash, size: c.size, storedSize: c.storedSize, codec: c.codec }
      if (idx.level === 1) { await read(child); blobs[c.hash].kind = 'chunk' } else await walkIndex(child)
    }
  }
  storage['/'] = { storage: 'dir', dir: rootRef }
  await walkDir(rootRef, '/')
  return { blobs, storage }
}

/** What a reader must see at every path, from the spec (not from the encoders). */
export function describeSpec (specs, rootMtime) {
  const out = { '/': { type: 'dir', size: specs.length, mtime: rootMtime, exec: false } }
  const visit = (list, prefix) => {
    for (const s of list) {
      const p = prefix + '/' + s.name
      if (s.dir) { out[p] = { type: 'dir', size: s.dir.length, mtime: s.mtime, exec: false }; visit(s.dir, p); continue }
      if (s.symlink !== undefined) { out[p] = { type: 'symlink', size: Buffer.byteLength(s.symlink), mtime: s.mtime, exec: false, target: s.symlink }; continue }
      const b = Buffer.from(s.file)
      out[p] = { type: 'file', size: b.length, mtime: s.mtime, exec: !!s.exec, sha256: sha256hex(b) }
    }
  }
  visit(specs, '')
  return out
}

/**
 * The tampered variants. Each is a set of files replacing those of tree/:
 * new blobs (`replace` h/<hex>), a new fsinfo.json signed by the (public)
 * test keys, or a trust document.
 */
async function tamperedVariants ({ dir, specs, rootEntries, info, docs }) {
  const v = []
  const add = (name, description, expect, read, changes) => v.push({ name, description, expect, read, changes })
  const blobsOf = async (w, before) => {
    const changes = []
    for (const f of (await fs.readdir(path.join(w.out, 'h'))).sort()) {
      if (before.has(f)) continue
      changes.push({ op: 'replace', file: 'h/' + f, hex: toHex(await fs.readFile(path.join(w.out, 'h', f))) })
    }
    return changes
  }
  const before = new Set(await fs.readdir(path.join(dir, 'h')))
  const fsinfoChange = text => ({ op: 'replace', file: 'fsinfo.json', utf8: text })
  const anchor = trustAnchorOf(docs[1])
  const publish = (w, o) => w.publish({ anchor, name: NAME, trust: docs[2], rootMtime: T0 + 60000, seq: info.seq, issued: NOW, expires: LATER, release: { seq: info.release.seq, expires: LATER }, relSigners: REL_2, tsSigners: TS_2, file: false, ...o })
  const entry = name => rootEntries.find(e => e.name === name)

  /** A root directory with some entries changed (re-encoded, re-hashed), signed as the real one is. */
  async function withRoot (name, description, expect, read, change, { rawPage } = {}) {
    const w = new V2Writer(dir) // blobs go next to the real ones; the changes list only the new ones
    const entries = rootEntries.map(e => change[e.name] ? change[e.name]({ ...e }) : e)
    let root
    if (rawPage) root = { ...(await w.put(rawPage(entries))), entries: entries.length }
    else root = await buildDirectory(entries, b => w.put(b), V2)
    const text = await publish(w, { root })
    const changes = [...await blobsOf(w, before), fsinfoChange(text)]
    for (const c of changes) if (c.file.startsWith('h/')) await fs.rm(path.join(dir, c.file))
    add(name, description, expect, read, changes)
  }

  // the codec byte of text.txt's chunk ref, patched in the encoded root page
  const codecPatched = byte => entries => {
    const encoded = entries.map(e => encodeEntry(e, V2))
    const i = entries.findIndex(e => e.name === 'text.txt')
    const e = Buffer.from(encoded[i])
    const at = e.indexOf(Buffer.from(fromHex(entries[i].chunks[0].hash))) + 32
    let o = at; while (e[o] & 0x80) o++ // past uint(storedSize)
    e[o + 1] = byte
    encoded[i] = new Uint8Array(e)
    return encodeLeaf(encoded, V2)
  }
  await withRoot('codec-unknown', 'the root entry of /text.txt with its chunk\'s codec byte 0x01 changed to 0x02 (no such codec); re-hashed and re-signed', 'ROTREE_BAD_FORMAT', ['/'], {}, { rawPage: codecPatched(0x02) })
  await withRoot('codec-encrypted', 'the same codec byte changed to 0x11, the bit of a sealed blob (FORMAT.md §12.8), with no decoded size and key after it: the page no longer parses; re-hashed and re-signed', 'ROTREE_BAD_FORMAT', ['/'], {}, { rawPage: codecPatched(0x11) })
  await withRoot('chunk-decoded-size-off-by-one', 'the root entry of /text.txt with its chunk\'s decodedSize and the file size one more than the stream gives; re-hashed and re-signed', 'ROTREE_BAD_FORMAT', ['/text.txt'],
    { 'text.txt': e => ({ ...e, size: e.size + 1, chunks: [{ ...e.chunks[0], size: e.chunks[0].size + 1 }] }) })
  const bomb = deflateRawSync(Buffer.alloc(4 << 20))
  const wb = new V2Writer(dir)
  const bombHash = await wb.putStored(bomb)
  await withRoot('chunk-bomb', `/text.txt's chunk replaced by a ${bomb.length}-byte deflate stream of 4 MiB of zeros, its ref keeping the decoded size ${entry('text.txt').size}; re-hashed and re-signed`, 'ROTREE_BAD_FORMAT', ['/text.txt'],
    { 'text.txt': e => ({ ...e, chunks: [{ hash: bombHash, size: e.size, storedSize: bomb.length, codec: 'deflate-raw' }] }) })
  await withRoot('file-sha256-wrong', 'the root entry of /random.bin with the SHA-256 of other bytes (every chunk still verifies); re-hashed and re-signed', 'ROTREE_HASH_MISMATCH', ['/random.bin'],
    { 'random.bin': e => ({ ...e, sha256: sha256hex('not random.bin') }) })
  const textChunk = entry('text.txt').chunks[0]
  add('compressed-chunk-flip', 'one byte of the stored (compressed) chunk of /text.txt flipped', 'ROTREE_HASH_MISMATCH', ['/text.txt'],
    [{ op: 'flip', file: 'h/' + textChunk.hash, offset: Math.floor(textChunk.storedSize / 2), xor: 1 }])

  const w = new V2Writer(dir)
  const doc2Weak = await w.trust({ seq: 2, prev: docs[1], expires: LATER, ...ROLES_2 }, [K['root-a'], K['root-d']], { file: false })
  add('trust-2-without-old-root', 'trust/2.json signed by root-a and root-d only: its own root threshold (2 of a, b, d) is met, trust document 1\'s (2 of a, b, c) is not', 'ROTREE_THRESHOLD', [],
    [{ op: 'replace', file: 'trust/2.json', utf8: doc2Weak.text }])
  const other = await w.trust({ seq: 1, expires: LATER, root: role([K['other-root']]), release: role([K['other-root']]), timestamp: role([K['other-root']]) }, [K['other-root']], { file: false })
  add('trust-1-replaced', 'trust/1.json replaced by another family\'s first trust document, validly signed by its own root key: not the one the address certifies', 'ROTREE_THRESHOLD', [],
    [{ op: 'replace', file: 'trust/1.json', utf8: other.text }])
  add('release-too-few-keys', 'fsinfo.json whose release is signed by release-1 only (the threshold is 2); timestamp-signed as usual', 'ROTREE_THRESHOLD', [],
    [fsinfoChange(await publish(w, { root: info.rootRef, relSigners: [K['release-1']] }))])
  add('fsinfo-other-name', 'fsinfo.json and its release for the tree "nightly", validly signed, at the address of "stable"', 'ROTREE_WRONG_NAME', [],
    [fsinfoChange(await publish(w, { name: 'nightly', root: info.rootRef }))])
  // a sibling family of the same keys (one organisation's root keys over two projects):
  // its document 1 expires at another time, so it is another document with another hash
  const sibling1 = await w.trust({ seq: 1, expires: LATER - 86400e3, ...ROLES_1 }, SIGNERS_1, { file: false })
  const sibling2 = await w.trust({ seq: 2, prev: sibling1, expires: LATER, ...ROLES_2 }, SIGNERS_2, { file: false })
  add('trust-2-other-family', 'trust/2.json of a sibling family whose document 1 has the same keys (signed by the same root keys, 2 of document 1\'s and 2 of its own), which names that family\'s document 1 as its predecessor', 'ROTREE_WRONG_KEY', [],
    [{ op: 'replace', file: 'trust/2.json', utf8: sibling2.text }])
  add('release-other-family', 'fsinfo.json whose release names the sibling family\'s anchor (signed by the same release keys), timestamp-signed for this family', 'ROTREE_WRONG_KEY', [],
    [fsinfoChange(await publish(w, { root: info.rootRef, release: { seq: info.release.seq, expires: LATER, anchor: trustAnchorOf(sibling1) } }))])
  const identity = ['01' + '00'.repeat(31), '01' + '00'.repeat(30) + '80'] // one small-order point, spelt twice
  const weakDoc = JSON.parse(doc2Weak.text)
  weakDoc.roles.release = { threshold: 2, keys: identity }
  add('trust-2-small-order-keys', 'trust/2.json whose release role lists the identity point twice (its two spellings, 01…00 and 01…80), under which any signature verifies', 'ROTREE_BAD_FORMAT', [],
    [{ op: 'replace', file: 'trust/2.json', utf8: JSON.stringify(weakDoc, null, 2) + '\n' }])
  const doc3 = await w.trust({ seq: 3, prev: docs[2], expires: LATER, root: ROLES_2.root, release: RETIRED, timestamp: ROLES_2.timestamp }, SIGNERS_2, { file: false })
  add('retired', 'trust/3.json with no release keys (the family is retired), and fsinfo.json under it', 'ROTREE_RETIRED', [],
    [{ op: 'replace', file: 'trust/3.json', utf8: doc3.text }, fsinfoChange(await publish(w, { trust: doc3, root: info.rootRef, relSigners: [] }))])
  if (specs.length < 2) throw new Error('unexpected spec')
  return v
}

/**
 * Generate the version-2 vectors into dest (tree/, vectors.json, tampered/).
 * @param {string} dest
 */
export async function makeVectorsV2 (dest) {
  const treeDir = path.join(dest, 'tree')
  await fs.rm(treeDir, { recursive: true, force: true })
  await fs.rm(path.join(dest, 'tampered'), { recursive: true, force: true })
  await fs.mkdir(path.join(dest, 'tampered'), { recursive: true })
  const w = new V2Writer(treeDir)
  const specs = sourceSpec()
  const rootEntries = await Promise.all(specs.map(s => w.entry(s)))
  const rootRef = await buildDirectory(rootEntries, b => w.put(b), V2)
  const rootMtime = T0 + 60000
  const doc1 = await w.trust({ seq: 1, expires: LATER, ...ROLES_1 }, SIGNERS_1)
  const doc2 = await w.trust({ seq: 2, expires: LATER, ...ROLES_2 }, SIGNERS_2)
  const seq = Math.floor(NOW / 1000)
  const fsinfoText = await w.publish({ name: NAME, trust: doc2, root: rootRef, rootMtime, seq, issued: NOW, expires: LATER, release: { seq: 1, expires: LATER }, relSigners: REL_2, tsSigners: TS_2 })
  const info = decodeFsinfoV2(fsinfoText)
  info.rootRef = rootRef

  const { blobs, storage } = await describe(treeDir, rootRef)
  const paths = describeSpec(specs, rootMtime)
  for (const [p, s] of Object.entries(storage)) Object.assign(paths[p], s)
  const files = (await fs.readdir(path.join(treeDir, 'h'))).sort()
  for (const f of files) if (!blobs[f]) throw new Error('unreachable blob ' + f)
  // what the vectors are for: check that they cover what they claim to
  const kinds = Object.values(blobs)
  if (blobs[storage['/text.txt'].chunks[0].hash].codec !== 'deflate-raw') throw new Error('text.txt is not stored compressed')
  if (blobs[storage['/random.bin'].chunks[0].hash].codec !== 'none') throw new Error('random.bin is stored compressed')
  if (storage['/repeat.bin'].storage !== 'index') throw new Error('repeat.bin has no chunk index')
  if (storage['/log.txt'].chunks.length < 2 || storage['/log.txt'].chunks.some(c => c.codec !== 'deflate-raw')) throw new Error('log.txt is not several compressed chunks')
  if (!kinds.some(b => b.kind === 'dir-leaf' && b.codec === 'deflate-raw')) throw new Error('no compressed directory page')
  if (blobs[storage['/pages'].dir.hash].kind !== 'dir-index') throw new Error('/pages has no index page')

  const variants = await tamperedVariants({ dir: treeDir, specs, rootEntries, info, docs: [null, doc1, doc2] })
  const fragment = trustAnchorOf(doc1) + ':' + NAME
  const vectors = {
    comment: 'rotree format-version-2 test vectors, generated by test/vectors/make.js (make-v2.js); docs/FORMAT.md §10 explains every field. ' +
      'Each secret key is SHA-256 of the ASCII string "rotree test vector v2 <name>": public, for tests only.',
    formatVersion: 2,
    fragment,
    keys: KEYS,
    builderNow: new Date(NOW).toISOString(),
    readerNow: new Date(READER_NOW).toISOString(),
    trust: [doc1, doc2].map(d => ({ seq: d.seq, hash: trustHash(d), signedMessage: Buffer.from(d.message).toString('utf8') })),
    release: { seq: info.release.seq, hash: info.releaseHash, signedMessage: Buffer.from(info.release.message).toString('utf8') },
    fsinfo: { seq: info.seq, signedMessage: Buffer.from(info.message).toString('utf8') },
    root: { hash: rootRef.hash, size: rootRef.storedSize, codec: rootRef.codec, decodedSize: rootRef.size, mtime: rootMtime },
    paths,
    blobs: Object.fromEntries(Object.keys(blobs).sort().map(h => [h, blobs[h]])),
    tampered: variants.map(t => t.name)
  }
  await fs.writeFile(path.join(dest, 'vectors.json'), JSON.stringify(vectors, null, 2) + '\n')
  for (const t of variants) {
    const doc = { description: t.description, expect: t.expect, fragment, readerNow: vectors.readerNow, read: t.read, changes: t.changes }
    await fs.writeFile(path.join(dest, 'tampered', t.name + '.json'), JSON.stringify(doc, null, 2) + '\n')
  }
  return { root: rootRef.hash, blobs: files.length, fragment }
}

#!/usr/bin/env node
// Generates the rotree test vectors (docs/FORMAT.md §10) into test/vectors/:
//
//   tree/fsinfo.json, tree/h/<hex>   a small published tree, as `rotree build` writes it
//   vectors.json                     what a reader must see in it (keys, root, every path)
//   tampered/<name>.json             variants that must fail, with the expected error code
//
//   v2/…                             the same for format version 2 (make-v2.js)
//   private/…                        the same for a private tree, FORMAT.md §12.8 (make-private.js)
//
//   node test/vectors/make.js [DEST]      (DEST defaults to this folder)
//
// Everything is deterministic: fixed contents, fixed mtimes (utimes/lutimes), a
// fixed clock and a fixed key, so running it again gives the same bytes
// (test/vectors/vectors.test.js checks that).
//
// THE KEY IS PUBLIC AND FOR TESTS ONLY. Its secret half is SHA-256 of the ASCII
// string "rotree test vector key"; anyone can sign anything with it. Never trust
// it for a real tree.
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { createHash } from 'node:crypto'
import { pathToFileURL } from 'node:url'
import { build } from '../../builder/build.js'
import { publicKeyOf, sign } from 'rotree-client/crypto'
import { encodeFsinfo, decodeFsinfo, fsinfoMessage, decodeDirPage, encodeLeaf, encodeEntry, decodeChunkIndex, nextCut, chunkLengths, Writer, toHex, hashCut, GEAR, CHUNK_MIN, CHUNK_AVG, CHUNK_MAX, INLINE_MAX, MAX_DIRECT_CHUNKS } from 'rotree-client/format'

const sha256 = b => createHash('sha256').update(b).digest()
const sha256hex = b => createHash('sha256').update(b).digest('hex')

export const KEY_SEED = 'rotree test vector key'
export const SECRET_KEY = sha256hex(KEY_SEED) // public, tests only
export const PUBLIC_KEY = publicKeyOf(SECRET_KEY)
export const OTHER_SECRET_KEY = sha256hex(KEY_SEED + ' 2') // the "attacker" of tampered/fsinfo-other-key
export const NOW = Date.UTC(2026, 0, 1) // the builder's clock: issued 2026-01-01T00:00:00.000Z
export const EXPIRES = Date.UTC(2126, 0, 1) // 100 years: the vectors never expire in practice
export const READER_NOW = Date.UTC(2026, 0, 2) // the clock readers use on the vectors

const T0 = Date.UTC(2025, 5, 1, 12, 0, 0) // default mtime of the source tree, whole seconds

/**
 * Deterministic bytes: SHA-256 in counter mode. Block i (i = 0, 1, …) is
 * SHA-256(UTF-8(seed) || i as 8-byte big-endian); the output is the blocks
 * concatenated, cut to n bytes.
 */
export function prng (seed, n) {
  const out = Buffer.alloc(n)
  const s = Buffer.from(seed, 'utf8')
  const ctr = Buffer.alloc(8)
  for (let i = 0, o = 0; o < n; i++, o += 32) {
    ctr.writeBigUInt64BE(BigInt(i))
    sha256(Buffer.concat([s, ctr])).copy(out, o)
  }
  return out
}

/**
 * The block B that repeat.bin repeats: |B| = CHUNK_AVG + 64, and chunking B·B·…
 * cuts exactly after every B (so the file is MAX_DIRECT_CHUNKS + 1 identical
 * chunks stored once, and needs a chunk index). The first 4 bytes (never looked
 * at by the chunker, which starts hashing at CHUNK_MIN) are a counter chosen so
 * that SHA-256(B) passes the index cut test (hashCut(h, 8)): every level-1 index
 * then holds one chunk and the file gets a two-level index tree. The last 4
 * bytes are a nonce that puts a cut point right at the end of B. The body is
 * prng('rotree vector repeat <seed>'); seed, nonce and counter are the smallest
 * values that work, found by search (well under a second).
 */
export function repeatBlock () {
  const L = CHUNK_AVG + 64
  const twice = Buffer.alloc(2 * L)
  for (let seed = 0; seed < 64; seed++) {
    const B = prng('rotree vector repeat ' + seed, L)
    for (let nonce = 0; nonce < 1 << 20; nonce++) {
      B.writeUInt32BE(nonce, L - 4)
      if (!tailCuts(B, L)) continue // cheap pre-check, then the real chunker
      B.copy(twice, 0); B.copy(twice, L)
      if (nextCut(twice, 0, 2 * L, false) !== L) break // a cut inside B: try the next seed
      for (let counter = 0; counter < 1 << 20; counter++) {
        B.writeUInt32BE(counter, 0)
        if (hashCut(sha256(B), 8)) return B
      }
    }
  }
  throw new Error('no repeat block found')
}

/** Does the fingerprint over B's last 32 bytes (all it depends on) pass the large-chunk mask of cdc.js? */
function tailCuts (B, L) {
  const maskL = (~0 << (32 - (Math.log2(CHUNK_AVG) - 2))) >>> 0
  let fp = 0
  for (let i = L - 32; i < L; i++) fp = ((fp << 1) + GEAR[B[i]]) >>> 0
  return (fp & maskL) === 0
}

/** The source tree: path → spec. Paths are relative, '/'-separated. */
function sourceSpec () {
  const repeat = repeatBlock()
  const repeated = Buffer.alloc(repeat.length * (MAX_DIRECT_CHUNKS + 1))
  for (let o = 0; o < repeated.length; o += repeat.length) repeat.copy(repeated, o)
  const spec = {
    README: { data: 'rotree test vectors: see docs/FORMAT.md §10.\n' },
    'empty.txt': { data: '' }, // a 0-byte file in the root: inline, size 0
    'hello.txt': { data: 'hello, world\n', mtime: T0 + 500 }, // millisecond mtime
    'run.sh': { data: '#!/bin/sh\necho hi\n', mode: 0o755 }, // executable
    'héllo-wörld.txt': { data: 'héllo, wörld\n' }, // NFC, two-byte UTF-8
    '日本語.txt': { data: 'にほんご\n' }, // three-byte UTF-8
    'old.txt': { data: 'before 1970\n', mtime: -86400000 }, // negative mtime: zig-zag
    'link-to-hello': { symlink: 'hello.txt' },
    'empty-dir': { dir: true },
    'random-600k.bin': { data: prng('rotree vector random', 600 * 1024) }, // several chunks
    'repeat.bin': { data: repeated }, // 33 identical chunks: a chunk-index tree
    'a/zero.bin': { data: '' }, // a 0-byte file in a nested directory
    'a/inline-max.bin': { data: prng('rotree vector inline-max', INLINE_MAX) }, // largest inline file
    'a/one-chunk.bin': { data: prng('rotree vector one-chunk', INLINE_MAX + 1) }, // smallest chunked file: blob = file
    'a/link-to-b': { symlink: 'b' }, // a symlink to a directory
    'a/loop': { symlink: 'loop' }, // resolving it must stop after 40 hops
    'a/b/deep.txt': { data: 'deep\n', mtime: T0 + 3000 },
    'a/b/up-link': { symlink: '../../hello.txt' },
    'a/b/chain': { symlink: '../link-to-b/deep.txt' } // through another symlink
  }
  // enough inline entries that the directory is cut into pages under an index page
  for (let i = 0; i < 400; i++) {
    const line = `page file ${i}\n`
    spec[`pages/p-${String(i).padStart(3, '0')}.txt`] = { data: line.repeat(Math.ceil(500 / line.length)).slice(0, 500) }
  }
  return spec
}

const DIR_MTIMES = { '': T0 + 60000, a: T0 + 61000, 'a/b': T0 + 62000, 'empty-dir': T0 + 63000, pages: T0 + 64000 }

async function writeSource (root, spec) {
  const dirs = new Set([''])
  for (const rel of Object.keys(spec)) {
    const parts = rel.split('/')
    for (let i = 1; i < parts.length; i++) dirs.add(parts.slice(0, i).join('/'))
    if (spec[rel].dir) dirs.add(rel)
  }
  for (const d of dirs) await fs.mkdir(path.join(root, d), { recursive: true })
  for (const [rel, s] of Object.entries(spec)) {
    if (s.dir) continue
    const p = path.join(root, rel)
    // a Date, not seconds: fs.utimes silently turns a negative number into "now"
    const mtime = new Date(s.mtime ?? T0)
    if (s.symlink !== undefined) {
      await fs.symlink(s.symlink, p)
      await fs.lutimes(p, mtime, mtime)
    } else {
      await fs.writeFile(p, s.data)
      await fs.chmod(p, s.mode ?? 0o644)
      await fs.utimes(p, mtime, mtime)
    }
  }
  // directories last, deepest first: creating a child changes its parent's mtime
  for (const d of [...dirs].sort((x, y) => y.split('/').length - x.split('/').length || (y < x ? -1 : 1))) {
    const m = new Date(DIR_MTIMES[d] ?? T0)
    await fs.utimes(path.join(root, d), m, m)
  }
}

/** What a reader must see at every path, taken from the source tree (not from the builder). */
async function describeSource (root) {
  const out = {}
  async function visit (abs, rel) {
    const st = await fs.lstat(abs)
    const d = { type: st.isDirectory() ? 'dir' : st.isSymbolicLink() ? 'symlink' : 'file', size: 0, mtime: Math.floor(st.mtimeMs), exec: false }
    let kids = []
    if (st.isDirectory()) {
      kids = (await fs.readdir(abs)).sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)))
      d.size = kids.length
    } else if (st.isSymbolicLink()) {
      d.target = await fs.readlink(abs)
      d.size = Buffer.byteLength(d.target)
    } else {
      const b = await fs.readFile(abs)
      d.size = b.length; d.exec = (st.mode & 0o111) !== 0; d.sha256 = sha256hex(b)
    }
    out[rel || '/'] = d
    for (const k of kids) await visit(path.join(abs, k), rel + '/' + k)
  }
  await visit(root, '')
  return out
}

/** Walk the built tree with the decoders: per-path storage and the kind of every blob. */
async function describeBuilt (out, rootRef) {
  const blobs = {}
  const storage = {}
  const read = async h => fs.readFile(path.join(out, 'h', h))
  async function dir (ref, prefix) {
    const bytes = await read(ref.hash)
    const page = decodeDirPage(bytes)
    blobs[ref.hash] = { kind: page.kind === 'leaf' ? 'dir-leaf' : 'dir-index', size: bytes.length }
    if (page.kind === 'index') {
      for (const c of page.children) await dir(c, prefix)
      return
    }
    for (const e of page.entries) {
      const p = (prefix === '/' ? '' : prefix) + '/' + e.name
      if (e.type === 'dir') { storage[p] = { storage: 'dir', dir: e.dir }; await dir(e.dir, p) }
      if (e.type === 'symlink') storage[p] = { storage: 'symlink' }
      if (e.type !== 'file') continue
      if (e.inline) storage[p] = { storage: 'inline' }
      if (e.chunks) {
        storage[p] = { storage: 'chunks', chunks: e.chunks }
        for (const c of e.chunks) blobs[c.hash] = { kind: 'chunk', size: c.size }
      }
      if (e.index) {
        storage[p] = { storage: 'index', index: e.index }
        await cindex(e.index)
      }
    }
  }
  async function cindex (ref) {
    const bytes = await read(ref.hash)
    const idx = decodeChunkIndex(bytes)
    blobs[ref.hash] = { kind: 'chunk-index', size: bytes.length, level: idx.level }
    for (const c of idx.children) {
      if (idx.level === 1) blobs[c.hash] = { kind: 'chunk', size: c.size }
      else await cindex(c)
    }
  }
  await dir(rootRef, '/')
  storage['/'] = { storage: 'dir', dir: rootRef }
  return { blobs, storage }
}

/** Resolution cases a reader must get right (followed symlinks, errors). */
function lookups (paths) {
  const content = p => ({ resolved: p, sha256: paths[p].sha256 })
  return [
    { path: '/link-to-hello', follow: true, expect: content('/hello.txt') },
    { path: '/a/b/up-link', follow: true, expect: content('/hello.txt') },
    { path: '/a/link-to-b/deep.txt', follow: true, expect: content('/a/b/deep.txt') },
    { path: '/a/b/chain', follow: true, expect: content('/a/b/deep.txt') },
    { path: '/a/link-to-b/up-link', follow: true, expect: content('/hello.txt') },
    { path: '/a/link-to-b', follow: false, expect: { resolved: '/a/link-to-b', type: 'symlink' } },
    { path: '/a/link-to-b', follow: true, expect: { resolved: '/a/b', type: 'dir' } },
    { path: '/pages/p-399.txt', follow: true, expect: content('/pages/p-399.txt') },
    { path: '/a/loop', follow: true, error: 'ROTREE_SYMLINK_LOOP' },
    { path: '/a/loop', follow: false, expect: { resolved: '/a/loop', type: 'symlink' } },
    { path: '/nope', follow: true, error: 'ROTREE_NOT_FOUND' },
    { path: '/pages/p-400.txt', follow: true, error: 'ROTREE_NOT_FOUND' },
    { path: '/hello.txt/x', follow: true, error: 'ROTREE_NOT_A_DIRECTORY' },
    { path: '/hello.txt', follow: true, expect: content('/hello.txt') }
  ]
}

// Small, fixed encodings of §3.1 (varints) and §3.2 (zig-zag) for a second implementation.
function encodingVectors () {
  const hex = f => { const w = new Writer(16); f(w); return toHex(w.result()) }
  const uints = [0, 1, 127, 128, 255, 300, 16383, 16384, 2 ** 32, Number.MAX_SAFE_INTEGER]
  const sints = [0, -1, 1, -2, 2, -64, 64, -86400000, 1748779200500, -(2 ** 52), 2 ** 52 - 1] // the sint range: zig-zag must fit 2^53-1
  return {
    uint: uints.map(v => [v, hex(w => w.uint(v))]),
    sint: sints.map(v => [v, hex(w => w.sint(v))]),
    badUint: [
      ['8000', 'non-minimal (0 in two bytes)'],
      ['ff00', 'non-minimal (127 in two bytes)'],
      ['80', 'truncated'],
      ['ffffffffffffff10', 'above 2^53-1'],
      ['ffffffffffffff8f01', 'longer than 8 bytes']
    ]
  }
}

/** fsinfo.json text for fields, signed with secretKey. */
function signFsinfo (fields, secretKey) {
  return encodeFsinfo({ ...fields, sig: sign(fsinfoMessage(fields), secretKey) })
}

/** Every tampered variant: changes applied to a copy of tree/, and the error a reader must raise. */
function tamperedVariants ({ fsinfo, rootBytes, paths, storage }) {
  const base = { key: fsinfo.key, seq: fsinfo.seq, issued: fsinfo.issued, expires: fsinfo.expires, root: fsinfo.root.hash, rootSize: fsinfo.root.size, rootMtime: fsinfo.rootMtime }
  const v = []
  const add = (name, description, expect, read, changes) => v.push({ name, description, expect, read, changes })
  const text = JSON.parse(encodeFsinfo({ ...base, sig: fsinfo.sig })) // field order as the builder writes it
  const json = o => JSON.stringify(o, null, 2) + '\n'
  const pretty = o => ({ op: 'replace', file: 'fsinfo.json', utf8: json(o) })
  /** A new root directory blob (re-hashed) and an fsinfo.json signed by the test key that points at it. */
  const newRoot = bytes => [
    { op: 'replace', file: 'h/' + sha256hex(bytes), hex: toHex(bytes) },
    { op: 'replace', file: 'fsinfo.json', utf8: signFsinfo({ ...base, root: sha256hex(bytes), rootSize: bytes.length }, SECRET_KEY) }
  ]
  const root = decodeDirPage(rootBytes)
  if (root.kind !== 'leaf') throw new Error('the vectors expect a one-page root directory')
  const rootEntries = root.entries.map(e => encodeEntry(e))
  const withEntry = (name, f) => encodeLeaf(root.entries.map((e, i) => e.name === name ? encodeEntry(f({ ...e })) : rootEntries[i]))

  const chunked = storage['/random-600k.bin'].chunks
  add('chunk-flip', 'one byte of a data chunk of /random-600k.bin flipped', 'ROTREE_HASH_MISMATCH', ['/random-600k.bin'],
    [{ op: 'flip', file: 'h/' + chunked[1].hash, offset: 1000, xor: 1 }])
  add('chunk-truncated', 'a data chunk of /random-600k.bin cut to half its size', 'ROTREE_TRUNCATED', ['/random-600k.bin'],
    [{ op: 'truncate', file: 'h/' + chunked[0].hash, length: Math.floor(chunked[0].size / 2) }])
  add('root-dir-flip', 'one byte of the root directory blob flipped', 'ROTREE_HASH_MISMATCH', ['/'],
    [{ op: 'flip', file: 'h/' + fsinfo.root.hash, offset: Math.floor(rootBytes.length / 2), xor: 0x20 }])
  add('fsinfo-seq-changed', 'fsinfo.json with seq + 1 and the original signature', 'ROTREE_BAD_SIGNATURE', [],
    [pretty({ ...text, seq: text.seq + 1 })])
  add('fsinfo-root-changed', 'fsinfo.json pointing at another (existing) directory blob, original signature', 'ROTREE_BAD_SIGNATURE', [],
    [pretty({ ...text, root: storage['/a'].dir.hash, rootSize: storage['/a'].dir.size })])
  const otherKey = publicKeyOf(OTHER_SECRET_KEY)
  add('fsinfo-other-key', 'fsinfo.json validly signed by another key (and naming it), read with the test key', 'ROTREE_WRONG_KEY', [],
    [{ op: 'replace', file: 'fsinfo.json', utf8: signFsinfo({ ...base, key: otherKey }, OTHER_SECRET_KEY) }])
  add('fsinfo-version-2', 'fsinfo.json with "version": 2', 'ROTREE_UNSUPPORTED_VERSION', [],
    [pretty({ ...text, version: 2 })])
  add('fsinfo-unknown-field', 'fsinfo.json with an extra field (the signature itself still verifies)', 'ROTREE_BAD_FORMAT', [],
    [pretty({ ...text, comment: 'not in the format' })])
  add('fsinfo-expired', 'fsinfo.json signed by the test key, expired a year before the reader clock', 'ROTREE_EXPIRED', [],
    [{ op: 'replace', file: 'fsinfo.json', utf8: signFsinfo({ ...base, issued: '2024-12-01T00:00:00.000Z', expires: '2025-01-01T00:00:00.000Z' }, SECRET_KEY) }])
  add('fsinfo-future', 'fsinfo.json signed by the test key, issued a day after the reader clock', 'ROTREE_NOT_YET_VALID', [],
    [{ op: 'replace', file: 'fsinfo.json', utf8: signFsinfo({ ...base, issued: new Date(READER_NOW + 86400e3).toISOString() }, SECRET_KEY) }])
  add('fsinfo-time-spelling', 'fsinfo.json whose "issued" is spelled without milliseconds (the same instant)', 'ROTREE_BAD_FORMAT', [],
    [pretty({ ...text, issued: text.issued.replace('.000Z', 'Z') })])

  // re-hashed and re-signed: only the format checks can catch these
  const swapped = rootEntries.slice(); [swapped[0], swapped[1]] = [swapped[1], swapped[0]]
  add('dir-unsorted', 'root directory with its first two entries swapped, re-hashed and re-signed', 'ROTREE_BAD_FORMAT', ['/'],
    newRoot(encodeLeaf(swapped)))
  const count = rootEntries.length
  if (count >= 0x80) throw new Error('root too large for the varint variant')
  const nonMinimal = Buffer.concat([rootBytes.subarray(0, 4), Buffer.of(0x80 | count, 0x00), rootBytes.subarray(5)])
  add('varint-non-minimal', `root directory whose entry count ${count} is written in two bytes (${toHex(nonMinimal.subarray(4, 6))}), re-hashed and re-signed`, 'ROTREE_BAD_FORMAT', ['/'],
    newRoot(nonMinimal))
  add('chunk-sizes-mismatch', 'root entry of /random-600k.bin with size + 1, so its chunk sizes do not add up; re-hashed and re-signed', 'ROTREE_BAD_FORMAT', ['/'],
    newRoot(withEntry('random-600k.bin', e => ({ ...e, size: e.size + 1 }))))
  add('chunk-index-bytes-mismatch', 'root entry of /repeat.bin with size - 1, so its chunk index covers more bytes than the entry says; re-hashed and re-signed', 'ROTREE_BAD_FORMAT', ['/repeat.bin'],
    newRoot(withEntry('repeat.bin', e => ({ ...e, size: e.size - 1 }))))
  add('dir-count-mismatch', 'root entry of /pages claiming one entry more than its pages hold; re-hashed and re-signed', 'ROTREE_BAD_FORMAT', ['/pages'],
    newRoot(withEntry('pages', e => ({ ...e, size: e.size + 1 }))))
  const escape = { name: 'escape', type: 'symlink', target: '../hello.txt', mtime: T0, size: 0, exec: false }
  const withEscape = [...root.entries.map((e, i) => ({ name: e.name, bytes: rootEntries[i] })), { name: escape.name, bytes: encodeEntry(escape) }]
    .sort((x, y) => Buffer.compare(Buffer.from(x.name), Buffer.from(y.name))).map(x => x.bytes)
  add('symlink-escape', 'root directory with a symlink "escape" -> "../hello.txt" (above the tree root); re-hashed and re-signed', 'ROTREE_SYMLINK_LOOP', ['/escape'],
    newRoot(encodeLeaf(withEscape)))
  if (paths['/pages'].size !== 400) throw new Error('unexpected /pages')
  return v
}

/**
 * Generate everything into dest (tree/, vectors.json, tampered/).
 * @param {string} dest
 * @returns {Promise<{ root: string }>}
 */
export async function makeVectors (dest) {
  const tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'rotree-vectors-'))
  try {
    const src = path.join(tmp, 'src'); const out = path.join(tmp, 'out')
    const spec = sourceSpec()
    await writeSource(src, spec)
    const key = { secretKey: SECRET_KEY, publicKey: PUBLIC_KEY }
    // format version 1 on purpose: these are its vectors (version 2's are make-v2.js's)
    const result = await build({ src, out, key, ttlMs: EXPIRES - NOW, now: NOW, fsync: false, version: 1 })
    const fsinfoText = await fs.readFile(path.join(out, 'fsinfo.json'))
    const fsinfo = decodeFsinfo(fsinfoText)
    const paths = await describeSource(src)
    const { blobs, storage } = await describeBuilt(out, fsinfo.root)

    // what the vectors are for: check that they cover what they claim to
    const rep = storage['/repeat.bin']
    if (rep.storage !== 'index' || rep.index.levels !== 2) throw new Error('repeat.bin did not get a two-level chunk index')
    if (chunkLengths(spec['repeat.bin'].data).some(n => n !== CHUNK_AVG + 64)) throw new Error('repeat.bin chunks unexpectedly')
    if (storage['/random-600k.bin'].chunks.length < 2) throw new Error('random-600k.bin is one chunk')
    if (storage['/a/one-chunk.bin'].chunks[0].hash !== paths['/a/one-chunk.bin'].sha256) throw new Error('one-chunk blob is not the file')
    if (blobs[storage['/pages'].dir.hash].kind !== 'dir-index') throw new Error('/pages did not get an index page')

    for (const [p, s] of Object.entries(storage)) Object.assign(paths[p], s)
    const files = (await fs.readdir(path.join(out, 'h'))).sort()
    for (const f of files) if (!blobs[f]) throw new Error('unreachable blob ' + f)
    const rootBytes = await fs.readFile(path.join(out, 'h', fsinfo.root.hash))

    const vectors = {
      comment: 'rotree test vectors, generated by test/vectors/make.js; docs/FORMAT.md §10 explains every field. ' +
        'The secret key is SHA-256 of the ASCII string "rotree test vector key": public, for tests only.',
      formatVersion: fsinfo.version,
      secretKey: SECRET_KEY,
      publicKey: PUBLIC_KEY,
      builderNow: new Date(NOW).toISOString(),
      readerNow: new Date(READER_NOW).toISOString(),
      root: { hash: fsinfo.root.hash, size: fsinfo.root.size, mtime: fsinfo.rootMtime },
      fsinfo: { seq: fsinfo.seq, issued: fsinfo.issued, expires: fsinfo.expires, sig: fsinfo.sig, signedMessage: Buffer.from(fsinfo.message).toString('utf8') },
      limits: { CHUNK_MIN, CHUNK_AVG, CHUNK_MAX, INLINE_MAX, MAX_DIRECT_CHUNKS },
      encodings: encodingVectors(),
      paths,
      lookups: lookups(paths),
      blobs: Object.fromEntries(Object.keys(blobs).sort().map(h => [h, blobs[h]])),
      tampered: []
    }
    const variants = tamperedVariants({ fsinfo, rootBytes, paths, storage })
    vectors.tampered = variants.map(t => t.name)

    // write: replace tree/ and tampered/ wholesale
    await fs.mkdir(dest, { recursive: true })
    await fs.rm(path.join(dest, 'tree'), { recursive: true, force: true })
    await fs.rm(path.join(dest, 'tampered'), { recursive: true, force: true })
    await fs.mkdir(path.join(dest, 'tree', 'h'), { recursive: true })
    await fs.mkdir(path.join(dest, 'tampered'))
    for (const f of files) await fs.copyFile(path.join(out, 'h', f), path.join(dest, 'tree', 'h', f))
    await fs.writeFile(path.join(dest, 'tree', 'fsinfo.json'), fsinfoText)
    await fs.writeFile(path.join(dest, 'vectors.json'), JSON.stringify(vectors, null, 2) + '\n')
    for (const t of variants) {
      const doc = { description: t.description, expect: t.expect, publicKey: PUBLIC_KEY, readerNow: vectors.readerNow, read: t.read, changes: t.changes }
      await fs.writeFile(path.join(dest, 'tampered', t.name + '.json'), JSON.stringify(doc, null, 2) + '\n')
    }
    return { root: fsinfo.root.hash, blobs: files.length, result }
  } finally {
    await fs.rm(tmp, { recursive: true, force: true })
  }
}

/** Apply a tampered variant's changes to a copy of tree/ at dir (test helper, also for other implementations' harnesses). */
export async function applyChanges (dir, changes) {
  for (const c of changes) {
    const p = path.join(dir, c.file)
    if (c.op === 'replace') await fs.writeFile(p, c.hex !== undefined ? Buffer.from(c.hex, 'hex') : Buffer.from(c.utf8, 'utf8'))
    else if (c.op === 'flip') { const b = await fs.readFile(p); b[c.offset] ^= c.xor; await fs.writeFile(p, b) }
    else if (c.op === 'truncate') await fs.truncate(p, c.length)
    else throw new Error('unknown change ' + c.op)
  }
}

// Not awaited at the top level: make-v2.js imports this module, and a
// top-level await here would wait on an import that waits on this module's
// evaluation (Node exits with code 13, "unsettled top-level await").
async function main () {
  const dest = path.resolve(process.argv[2] ?? path.dirname(new URL(import.meta.url).pathname))
  const r = await makeVectors(dest)
  console.log(`wrote ${dest}: root ${r.root}, ${r.blobs} blobs, public key ${PUBLIC_KEY}`)
  const { makeVectorsV2 } = await import('./make-v2.js')
  const r2 = await makeVectorsV2(path.join(dest, 'v2'))
  console.log(`wrote ${path.join(dest, 'v2')}: root ${r2.root}, ${r2.blobs} blobs, address #${r2.fragment}`)
  const { makeVectorsPrivate } = await import('./make-private.js')
  const r3 = await makeVectorsPrivate(path.join(dest, 'private'))
  console.log(`wrote ${path.join(dest, 'private')}: root commitment ${r3.commit}, ${r3.blobs} blobs, address #${r3.fragment}`)
}
if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  main().catch(err => { console.error(err); process.exitCode = 1 })
}

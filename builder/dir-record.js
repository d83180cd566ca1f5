// What the build index remembers of one source directory (build-index.js):
// its ref, the blobs it needs, and each child as the last build saw it.
// One record per directory, read and written whole: a rebuild compares a
// directory's listing and its files' lstat against it, and a directory whose
// children are all as recorded gives back its ref without reading or
// encoding anything.
//
//   u8 layout=1, u8 version, u8 ref.codec, u8 0, u32 children, u32 blobs, u32 namesLen,
//   f64 ref.size, f64 ref.entries, ref.hash[32], f64 ref.storedSize  (72 bytes)
//   children × 8 × f64 (LE), in name order:
//     file      1 | size mtimeMs ctimeMs ino dev mode | at → sha256[32] u32 n, n × chunk
//               (n = 0: an inlined file; its bytes are read again when its directory is encoded)
//     racy file 4 | the same: never taken as unchanged (build-index.js: racy entries)
//     symlink   2 | mtimeMs 0 0 0 0 0 | at → u32 len, target (UTF-8)
//     dir       3 | mtimeMs ref.size ref.entries ino dev 0 | at → ref
//   names, UTF-8, each followed by NUL (names hold no NUL)
//   blobs × hash[32]: the directory's own pages and its files' chunk-index blobs
//   the variable parts the children point at (`at`: offset from the record's start)
//
//   version 1:  chunk := hash[32] u32 size                      ref := hash[32]
//   version 2:  chunk := hash[32] u32 size u32 storedSize u8 codec
//               ref   := hash[32] u32 storedSize u8 codec
//   sealed:     chunk and ref as version 2, then key[32]; the head is followed by the
//               directory's own key[32] (HEAD_SEALED bytes in all)
//
// `version` is the format version of the tree the record was built for
// (FORMAT.md §6.1, §12): its refs, and the blobs it names, are that
// version's, so a build of the other version never takes it (build-index.js).
// A private tree's records are sealed (bit 0x80 of that byte): their refs
// carry the keys of sealed blobs (FORMAT.md §12.8), and a public build never
// takes them, nor a private build a public one's.
// Sizes are decoded sizes; storedSize and codec say how a blob is stored
// (FORMAT.md §12.6; codec 0 none, 1 deflate-raw; version 1: always none).
//
// Little-endian throughout: it never leaves this machine's index.
import { CODECS, CODEC_ID } from 'rotree-client/format'

export const T_FILE = 1; export const T_SYMLINK = 2; export const T_DIR = 3; export const T_RACY = 4
export const HEAD = 72 // bytes before the first child row (tests patch records in place)
const HEAD_SEALED = HEAD + 32
const SEALED = 0x80
export const ROW = 64
const utf8 = new TextEncoder()
const fromUtf8 = new TextDecoder()

export class DirRecord {
  /** @param {Uint8Array} bytes */
  constructor (bytes) {
    this.b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
    /** The format version of the tree this record was built for (1 or 2). */
    this.version = this.b[1] & ~SEALED
    /** A private tree's record: its refs carry keys. */
    this.sealed = (this.b[1] & SEALED) !== 0
    this.head = this.sealed ? HEAD_SEALED : HEAD
    if (this.b[0] !== 1 || this.b.length < this.head || (this.version !== 1 && this.version !== 2) || (this.sealed && this.version !== 2)) throw new RangeError('not a directory record')
    this.chunkLen = this.sealed ? 73 : this.version === 2 ? 41 : 36
    this.n = this.b.readUInt32LE(4)
    this.nBlobs = this.b.readUInt32LE(8)
    this.namesLen = this.b.readUInt32LE(12)
    this._names = null
  }

  /** The directory's ref: { hash, size, entries }, and storedSize and codec when its top page is stored compressed. */
  get ref () {
    const ref = withCodec({ hash: this.b.toString('hex', 32, 64), size: this.b.readDoubleLE(16), entries: this.b.readDoubleLE(24) }, this.b[2], this.b.readDoubleLE(64), this.sealed)
    if (this.sealed) ref.key = this.b.toString('hex', HEAD, HEAD_SEALED)
    return ref
  }

  /** @returns {string[]} the children's names, in order */
  get names () {
    if (!this._names) {
      const at = this.head + this.n * ROW
      this._names = this.n ? fromUtf8.decode(this.b.subarray(at, at + this.namesLen - 1)).split('\0') : []
    }
    return this._names
  }

  /** The directory's own blobs (pages, chunk indexes), as hex. */
  blobs () {
    const at = this.head + this.n * ROW + this.namesLen
    const out = new Array(this.nBlobs)
    for (let i = 0; i < this.nBlobs; i++) out[i] = this.b.toString('hex', at + 32 * i, at + 32 * i + 32)
    return out
  }

  type (i) { return this.b.readDoubleLE(this.head + i * ROW) }
  f (i, k) { return this.b.readDoubleLE(this.head + i * ROW + 8 * k) }
  _at (i) { return this.b.readDoubleLE(this.head + i * ROW + 56) }

  /** Child i's size, mtimeMs, ctimeMs, ino, dev into out[o..o+5] (a file). */
  statInto (i, out, o) { for (let k = 0; k < 5; k++) out[o + k] = this.f(i, k + 1) }

  mode (i) { return this.f(i, 6) }
  sha256 (i) { const at = this._at(i); return this.b.toString('hex', at, at + 32) }

  /** A file's chunks (chunk-file.js ChunkRef), or null when it was inlined. */
  chunks (i) {
    let at = this._at(i) + 32
    const n = this.b.readUInt32LE(at); at += 4
    if (n === 0) return null
    const out = new Array(n)
    const v2 = this.version === 2
    for (let j = 0; j < n; j++, at += this.chunkLen) {
      const c = { hash: this.b.toString('hex', at, at + 32), size: this.b.readUInt32LE(at + 32) }
      out[j] = v2 ? withCodec(c, this.b[at + 40], this.b.readUInt32LE(at + 36), this.sealed) : c
      if (this.sealed) c.key = this.b.toString('hex', at + 41, at + 73)
    }
    return out
  }

  target (i) { const at = this._at(i); return this.b.toString('utf8', at + 4, at + 4 + this.b.readUInt32LE(at)) }
  dirRef (i) {
    const at = this._at(i)
    const ref = { hash: this.b.toString('hex', at, at + 32), size: this.f(i, 2), entries: this.f(i, 3) }
    if (this.version !== 2) return ref
    withCodec(ref, this.b[at + 36], this.b.readUInt32LE(at + 32), this.sealed)
    if (this.sealed) ref.key = this.b.toString('hex', at + 37, at + 69)
    return ref
  }

  /** Is child i still the directory it was (same inode and device, same mtime to the ms)? */
  sameDir (i, st) { return this.type(i) === T_DIR && this.f(i, 4) === st.ino && this.f(i, 5) === st.dev && Math.floor(this.f(i, 1)) === Math.floor(st.mtimeMs) }
}

// a ref with storedSize and codec only when the blob is stored compressed or sealed (as ref.js refOf gives it)
function withCodec (ref, codecId, storedSize, sealed = false) {
  if (codecId === 0 && !sealed) return ref
  ref.storedSize = storedSize; ref.codec = CODECS[codecId]
  return ref
}

const codecIdOf = ref => ref.codec === undefined ? 0 : CODEC_ID[ref.codec]
const keyOf = ref => { if (typeof ref.key !== 'string') throw new RangeError('a sealed record needs every ref\'s key'); return ref.key }

/**
 * @param {{ hash: string, size: number, entries: number, storedSize?: number, codec?: string }} ref
 * @param {string[]} blobs
 * @param {({ name: string, type: 1|4, st: object, sha256: string, chunks: { hash: string, size: number }[] | null }
 *   | { name: string, type: 2, mtimeMs: number, target: string }
 *   | { name: string, type: 3, mtimeMs: number, ino: number, dev: number, ref: object })[]} children in name order
 * @param {1|2} [version=1] the format version of the tree the refs belong to
 * @param {boolean} [sealed=false] a private tree's: every ref carries its key (FORMAT.md §12.8)
 * @returns {Buffer}
 */
export function encodeRecord (ref, blobs, children, version = 1, sealed = false) {
  const v2 = version === 2
  if (!v2 && version !== 1) throw new RangeError('format version must be 1 or 2, got ' + version)
  if (!v2 && ref.codec !== undefined) throw new RangeError('a version-1 record cannot carry a codec')
  if (sealed && !v2) throw new RangeError('a sealed record is format version 2')
  const head = sealed ? HEAD_SEALED : HEAD
  const chunkLen = sealed ? 73 : v2 ? 41 : 36
  const names = children.length ? utf8.encode(children.map(c => c.name).join('\0') + '\0') : new Uint8Array(0)
  let varLen = 0
  const targets = new Array(children.length)
  for (let i = 0; i < children.length; i++) {
    const c = children[i]
    if (c.type === T_FILE || c.type === T_RACY) varLen += 36 + (c.chunks ? c.chunks.length * chunkLen : 0)
    else if (c.type === T_SYMLINK) { targets[i] = utf8.encode(c.target); varLen += 4 + targets[i].length } else varLen += sealed ? 69 : v2 ? 37 : 32
  }
  const fixed = head + children.length * ROW + names.length + blobs.length * 32
  const b = Buffer.alloc(fixed + varLen)
  b[0] = 1; b[1] = version | (sealed ? SEALED : 0); b[2] = codecIdOf(ref)
  b.writeUInt32LE(children.length, 4); b.writeUInt32LE(blobs.length, 8); b.writeUInt32LE(names.length, 12)
  b.writeDoubleLE(ref.size, 16); b.writeDoubleLE(ref.entries, 24); b.write(ref.hash, 32, 32, 'hex')
  b.writeDoubleLE(ref.storedSize ?? ref.size, 64)
  if (sealed) b.write(keyOf(ref), HEAD, 32, 'hex')
  b.set(names, head + children.length * ROW)
  for (let i = 0, at = head + children.length * ROW + names.length; i < blobs.length; i++, at += 32) b.write(blobs[i], at, 32, 'hex')
  let v = fixed
  for (let i = 0; i < children.length; i++) {
    const c = children[i]
    const row = head + i * ROW
    b.writeDoubleLE(c.type, row)
    b.writeDoubleLE(v, row + 56)
    if (c.type === T_FILE || c.type === T_RACY) {
      const st = c.st
      b.writeDoubleLE(st.size, row + 8); b.writeDoubleLE(st.mtimeMs, row + 16); b.writeDoubleLE(st.ctimeMs, row + 24)
      b.writeDoubleLE(st.ino, row + 32); b.writeDoubleLE(st.dev, row + 40); b.writeDoubleLE(st.mode, row + 48)
      b.write(c.sha256, v, 32, 'hex'); v += 32
      const n = c.chunks ? c.chunks.length : 0
      b.writeUInt32LE(n, v); v += 4
      for (let j = 0; j < n; j++) {
        const k = c.chunks[j]
        b.write(k.hash, v, 32, 'hex'); b.writeUInt32LE(k.size, v + 32); v += 36
        if (v2) { b.writeUInt32LE(k.storedSize ?? k.size, v); b[v + 4] = codecIdOf(k); v += 5 } else if (k.codec !== undefined) throw new RangeError('a version-1 record cannot carry a codec')
        if (sealed) { b.write(keyOf(k), v, 32, 'hex'); v += 32 }
      }
    } else if (c.type === T_SYMLINK) {
      b.writeDoubleLE(c.mtimeMs, row + 8)
      b.writeUInt32LE(targets[i].length, v); b.set(targets[i], v + 4); v += 4 + targets[i].length
    } else {
      b.writeDoubleLE(c.mtimeMs, row + 8); b.writeDoubleLE(c.ref.size, row + 16); b.writeDoubleLE(c.ref.entries, row + 24)
      b.writeDoubleLE(c.ino, row + 32); b.writeDoubleLE(c.dev, row + 40)
      b.write(c.ref.hash, v, 32, 'hex'); v += 32
      if (v2) { b.writeUInt32LE(c.ref.storedSize ?? c.ref.size, v); b[v + 4] = codecIdOf(c.ref); v += 5 } else if (c.ref.codec !== undefined) throw new RangeError('a version-1 record cannot carry a codec')
      if (sealed) { b.write(keyOf(c.ref), v, 32, 'hex'); v += 32 }
    }
  }
  return b
}

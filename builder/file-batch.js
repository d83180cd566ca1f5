// A batch of files to look at, and what became of each, in a form that
// crosses between threads cheaply: a chunk worker (chunk-worker.js) and the
// main thread (chunk-pool.js, before the workers are up) run the same
// `runBatch`, so what a file becomes cannot depend on the thread.
//
// In:  { dirs: [{ open, rel }], dir: Int32Array, names: string[], check: Uint8Array,
//        expect: Float64Array(5 per file) }
//   open, rel: a directory's prefix to open its files by (relative to its
//   checked handle, src-dirs.js) and its path in the tree; check[i]: lstat the
//   file first and only read it when it is not what expect[5i..5i+5] (size,
//   mtimeMs, ctimeMs, ino, dev) says, the build index's record of it.
// Out: one ArrayBuffer (transferred, not copied) with a record per file, and
//   the errors, encoded (chunk-pool.js rebuilds them as the same class):
//     u8 SAME                      (checked, and unchanged)
//     u8 FILE  f64 × 7 (size mtimeMs ctimeMs ino dev mode readStart) sha256[32]
//              u32 n; n = 0: u32 len, len bytes (inline);
//              else n × (hash[32] u32 size u32 storedSize u8 codec u8 written key[32])
//              (size: the chunk's bytes; storedSize and codec: how it is stored, FORMAT.md §12.6;
//              codec bit 0x10 and key: a private tree's sealed chunk, §12.8; key is zeros otherwise)
//     u8 BIG   f64 fd, f64 × 7      (chunked on several threads: big-file.js)
//     u8 ERROR u32 index into errors
//     u8 ABORTED
import { CODECS, CODEC_ID, CODEC_ENCRYPTED_BIT } from 'rotree-client/format'
import { chunkFileSync, statChanged, Aborted } from './chunk-file.js'

export const SAME = 0; export const FILE = 1; export const BIG = 2; export const ERROR = 3; export const ABORTED = 4
const CHUNK = 74 // bytes of one chunk in a FILE record

class Out {
  constructor () { this.buf = Buffer.allocUnsafe(64 << 10); this.pos = 0 }
  need (n) {
    if (this.pos + n <= this.buf.length) return
    const b = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n))
    this.buf.copy(b, 0, 0, this.pos); this.buf = b
  }

  u8 (v) { this.need(1); this.buf[this.pos++] = v }
  u32 (v) { this.need(4); this.buf.writeUInt32LE(v, this.pos); this.pos += 4 }
  f64 (v) { this.need(8); this.buf.writeDoubleLE(v, this.pos); this.pos += 8 }
  hex (h) { this.need(32); this.buf.write(h, this.pos, 32, 'hex'); this.pos += 32 }
  bytes (b) { this.need(b.length); this.buf.set(b, this.pos); this.pos += b.length }
  stat (st, readStart) { this.f64(st.size); this.f64(st.mtimeMs); this.f64(st.ctimeMs); this.f64(st.ino); this.f64(st.dev); this.f64(st.mode); this.f64(readStart) }
  // a copy the size of what was written, its own ArrayBuffer (transferable)
  result () { const ab = new ArrayBuffer(this.pos); new Uint8Array(ab).set(this.buf.subarray(0, this.pos)); return ab }
}

/**
 * @param {object} batch see above
 * @param {(hash: string, bytes: Uint8Array) => boolean} store
 * @param {Buffer} buf the thread's read buffer
 * @param {() => boolean} aborted
 * @param {number} bigAt files of at least this size come back as BIG, their handle open
 * @param {(err: unknown) => object} encodeError
 * @param {1|2} [version=1] the tree's format version (chunk-file.js storeChunk)
 * @param {((inner: Uint8Array) => object) | null} [seal] a private tree's sealing (builder/seal.js)
 * @returns {{ data: ArrayBuffer, errors: object[] }}
 */
export function runBatch (batch, store, buf, aborted, bigAt, encodeError, version = 1, seal = null) {
  const { dirs, dir, names, check, expect } = batch
  const out = new Out()
  const errors = []
  for (let i = 0; i < names.length; i++) {
    if (aborted()) { out.u8(ABORTED); continue }
    const d = dirs[dir[i]]
    const open = d.open + names[i]; const rel = d.rel + names[i]
    try {
      let task = { open, rel }
      if (check[i]) {
        const e = 5 * i
        const now = statChanged(open, { size: expect[e], mtimeMs: expect[e + 1], ctimeMs: expect[e + 2], ino: expect[e + 3], dev: expect[e + 4] }, rel)
        if (!now) { out.u8(SAME); continue }
        task = { open, rel, size: now.size, mtimeMs: now.mtimeMs, ino: now.ino, dev: now.dev }
      }
      const r = chunkFileSync(task, store, buf, aborted, bigAt, version, seal)
      if (r.big) {
        out.u8(BIG); out.f64(r.big.fd); out.stat(r.big.st, r.big.readStart)
        continue
      }
      writeFile(out, r)
    } catch (err) {
      if (err instanceof Aborted) { out.u8(ABORTED); continue }
      out.u8(ERROR); out.u32(errors.length); errors.push(encodeError(err))
    }
  }
  return { data: out.result(), errors }
}

/**
 * Walk a batch's results (main thread) without decoding them: a file read
 * stays a position in the batch's buffer until its directory is encoded
 * (fileAt), so the main thread keeps no object per file for the directories
 * being worked on (and the garbage collector has none to promote).
 * @param {ArrayBuffer} data @param {number} n files in the batch
 * @param {(i: number, status: number, buf: Buffer, pos: number) => void} each pos: where the
 *   file's record starts after its status byte (FILE: fileAt(buf, pos); BIG: bigAt(buf, pos);
 *   ERROR: buf.readUInt32LE(pos), the error's index)
 */
export function walkResults (data, n, each) {
  const b = Buffer.from(data)
  let p = 0
  for (let i = 0; i < n; i++) {
    const status = b[p++]
    each(i, status, b, p)
    if (status === FILE) {
      p += 7 * 8 + 32
      const k = b.readUInt32LE(p); p += 4
      p += k === 0 ? 4 + b.readUInt32LE(p) : k * CHUNK
    } else if (status === BIG) p += 8 * 8
    else if (status === ERROR) p += 4
  }
}

const ZERO_KEY = '00'.repeat(32)

/** A FILE record as a FileResult (with `written`). */
export function fileAt (b, p) {
  const st = { size: b.readDoubleLE(p), mtimeMs: b.readDoubleLE(p + 8), ctimeMs: b.readDoubleLE(p + 16), ino: b.readDoubleLE(p + 24), dev: b.readDoubleLE(p + 32), mode: b.readDoubleLE(p + 40) }
  const r = { size: st.size, mtime: Math.floor(st.mtimeMs), exec: (st.mode & 0o111) !== 0, st, readStart: b.readDoubleLE(p + 48), sha256: b.toString('hex', p + 56, p + 88) }
  p += 88
  const k = b.readUInt32LE(p); p += 4
  if (k === 0) {
    const len = b.readUInt32LE(p); p += 4
    r.inline = new Uint8Array(b.buffer, b.byteOffset + p, len)
  } else {
    r.chunks = new Array(k); r.written = new Array(k)
    for (let j = 0; j < k; j++, p += CHUNK) { r.chunks[j] = chunkAt(b, p); r.written[j] = b[p + 41] === 1 }
  }
  return r
}

/** A FILE record's size, stat and read time, without the rest. */
export const fileSizeAt = (b, p) => b.readDoubleLE(p)
export const fileStatAt = (b, p) => ({ size: b.readDoubleLE(p), mtimeMs: b.readDoubleLE(p + 8), ctimeMs: b.readDoubleLE(p + 16) })
export const readStartAt = (b, p) => b.readDoubleLE(p + 48)

// a chunk's ref (chunk-file.js ChunkRef): storedSize and codec only when it is stored compressed
// or sealed, and a sealed chunk's key
function chunkAt (b, p) {
  const hash = b.toString('hex', p, p + 32); const size = b.readUInt32LE(p + 32)
  const codec = b[p + 40]
  if (codec & CODEC_ENCRYPTED_BIT) return { hash, size, storedSize: b.readUInt32LE(p + 36), codec: CODECS[codec & ~CODEC_ENCRYPTED_BIT], key: b.toString('hex', p + 42, p + 74) }
  return codec === 0 ? { hash, size } : { hash, size, storedSize: b.readUInt32LE(p + 36), codec: CODECS[codec] }
}

/** Each chunk of a FILE record: fn(storedSize, written). */
export function eachChunkAt (b, p, fn) {
  p += 88
  const k = b.readUInt32LE(p); p += 4
  if (k === 0) return
  for (let j = 0; j < k; j++, p += CHUNK) fn(b.readUInt32LE(p + 36), b[p + 41] === 1)
}

/** A BIG record: the open handle and the stat it was opened with. */
export function bigAt (b, p) {
  return {
    fd: b.readDoubleLE(p),
    st: { size: b.readDoubleLE(p + 8), mtimeMs: b.readDoubleLE(p + 16), ctimeMs: b.readDoubleLE(p + 24), ino: b.readDoubleLE(p + 32), dev: b.readDoubleLE(p + 40), mode: b.readDoubleLE(p + 48) },
    readStart: b.readDoubleLE(p + 56)
  }
}

/** One FileResult as a FILE record of its own (a large file's, chunked by big-file.js): { buf, pos }. */
export function encodeFile (r) {
  const out = new Out()
  writeFile(out, r)
  return { buf: Buffer.from(out.result()), pos: 1 }
}

function writeFile (out, r) {
  out.u8(FILE); out.stat(r.st, r.readStart); out.hex(r.sha256)
  if (r.inline) { out.u32(0); out.u32(r.inline.length); out.bytes(r.inline) } else {
    out.u32(r.chunks.length)
    for (let j = 0; j < r.chunks.length; j++) {
      const c = r.chunks[j]
      const id = c.codec === undefined ? 0 : CODEC_ID[c.codec]
      out.hex(c.hash); out.u32(c.size); out.u32(c.storedSize ?? c.size); out.u8(c.key === undefined ? id : id | CODEC_ENCRYPTED_BIT); out.u8(r.written[j] ? 1 : 0)
      out.hex(c.key ?? ZERO_KEY)
    }
  }
}

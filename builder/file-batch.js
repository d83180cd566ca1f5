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
//              u32 n; n = 0: u32 len, len bytes (inline); else n × (hash[32] u32 size u8 written)
//     u8 BIG   f64 fd, f64 × 7      (chunked on several threads: big-file.js)
//     u8 ERROR u32 index into errors
//     u8 ABORTED
import { chunkFileSync, statChanged, Aborted } from './chunk-file.js'

export const SAME = 0; export const FILE = 1; export const BIG = 2; export const ERROR = 3; export const ABORTED = 4

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
 * @returns {{ data: ArrayBuffer, errors: object[] }}
 */
export function runBatch (batch, store, buf, aborted, bigAt, encodeError) {
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
      const r = chunkFileSync(task, store, buf, aborted, bigAt)
      if (r.big) {
        out.u8(BIG); out.f64(r.big.fd); out.stat(r.big.st, r.big.readStart)
        continue
      }
      out.u8(FILE); out.stat(r.st, r.readStart); out.hex(r.sha256)
      if (r.inline) { out.u32(0); out.u32(r.inline.length); out.bytes(r.inline) } else {
        out.u32(r.chunks.length)
        for (let j = 0; j < r.chunks.length; j++) { out.hex(r.chunks[j].hash); out.u32(r.chunks[j].size); out.u8(r.written[j] ? 1 : 0) }
      }
    } catch (err) {
      if (err instanceof Aborted) { out.u8(ABORTED); continue }
      out.u8(ERROR); out.u32(errors.length); errors.push(encodeError(err))
    }
  }
  return { data: out.result(), errors }
}

/**
 * Walk a batch's results (main thread).
 * @param {ArrayBuffer} data @param {number} n files in the batch
 * @param {(i: number, status: number, value: any) => void} each value: FILE → a FileResult (with
 *   `written`), BIG → { fd, st, readStart }, ERROR → the error's index, else undefined
 */
export function readResults (data, n, each) {
  const b = Buffer.from(data)
  let p = 0
  const f64 = () => { const v = b.readDoubleLE(p); p += 8; return v }
  const u32 = () => { const v = b.readUInt32LE(p); p += 4; return v }
  const hex = () => { const v = b.toString('hex', p, p + 32); p += 32; return v }
  const stat = () => {
    const st = { size: f64(), mtimeMs: f64(), ctimeMs: f64(), ino: f64(), dev: f64(), mode: f64() }
    return { st, readStart: f64() }
  }
  for (let i = 0; i < n; i++) {
    const status = b[p++]
    if (status === FILE) {
      const { st, readStart } = stat()
      const r = { size: st.size, mtime: Math.floor(st.mtimeMs), exec: (st.mode & 0o111) !== 0, st, readStart, sha256: hex() }
      const k = u32()
      if (k === 0) {
        const len = u32()
        r.inline = new Uint8Array(b.buffer, b.byteOffset + p, len); p += len
      } else {
        r.chunks = new Array(k); r.written = new Array(k)
        for (let j = 0; j < k; j++) { r.chunks[j] = { hash: hex(), size: u32() }; r.written[j] = b[p++] === 1 }
      }
      each(i, FILE, r)
    } else if (status === BIG) {
      const fd = f64()
      each(i, BIG, { fd, ...stat() })
    } else if (status === ERROR) {
      each(i, ERROR, u32())
    } else {
      each(i, status, undefined)
    }
  }
}

// Byte helpers shared by every format module: hex, UTF-8, concatenation and a
// strict cursor for decoding. Pure functions, no I/O.
import { BadFormatError } from '../errors.js'

const DIGITS = Array.from('0123456789abcdef', c => c.charCodeAt(0))
const CODES = new Array(2 * 4096)

/**
 * Lowercase hex of `b`. Built from character codes in one call, so the
 * result is one flat string: appending two digits at a time made a rope of
 * 32 pieces per hash, ~870 heap bytes instead of ~90, and a decoded
 * directory page holds one such string per chunk (measured with
 * process.memoryUsage over 100,000 hashes).
 * @param {Uint8Array} b
 */
export function toHex (b) {
  let s = ''
  for (let o = 0; o < b.length; o += 4096) {
    const n = Math.min(4096, b.length - o)
    const codes = n === 4096 ? CODES : new Array(2 * n)
    for (let i = 0; i < n; i++) { const v = b[o + i]; codes[2 * i] = DIGITS[v >> 4]; codes[2 * i + 1] = DIGITS[v & 15] }
    s += String.fromCharCode.apply(null, codes)
  }
  return s
}

const HEX_RE = /^(?:[0-9a-f]{2})*$/
/** @param {string} s lowercase hex */
export function fromHex (s) {
  if (typeof s !== 'string' || !HEX_RE.test(s)) throw new BadFormatError('not lowercase hex')
  const out = new Uint8Array(s.length / 2)
  for (let i = 0; i < out.length; i++) out[i] = parseInt(s.substr(i * 2, 2), 16)
  return out
}

export const utf8 = new TextEncoder()
const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })
/** Decode UTF-8, refusing invalid sequences (FORMAT.md §3: names are valid UTF-8). */
export function decodeUtf8 (b) {
  try { return strictUtf8.decode(b) } catch { throw new BadFormatError('invalid UTF-8') }
}

/** @param {Uint8Array[]} parts */
export function concat (parts) {
  let n = 0
  for (const p of parts) n += p.length
  const out = new Uint8Array(n)
  let o = 0
  for (const p of parts) { out.set(p, o); o += p.length }
  return out
}

/** Bytewise comparison of two Uint8Arrays: the sort order of FORMAT.md §4. */
export function compareBytes (a, b) {
  const n = Math.min(a.length, b.length)
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i] - b[i]
  return a.length - b.length
}

export function equalBytes (a, b) {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false
  return true
}

/** Growable writer for encoders. */
export class Writer {
  constructor (size = 1024) { this.buf = new Uint8Array(size); this.len = 0 }
  _grow (n) {
    if (this.len + n <= this.buf.length) return
    let size = this.buf.length * 2
    while (size < this.len + n) size *= 2
    const b = new Uint8Array(size); b.set(this.buf.subarray(0, this.len)); this.buf = b
  }
  byte (v) { this._grow(1); this.buf[this.len++] = v }
  bytes (b) { this._grow(b.length); this.buf.set(b, this.len); this.len += b.length }
  // LEB128, unsigned, at most 2^53-1 (FORMAT.md §3.1)
  uint (v) {
    if (!Number.isSafeInteger(v) || v < 0) throw new RangeError('uint out of range: ' + v)
    while (v >= 0x80) { this.byte((v % 0x80) | 0x80); v = Math.floor(v / 0x80) }
    this.byte(v)
  }
  // zig-zag signed integer (mtimes before 1970)
  sint (v) {
    if (!Number.isSafeInteger(v)) throw new RangeError('sint out of range: ' + v)
    this.uint(v >= 0 ? v * 2 : -v * 2 - 1)
  }
  lbytes (b) { this.uint(b.length); this.bytes(b) }
  get size () { return this.len }
  result () { return this.buf.slice(0, this.len) }
}

/** Strict cursor: every read is bounds-checked, varints must be minimal. */
export class Reader {
  /** @param {Uint8Array} buf */
  constructor (buf) { this.buf = buf; this.pos = 0 }
  fail (what) { throw new BadFormatError(`${what} at offset ${this.pos}`) }
  byte () {
    if (this.pos >= this.buf.length) this.fail('unexpected end')
    return this.buf[this.pos++]
  }
  bytes (n) {
    if (n > this.buf.length - this.pos) this.fail('unexpected end')
    const b = this.buf.subarray(this.pos, this.pos + n); this.pos += n; return b
  }
  uint (max = Number.MAX_SAFE_INTEGER) {
    let v = 0; let mul = 1
    for (let i = 0; ; i++) {
      const b = this.byte()
      if (i === 7 && b > 0x0f) this.fail('varint too large') // 7*7+4 = 53 bits
      v += (b & 0x7f) * mul
      if (b < 0x80) {
        if (b === 0 && i > 0) this.fail('non-minimal varint')
        break
      }
      mul *= 0x80
    }
    if (v > max) this.fail(`value ${v} above limit ${max}`)
    return v
  }
  sint () {
    const z = this.uint()
    return z % 2 === 0 ? z / 2 : -(z + 1) / 2
  }
  lbytes (max) { return this.bytes(this.uint(max)) }
  get done () { return this.pos === this.buf.length }
  end () { if (!this.done) this.fail('trailing bytes') }
}

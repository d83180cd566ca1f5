// A streaming, store-only ZIP writer (PKWARE APPNOTE.TXT 6.3): the web app
// saves a folder as a .zip with it (app.js), each byte as the verifying
// reader hands it over. No compression: a tree's files are often compressed
// already, and storing keeps the writer small and its output fast to check.
//
// - Files: a local header without CRC or sizes (general purpose bit 3), the
//   bytes as they come, then a data descriptor with the CRC-32 computed on
//   the way and the sizes. The size is known ahead (it is signed), so an
//   entry of 4 GiB or more is written as ZIP64 from its local header on, and
//   a file whose bytes do not add up to its size fails the archive.
// - Folders and symlinks: their (small) contents are known, so their
//   headers carry CRC and sizes. A symlink is a Unix one (mode 0120777 in
//   the external attributes), its target the entry's data, as Info-ZIP's zip
//   writes it; which targets are kept is the caller's decision (app.js).
// - ZIP64 end records when there are 65,535 entries or more, or the central
//   directory lies or ends past 4 GiB; `zip64: true` writes every ZIP64 field
//   (tests read such archives with unzip and Python).
// - Names are UTF-8 (bit 11), '/'-separated, relative: entryName() refuses
//   '', '.', '..', '/', '\', NUL and control characters in a part, so
//   nothing extracts outside the folder it is extracted into.
// - Each entry's modification time as MS-DOS local time (1980 to 2107) and
//   as Unix time in an extended-timestamp field (0x5455), which unzip uses.
//
// Imports nothing (served as it is; Node imports it in tests).

const CRC_TABLE = (() => {
  const t = new Uint32Array(256)
  for (let n = 0; n < 256; n++) {
    let c = n
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
    t[n] = c >>> 0
  }
  return t
})()

/** CRC-32 (ISO-HDLC, as ZIP uses it) of `bytes`, continuing from `crc`. */
export function crc32 (bytes, crc = 0) {
  let c = ~crc >>> 0
  for (let i = 0; i < bytes.length; i++) c = CRC_TABLE[(c ^ bytes[i]) & 0xff] ^ (c >>> 8)
  return ~c >>> 0
}

const utf8 = new TextEncoder()
const MAX32 = 0xffffffff
const MAX16 = 0xffff
// versions: 2.0 (folders, stored files), 4.5 (ZIP64); made by Unix (3) per 4.5
const NEEDED = 20
const NEEDED64 = 45
const MADE_BY = (3 << 8) | 45
const FLAG_UTF8 = 0x0800
const FLAG_DESCRIPTOR = 0x0008
const MODE_DIR = 0o40755
const MODE_LINK = 0o120777
const FOLD = 1 << 20 // headers and small pieces are gathered into writes of about this size

/**
 * A ZIP entry name from path parts, or an error saying which part cannot be one.
 * @param {string[]} parts @param {boolean} [dir] a folder: the name ends in '/'
 */
export function entryName (parts, dir = false) {
  if (!parts.length) throw new TypeError('an entry needs a name')
  for (const p of parts) {
    // eslint-disable-next-line no-control-regex
    if (typeof p !== 'string' || p === '' || p === '.' || p === '..' || /[/\\\u0000-\u001f]/.test(p)) {
      throw new TypeError(`${JSON.stringify(p)} cannot be a part of a ZIP entry's name`)
    }
  }
  return parts.join('/') + (dir ? '/' : '')
}

/** MS-DOS time and date of `ms` in local time (ZIP's own fields), clamped to 1980-2107. */
function dosTime (ms) {
  let d = new Date(Number.isFinite(ms) ? ms : 0)
  if (d.getFullYear() < 1980) d = new Date(1980, 0, 1)
  if (d.getFullYear() > 2107) d = new Date(2107, 11, 31, 23, 59, 58)
  return {
    time: (d.getHours() << 11) | (d.getMinutes() << 5) | (d.getSeconds() >> 1),
    date: ((d.getFullYear() - 1980) << 9) | ((d.getMonth() + 1) << 5) | d.getDate()
  }
}

/** The extended-timestamp extra field (0x5455): the modification time in Unix seconds. */
function timeExtra (ms) {
  const b = new Uint8Array(9)
  const v = new DataView(b.buffer)
  v.setUint16(0, 0x5455, true)
  v.setUint16(2, 5, true)
  b[4] = 1 // the modification time is there
  v.setInt32(5, Math.max(-(2 ** 31), Math.min(2 ** 31 - 1, Math.floor((Number.isFinite(ms) ? ms : 0) / 1000))), true)
  return b
}

/** A ZIP64 extended-information extra field (0x0001) holding `values` (8 bytes each). */
function zip64Extra (values) {
  const b = new Uint8Array(4 + 8 * values.length)
  const v = new DataView(b.buffer)
  v.setUint16(0, 0x0001, true)
  v.setUint16(2, 8 * values.length, true)
  values.forEach((n, i) => v.setBigUint64(4 + 8 * i, BigInt(n), true))
  return b
}

function concat (parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0))
  let o = 0
  for (const p of parts) { out.set(p, o); o += p.length }
  return out
}

export class ZipWriter {
  /**
   * @param {(bytes: Uint8Array) => (Promise<void>|void)} sink gets the archive, in order
   * @param {{ zip64?: boolean }} [opts] zip64: ZIP64 fields in every entry and at the end
   */
  constructor (sink, { zip64 = false } = {}) {
    this.sink = sink
    this.force64 = zip64
    this.offset = 0 // bytes of the archive so far
    this.central = [] // one record per entry, written at the end
    this.names = new Set()
    this.pending = [] // small pieces not yet handed to the sink
    this.pendingBytes = 0
    this.done = false
  }

  /** Bytes of the archive written so far. */
  get size () { return this.offset }

  async _out (bytes) {
    this.offset += bytes.length
    if (bytes.length >= FOLD) {
      await this._flush()
      await this.sink(bytes)
      return
    }
    // copied: a piece the reader lends may be given back once this returns
    this.pending.push(bytes.slice())
    this.pendingBytes += bytes.length
    if (this.pendingBytes >= FOLD) await this._flush()
  }

  async _flush () {
    if (!this.pending.length) return
    const all = this.pending.length === 1 ? this.pending[0] : concat(this.pending)
    this.pending = []
    this.pendingBytes = 0
    await this.sink(all)
  }

  _name (name) {
    if (this.done) throw new Error('the archive is finished')
    if (this.names.has(name)) throw new TypeError(`${name} is in the archive already`)
    this.names.add(name)
    return utf8.encode(name)
  }

  /**
   * A local header; `known` gives CRC and size (no descriptor follows), else
   * they follow the data. Returns what the central directory record needs.
   */
  async _local (name, { mtime, mode, known = null, size }) {
    const nameBytes = this._name(name)
    const zip64 = this.force64 || size >= MAX32
    const { time, date } = dosTime(mtime)
    const extras = [...(zip64 ? [zip64Extra(known ? [size, size] : [0, 0])] : []), timeExtra(mtime)]
    const extra = concat(extras)
    const h = new Uint8Array(30)
    const v = new DataView(h.buffer)
    const flags = FLAG_UTF8 | (known ? 0 : FLAG_DESCRIPTOR)
    v.setUint32(0, 0x04034b50, true)
    v.setUint16(4, zip64 ? NEEDED64 : NEEDED, true)
    v.setUint16(6, flags, true)
    v.setUint16(8, 0, true) // stored
    v.setUint16(10, time, true)
    v.setUint16(12, date, true)
    v.setUint32(14, known ? known.crc : 0, true)
    v.setUint32(18, zip64 ? MAX32 : known ? size : 0, true)
    v.setUint32(22, zip64 ? MAX32 : known ? size : 0, true)
    v.setUint16(26, nameBytes.length, true)
    v.setUint16(28, extra.length, true)
    const at = this.offset
    await this._out(h)
    await this._out(nameBytes)
    await this._out(extra)
    return { nameBytes, zip64, time, date, flags, mode, mtime, at }
  }

  /** A folder: `name` without its '/' (entryName gives one). */
  async directory (name, { mtime = Date.now() } = {}) {
    const e = await this._local(name.replace(/\/?$/, '/'), { mtime, mode: MODE_DIR, known: { crc: 0 }, size: 0 })
    this.central.push({ ...e, crc: 0, size: 0, dir: true })
  }

  /** A symlink whose target is `target` (kept as it is: the caller checks it). */
  async symlink (name, target, { mtime = Date.now() } = {}) {
    const data = utf8.encode(target)
    const crc = crc32(data)
    const e = await this._local(name, { mtime, mode: MODE_LINK, known: { crc }, size: data.length })
    await this._out(data)
    this.central.push({ ...e, crc, size: data.length })
  }

  /**
   * A file of `size` bytes, from `chunks` (Uint8Arrays, in order); each is
   * written before the next is asked for.
   * @param {string} name @param {AsyncIterable<Uint8Array>|Iterable<Uint8Array>} chunks
   * @param {{ size: number, mtime?: number, exec?: boolean, onBytes?: (n: number) => void }} o
   */
  async file (name, chunks, { size, mtime = Date.now(), exec = false, onBytes = () => {} }) {
    if (!Number.isSafeInteger(size) || size < 0) throw new TypeError(`${name}: a file's size must be known ahead (got ${size})`)
    const e = await this._local(name, { mtime, mode: exec ? 0o100755 : 0o100644, size })
    let crc = 0
    let n = 0
    for await (const b of chunks) {
      if (n + b.length > size) throw new RangeError(`${name}: more than its ${size} bytes`)
      crc = crc32(b, crc)
      n += b.length
      await this._out(b)
      onBytes(b.length)
    }
    if (n !== size) throw new RangeError(`${name}: ${n} bytes, not its ${size}`)
    const d = new Uint8Array(e.zip64 ? 24 : 16)
    const v = new DataView(d.buffer)
    v.setUint32(0, 0x08074b50, true)
    v.setUint32(4, crc, true)
    if (e.zip64) {
      v.setBigUint64(8, BigInt(size), true)
      v.setBigUint64(16, BigInt(size), true)
    } else {
      v.setUint32(8, size, true)
      v.setUint32(12, size, true)
    }
    await this._out(d)
    this.central.push({ ...e, crc, size })
  }

  /** The central directory and the end records; the archive is complete when this resolves. */
  async finish () {
    if (this.done) throw new Error('the archive is finished')
    this.done = true
    const cdStart = this.offset
    for (const e of this.central) {
      // ZIP64 fields, in this order, for what does not fit 32 bits (all of them when forced)
      const big = []
      const sizes64 = e.zip64
      const at64 = this.force64 || e.at >= MAX32
      if (sizes64) big.push(e.size, e.size)
      if (at64) big.push(e.at)
      const extra = concat([...(big.length ? [zip64Extra(big)] : []), timeExtra(e.mtime)])
      const h = new Uint8Array(46)
      const v = new DataView(h.buffer)
      v.setUint32(0, 0x02014b50, true)
      v.setUint16(4, MADE_BY, true)
      v.setUint16(6, big.length ? NEEDED64 : NEEDED, true)
      v.setUint16(8, e.flags, true)
      v.setUint16(10, 0, true)
      v.setUint16(12, e.time, true)
      v.setUint16(14, e.date, true)
      v.setUint32(16, e.crc, true)
      v.setUint32(20, sizes64 ? MAX32 : e.size, true)
      v.setUint32(24, sizes64 ? MAX32 : e.size, true)
      v.setUint16(28, e.nameBytes.length, true)
      v.setUint16(30, extra.length, true)
      v.setUint16(32, 0, true) // no comment
      v.setUint16(34, 0, true) // disk 0
      v.setUint16(36, 0, true) // binary
      v.setUint32(38, e.mode * 0x10000 + (e.dir ? 0x10 : 0), true) // Unix mode; MS-DOS folder bit
      v.setUint32(42, at64 ? MAX32 : e.at, true)
      await this._out(h)
      await this._out(e.nameBytes)
      await this._out(extra)
    }
    const cdSize = this.offset - cdStart
    const count = this.central.length
    const end64 = this.force64 || count >= MAX16 || cdStart >= MAX32 || cdSize >= MAX32
    if (end64) {
      const at = this.offset
      const r = new Uint8Array(56 + 20)
      const v = new DataView(r.buffer)
      v.setUint32(0, 0x06064b50, true)
      v.setBigUint64(4, 44n, true) // the size of what follows in this record
      v.setUint16(12, MADE_BY, true)
      v.setUint16(14, NEEDED64, true)
      v.setUint32(16, 0, true)
      v.setUint32(20, 0, true)
      v.setBigUint64(24, BigInt(count), true)
      v.setBigUint64(32, BigInt(count), true)
      v.setBigUint64(40, BigInt(cdSize), true)
      v.setBigUint64(48, BigInt(cdStart), true)
      // the locator
      v.setUint32(56, 0x07064b50, true)
      v.setUint32(60, 0, true)
      v.setBigUint64(64, BigInt(at), true)
      v.setUint32(72, 1, true)
      await this._out(r)
    }
    const z = new Uint8Array(22)
    const v = new DataView(z.buffer)
    v.setUint32(0, 0x06054b50, true)
    v.setUint16(8, end64 ? MAX16 : count, true)
    v.setUint16(10, end64 ? MAX16 : count, true)
    v.setUint32(12, end64 ? MAX32 : cdSize, true)
    v.setUint32(16, end64 ? MAX32 : cdStart, true)
    await this._out(z)
    await this._flush()
    return this.offset
  }
}

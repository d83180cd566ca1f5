// Validly signed trees the builder would never make: a hostile publisher's
// trees, written blob by blob with the format module's own encoders and
// signed like builder/sign-root.js signs (FORMAT.md §6). Names and targets
// can be anything the format allows (control characters, `..` targets,
// absolute targets); directories and chunk indexes can be shared to describe
// far more than is stored (a page referenced thousands of times).
//
//   const t = new SignedTree(out)                   // out/h/<sha256> blobs
//   const sub = await t.dir([{ name: 'f', file: 'x' }])
//   await t.sign(key, [{ name: 'a', dir: sub }, { name: 'b', dir: sub },
//                      { name: 'l', symlink: '/etc/passwd' }])
//
// Entry specs: { name, file: string|Uint8Array, exec?, mtime? }
//              { name, symlink: target, mtime? }
//              { name, dir: [specs] | ref from t.dir(), mtime? }
//              { name, entry: a raw entry for writeEntry() (FORMAT.md §4.2) }
import fs from 'node:fs/promises'
import path from 'node:path'
import { createHash } from 'node:crypto'
import { buildDirectory, encodeFsinfo, fsinfoMessage, Writer, fromHex, CINDEX_MAGIC, INLINE_MAX, CHUNK_MAX, MAX_DIRECT_CHUNKS } from 'rotree-client/format'
import { sign } from 'rotree-client/crypto'

const T0 = Date.UTC(2025, 0, 1)

export class SignedTree {
  /** @param {string} out a published folder (fsinfo.json and h/) */
  constructor (out) {
    this.out = out
    this.made = fs.mkdir(path.join(out, 'h'), { recursive: true })
  }

  /** Store a blob; its ref. */
  async put (bytes) {
    await this.made
    const hash = createHash('sha256').update(bytes).digest('hex')
    await fs.writeFile(path.join(this.out, 'h', hash), bytes)
    return { hash, size: bytes.length }
  }

  /** A directory from entry specs: { hash, size, entries }, to use as { name, dir: ref } any number of times. */
  async dir (specs) {
    return buildDirectory(await Promise.all(specs.map(s => this.entry(s))), b => this.put(b))
  }

  async entry (s) {
    const mtime = s.mtime ?? T0
    if (s.entry) return { name: s.name, mtime, exec: false, ...s.entry }
    if (s.symlink !== undefined) return { name: s.name, type: 'symlink', mtime, size: Buffer.byteLength(s.symlink), exec: false, target: s.symlink }
    if (s.dir) {
      const ref = Array.isArray(s.dir) ? await this.dir(s.dir) : s.dir
      return { name: s.name, type: 'dir', mtime, exec: false, size: ref.entries, dir: { hash: ref.hash, size: ref.size } }
    }
    const data = typeof s.file === 'string' ? Buffer.from(s.file) : Buffer.from(s.file)
    const e = { name: s.name, type: 'file', mtime, exec: !!s.exec, size: data.length }
    if (data.length <= INLINE_MAX) return { ...e, inline: new Uint8Array(data) }
    const chunks = []
    for (let o = 0; o < data.length; o += CHUNK_MAX) chunks.push(await this.put(data.subarray(o, o + CHUNK_MAX)))
    if (chunks.length > MAX_DIRECT_CHUNKS) throw new RangeError('test files are at most 32 MiB')
    return { ...e, chunks }
  }

  /**
   * A file of top × fanout^(levels − 1) × CHUNK_MAX bytes (4 PiB by default)
   * described by one chunk and one chunk-index page per level (FORMAT.md §4.3),
   * each page referencing the level below `fanout` times (the top one `top`
   * times). Returns the entry's fields, for { name, entry }, and the chunk's ref.
   */
  async hugeFile ({ levels = 3, fanout = 4096, top = 256 } = {}) {
    const chunk = await this.put(new Uint8Array(CHUNK_MAX))
    let child = { ...chunk, bytes: CHUNK_MAX }
    for (let level = 1; level <= levels; level++) {
      const n = level === levels ? top : fanout
      const w = new Writer()
      w.bytes(CINDEX_MAGIC); w.uint(level); w.uint(n)
      for (let i = 0; i < n; i++) {
        w.bytes(fromHex(child.hash)); w.uint(child.size)
        if (level > 1) w.uint(child.bytes)
      }
      const ref = await this.put(w.result())
      child = { ...ref, bytes: child.bytes * n }
    }
    return { entry: { type: 'file', size: child.bytes, index: { hash: child.hash, size: child.size, levels } }, chunk }
  }

  /** Build the root from specs and write fsinfo.json signed with `key` ({ secretKey, publicKey } hex). */
  async sign (key, rootSpecs, { seq = 1, now = Date.now(), ttlMs = 3600e3, rootMtime = T0 } = {}) {
    const root = Array.isArray(rootSpecs) ? await this.dir(rootSpecs) : rootSpecs
    const fields = {
      key: key.publicKey, seq, issued: new Date(now - 60e3).toISOString(), expires: new Date(now + ttlMs).toISOString(),
      root: root.hash, rootSize: root.size, rootMtime
    }
    await fs.writeFile(path.join(this.out, 'fsinfo.json'), encodeFsinfo({ ...fields, sig: sign(fsinfoMessage(fields), key.secretKey) }))
    return root
  }
}

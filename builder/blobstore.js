// The h/ folder of a published tree, as a write-once store. A blob is written
// to a temporary name and renamed into h/<hash>, so a reader (or a killed
// build) never sees a partial blob under a real name; blobs already present
// are not rewritten, so building into an existing OUT adds only new blobs.
import fs from 'node:fs/promises'
import { openSync, writeSync, closeSync, renameSync, rmSync } from 'node:fs'
import path from 'node:path'
import { randomBytes } from 'node:crypto'
import { sha256HexSync } from 'rotree-client/src/sha256-node.js'

const TMP_PREFIX = '.tmp-'

export class BlobStore {
  constructor (out, { fsync = true } = {}) {
    this.dir = path.join(out, 'h')
    this.fsync = fsync
    this.have = new Set()
    this.pending = new Map() // hash → write in progress (two files may share a chunk)
    this.stats = { written: 0, writtenBytes: 0, reused: 0, reusedBytes: 0 }
  }

  async open () {
    await fs.mkdir(this.dir, { recursive: true })
    for (const name of await fs.readdir(this.dir)) {
      if (/^[0-9a-f]{64}$/.test(name)) this.have.add(name)
      else if (name.startsWith(TMP_PREFIX)) await fs.rm(path.join(this.dir, name), { force: true }) // left by a killed build
    }
    return this
  }

  /** Store bytes under their SHA-256. @returns {Promise<{ hash: string, size: number }>} */
  async put (bytes) {
    const hash = sha256HexSync(bytes)
    await this.putHashed(hash, bytes)
    return { hash, size: bytes.length }
  }

  async putHashed (hash, bytes) {
    if (this.have.has(hash)) { this.stats.reused++; this.stats.reusedBytes += bytes.length; return }
    let p = this.pending.get(hash)
    if (!p) {
      p = this._write(hash, bytes).finally(() => this.pending.delete(hash))
      this.pending.set(hash, p)
    } else { this.stats.reused++; this.stats.reusedBytes += bytes.length }
    await p
  }

  async _write (hash, bytes) {
    const tmp = path.join(this.dir, TMP_PREFIX + hash.slice(0, 16) + '-' + randomBytes(6).toString('hex'))
    // Without fsync a blob (≤ 1 MiB) goes to the page cache in well under a
    // millisecond: synchronous calls cost far less event-loop time than the
    // four promise round trips. With fsync the wait is the disk's, so it stays async.
    if (!this.fsync) return this._writeSync(hash, tmp, bytes)
    const fh = await fs.open(tmp, 'wx', 0o644)
    try {
      try {
        await fh.writeFile(bytes)
        if (this.fsync) await fh.datasync()
      } finally {
        await fh.close()
      }
      await fs.rename(tmp, path.join(this.dir, hash))
    } catch (err) {
      // a full disk (ENOSPC) must not leave a partial temp file eating the space a retry needs
      await fs.rm(tmp, { force: true })
      throw err
    }
    this.have.add(hash)
    this.stats.written++; this.stats.writtenBytes += bytes.length
  }

  _writeSync (hash, tmp, bytes) {
    try {
      const fd = openSync(tmp, 'wx', 0o644)
      try {
        for (let off = 0; off < bytes.length;) off += writeSync(fd, bytes, off, bytes.length - off)
      } finally {
        closeSync(fd)
      }
      renameSync(tmp, path.join(this.dir, hash))
    } catch (err) {
      rmSync(tmp, { force: true }) // ENOSPC: leave no partial temp file behind
      throw err
    }
    this.have.add(hash)
    this.stats.written++; this.stats.writtenBytes += bytes.length
  }

  /** Make the renames durable before fsinfo.json points at them. */
  async sync () {
    if (!this.fsync) return
    const fh = await fs.open(this.dir, 'r')
    try { await fh.sync() } finally { await fh.close() }
  }
}

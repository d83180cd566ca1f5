// The h/ folder of a published tree, as a write-once store. A blob is written
// to a temporary name and renamed into h/<hash>, so a reader (or a killed
// build) never sees a partial blob under a real name; blobs already present
// are not rewritten, so building into an existing OUT adds only new blobs.
import fs from 'node:fs/promises'
import { openSync, writeSync, closeSync, renameSync, rmSync, fdatasyncSync, statSync } from 'node:fs'
import path from 'node:path'
import { threadId } from 'node:worker_threads'
import { sha256HexSync } from 'rotree-client/src/sha256-node.js'

export const TMP_PREFIX = '.tmp-'

// Temporary names only need to differ between writers of this folder at
// once: the threads of this process (the folder lock keeps other processes
// out, and the pid would tell them apart anyway). A counter, not random
// bytes: randomBytes was ~1% of a build's CPU time.
let _tmpSeq = 0
const tmpName = hash => `${TMP_PREFIX}${hash.slice(0, 16)}-${process.pid}-${threadId}-${(_tmpSeq++).toString(36)}`

/**
 * Write a blob into dir (an h/ folder) under its hash, synchronously: to a
 * temporary name, then renamed, so a reader or a killed build never sees a
 * partial blob under a real name. Used by the chunk workers (chunk-pool.js)
 * and by BlobStore without fsync. A full disk (ENOSPC) leaves no partial
 * temporary file eating the space a retry needs.
 * @param {string} dir @param {string} hash @param {Uint8Array} bytes @param {boolean} fsync
 */
export function writeBlobSync (dir, hash, bytes, fsync) {
  const tmp = path.join(dir, tmpName(hash))
  try {
    const fd = openSync(tmp, 'wx', 0o644)
    try {
      for (let off = 0; off < bytes.length;) off += writeSync(fd, bytes, off, bytes.length - off)
      if (fsync) fdatasyncSync(fd)
    } finally {
      closeSync(fd)
    }
    renameSync(tmp, path.join(dir, hash))
  } catch (err) {
    rmSync(tmp, { force: true })
    throw err
  }
}

/**
 * A blob writer for a thread that does not share the BlobStore's `have` set
 * (a chunk worker): a blob already in dir is not rewritten.
 * @returns {(hash: string, bytes: Uint8Array) => boolean} true when it wrote the blob
 */
export function blobWriter (dir, fsync) {
  return (hash, bytes) => {
    // (existsSync builds and throws away an ENOENT error each time: ~10 µs a chunk)
    if (statSync(path.join(dir, hash), { throwIfNoEntry: false }) !== undefined) return false
    writeBlobSync(dir, hash, bytes, fsync)
    return true
  }
}

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

  /**
   * putHashed, synchronously (the main thread's share of chunking, chunk-pool.js).
   * @returns {boolean} true when it wrote the blob
   */
  putHashedSync (hash, bytes) {
    if (this.have.has(hash)) { this.stats.reused++; this.stats.reusedBytes += bytes.length; return false }
    writeBlobSync(this.dir, hash, bytes, this.fsync)
    this.have.add(hash)
    this.stats.written++; this.stats.writtenBytes += bytes.length
    return true
  }

  /**
   * Account for a blob another thread stored into h/ (written: it wrote it;
   * else it found it there). Two workers may both write a chunk two files
   * share; the second rename replaces identical bytes, and it is counted once.
   */
  noteStored (hash, size, written) {
    if (written && !this.have.has(hash)) { this.have.add(hash); this.stats.written++; this.stats.writtenBytes += size; return }
    this.have.add(hash)
    this.stats.reused++; this.stats.reusedBytes += size
  }

  async _write (hash, bytes) {
    // Without fsync a blob (≤ 1 MiB) goes to the page cache in well under a
    // millisecond: synchronous calls cost far less event-loop time than the
    // four promise round trips. With fsync the wait is the disk's, so it stays async.
    if (!this.fsync) return this._writeSync(hash, bytes)
    const tmp = path.join(this.dir, tmpName(hash))
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

  _writeSync (hash, bytes) {
    writeBlobSync(this.dir, hash, bytes, false)
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

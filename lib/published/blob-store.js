// The h/ folder of a published tree, as a write-once store. A blob is written
// to a temporary name and renamed into h/<hash>, so a reader (or a killed
// writer) never sees a partial blob under a real name; blobs already present
// are not rewritten, so building or pulling into an existing folder adds only
// new blobs. Reading a local blob back is capped: a corrupt multi-gigabyte
// file under a blob's name is never slurped.
import fs from 'node:fs/promises'
import { readRegular } from '../open-regular.js'
import { openSync, writeSync, closeSync, renameSync, rmSync, fdatasyncSync, statSync, opendirSync, mkdirSync } from 'node:fs'
import path from 'node:path'
import { threadId } from 'node:worker_threads'
import { sha256HexSync } from 'rotree-client/crypto'
import { TruncatedError } from 'rotree-client/errors'

export const TMP_PREFIX = '.tmp-'
export const HEX64 = /^[0-9a-f]{64}$/

export function blobPath (dir, hash) { return path.join(dir, 'h', hash) }

/**
 * The error for a blob a root needs that is not in dir/h. There is no code
 * of its own yet: a missing blob is the extreme of a truncated one (zero of
 * ref.size bytes), and every caller handles it as damage (fetch it again,
 * report it, refuse to collect around it). `missing: true` tells it apart.
 * @param {string} dir @param {{ hash: string, size?: number }} ref @param {string} what e.g. "directory page", "data of /a/b"
 */
export function missingBlob (dir, ref, what) {
  return new TruncatedError(`blob ${ref.hash} (${what}) is missing from ${path.join(dir, 'h')}`, { details: { hash: ref.hash, missing: true } })
}

/**
 * The bytes of dir/h/<hash>, at most `cap` + 1 of them (one more than expected
 * is enough for the verifier to call it too large); null when it is absent.
 */
export async function readLocal (dir, hash, cap) {
  // a link or a FIFO planted in h/ is no blob: not followed, not waited on (lib/open-regular.js)
  return readRegular(blobPath(dir, hash), cap)
}

/** fsync a directory, so the renames and deletions in it are durable. */
export async function syncDir (dir) {
  const d = await fs.open(dir, 'r')
  try { await d.sync() } finally { await d.close() }
}

// Temporary names only need to differ between writers of this folder at
// once: the threads of this process (the folder lock keeps other processes
// out, and the pid would tell them apart anyway). A counter, not random
// bytes: randomBytes was a measurable part of a build's CPU time
// (docs/BENCHMARKS.md P6, notes).
let _tmpSeq = 0
const tmpName = hash => `${TMP_PREFIX}${hash.slice(0, 16)}-${process.pid}-${threadId}-${(_tmpSeq++).toString(36)}`

/**
 * Write a blob into hdir (an h/ folder) under its hash, synchronously: to a
 * temporary name, then renamed. Used by the build's chunk workers and by
 * BlobStore without fsync. A full disk (ENOSPC) leaves no partial temporary
 * file eating the space a retry needs.
 * @param {string} hdir @param {string} hash @param {Uint8Array} bytes @param {boolean} fsync
 */
export function writeBlobSync (hdir, hash, bytes, fsync) {
  const tmp = path.join(hdir, tmpName(hash))
  try {
    const fd = openSync(tmp, 'wx', 0o644)
    try {
      for (let off = 0; off < bytes.length;) off += writeSync(fd, bytes, off, bytes.length - off)
      if (fsync) fdatasyncSync(fd)
    } finally {
      closeSync(fd)
    }
    renameSync(tmp, path.join(hdir, hash))
  } catch (err) {
    rmSync(tmp, { force: true })
    throw err
  }
}

/**
 * A blob writer for a thread that does not share the BlobStore's `have` set
 * (a chunk worker): a blob already in hdir is not rewritten.
 * @returns {(hash: string, bytes: Uint8Array) => boolean} true when it wrote the blob
 */
export function blobWriter (hdir, fsync) {
  return (hash, bytes) => {
    // (existsSync builds and throws away an ENOENT error each time: docs/BENCHMARKS.md P6, notes)
    if (statSync(path.join(hdir, hash), { throwIfNoEntry: false }) !== undefined) return false
    writeBlobSync(hdir, hash, bytes, fsync)
    return true
  }
}

export class BlobStore {
  /** @param {string} dir the published folder (its h/ is the store) */
  constructor (dir, { fsync = true } = {}) {
    this.dir = path.join(dir, 'h')
    this.fsync = fsync
    this.have = new Set()
    this.pending = new Map() // hash → write in progress (two files may share a chunk)
    this.stats = { written: 0, writtenBytes: 0, reused: 0, reusedBytes: 0 }
  }

  async open () {
    await fs.mkdir(this.dir, { recursive: true })
    for (const name of await fs.readdir(this.dir)) {
      if (HEX64.test(name)) this.have.add(name)
      else if (name.startsWith(TMP_PREFIX)) await fs.rm(path.join(this.dir, name), { force: true }) // left by a killed writer
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

  /** Write a good copy over a damaged one (atomically: the rename replaces it). */
  async replace (hash, bytes) {
    this.have.delete(hash)
    await this.putHashed(hash, bytes)
  }

  /**
   * putHashed, synchronously (the build's main-thread share of chunking).
   * @returns {boolean} true when it wrote the blob
   */
  putHashedSync (hash, bytes) {
    if (this.have.has(hash)) { this.stats.reused++; this.stats.reusedBytes += bytes.length; return false }
    writeBlobSync(this.dir, hash, bytes, this.fsync)
    this._written(hash, bytes.length)
    return true
  }

  /**
   * Account for a blob another thread stored into h/ (written: it wrote it;
   * else it found it there). Two workers may both write a chunk two files
   * share; the second rename replaces identical bytes, and it is counted once.
   */
  noteStored (hash, size, written) {
    if (written && !this.have.has(hash)) { this._written(hash, size); return }
    this.have.add(hash)
    this.stats.reused++; this.stats.reusedBytes += size
  }

  _written (hash, size) {
    this.have.add(hash)
    this.stats.written++; this.stats.writtenBytes += size
  }

  async _write (hash, bytes) {
    // Without fsync a blob (≤ 1 MiB) goes to the page cache in well under a
    // millisecond: synchronous calls cost far less event-loop time than the
    // four promise round trips. With fsync the wait is the disk's, so it stays async.
    if (!this.fsync) { writeBlobSync(this.dir, hash, bytes, false); this._written(hash, bytes.length); return }
    const tmp = path.join(this.dir, tmpName(hash))
    const fh = await fs.open(tmp, 'wx', 0o644)
    try {
      try {
        await fh.writeFile(bytes)
        await fh.datasync()
      } finally {
        await fh.close()
      }
      await fs.rename(tmp, path.join(this.dir, hash))
    } catch (err) {
      // a full disk (ENOSPC) must not leave a partial temp file eating the space a retry needs
      await fs.rm(tmp, { force: true })
      throw err
    }
    this._written(hash, bytes.length)
  }

  /** Make the renames durable before fsinfo.json points at them. */
  async sync () {
    if (this.fsync) await syncDir(this.dir)
  }
}

/**
 * h/ for a build: the same write-once store, without BlobStore's set of
 * every name in h/ (a million names is ~100 MB, and listing them costs a
 * rebuild more than the rest of it). Whether a blob is there is asked of the
 * file system (a stat: docs/BENCHMARKS.md P6, notes) when it is about to be
 * written; the build index knows whether the blobs it remembers are still
 * there without asking (builder/build-index.js). Temporary files of a killed
 * writer are swept only when asked (`sweep`), by streaming h/, never holding
 * its names.
 */
export class StatBlobStore {
  /** @param {string} dir the published folder (its h/ is the store) */
  constructor (dir, { fsync = true } = {}) {
    this.dir = path.join(dir, 'h')
    this.fsync = fsync
    this.pending = new Map() // hash → write in progress (two pages may be the same blob)
    this.stats = { written: 0, writtenBytes: 0, reused: 0, reusedBytes: 0 }
    this.writeSync = blobWriter(this.dir, fsync)
  }

  open () { mkdirSync(this.dir, { recursive: true }); return this }

  /** Remove the temporary files a killed writer left in h/. @returns {number} how many */
  sweep () {
    const d = opendirSync(this.dir, { bufferSize: 1024 })
    let n = 0
    try {
      for (let e; (e = d.readSync()) !== null;) if (e.name.startsWith(TMP_PREFIX)) { rmSync(path.join(this.dir, e.name), { force: true }); n++ }
    } finally { d.closeSync() }
    return n
  }

  /** Is the blob in h/? */
  has (hash) { return this.sizeOf(hash) >= 0 }

  /** The blob's size in h/, or -1 when it is not there. */
  sizeOf (hash) { return statSync(path.join(this.dir, hash), { throwIfNoEntry: false })?.size ?? -1 }

  /** Store bytes under their SHA-256. @returns {Promise<{ hash: string, size: number }>} */
  async put (bytes) {
    const hash = sha256HexSync(bytes)
    if (!this.fsync) {
      // a page cache write is well under a millisecond: no promise round trips
      this.count(this.writeSync(hash, bytes), bytes.length)
      return { hash, size: bytes.length }
    }
    let p = this.pending.get(hash)
    if (!p) {
      p = (async () => {
        if (this.has(hash)) return false
        const tmp = path.join(this.dir, tmpName(hash))
        const fh = await fs.open(tmp, 'wx', 0o644)
        try {
          try { await fh.writeFile(bytes); await fh.datasync() } finally { await fh.close() }
          await fs.rename(tmp, path.join(this.dir, hash))
        } catch (err) {
          await fs.rm(tmp, { force: true }) // ENOSPC must not leave a partial file eating the space a retry needs
          throw err
        }
        return true
      })().finally(() => this.pending.delete(hash))
      this.pending.set(hash, p)
      this.count(await p, bytes.length)
    } else {
      await p
      this.count(false, bytes.length)
    }
    return { hash, size: bytes.length }
  }

  /** Account for a blob stored by this or another thread (written: it wrote it; else it was there). */
  count (written, size) {
    if (written) { this.stats.written++; this.stats.writtenBytes += size } else { this.stats.reused++; this.stats.reusedBytes += size }
  }

  /** Make the renames durable before fsinfo.json points at them. */
  async sync () {
    if (this.fsync) await syncDir(this.dir)
  }
}

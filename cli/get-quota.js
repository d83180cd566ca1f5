// What a `rotree get` (cli/download.js) may take: `maxEntries` entries,
// `maxBytes` bytes of file content, and the free space of DEST's file system
// (docs/TRUST.md rule 9: bounded before anything is written). Entries are
// counted as directories are tallied, from the counts their verified entries
// carry; bytes as files are counted and as they start; the free space is
// read with statfs before every file of BIG_FILE or more and after each
// RECHECK_BYTES of smaller ones, less what the files in flight have yet to
// write.
import fs from 'node:fs/promises'
import { TooLargeError } from 'rotree-client/errors'
import { fmtBytes } from './progress.js'

const RECHECK_BYTES = 8 << 20 // statfs again after this many bytes of small files
const BIG_FILE = 1 << 20 // statfs before every file at least this large

export class Quota {
  /**
   * @param {object} o
   * @param {number} o.maxEntries @param {number} o.maxBytes
   * @param {string} o.dest DEST as the user gave it (for messages)
   */
  constructor ({ maxEntries, maxBytes, dest }) {
    this.maxEntries = maxEntries
    this.maxBytes = maxBytes
    this.dest = dest
    this.entries = 0 // entries below src known so far (directories announce their counts)
    this.total = 0 // bytes of every file counted so far: the progress total
    this.started = 0 // bytes of the files started
    // free space: at the last statfs, less what was written since and what files in flight have yet to write
    this.free = 0; this.bsize = 4096; this.writtenSince = 0; this.startedSince = 0; this.inflight = 0
    this.statting = null // the statfs in flight
  }

  /** `n` more entries are known (`where`: the directory entry that announced them, if any). */
  addEntries (n, where) {
    this.entries += n
    if (this.entries > this.maxEntries) {
      throw new TooLargeError(`the download holds more than ${this.maxEntries} entries${where === undefined ? '' : ` (counted up to ${where})`}; see --max-entries`, { details: { path: where } })
    }
  }

  /** File entry `e` at `where` is counted: within maxBytes, and not larger than the free space. */
  countFile (e, where) {
    this.total += e.size
    if (this.total > this.maxBytes) {
      throw new TooLargeError(`the files counted so far, up to ${where}, hold ${fmtBytes(this.total)}, more than --max-bytes ${fmtBytes(this.maxBytes)}`, { details: { path: where } })
    }
    if (this.disk(e.size) > this.free) throw this.noSpace(e, where)
  }

  /** File entry `e` is about to start: within what is left of maxBytes. */
  checkStart (e, where) {
    if (this.started + e.size > this.maxBytes) throw new TooLargeError(`${where} is ${fmtBytes(e.size)}, more than what is left of --max-bytes`, { details: { path: where } })
  }

  /**
   * Reserve `need` bytes of disk for file `e` going into directory `dirAbs`
   * (statfs first when due): what the file must give back (wrote(), unreserve()).
   */
  async reserve (e, { dirAbs, where, need }) {
    if (need >= BIG_FILE || this.startedSince + need >= RECHECK_BYTES) await this.statfs(dirAbs)
    if (need > this.available()) throw this.noSpace(e, where)
    this.started += e.size; this.startedSince += need; this.inflight += need
    return need
  }

  /** `n` bytes written against a reservation with `left` bytes in it: how much of it they used. */
  wrote (left, n) {
    const d = Math.min(left, n)
    this.inflight -= d; this.writtenSince += d
    return d
  }

  /** What a file did not write of its reservation is given back. */
  unreserve (left) { this.inflight -= left }

  noSpace (e, where) {
    return new TooLargeError(`${where} is ${fmtBytes(e.size)}; ${fmtBytes(Math.max(0, this.available()))} free for it on the file system of ${this.dest}`, { details: { path: where } })
  }

  /** Bytes a file of `size` takes on disk, in whole blocks. */
  disk (size) { return Math.ceil(size / this.bsize) * this.bsize }

  available () { return this.free - this.writtenSince - this.inflight }

  /**
   * Read the free space again. Files that find it due while a statfs is in
   * flight wait for that one: hundreds of small files in flight would
   * otherwise each ask for it at once.
   */
  statfs (dir) {
    this.statting ??= fs.statfs(dir).then(s => {
      this.bsize = s.bsize || 4096
      this.free = s.bavail * s.bsize
      this.writtenSince = 0; this.startedSince = 0
    }).finally(() => { this.statting = null })
    return this.statting
  }
}

// Phase 2 of a build for one file: read it once, cut it into content-defined
// chunks (FORMAT.md §5), hash and store each chunk. Files that change while
// being read are detected by comparing size and mtime before and after.
//
// Synchronous on purpose: it runs in a chunk worker (chunk-pool.js), where
// nothing else waits for the thread, or on the main thread for the few files
// of a rebuild. Through the promise API each of open, fstat, read, close cost
// ~20-60 µs of event-loop time, most of a small file's whole cost; a blocking
// call costs ~1-3 µs. The same function serves both places, so what a file
// becomes cannot depend on which thread read it.
import { openSync, readSync, fstatSync, closeSync, constants } from 'node:fs'
import { createHash } from 'node:crypto'
import { BuildInputError } from 'rotree-client/errors'
import { nextCut } from 'rotree-client/src/format/cdc.js'
import { INLINE_MAX, CHUNK_MAX } from 'rotree-client/src/format/limits.js'

/** Bytes read at once; a thread keeps one buffer of this size (readBuffer). */
export const READ_SIZE = 8 * CHUNK_MAX

// O_NOFOLLOW: the scan saw a regular file; if a symlink has replaced it since,
// do not follow it out of the tree (the directories above it are checked by
// src-dirs.js, and the file is opened relative to its directory's handle).
// O_NONBLOCK: a fifo put in its place must not block the open forever (it has
// no effect on a regular file's reads).
const OPEN_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK

export class Aborted extends Error {}

/** A read buffer for chunkFileSync; one per thread, reused for every file. */
export function readBuffer () { return Buffer.allocUnsafe(READ_SIZE) }

/**
 * @typedef {{ abs: string, rel: string, size: number, mtimeMs: number, dev: number, ino: number, open?: string }} FileTask
 *   the scan's lstat, taken before the read; open: the path to open instead of abs (relative
 *   to a checked directory handle, src-dirs.js). The file opened must be the inode the scan saw.
 * @typedef {{ size: number, mtime: number, exec: boolean, inline?: Uint8Array,
 *   chunks?: { hash: string, size: number }[], written?: boolean[] }} FileResult
 *   inline: the bytes of a file of at most INLINE_MAX bytes (FORMAT.md §4.3);
 *   chunks: its data chunks in file order; written[i]: chunk i was written by this call
 * @param {FileTask} file
 * @param {(hash: string, bytes: Uint8Array) => boolean} store writes a blob under its hash unless
 *   it is there already, synchronously (it must be done with the bytes when it returns: the
 *   buffer is reused); true when it wrote it
 * @param {Buffer} buf from readBuffer()
 * @param {() => boolean} [aborted] checked between reads: the build has failed, stop
 * @returns {FileResult}
 */
export function chunkFileSync (file, store, buf, aborted) {
  let fd
  try { fd = openSync(file.open ?? file.abs, OPEN_FLAGS) } catch (err) { throw new BuildInputError(`${file.rel}: cannot open (${err.code})`, { cause: err }) }
  try {
    // before a byte is read: the file opened is the one the scan saw, not
    // another put in its place or reached through a swapped directory
    const opened = fstatSync(fd)
    if (!opened.isFile() || opened.ino !== file.ino || opened.dev !== file.dev) throw replaced(file)
    const chunks = []; const written = []
    let start = 0; let end = 0; let eof = false; let size = 0; let read = 0
    let inline = null
    for (;;) {
      if (!eof && end - start < CHUNK_MAX) {
        if (aborted?.()) throw new Aborted()
        // keep the unconsumed tail, refill behind it
        if (start > 0) { buf.copy(buf, 0, start, end); end -= start; start = 0 }
        while (end < buf.length) {
          let n
          try { n = readSync(fd, buf, end, buf.length - end, null) } catch (err) {
            throw new BuildInputError(`${file.rel}: cannot read (${err.code})`, { cause: err, details: { path: file.rel } })
          }
          if (n === 0) { eof = true; break }
          end += n; read += n
          // it grew past the size the scan saw (a log being written, a device swapped in): stop reading
          if (read > file.size) throw changed(file)
        }
        // FORMAT.md §4.3: a file of at most INLINE_MAX bytes lives in its directory page
        if (eof && size === 0 && end <= INLINE_MAX) { inline = new Uint8Array(buf.subarray(0, end)); size = end; break }
      }
      if (start === end) break
      const len = nextCut(buf, start, end, eof)
      if (len === 0) throw changed(file) // cannot happen: a refill leaves ≥ CHUNK_MAX bytes or reaches EOF
      const piece = buf.subarray(start, start + len)
      const hash = createHash('sha256').update(piece).digest('hex')
      written.push(store(hash, piece)) // done with the bytes when it returns: the buffer is reused
      chunks.push({ hash, size: len })
      start += len; size += len
    }
    // the scan's lstat is "before": a change between scan and read is caught too
    const after = fstatSync(fd)
    if (!after.isFile() || after.size !== file.size || after.mtimeMs !== file.mtimeMs || size !== after.size) throw changed(file)
    const r = { size, mtime: Math.floor(after.mtimeMs), exec: (after.mode & 0o111) !== 0 }
    if (inline) r.inline = inline; else { r.chunks = chunks; r.written = written }
    return r
  } finally {
    closeSync(fd)
  }
}

function changed (file) { return new BuildInputError(`${file.rel}: file changed while being read`, { details: { path: file.rel, changed: true } }) }

function replaced (file) { return new BuildInputError(`${file.rel}: file replaced since the scan (another file is there now)`, { details: { path: file.rel, changed: true } }) }

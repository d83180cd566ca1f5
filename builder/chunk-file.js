// Phase 2 of a build for one file: read it once, cut it into content-defined
// chunks (FORMAT.md §5), hash and store each chunk, and hash the whole file
// (its SHA-256, kept in the build index and handed to `onFile`; format
// version 2 also signs it into the file's entry, FORMAT.md §12.7). In format
// version 2 each chunk is stored as packBlob decides (deflate-raw when that
// pays, else raw: FORMAT.md §12.6) and named by the SHA-256 of the stored
// bytes; the compression runs here, on the thread that reads and hashes.
// Files that change while being read are detected by comparing size and
// mtime before and after.
//
// In format version 2 a file of at least LEAD_MIN_FILE bytes starts with a
// chunk of exactly LEAD_CHUNK bytes and FastCDC goes on from there
// (FORMAT.md §5.1, cdc.js leadCut): its size, from fstat, is known before
// the first byte is read, as chunkLengths knows its buffer's.
//
// Synchronous on purpose: it runs in a chunk worker (chunk-pool.js), where
// nothing else waits for the thread, or on the main thread for the few files
// of a rebuild. Through the promise API each of open, fstat, read, close costs
// many times the event-loop time of a blocking call, most of a small file's
// whole cost (docs/BENCHMARKS.md P6, notes). The same function serves both
// places, so what a file becomes cannot depend on which thread read it.
//
// A file of at least `bigAt` bytes is not chunked here: its open handle is
// handed back (`big`) so that several threads can chunk it at once
// (big-file.js), with the same cut points.
import { openSync, readSync, fstatSync, closeSync, lstatSync, constants } from 'node:fs'
import * as crypto from 'node:crypto'
import { BuildInputError } from 'rotree-client/errors'
import { nextCut, leadCut, inlineMax, CHUNK_MAX } from 'rotree-client/format'
import { packBlob } from 'rotree-client/codec'

/** Bytes read at once; a thread keeps one buffer of this size (readBuffer). */
export const READ_SIZE = 8 * CHUNK_MAX

// O_NOFOLLOW: the listing saw a regular file; if a symlink has replaced it
// since, do not follow it out of the tree (the file is opened relative to its
// directory's checked handle, src-dirs.js). O_NONBLOCK: a fifo put in its
// place must not block the open forever (it has no effect on a regular
// file's reads). O_NOCTTY: a terminal swapped in never becomes ours.
const OPEN_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY

export class Aborted extends Error {}

// One-shot SHA-256 in hex: crypto.hash (Node ≥ 20.12) makes no Hash object,
// cheaper a file or chunk (docs/BENCHMARKS.md P6, notes); createHash where it
// is missing.
export const sha256Hex = typeof crypto.hash === 'function'
  ? bytes => crypto.hash('sha256', bytes, 'hex')
  : bytes => crypto.createHash('sha256').update(bytes).digest('hex')

/**
 * @typedef {{ hash: string, size: number, storedSize?: number, codec?: 'none'|'deflate-raw', key?: string }} ChunkRef
 *   size: the chunk's bytes (decoded); storedSize and codec only for a chunk stored compressed
 *   (format version 2), so a raw chunk's ref is { hash, size } in either version
 */

/**
 * Store one chunk as the tree's format version says: version 1 as it is;
 * version 2 through packBlob (FORMAT.md §12.6), and for a private tree then
 * sealed (`seal`, builder/seal.js: FORMAT.md §12.8); named by the SHA-256 of
 * the stored bytes.
 * @param {Uint8Array} piece the chunk's bytes (the store must be done with them when it returns)
 * @param {(hash: string, bytes: Uint8Array) => boolean} store
 * @param {1|2} version
 * @param {((inner: Uint8Array) => { stored: Uint8Array, key: string }) | null} [seal]
 * @returns {{ ref: ChunkRef, written: boolean }}
 */
export function storeChunk (piece, store, version, seal = null) {
  if (version === 2) {
    const { stored, codec } = packBlob(piece)
    if (seal !== null) {
      const s = seal(stored)
      const hash = sha256Hex(s.stored)
      return { ref: { hash, size: piece.length, storedSize: s.stored.length, codec, key: s.key }, written: store(hash, s.stored) }
    }
    if (codec !== 'none') {
      const hash = sha256Hex(stored)
      return { ref: { hash, size: piece.length, storedSize: stored.length, codec }, written: store(hash, stored) }
    }
  }
  const hash = sha256Hex(piece)
  return { ref: { hash, size: piece.length }, written: store(hash, piece) }
}

/** A read buffer for chunkFileSync; one per thread, reused for every file. */
export function readBuffer () { return Buffer.allocUnsafe(READ_SIZE) }

/**
 * @typedef {{ size: number, mtimeMs: number, ctimeMs: number, ino: number, dev: number, mode: number }} FileStat
 * @typedef {{ open: string, rel: string, abs?: string, size?: number, mtimeMs?: number, dev?: number, ino?: number }} FileTask
 *   open: the path to open (relative to a checked directory handle, src-dirs.js); abs: the
 *   same by its plain path, when there is no such handle. size, mtimeMs, dev, ino: the file as
 *   an earlier lstat saw it, if one did: the file opened must be that inode, unchanged.
 *   Without them the file's own fstat after the open is what it is checked against.
 * @typedef {{ size: number, mtime: number, exec: boolean, st: FileStat, readStart: number,
 *   sha256: string, inline?: Uint8Array, chunks?: { hash: string, size: number }[], written?: boolean[] }} FileResult
 *   inline: the bytes of a file of at most inlineMax(version) bytes (FORMAT.md §4.3), a view of `buf`
 *   (valid until the next call with it);
 *   chunks: its data chunks in file order (ChunkRef); written[i]: chunk i was written by this call;
 *   sha256: of the whole file; readStart: Date.now() just before the open (build-index.js: racy)
 * @param {FileTask} file
 * @param {(hash: string, bytes: Uint8Array) => boolean} store writes a blob under its hash unless
 *   it is there already, synchronously (it must be done with the bytes when it returns: the
 *   buffer is reused); true when it wrote it
 * @param {Buffer} buf from readBuffer()
 * @param {() => boolean} [aborted] checked between reads: the build has failed, stop
 * @param {number} [bigAt] hand back files of at least this many bytes unread: { big: { fd, st, readStart } }
 * @param {((inner: Uint8Array) => object) | null} [seal] a private tree's sealing (storeChunk)
 * @param {1|2} [version=1] the tree's format version: how chunks are stored (storeChunk),
 *   and whether a large file starts with a lead chunk (FORMAT.md §5.1)
 * @returns {FileResult | { big: { fd: number, st: FileStat, readStart: number } }}
 */
export function chunkFileSync (file, store, buf, aborted, bigAt = Infinity, version = 1, seal = null) {
  const readStart = Date.now()
  let fd
  try { fd = openSync(file.open ?? file.abs, OPEN_FLAGS) } catch (err) { throw new BuildInputError(`${file.rel}: cannot open (${err.code})`, { cause: err, details: { path: file.rel } }) }
  let handedOff = false
  try {
    // before a byte is read: the file opened is the one the listing saw, not
    // another put in its place or reached through a swapped directory
    const opened = fstatSync(fd)
    if (!opened.isFile()) throw changed(file)
    if (file.ino !== undefined && (opened.ino !== file.ino || opened.dev !== file.dev)) throw replaced(file)
    if (file.size !== undefined && (opened.size !== file.size || opened.mtimeMs !== file.mtimeMs)) throw changed(file)
    const want = opened.size
    if (want >= bigAt) { handedOff = true; return { big: { fd, st: statOf(opened), readStart } } }
    const lead = leadCut(want, version) // FORMAT.md §5.1: the first chunk's fixed length, or 0
    const chunks = []; const written = []
    let whole = null // the whole file's hash, once it is known to have more than one chunk
    let single = null // a one-chunk file stored compressed: its bytes' hash (the chunk is named by the stored bytes)
    let start = 0; let end = 0; let eof = false; let size = 0; let read = 0
    let inline = null
    for (;;) {
      if (!eof && end - start < CHUNK_MAX) {
        if (aborted?.()) throw new Aborted()
        // keep the unconsumed tail, refill behind it
        if (start > 0) { buf.copy(buf, 0, start, end); end -= start; start = 0 }
        // never past the size fstat gave: a file that grows or shrinks while
        // it is read fails the check after the last read
        while (end < buf.length && read < want) {
          let n
          try { n = readSync(fd, buf, end, Math.min(buf.length - end, want - read), null) } catch (err) {
            throw new BuildInputError(`${file.rel}: cannot read (${err.code})`, { cause: err, details: { path: file.rel } })
          }
          if (n === 0) break
          end += n; read += n
        }
        eof = read === want || end < buf.length
        // FORMAT.md §4.3: a file of at most INLINE_MAX bytes (version 2: INLINE_MAX_V2)
        // lives in its directory page (a view of buf: the caller copies it before the next file)
        if (eof && size === 0 && end <= inlineMax(version)) { inline = buf.subarray(0, end); size = end; break }
      }
      if (start === end) break
      // the first refill holds min(READ_SIZE, want) ≥ LEAD_CHUNK bytes unless the file shrank
      const len = size === 0 && lead ? (end - start >= lead ? lead : 0) : nextCut(buf, start, end, eof)
      if (len === 0) throw changed(file) // else cannot happen: a refill leaves ≥ CHUNK_MAX bytes or reaches EOF
      const piece = buf.subarray(start, start + len)
      if (size === 0 && len < want) whole = crypto.createHash('sha256')
      whole?.update(piece)
      const c = storeChunk(piece, store, version, seal) // done with the bytes when it returns: the buffer is reused
      if (whole === null && c.ref.codec !== undefined) single = sha256Hex(piece)
      written.push(c.written)
      chunks.push(c.ref)
      start += len; size += len
    }
    // the listing's or the open's stat is "before": a change while reading is caught here
    const after = fstatSync(fd)
    if (!after.isFile() || after.size !== want || after.mtimeMs !== opened.mtimeMs || size !== want) throw changed(file)
    const r = { size, mtime: Math.floor(after.mtimeMs), exec: (after.mode & 0o111) !== 0, st: statOf(after), readStart, sha256: '' }
    if (inline) {
      r.inline = inline
      r.sha256 = sha256Hex(inline)
    } else {
      r.chunks = chunks; r.written = written
      // one chunk is the whole file (its handle, unless it is stored compressed)
      r.sha256 = whole ? whole.digest('hex') : single ?? chunks[0].hash
    }
    return r
  } finally {
    if (!handedOff) closeSync(fd)
  }
}

/**
 * Is the file at `path` (not followed) still what `expect` recorded?
 * @param {string} path @param {FileStat} expect
 * @returns {FileStat | null} null when it is the same; else its stat now (for the read that follows)
 * @throws {BuildInputError} when it cannot be stat'ed, or is not a regular file any more
 */
export function statChanged (path, expect, rel) {
  let st
  try { st = lstatSync(path) } catch (err) { throw new BuildInputError(`${rel}: cannot stat (${err.code})`, { cause: err, details: { path: rel } }) }
  if (!st.isFile()) throw changed({ rel })
  if (st.size === expect.size && st.mtimeMs === expect.mtimeMs && st.ctimeMs === expect.ctimeMs && st.ino === expect.ino && st.dev === expect.dev) return null
  return statOf(st)
}

/** @returns {FileStat} */
export function statOf (st) { return { size: st.size, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs, ino: st.ino, dev: st.dev, mode: st.mode } }

export function changed (file) { return new BuildInputError(`${file.rel}: file changed while being read`, { details: { path: file.rel, changed: true } }) }

function replaced (file) { return new BuildInputError(`${file.rel}: file replaced since the scan (another file is there now)`, { details: { path: file.rel, changed: true } }) }

// Phase 2 of a build for one file: read it once, cut it into content-defined
// chunks (FORMAT.md §5), hash and store each chunk. Files that change while
// being read are detected by comparing size and mtime before and after.
import fs from 'node:fs/promises'
import { openSync, readSync, fstatSync, closeSync } from 'node:fs'
import { BuildInputError } from 'rotree-client/errors'
import { nextCut } from 'rotree-client/src/format/cdc.js'
import { INLINE_MAX, CHUNK_MIN, CHUNK_MAX } from 'rotree-client/src/format/limits.js'
import { sha256HexSync } from 'rotree-client/src/sha256-node.js'

const READ_SIZE = 8 * CHUNK_MAX

/**
 * @param {{ abs: string, rel: string, st: import('node:fs').Stats }} node
 * @param {import('./blobstore.js').BlobStore} store
 * @param {(n: number) => void} onBytes progress
 * @returns {Promise<{ inline: Uint8Array } | { chunks: { hash: string, size: number }[] }>} with size, mtime
 */
export async function chunkFile (node, store, onBytes = () => {}) {
  if (node.st.size <= CHUNK_MIN) return smallFile(node, store, onBytes)
  const fh = await fs.open(node.abs, 'r').catch(err => { throw new BuildInputError(`${node.rel}: cannot open (${err.code})`, { cause: err }) })
  try {
    // the scan's lstat is "before": a change between scan and read is caught too
    const before = node.st
    let result
    if (before.size <= INLINE_MAX) {
      const buf = await fh.readFile()
      if (buf.length > INLINE_MAX) throw changed(node)
      onBytes(buf.length)
      result = { size: buf.length, inline: new Uint8Array(buf) }
    } else {
      result = await chunkStream(fh, store, onBytes, before.size, node)
    }
    const after = await fh.stat()
    if (after.size !== before.size || after.mtimeMs !== before.mtimeMs || result.size !== after.size) throw changed(node)
    return { ...result, mtime: Math.floor(after.mtimeMs), exec: (after.mode & 0o111) !== 0 }
  } finally {
    await fh.close()
  }
}

// A file of at most CHUNK_MIN bytes is one chunk (or inline): read it with
// synchronous calls. Through the promise API each of open, fstat, read, read,
// fstat, close costs ~20-60 µs of event-loop time; for the 70% of files in a
// typical tree that are this small, that was most of a build's CPU time.
// Blocking is brief (≤ 64 KiB from the page cache) and nothing else needs the
// loop meanwhile but other files' reads.
async function smallFile (node, store, onBytes) {
  let fd
  try { fd = openSync(node.abs, 'r') } catch (err) { throw new BuildInputError(`${node.rel}: cannot open (${err.code})`, { cause: err }) }
  let buf; let n = 0; let after
  try {
    const before = node.st
    buf = Buffer.allocUnsafe(before.size + 1) // +1 byte: a file that grew is seen
    for (let r; n < buf.length && (r = readSync(fd, buf, n, buf.length - n, null)) > 0;) n += r
    after = fstatSync(fd)
    if (n !== before.size || after.size !== before.size || after.mtimeMs !== before.mtimeMs) throw changed(node)
  } finally {
    closeSync(fd)
  }
  const bytes = buf.subarray(0, n)
  const r = { size: n, mtime: Math.floor(after.mtimeMs), exec: (after.mode & 0o111) !== 0 }
  if (n <= INLINE_MAX) r.inline = new Uint8Array(bytes)
  else r.chunks = [{ hash: sha256HexSync(bytes), size: n }] // FORMAT.md §5: at most CHUNK_MIN bytes is never cut
  if (r.chunks) await store.putHashed(r.chunks[0].hash, bytes)
  onBytes(n)
  return r
}

function changed (node) { return new BuildInputError(`${node.rel}: file changed while being read`, { details: { path: node.rel, changed: true } }) }

// Read buffers are pooled: a fresh 8 MiB buffer per file made GC the biggest
// cost of building /usr/share/doc (2.5 s of 6.8 s in a CPU profile).
const pool = []

async function chunkStream (fh, store, onBytes, expected, node) {
  // a file smaller than the pool buffer gets an exact one (+1 byte to see EOF)
  const small = expected < READ_SIZE
  const buf = small ? Buffer.allocUnsafe(expected + 1) : pool.pop() ?? Buffer.allocUnsafe(READ_SIZE)
  try {
    const chunks = []
    let start = 0; let end = 0; let eof = false; let size = 0
    for (;;) {
      if (!eof && end - start < CHUNK_MAX) {
        // keep the unconsumed tail, refill behind it
        if (start > 0) { buf.copy(buf, 0, start, end); end -= start; start = 0 }
        while (end < buf.length) {
          const { bytesRead } = await fh.read(buf, end, buf.length - end, null)
          if (bytesRead === 0) { eof = true; break }
          end += bytesRead
        }
      }
      if (start === end) break
      const len = nextCut(buf, start, end, eof)
      if (len === 0) throw changed(node) // the file grew past the size it had when scanned
      const piece = buf.subarray(start, start + len)
      const hash = sha256HexSync(piece)
      await store.putHashed(hash, piece) // awaited: the buffer is reused after this
      chunks.push({ hash, size: len })
      start += len; size += len
      onBytes(len)
    }
    return { size, chunks }
  } finally {
    if (!small) pool.push(buf)
  }
}

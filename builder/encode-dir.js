// A directory whose children are all known becomes its blobs and its build
// index record (walk.js calls this once per directory that changed). What
// each child contributes:
//   a file read now          its FileResult (inline bytes or chunks)
//   a file as recorded       its record row: chunks (an inlined file is read again for its bytes)
//   a subdirectory           its ref and mtime
//   a symlink                its target and mtime
//
// In format version 2 (FORMAT.md §12) the pages and chunk indexes are stored
// as packBlob decides (blobPutter), every ref carries its codec and decoded
// size, and a chunked file's entry carries its whole-file SHA-256 (§12.7).
//
// A private build's walk also collects every blob its root reaches, for the
// release's manifest (§12.8): encodeDir adds what a directory it encodes
// needs, recordReached what an unchanged one's record names.
import path from 'node:path'
import { BadFormatError } from 'rotree-client/errors'
import { packBlob } from 'rotree-client/codec'
import { buildDirectory, buildFileBody, refOf } from 'rotree-client/format'
import { storedSizeOf } from 'rotree-client/verify'
import { missingBlob } from '../lib/published/blob-store.js'
import { encodeRecord, T_FILE, T_RACY, T_SYMLINK, T_DIR } from './dir-record.js'
import { fileAt } from './file-batch.js'
import { READ, SAME, SUBDIR, LINK } from './child-state.js'

/**
 * How a build stores a page or a chunk index: version 1 as it is; version 2
 * through packBlob (FORMAT.md §12.6: deflate-raw when that pays), named by
 * the SHA-256 of the stored bytes.
 * @param {{ put: (bytes: Uint8Array) => Promise<{ hash: string, size: number }> }} store h/
 * @param {1|2} version
 * @param {((inner: Uint8Array) => { stored: Uint8Array, key: string }) | null} [seal] a private tree's (builder/seal.js)
 * @returns {(bytes: Uint8Array) => Promise<{ hash: string, size: number, storedSize?: number, codec?: string, key?: string }>}
 *   the blob's ref: size is bytes.length; storedSize and codec only when it is stored compressed or sealed
 */
export function blobPutter (store, version, seal = null) {
  if (version !== 2) return bytes => store.put(bytes)
  return async bytes => {
    const { stored, codec } = packBlob(bytes)
    if (seal !== null) {
      // a private tree: sealed under its own key (FORMAT.md §12.8), which the ref carries
      const s = seal(stored)
      const { hash } = await store.put(s.stored)
      return { hash, size: bytes.length, storedSize: s.stored.length, codec, key: s.key }
    }
    const { hash } = await store.put(stored)
    return codec === 'none' ? { hash, size: bytes.length } : { hash, size: bytes.length, storedSize: stored.length, codec }
  }
}

/**
 * @param {import('./walk.js').Dir} d every child settled (its state, walk.js)
 * @param {(bytes: Uint8Array) => Promise<{ hash: string, size: number }>} put stores a blob (blobPutter)
 * @param {(st: object, at: number) => boolean} racy
 * @param {1|2} [version=1] the tree's format version
 * @param {boolean} [sealed=false] a private tree's: `put` seals, and the record keeps every ref's key
 * @param {Map<string, number> | null} [reached=null] gets every blob the directory's entry
 *   needs, hash → stored size: its pages, chunk indexes and data chunks (a private build's manifest)
 * @returns {Promise<{ ref: { hash: string, size: number, entries: number, storedSize?: number, codec?: string },
 *   record: Buffer, racy: number }>}
 */
export async function encodeDir (d, put, racy, version = 1, sealed = false, reached = null) {
  const fo = { version }
  const blobs = [] // this directory's own: pages and chunk indexes
  const putOwn = async bytes => { const r = await put(bytes); blobs.push(r.hash); reached?.set(r.hash, storedSizeOf(r)); return r }
  const entries = []; const children = []
  let racyFiles = 0
  for (let i = 0; i < d.names.length; i++) {
    const name = d.names[i]; const state = d.state[i]
    if (state === READ || state === SAME) {
      let e, child
      if (state === READ) {
        const r = fileAt(d.rbuf[i], d.rpos[i])
        const isRacy = racy(r.st, r.readStart)
        if (isRacy) racyFiles++
        e = { name, type: 'file', size: r.size, mtime: r.mtime, exec: r.exec }
        if (r.inline) e.inline = r.inline; else e.chunks = r.chunks
        if (version === 2) e.sha256 = r.sha256 // FORMAT.md §12.7 (not stored for an inline file)
        child = { name, type: isRacy ? T_RACY : T_FILE, st: r.st, sha256: r.sha256, chunks: r.inline ? null : r.chunks }
      } else {
        // unchanged, chunked, from its record (an unchanged inlined file was read again: it is READ)
        const rec = d.record; const ri = d.recIdx[i]
        const st = { size: rec.f(ri, 1), mtimeMs: rec.f(ri, 2), ctimeMs: rec.f(ri, 3), ino: rec.f(ri, 4), dev: rec.f(ri, 5), mode: rec.mode(ri) }
        const chunks = rec.chunks(ri)
        e = { name, type: 'file', size: st.size, mtime: Math.floor(st.mtimeMs), exec: (st.mode & 0o111) !== 0, chunks }
        child = { name, type: rec.type(ri), st, sha256: rec.sha256(ri), chunks }
        if (version === 2) e.sha256 = child.sha256
      }
      checkFileEntry(e, relOf(d, name))
      if (e.chunks) {
        if (reached) for (const c of e.chunks) reached.set(c.hash, storedSizeOf(c))
        const { chunks, ...rest } = e
        e = { ...rest, ...(await buildFileBody(chunks, putOwn, fo)) }
      }
      entries.push(e); children.push(child)
    } else if (state === SUBDIR) {
      const v = d.extra[i]
      entries.push({ name, type: 'dir', size: v.ref.entries, mtime: Math.floor(v.mtimeMs), dir: refOf(v.ref) })
      children.push({ name, type: T_DIR, mtimeMs: v.mtimeMs, ino: v.ino, dev: v.dev, ref: v.ref })
    } else if (state === LINK) {
      const v = d.extra[i]
      entries.push({ name, type: 'symlink', target: v.target, mtime: Math.floor(v.mtimeMs), size: 0 })
      children.push({ name, type: T_SYMLINK, mtimeMs: v.mtimeMs, target: v.target })
    }
    // SKIPPED (--skip-bad): left out
  }
  const top = await buildDirectory(entries, putOwn, fo)
  const ref = { ...refOf(top), entries: top.entries }
  return { ref, record: encodeRecord(ref, blobs, children, version, sealed), racy: racyFiles }
}

/**
 * The blobs of a directory taken from its record unchanged: its own (pages,
 * chunk indexes; their sizes from h/, where walk.js again() found them) and
 * its files' chunks. Its subdirectories are walked on their own.
 * @param {import('./walk.js').Dir} d @param {import('../lib/published/blob-store.js').StatBlobStore} store
 * @param {Map<string, number>} reached hash → stored size
 */
export function recordReached (d, store, reached) {
  const rec = d.record
  for (const hash of rec.blobs()) {
    const size = store.sizeOf(hash)
    if (size < 0) throw missingBlob(path.dirname(store.dir), { hash }, `page or chunk index of ${d.rel}`)
    reached.set(hash, size)
  }
  for (let i = 0; i < d.names.length; i++) {
    if (d.state[i] !== SAME) continue
    const chunks = rec.chunks(d.recIdx[i])
    if (chunks) for (const c of chunks) reached.set(c.hash, storedSizeOf(c))
  }
}

export const relOf = (d, name) => (d.rel === '/' ? '/' : d.rel + '/') + name

/**
 * FORMAT.md §4.2: a chunked file's chunk sizes add up to its size. Readers
 * refuse a directory page that breaks this, so the builder never writes one:
 * a chunk list that does not add up (a damaged index record, a bug) fails the
 * build here, naming the path, instead of publishing a tree no one can read.
 * @param {import('rotree-client/format').Entry} e @param {string} rel
 */
export function checkFileEntry (e, rel) {
  if (e.chunks) {
    let sum = 0
    for (const c of e.chunks) sum += c.size
    if (sum !== e.size) throw new BadFormatError(`${rel}: its chunks add up to ${sum} bytes, but the file is ${e.size}`, { details: { path: rel } })
  }
  return e
}

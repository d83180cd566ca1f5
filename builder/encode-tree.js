// The middle step of a build: the scanned tree becomes blobs in h/ and one
// root ref. Directories are encoded bottom-up, in name order, on this thread;
// files are read, chunked and stored by the pool (chunk-pool.js).
//
// A directory whose children stat as they did last time, and whose blobs are
// all still in h/, is given back whole from the build index (build-index.js)
// without reading or encoding anything. In a directory that changed, only the
// files whose own stat changed are read; the others come from their records.
//
// Every directory that is encoded is first opened component by component
// from SRC and checked against the scan (src-dirs.js), and its files are read
// through that handle: a directory swapped for a symlink after the scan is a
// BuildInputError naming the path, never followed out of SRC.
import { BadFormatError } from 'rotree-client/errors'
import { buildDirectory } from 'rotree-client/src/format/dirpage.js'
import { buildFileBody } from 'rotree-client/src/format/chunkindex.js'
import { limiter } from 'rotree-client/src/cache.js'

// directories whose files are being read at once: each holds a directory
// handle, and the pool batches what they ask for together
const DIRS_AT_ONCE = 256

export class TreeEncoder {
  /**
   * @param {object} o
   * @param {import('./build-index.js').BuildIndex} o.index
   * @param {import('../lib/published/blob-store.js').BlobStore} o.store
   * @param {import('./chunk-pool.js').ChunkPool} o.pool
   * @param {import('./src-dirs.js').SourceDirs} o.dirs
   * @param {'fail'|'skip'} o.onBad @param {(m: string) => void} o.warn
   * @param {(done: number, files: number) => void} o.progress bytes and files handled so far
   */
  constructor ({ index, store, pool, dirs, onBad, warn, progress }) {
    Object.assign(this, { index, store, pool, dirs, onBad, warn })
    this.done = 0
    this.files = 0
    this._progress = progress
    this.slots = limiter(DIRS_AT_ONCE)
  }

  /** @returns {Promise<{ mtime: number, dir: { hash: string, size: number } }>} the root entry of fsinfo.json */
  async encode (root) {
    const ref = await this.dirRef(root, [])
    return { mtime: Math.floor(root.st.mtimeMs), dir: { hash: ref.hash, size: ref.size } }
  }

  progress (bytes, files = 0) { this.done += bytes; this.files += files; this._progress(this.done, this.files) }

  // A directory: subdirectories first; then, if its children stat as they did
  // last time and its blobs are all in h/, its ref from the index; else its
  // entries (from their records or read) and a new encoding.
  // null: skipped (--skip-bad), it failed the check against the scan.
  async dirRef (node, parents) {
    const chain = [...parents, node]
    const subdirs = new Map()
    await Promise.all(node.children.filter(k => k.type === 'dir').map(async k => subdirs.set(k.name, await this.dirRef(k, chain))))
    const lost = [...subdirs.values()].includes(null)
    const known = this.index.lookupDir(node, lost ? null : this.index.statDigest(node, subdirs))
    if (known && known.blobs.every(h => this.store.have.has(h))) return this.dirHit(node, known)
    return this.slots(async () => {
      let handle
      try { handle = this.dirs.open(chain) } catch (err) {
        if (err.code !== 'ROTREE_BUILD_INPUT' || this.onBad !== 'skip') throw err
        this.warn(`skipping ${err.message}`)
        return null
      }
      try {
        const { entries, skipped } = await this.entriesOf(node, handle, subdirs)
        return await this.encodeDir(node, subdirs, entries, skipped || lost)
      } finally { handle.close() }
    })
  }

  dirHit (node, known) {
    this.index.dirHit(node)
    let n = 0; let bytes = 0
    for (const k of node.children) if (k.type === 'file') { n++; bytes += k.st.size }
    this.progress(bytes, n)
    return known
  }

  // The entries of a directory that changed; its files are read through its checked handle.
  async entriesOf (node, handle, subdirs) {
    const { records, contents } = await this.index.loadFiles(node)
    const source = { handle, dir: node }
    let skipped = false
    // allSettled: the handle is closed when this returns, so no read that names it may still be queued
    const settled = await Promise.allSettled(node.children.map(async k => {
      const mtime = Math.floor(k.st.mtimeMs)
      if (k.type === 'dir') {
        const ref = subdirs.get(k.name)
        return ref && { name: k.name, type: 'dir', size: ref.entries, mtime, dir: { hash: ref.hash, size: ref.size } }
      }
      if (k.type === 'symlink') return { name: k.name, type: 'symlink', target: k.target, mtime, size: 0 }
      try {
        return await this.fileEntry(k, source, records.get(k.name), contents)
      } catch (err) {
        if (err.code !== 'ROTREE_BUILD_INPUT' || this.onBad !== 'skip') throw err
        this.warn(`skipping ${err.message}`); skipped = true; return null
      }
    }))
    const failed = settled.find(x => x.status === 'rejected')
    if (failed) throw failed.reason
    return { entries: settled.map(x => x.value).filter(Boolean), skipped }
  }

  // A file of a directory that changed: its record if its stat is unchanged
  // and its chunks are in h/, else read it.
  async fileEntry (node, source, record, contents) {
    const dir = source.dir
    const known = this.index.lookup(node, record)
    let r
    if (known && (!known.chunks || known.chunks.every(c => this.store.have.has(c.hash)))) {
      this.index.hit(node); this.progress(node.st.size)
      r = { size: known.size, chunks: known.chunks, mtime: Math.floor(node.st.mtimeMs), exec: (node.st.mode & 0o111) !== 0 }
      // an inlined file's bytes come from the index (checked against its hash), or from the file
      if (known.inlined) r.inline = (await this.index.inlineBytes(node, dir.abs, known.record, contents)) ?? (await this.readFile(node, source)).inline
    } else {
      r = await this.readFile(node, source)
    }
    this.progress(0, 1)
    const e = { name: node.name, type: 'file', size: r.size, mtime: r.mtime, exec: r.exec }
    if (r.inline) e.inline = r.inline; else e.chunks = r.chunks
    return checkFileEntry(e, relOf(dir, node))
  }

  // not known, changed, or a chunk is gone from h/: read it, through the directory's handle
  async readFile (node, { handle, dir }) {
    const abs = dir.abs + '/' + node.name
    /** @type {import('./chunk-file.js').FileTask} */
    const task = { abs, rel: relOf(dir, node), open: handle.pathOf(node.name, abs), size: node.st.size, mtimeMs: node.st.mtimeMs, dev: node.st.dev, ino: node.st.ino }
    // before the file is queued, so at or before its open: what the racy test needs (build-index.js)
    const readStart = Date.now()
    const r = await this.pool.chunk(task)
    this.index.record(node, dir.abs, r, readStart)
    this.progress(r.size)
    return r
  }

  async encodeDir (node, subdirs, entries, skipped) {
    // remember every blob this directory needs, to check next time that they are still in h/
    const blobs = []
    const putDir = async bytes => { const r = await this.store.put(bytes); blobs.push(r.hash); return r }
    const encoded = await Promise.all(entries.map(async e => {
      if (!e.chunks) return e
      for (const c of e.chunks) blobs.push(c.hash)
      const { chunks, ...rest } = e
      return { ...rest, ...(await buildFileBody(chunks, putDir)) }
    }))
    const ref = await buildDirectory(encoded, putDir)
    // not recorded when a child was skipped or is racy now (it was read moments after a change)
    this.index.recordDir(node, skipped ? null : this.index.statDigest(node, subdirs), ref, blobs)
    return { hash: ref.hash, size: ref.size, entries: ref.entries }
  }
}

const relOf = (dir, node) => (dir.rel === '/' ? '/' : dir.rel + '/') + node.name

/**
 * FORMAT.md §4.2: a chunked file's chunk sizes add up to its size. Readers
 * refuse a directory page that breaks this, so the builder never writes one:
 * a chunk list that does not add up (a damaged index record, a bug) fails the
 * build here, naming the path, instead of publishing a tree no one can read.
 * @param {import('rotree-client/src/format/entry.js').Entry} e @param {string} rel
 */
export function checkFileEntry (e, rel) {
  if (e.chunks) {
    let sum = 0
    for (const c of e.chunks) sum += c.size
    if (sum !== e.size) throw new BadFormatError(`${rel}: its chunks add up to ${sum} bytes, but the file is ${e.size}`, { details: { path: rel } })
  }
  return e
}

// `rotree build SRC OUT`: scan, chunk and store every file, encode the
// directories bottom-up, sign the root, and publish it by renaming a new
// fsinfo.json into place. Until that rename the previous tree in OUT stays
// complete and servable: blobs are only ever added.
//
// A rebuild into the same OUT does only what changed (build-index.js): a
// directory whose children stat as they did last time is given back whole,
// without reading or encoding anything, as long as every blob it needs is
// still in h/; in a directory that changed, only files whose own stat changed
// are read. The result is byte for byte what a clean build makes. With --unsigned the root is left in
// OUT/unsigned.json for `rotree sign` on another machine (sign.js).
//
// Files are read, chunked, hashed and stored by a pool of worker threads
// (chunk-pool.js); this thread walks the tree, keeps the index and encodes
// directories, in name order, so the tree does not depend on the pool's size.
import fs from 'node:fs/promises'
import path from 'node:path'
import { BuildInputError, UsageError } from 'rotree-client/errors'
import { buildDirectory } from 'rotree-client/src/format/dirpage.js'
import { buildFileBody } from 'rotree-client/src/format/chunkindex.js'
import { BlobStore } from './blobstore.js'
import { scan } from './scan.js'
import { ChunkPool, defaultThreads } from './chunk-pool.js'
import { BuildIndex } from './build-index.js'
import { nextSeq, publishFsinfo, readPublished, writeUnsignedFile, removeUnsigned } from './publish.js'
import { signFields, encodeUnsigned } from './sign-root.js'

/**
 * @param {object} o
 * @param {string} o.src @param {string} o.out
 * @param {{ secretKey?: string, publicKey: string }} o.key (the secret half is not needed with unsigned)
 * @param {number} o.ttlMs how long the signed root is valid
 * @param {'fail'|'skip'} [o.onBad='fail'] what to do with input that cannot be published
 * @param {number} [o.threads] worker threads that read, chunk and hash files (chunk-pool.js; default one
 *   per core, at most 4; 0: all on this thread). The tree is the same for any number.
 * @param {number} [o.jobs] the old name of `threads`
 * @param {number} [o.workersAfter] bytes of files to read before worker threads start (default 16 MiB; 0: at once)
 * @param {boolean} [o.fsync=true]
 * @param {number} [o.now] clock, ms
 * @param {number} [o.seq] force a sequence number
 * @param {boolean} [o.unsigned] write OUT/unsigned.json for an offline signature instead of publishing
 * @param {boolean} [o.rehash] read every file, ignoring the build index
 * @param {number} [o.racyMs] files changed this recently before being read are not recorded in the index
 * @param {(p: { phase: string, done: number, total: number, files: number }) => void} [o.onProgress]
 * @param {(msg: string) => void} [o.warn]
 */
export async function build (o) {
  const { src, out, key, ttlMs, onBad = 'fail', fsync = true, now = Date.now(), onProgress = () => {}, warn = () => {}, unsigned = false } = o
  const threads = o.threads ?? o.jobs ?? defaultThreads()
  const t0 = Date.now()
  const phases = {} // wall ms per phase, for --json and bench/build.js
  const phasesCpu = {} // CPU ms (user + system) of this process per phase
  let tp = performance.now(); let cp = process.cpuUsage()
  const phase = name => {
    const t = performance.now(); const c = process.cpuUsage()
    phases[name] = Math.round(t - tp); phasesCpu[name] = Math.round((c.user - cp.user + c.system - cp.system) / 1000)
    tp = t; cp = c
  }
  const srcAbs = path.resolve(src); const outAbs = path.resolve(out)
  if (outAbs === srcAbs || outAbs.startsWith(srcAbs + path.sep)) throw new UsageError(`OUT (${out}) must not be inside SRC (${src})`)
  if (!unsigned && !key.secretKey) throw new UsageError('a secret key is needed to sign (or build with --unsigned)')

  const tree = await scan(src, { onBad, warn })
  phase('scan')
  await fs.mkdir(out, { recursive: true })
  // held to the end: it is also OUT's lock against a concurrent build, gc or resign
  const index = await BuildIndex.open(out, { rehash: o.rehash, racyMs: o.racyMs, warn })
  let pool = null
  try {
    const store = await new BlobStore(out, { fsync }).open()
    pool = new ChunkPool(store, { threads, workersAfter: o.workersAfter })
    phase('open')

    let done = 0; let files = 0
    const progress = n => { done += n; onProgress({ phase: 'build', done, total: tree.bytes, files }) }

    // not known, changed, or a chunk is gone from h/: read it
    async function readFile (node, dir) {
      // before the file is queued, so at or before its open: what the racy test needs (build-index.js)
      const readStart = Date.now()
      const r = await pool.chunk({ abs: dir.abs + '/' + node.name, rel: (dir.rel === '/' ? '/' : dir.rel + '/') + node.name, size: node.st.size, mtimeMs: node.st.mtimeMs })
      index.record(node, dir.abs, r, readStart)
      progress(r.size)
      return r
    }

    // A file of a directory that changed: its record if its stat is unchanged and its chunks are in h/, else read it.
    async function fileEntry (node, dir, record, contents) {
      const known = index.lookup(node, record)
      let r
      if (known && (!known.chunks || known.chunks.every(c => store.have.has(c.hash)))) {
        index.hit(node); progress(node.st.size)
        r = { size: known.size, chunks: known.chunks, mtime: Math.floor(node.st.mtimeMs), exec: (node.st.mode & 0o111) !== 0 }
        // an inlined file's bytes come from the index (checked against its hash), or from the file
        if (known.inlined) r.inline = (await index.inlineBytes(node, dir.abs, known.record, contents)) ?? (await readFile(node, dir)).inline
      } else {
        r = await readFile(node, dir)
      }
      files++
      const e = { name: node.name, type: 'file', size: r.size, mtime: r.mtime, exec: r.exec }
      if (r.inline) e.inline = r.inline; else e.chunks = r.chunks
      return e
    }

    // A directory: subdirectories first; then, if its children stat as they did
    // last time and its blobs are all in h/, its ref from the index; else its
    // files' entries (from their records or read) and a new encoding.
    async function dirRef (node) {
      const subdirs = new Map()
      await Promise.all(node.children.filter(k => k.type === 'dir').map(async k => subdirs.set(k.name, await dirRef(k))))
      const digest = index.statDigest(node, subdirs)
      const known = index.lookupDir(node, digest)
      if (known && known.blobs.every(h => store.have.has(h))) {
        index.dirHit(node)
        let n = 0; let bytes = 0
        for (const k of node.children) if (k.type === 'file') { n++; bytes += k.st.size }
        files += n; progress(bytes)
        return known
      }
      const { records, contents } = await index.loadFiles(node)
      let skipped = false
      const entries = (await Promise.all(node.children.map(async k => {
        const mtime = Math.floor(k.st.mtimeMs)
        if (k.type === 'dir') { const ref = subdirs.get(k.name); return { name: k.name, type: 'dir', size: ref.entries, mtime, dir: { hash: ref.hash, size: ref.size } } }
        if (k.type === 'symlink') return { name: k.name, type: 'symlink', target: k.target, mtime, size: 0 }
        try {
          return await fileEntry(k, node, records.get(k.name), contents)
        } catch (err) {
          if (err.code !== 'ROTREE_BUILD_INPUT' || onBad !== 'skip') throw err
          warn(`skipping ${err.message}`); skipped = true; return null
        }
      }))).filter(Boolean)
      // remember every blob this directory needs, to check next time that they are still in h/
      const blobs = []
      const putDir = async bytes => { const r = await store.put(bytes); blobs.push(r.hash); return r }
      const encoded = await Promise.all(entries.map(async e => {
        if (!e.chunks) return e
        for (const c of e.chunks) blobs.push(c.hash)
        const { chunks, ...rest } = e
        return { ...rest, ...(await buildFileBody(chunks, putDir)) }
      }))
      const ref = await buildDirectory(encoded, putDir)
      // not recorded when a child was skipped or is racy now (it was read moments after a change)
      index.recordDir(node, skipped ? null : index.statDigest(node, subdirs), ref, blobs)
      return { hash: ref.hash, size: ref.size, entries: ref.entries }
    }

    const rootRef = await dirRef(tree.root)
    const root = { mtime: Math.floor(tree.root.st.mtimeMs), dir: { hash: rootRef.hash, size: rootRef.size } }
    await pool.close()
    await store.sync()
    phase('tree')

    // DESIGN.md trust rule 2: sequence numbers strictly increase per publish.
    // Seconds since 1970 keep them increasing even when OUT is rebuilt from
    // scratch; history/ keeps a number from ever being reused (publish.js).
    const { seq: auto, last } = await nextSeq(out, now)
    const seq = o.seq ?? auto
    if (seq <= last) throw new UsageError(`sequence ${seq} is not above ${last}, already published in ${out}`)
    const fields = {
      key: key.publicKey, seq, issued: new Date(now).toISOString(), expires: new Date(now + ttlMs).toISOString(),
      root: root.dir.hash, rootSize: root.dir.size, rootMtime: root.mtime
    }
    if (unsigned) {
      await writeUnsignedFile(out, encodeUnsigned(fields), fsync)
    } else {
      await publishFsinfo(out, signFields(fields, key.secretKey), fsync)
      await removeUnsigned(out) // a pending offline-signed root is older than this one
    }
    // after the publish: a failure here costs only re-reading next time
    phase('publish')
    try { await index.commit() } catch (err) { warn(`build index not updated: ${err.message}`) }
    phase('commit')
    return {
      root: root.dir.hash, rootSize: root.dir.size, seq, publicKey: key.publicKey, expires: fields.expires, unsigned,
      files: tree.files, dirs: tree.dirs, symlinks: tree.symlinks, bytes: tree.bytes, skipped: tree.skipped,
      blobs: store.stats, index: index.stats, pool: pool.stats, ms: Date.now() - t0, phases, phasesCpu
    }
  } finally {
    // a failed build: the workers stop at their next read, and no thread outlives the call
    try { await pool?.close() } finally { await index.close() }
  }
}

export { BuildInputError, readPublished, publishFsinfo }

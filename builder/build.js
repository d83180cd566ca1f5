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
import fs from 'node:fs/promises'
import path from 'node:path'
import { BuildInputError, UsageError } from 'rotree-client/errors'
import { buildDirectory } from 'rotree-client/src/format/dirpage.js'
import { buildFileBody } from 'rotree-client/src/format/chunkindex.js'
import { limiter } from 'rotree-client/src/cache.js'
import { BlobStore } from './blobstore.js'
import { scan } from './scan.js'
import { chunkFile } from './chunk-file.js'
import { BuildIndex } from './build-index.js'
import { nextSeq, publishFsinfo, readPublished, writeUnsignedFile, removeUnsigned } from './publish.js'
import { signFields, encodeUnsigned } from './sign.js'

/**
 * @param {object} o
 * @param {string} o.src @param {string} o.out
 * @param {{ secretKey?: string, publicKey: string }} o.key (the secret half is not needed with unsigned)
 * @param {number} o.ttlMs how long the signed root is valid
 * @param {'fail'|'skip'} [o.onBad='fail'] what to do with input that cannot be published
 * @param {number} [o.jobs=4] files read at once
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
  const { src, out, key, ttlMs, onBad = 'fail', jobs = 4, fsync = true, now = Date.now(), onProgress = () => {}, warn = () => {}, unsigned = false } = o
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
  try {
    const store = await new BlobStore(out, { fsync }).open()
    phase('open')

    let done = 0; let files = 0
    const progress = n => { done += n; onProgress({ phase: 'build', done, total: tree.bytes, files }) }
    const limit = limiter(jobs)

    // not known, changed, or a chunk is gone from h/: read it
    function readFile (node, dirAbs) {
      return limit(async () => {
        const readStart = Date.now()
        const r = await chunkFile(node, store, progress)
        index.record(node, dirAbs, r, readStart)
        return r
      })
    }

    // A file of a directory that changed: its record if its stat is unchanged and its chunks are in h/, else read it.
    async function fileEntry (node, dirAbs, record) {
      const known = index.lookup(node, record)
      let r
      if (known && (!known.chunks || known.chunks.every(c => store.have.has(c.hash)))) {
        index.hit(node); progress(node.st.size)
        r = { size: known.size, chunks: known.chunks, mtime: Math.floor(node.st.mtimeMs), exec: (node.st.mode & 0o111) !== 0 }
        // an inlined file's bytes come from the index (checked against its hash), or from the file
        if (known.inlined) r.inline = (await index.inlineBytes(node, dirAbs, known.record)) ?? (await readFile(node, dirAbs)).inline
      } else {
        r = await readFile(node, dirAbs)
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
        for (const k of node.children) if (k.type === 'file') { files++; progress(k.st.size) }
        return known
      }
      const records = await index.loadFiles(node)
      let skipped = false
      const entries = (await Promise.all(node.children.map(async k => {
        const mtime = Math.floor(k.st.mtimeMs)
        if (k.type === 'dir') { const ref = subdirs.get(k.name); return { name: k.name, type: 'dir', size: ref.entries, mtime, dir: { hash: ref.hash, size: ref.size } } }
        if (k.type === 'symlink') return { name: k.name, type: 'symlink', target: k.target, mtime, size: 0 }
        try {
          return await fileEntry(k, node.abs, records.get(k.name))
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
      blobs: store.stats, index: index.stats, ms: Date.now() - t0, phases, phasesCpu
    }
  } finally {
    await index.close()
  }
}

export { BuildInputError, readPublished, publishFsinfo }

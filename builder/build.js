// `rotree build SRC OUT`: scan, chunk and store every file, encode the
// directories bottom-up, sign the root, and publish it by renaming a new
// fsinfo.json into place. Until that rename the previous tree in OUT stays
// complete and servable: blobs are only ever added.
import fs from 'node:fs/promises'
import path from 'node:path'
import { BuildInputError, UsageError } from 'rotree-client/errors'
import { buildDirectory } from 'rotree-client/src/format/dirpage.js'
import { buildFileBody } from 'rotree-client/src/format/chunkindex.js'
import { encodeFsinfo, decodeFsinfo, fsinfoMessage } from 'rotree-client/src/format/fsinfo.js'
import { sign } from 'rotree-client/src/ed25519.js'
import { limiter } from 'rotree-client/src/cache.js'
import { BlobStore } from './blobstore.js'
import { scan } from './scan.js'
import { chunkFile } from './chunk-file.js'

/**
 * @param {object} o
 * @param {string} o.src @param {string} o.out
 * @param {{ secretKey: string, publicKey: string }} o.key
 * @param {number} o.ttlMs how long the signed root is valid
 * @param {'fail'|'skip'} [o.onBad='fail'] what to do with input that cannot be published
 * @param {number} [o.jobs=4] files read at once
 * @param {boolean} [o.fsync=true]
 * @param {number} [o.now] clock, ms
 * @param {number} [o.seq] force a sequence number
 * @param {(p: { phase: string, done: number, total: number, files: number }) => void} [o.onProgress]
 * @param {(msg: string) => void} [o.warn]
 */
export async function build (o) {
  const { src, out, key, ttlMs, onBad = 'fail', jobs = 4, fsync = true, now = Date.now(), onProgress = () => {}, warn = () => {} } = o
  const t0 = Date.now()
  const srcAbs = path.resolve(src); const outAbs = path.resolve(out)
  if (outAbs === srcAbs || outAbs.startsWith(srcAbs + path.sep)) throw new UsageError(`OUT (${out}) must not be inside SRC (${src})`)

  const tree = await scan(src, { onBad, warn })
  await fs.mkdir(out, { recursive: true })
  const store = await new BlobStore(out, { fsync }).open()
  const prev = await readPublished(out)

  let done = 0; let files = 0
  const progress = n => { done += n; onProgress({ phase: 'build', done, total: tree.bytes, files }) }
  const limit = limiter(jobs)
  const put = bytes => store.put(bytes)

  async function buildNode (node) {
    if (node.type === 'file') {
      let r
      try {
        r = await limit(() => chunkFile(node, store, progress))
      } catch (err) {
        if (err.code !== 'ROTREE_BUILD_INPUT' || onBad !== 'skip') throw err
        warn(`skipping ${err.message}`); return null
      }
      files++
      const body = r.inline ? { inline: r.inline } : await buildFileBody(r.chunks, put)
      return { name: node.name, type: 'file', size: r.size, mtime: r.mtime, exec: r.exec, ...body }
    }
    if (node.type === 'symlink') return { name: node.name, type: 'symlink', target: node.target, mtime: Math.floor(node.st.mtimeMs), size: 0 }
    const entries = (await Promise.all(node.children.map(buildNode))).filter(Boolean)
    const ref = await buildDirectory(entries, put)
    return { name: node.name, type: 'dir', size: ref.entries, mtime: Math.floor(node.st.mtimeMs), dir: { hash: ref.hash, size: ref.size } }
  }

  const root = await buildNode(tree.root)
  await store.sync()

  // DESIGN.md trust rule 2: sequence numbers strictly increase per publish. Seconds
  // since 1970 keep them increasing even when OUT is rebuilt from scratch.
  const seq = o.seq ?? Math.max(prev ? prev.seq + 1 : 0, Math.floor(now / 1000))
  if (prev && seq <= prev.seq) throw new UsageError(`sequence ${seq} is not above the published ${prev.seq}`)
  const fields = {
    key: key.publicKey, seq, issued: new Date(now).toISOString(), expires: new Date(now + ttlMs).toISOString(),
    root: root.dir.hash, rootSize: root.dir.size, rootMtime: root.mtime
  }
  const text = encodeFsinfo({ ...fields, sig: sign(fsinfoMessage(fields), key.secretKey) })
  await publishFsinfo(out, text, fsync)
  return {
    root: root.dir.hash, rootSize: root.dir.size, seq, publicKey: key.publicKey, expires: fields.expires,
    files: tree.files, dirs: tree.dirs, symlinks: tree.symlinks, bytes: tree.bytes, skipped: tree.skipped,
    blobs: store.stats, ms: Date.now() - t0
  }
}

/** The fsinfo.json currently in OUT, or null. A corrupt one does not block a rebuild. */
export async function readPublished (out) {
  try {
    return decodeFsinfo(await fs.readFile(path.join(out, 'fsinfo.json')))
  } catch (err) {
    if (err.code === 'ENOENT') return null
    if (err.code === 'ROTREE_BAD_FORMAT' || err.code === 'ROTREE_UNSUPPORTED_VERSION') return null
    throw err
  }
}

/** Atomic publish: write a temporary file, make it durable, rename it over fsinfo.json. */
export async function publishFsinfo (out, text, fsync = true) {
  const tmp = path.join(out, `.fsinfo.json.tmp-${process.pid}`)
  const fh = await fs.open(tmp, 'w', 0o644)
  try {
    await fh.writeFile(text)
    if (fsync) await fh.sync()
  } finally { await fh.close() }
  await fs.rename(tmp, path.join(out, 'fsinfo.json'))
  if (fsync) {
    const d = await fs.open(out, 'r')
    try { await d.sync() } finally { await d.close() }
  }
}

export { BuildInputError }

// `rotree build SRC OUT`, in three steps:
//
//   scan     walk SRC with lstat, refuse (or skip) what cannot be published (scan.js)
//   encode   read, chunk and store the files that changed, encode the
//            directories bottom-up (encode-tree.js, on worker threads: chunk-pool.js)
//   publish  sign the root and rename a new fsinfo.json into place
//            (lib/published/publish.js), or write OUT/unsigned.json for
//            `rotree sign` on another machine (sign.js)
//
// Until the rename the previous tree in OUT stays complete and servable:
// blobs are only ever added. A rebuild into the same OUT does only what
// changed (build-index.js), and its result is byte for byte what a clean
// build makes.
import fs from 'node:fs/promises'
import path from 'node:path'
import { BuildInputError, UsageError } from 'rotree-client/errors'
import { BlobStore } from '../lib/published/blob-store.js'
import { nextSeq, publishFsinfo, readPublished, writeUnsignedFile, removeUnsigned } from '../lib/published/publish.js'
import { scan } from './scan.js'
import { ChunkPool, defaultThreads } from './chunk-pool.js'
import { BuildIndex } from './build-index.js'
import { SourceDirs } from './src-dirs.js'
import { TreeEncoder } from './encode-tree.js'
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
 * @param {(tree: object) => (void|Promise<void>)} [o.afterScan] called between the scan and the
 *   first read, with the scanned tree (tests use it to change SRC at exactly that moment)
 */
export async function build (o) {
  const { src, out, key, onBad = 'fail', warn = () => {}, unsigned = false } = o
  const clock = phaseClock()
  const now = o.now ?? Date.now() // issued: when the build started
  const srcAbs = path.resolve(src)
  const outAbs = path.resolve(out)
  if (outAbs === srcAbs || outAbs.startsWith(srcAbs + path.sep)) throw new UsageError(`OUT (${out}) must not be inside SRC (${src})`)
  if (!unsigned && !key.secretKey) throw new UsageError('a secret key is needed to sign (or build with --unsigned)')

  const tree = await scan(src, { onBad, warn })
  clock.phase('scan')
  await o.afterScan?.(tree)
  await fs.mkdir(out, { recursive: true })
  // held to the end: it is also OUT's lock against a concurrent build, gc or resign
  const index = await BuildIndex.open(out, { rehash: o.rehash, racyMs: o.racyMs, warn })
  let pool = null
  let dirs = null
  try {
    const store = await new BlobStore(out, { fsync: o.fsync ?? true }).open()
    pool = new ChunkPool(store, { threads: o.threads ?? o.jobs ?? defaultThreads(), workersAfter: o.workersAfter })
    dirs = new SourceDirs(tree.root.abs, tree.root)
    clock.phase('open')

    const encoder = new TreeEncoder({
      index, store, pool, dirs, onBad, warn,
      progress: (done, files) => o.onProgress?.({ phase: 'build', done, total: tree.bytes, files })
    })
    const root = await encoder.encode(tree.root)
    await pool.close()
    await store.sync()
    clock.phase('tree')

    const published = await publishRoot({ ...o, now }, root)
    clock.phase('publish')
    // after the publish: a failure here costs only re-reading next time
    try { await index.commit() } catch (err) { warn(`build index not updated: ${err.message}`) }
    clock.phase('commit')
    return {
      root: root.dir.hash, rootSize: root.dir.size, seq: published.seq, publicKey: key.publicKey, expires: published.expires, unsigned,
      files: tree.files, dirs: tree.dirs, symlinks: tree.symlinks, bytes: tree.bytes, skipped: tree.skipped,
      blobs: store.stats, index: index.stats, pool: pool.stats, ...clock.result()
    }
  } finally {
    // a failed build: the workers stop at their next read, and no thread outlives the call
    try { await pool?.close() } finally {
      dirs?.close()
      await index.close()
    }
  }
}

/**
 * The last step: the root's fields, signed and published, or left unsigned.
 * FORMAT.md §6.2: sequence numbers strictly increase per publish; seconds
 * since 1970 keep them increasing even when OUT is rebuilt from scratch, and
 * history/ keeps a number from ever being reused (nextSeq).
 */
async function publishRoot ({ out, key, ttlMs, now, seq: forced, unsigned = false, fsync = true }, root) {
  const { seq: auto, last } = await nextSeq(out, now)
  const seq = forced ?? auto
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
  return { seq, expires: fields.expires }
}

// Wall and CPU (user + system) milliseconds per phase, for --json and bench/build.js.
function phaseClock () {
  const t0 = Date.now()
  const phases = {}; const phasesCpu = {}
  let tp = performance.now(); let cp = process.cpuUsage()
  return {
    phase (name) {
      const t = performance.now(); const c = process.cpuUsage()
      phases[name] = Math.round(t - tp); phasesCpu[name] = Math.round((c.user - cp.user + c.system - cp.system) / 1000)
      tp = t; cp = c
    },
    result: () => ({ ms: Date.now() - t0, phases, phasesCpu })
  }
}

export { BuildInputError, readPublished, publishFsinfo }

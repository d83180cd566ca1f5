// `rotree build SRC OUT`, in two steps:
//
//   walk     list SRC depth first through checked directory handles, read,
//            chunk and store the files that changed (on worker threads:
//            chunk-pool.js), encode each directory once its children are
//            done (walk.js); one streaming pass, memory bounded by the widest
//            directory rather than the tree
//   publish  sign the root and rename a new fsinfo.json into place
//            (lib/published/publish.js), or write OUT/unsigned.json for
//            `rotree sign` on another machine (sign.js); format version 2:
//            a release signed by the roles in force in OUT (release.js)
//
// `version` picks the format (docs/FORMAT.md §12 for 2: blobs compressed
// when it pays, refs with codec and decoded size, each file's SHA-256 in its
// entry); the walk, the pool's threads and the build index all build that
// one version.
//
// Until the rename the previous tree in OUT stays complete and servable:
// blobs are only ever added. A rebuild into the same OUT does only what
// changed (build-index.js), and its result is byte for byte what a clean
// build makes.
import fs from 'node:fs/promises'
import path from 'node:path'
import { BuildInputError, UsageError } from 'rotree-client/errors'
import { StatBlobStore } from '../lib/published/blob-store.js'
import { publishSeq, publishFsinfo, readPublished, readPublishedAny, writeUnsignedFile, removeUnsigned, UNSIGNED_FILE } from '../lib/published/publish.js'
import { ChunkPool, defaultThreads } from './chunk-pool.js'
import { BuildIndex } from './build-index.js'
import { TreeWalker } from './walk.js'
import { compileExcludes } from './exclude.js'
import { signFields, encodeUnsigned } from './sign-root.js'
import { publishBuilt, isUnsignedRelease } from './release.js'
import { decodeUnsigned } from './sign.js'
import { NAME_RE } from 'rotree-client/format'
import { peakRss } from '../lib/proc-stat.js'
import { readPrivate, writePrivate, newPrivate, addReaders } from './private-tree.js'
import { sealerOf } from './seal.js'

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
 * @param {number} [o.seq] force a sequence number (version 2: the release's and fsinfo.json's)
 * @param {boolean} [o.unsigned] write OUT/unsigned.json for an offline signature instead of publishing
 * @param {boolean} [o.rehash] read every file, ignoring the build index
 * @param {number} [o.racyMs] files changed this recently before being read are not recorded in the index
 * @param {(p: { phase: string, done: number, total: number, files: number }) => void} [o.onProgress]
 * @param {(msg: string) => void} [o.warn]
 * @param {(rel: string) => (void|Promise<void>)} [o.onListed] called after each directory is listed,
 *   before anything in it is opened (tests change SRC at exactly that moment)
 * @param {(f: { path: string, size: number, sha256: string }) => void} [o.onFile] called for every
 *   file of the tree with its whole-file SHA-256 (from the build index for files not read)
 * @param {number} [o.bigAt] files of at least this many bytes are chunked on several threads (big-file.js)
 * @param {number} [o.segment] in segments of this many bytes
 * @param {string[]} [o.exclude] entries of SRC to leave out, as .gitignore patterns (exclude.js)
 * @param {1|2} [o.version] the format version to build (docs/FORMAT.md §12 for 2): by default
 *   OUT's, and 2 for a new OUT
 * @param {string} [o.name=''] version 2: the tree's name (FORMAT.md §12.1), read at <url>#<key>:<name>
 * @param {boolean} [o.private] make a new OUT a private tree (FORMAT.md §12.8): every blob sealed, the
 *   root readable by `readers` only. An OUT that is private stays private without it.
 * @param {string[]} [o.readers] age recipients (age1…) to read the tree; on a private OUT, added to its readers
 */
export async function build (o) {
  const b = await Builder.open(o)
  try { return await b.run() } finally { await b.close() }
}

/**
 * A build that can run again (watch.js): OUT's lock, the build index and the
 * worker threads are held from open() to close(), and each run() publishes
 * a new root. A run is full (SRC walked whole, as `build` does) or partial
 * (only the directories named dirty, and their ancestors: walk.js).
 */
export class Builder {
  /** @param {object} o the options of build() */
  static async open (o) {
    const { src, out, key, unsigned = false, warn = () => {} } = o
    const srcAbs = path.resolve(src)
    const outAbs = path.resolve(out)
    if (outAbs === srcAbs || outAbs.startsWith(srcAbs + path.sep)) throw new UsageError(`OUT (${out}) must not be inside SRC (${src})`)
    if (!unsigned && !key.secretKey) throw new UsageError('a secret key is needed to sign (or build with --unsigned)')
    const published = await publishedVersion(out)
    // nothing published yet: the format of a root waiting in unsigned.json for `rotree sign` (a
    // rebuild before it is signed must not switch format under the signing machine), else 2
    const version = o.version ?? (o.name ? 2 : published ?? await pendingVersion(out) ?? 2)
    if (version !== 1 && version !== 2) throw new UsageError(`format version ${version}: expected 1 or 2`)
    // FORMAT.md §12.9: after version 2 a version-1 fsinfo.json is a rollback to every reader that saw it
    if (version === 1 && published === 2) throw new UsageError(`${out} publishes format version 2 (or has trust documents): a version-1 root would be refused by its readers as a rollback`)
    if (version !== 2 && o.name) throw new UsageError('a tree name needs format version 2')
    if (o.name && !NAME_RE.test(o.name)) throw new UsageError(`tree name ${JSON.stringify(o.name)}: 1-64 of a-z 0-9 . _ -, starting with a letter or digit`)
    const clock = phaseClock()
    await fs.mkdir(out, { recursive: true })
    const priv = await privateState(out, o, version, await readPublishedAny(out) !== null || await pendingVersion(out) !== null)
    // held to the end: it is also OUT's lock against a concurrent build, gc or resign
    // a full run lists every directory, so other patterns than the last build's need no new index:
    // what a file's record says stays true, and a directory is compared with its listing
    const exclude = compileExcludes(o.exclude)
    const index = await BuildIndex.open(out, { rehash: o.rehash, racyMs: o.racyMs, warn, version, sealed: priv !== null })
    try {
      // under OUT's lock: a new private tree's secret, or readers added, before anything is sealed
      if (priv?.changed) await writePrivate(out, priv.state, o.fsync ?? true)
      const store = new StatBlobStore(out, { fsync: o.fsync ?? true }).open()
      const secret = priv?.state.secret ?? null
      const pool = new ChunkPool(store, { threads: o.threads ?? o.jobs ?? defaultThreads(), workersAfter: o.workersAfter, bigAt: o.bigAt, segment: o.segment, version, secret })
      const b = new Builder(o, srcAbs, index, store, pool, clock, exclude)
      b.private = priv?.state ?? null
      return b
    } catch (err) {
      await index.close()
      throw err
    }
  }

  constructor (o, srcAbs, index, store, pool, clock, exclude = null) {
    Object.assign(this, { o, srcAbs, index, store, pool, clock, exclude })
  }

  /**
   * @param {{ dirty?: Set<string> | null, onDir?: (rel: string, abs: string, st: object) => void,
   *   onGone?: (rel: string) => void }} [r] dirty: a partial run (paths in the tree, '/' for SRC itself)
   * @returns {Promise<object>} what build() returns; `partial` when only some directories were looked at
   */
  async run ({ dirty = null, onDir, onGone } = {}) {
    const o = this.o
    const { src, out, key, onBad = 'fail', warn = () => {}, unsigned = false } = o
    const { index, store, pool } = this
    const clock = this.clock ?? phaseClock()
    this.clock = null
    const now = this.runs ? Date.now() : o.now ?? Date.now() // issued: when the build started
    this.runs = (this.runs ?? 0) + 1
    index.begin()
    store.stats = { written: 0, writtenBytes: 0, reused: 0, reusedBytes: 0 }
    // a killed writer's temporary files: only possible if h/ changed since the last build committed
    const swept = index.trusted ? 0 : store.sweep()
    // a partial run takes most of the tree from the index: only while the index vouches for h/
    if (dirty && !index.trusted) dirty = null
    clock.phase('open')

    const total = index.totals?.bytes ?? 0
    const walker = new TreeWalker({
      src, srcAbs: this.srcAbs, index, store, pool, onBad, warn, dirty, onDir, onGone, onListed: o.onListed, onFile: o.onFile, exclude: this.exclude, version: index.version, seal: pool.seal,
      progress: (() => {
        let done = 0; let files = 0
        const partial = new Map() // large file → its bytes counted before it was done (walk.js)
        // the total is the last full build's (0, unknown, once this one has passed it)
        return (bytes, n, rel) => {
          if (n === 0) partial.set(rel, (partial.get(rel) ?? 0) + bytes)
          else if (partial.has(rel)) { done -= partial.get(rel); partial.delete(rel) }
          done += bytes; files += n
          o.onProgress?.({ phase: 'build', done, total: total >= done ? total : 0, files })
        }
      })()
    })
    const root = await walker.run()
    await store.sync()
    clock.phase('tree')

    const published = await publishRoot({ ...o, now, version: index.version, private: this.private, reached: walker.reached }, root)
    clock.phase('publish')
    const t = walker.totals
    // after the publish: a failure here costs only re-reading next time
    try {
      await index.commit({ full: !dirty, gone: walker.gone, totals: dirty ? null : { files: t.files, bytes: t.bytes } })
    } catch (err) { warn(`build index not updated: ${err.message}`) }
    clock.phase('commit')
    return {
      version: index.version, name: published.name ?? o.name ?? '', address: published.address, releaseSeq: published.releaseSeq, trustSeq: published.trustSeq,
      root: root.dir.hash, rootSize: root.dir.size, rootStoredSize: root.dir.storedSize ?? root.dir.size, rootCodec: root.dir.codec ?? 'none',
      seq: published.seq, publicKey: key.publicKey, expires: published.expires, unsigned,
      ...(this.private ? { private: true, epoch: this.private.epoch, readers: this.private.readers.length } : {}),
      files: t.files, dirs: t.dirs, symlinks: t.symlinks, bytes: t.bytes, skipped: t.skipped, excluded: t.excluded, partial: !!dirty,
      blobs: { ...store.stats, swept }, index: { ...index.stats }, pool: { ...pool.stats }, memory: { busyDirs: walker.peakBusy, peakRss: peakRss() }, ...clock.result()
    }
  }

  async close () {
    // a failed build: the workers stop at their next read, and no thread outlives the call
    try { await this.pool.close() } finally { await this.index.close() }
  }
}

/**
 * The last step: the root's fields, signed and published, or left unsigned.
 * FORMAT.md §6.2: sequence numbers strictly increase per publish; seconds
 * since 1970 keep them increasing even when OUT is rebuilt from scratch, and
 * history/ keeps a number from ever being reused (publishSeq).
 */
async function publishRoot ({ out, key, timestampKeys, ttlMs, releaseTtlMs, now, seq: forced, unsigned = false, fsync = true, version = 1, name, url, private: priv = null, reached = null, witness = true }, root) {
  if (version === 2) {
    return publishBuilt(out, { rootRef: { ...root.dir, mtime: root.mtime }, key, timestampKeys, name, ttlMs, releaseTtlMs, now, seq: forced, fsync, unsigned, url, private: priv, reached, witness })
  }
  const seq = await publishSeq(out, now, forced)
  const fields = {
    key: key.publicKey, seq, issued: new Date(now).toISOString(), expires: new Date(now + ttlMs).toISOString(),
    root: root.dir.hash, rootSize: root.dir.size, rootMtime: root.mtime
  }
  if (unsigned) {
    await writeUnsignedFile(out, encodeUnsigned(fields), fsync)
  } else {
    await publishFsinfo(out, signFields(fields, key.secretKey), fsync, { keys: [key] })
    await removeUnsigned(out) // a pending offline-signed root is older than this one
  }
  return { seq, expires: fields.expires }
}

/**
 * OUT's private state for this build (builder/private-tree.js), or null for a
 * public tree. A private OUT stays private (its state says so); a new OUT
 * becomes private with `private`; an OUT that published, or has a release
 * pending, as a public tree does not (readers hold its public roots).
 * @returns {Promise<{ state: object, changed: boolean } | null>} changed: to be written before the build
 */
async function privateState (out, o, version, hasPublished) {
  const readers = o.readers ?? []
  const state = await readPrivate(out)
  if (state !== null) {
    if (version !== 2) throw new UsageError(`${out} is a private tree: format version 2 only`)
    return { state, changed: addReaders(state, readers).length > 0 }
  }
  if (!o.private) {
    if (readers.length) throw new UsageError('--reader is for a private tree (build it with --private into a new OUT)')
    const cur = await readPublishedAny(out)
    if (cur?.access) throw new UsageError(`${out} publishes a private tree, but its state (.rotree/private.json) is gone: without its secret and epoch key nothing can be published for its readers`)
    return null
  }
  if (version !== 2) throw new UsageError('a private tree needs format version 2')
  if (hasPublished) throw new UsageError(`${out} already holds a public tree, which its readers keep: build the private tree into a new OUT`)
  return { state: newPrivate(readers), changed: true }
}

/** Does OUT have trust documents, published or begun by rotree trust init (format 2 signed by roles)? */
export async function hasTrustDocuments (out) {
  const has = f => fs.access(path.join(out, f)).then(() => true, () => false)
  return await has(path.join('trust', '1.json')) || await has('publisher.json')
}

/** 2 when OUT has trust documents or publishes a version-2 fsinfo.json, else 1. */
// OUT's format: that of the fsinfo.json it publishes (2 once it has trust
// documents); null for a new OUT, which gets version 2
async function publishedVersion (out) {
  if (await hasTrustDocuments(out)) return 2
  return (await readPublishedAny(out))?.version ?? null
}

/** The format of OUT/unsigned.json: 2 for a release (release.js), 1 for a root (sign.js), else null. */
async function pendingVersion (out) {
  const bytes = await fs.readFile(path.join(out, UNSIGNED_FILE)).catch(() => null)
  if (bytes === null) return null
  if (isUnsignedRelease(bytes)) return 2
  try { decodeUnsigned(bytes); return 1 } catch { return null }
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

// `rotree get`: a verified copy of a file or a whole directory, confined to
// DEST whatever the tree holds. The publisher is trusted to have signed the
// tree, not to be kind to the reader's disk: a validly signed tree may hold
// any name and any symlink target the format allows (FORMAT.md §3, §4.6),
// directory pages referenced thousands of times, and files that claim
// petabytes (FORMAT.md §2: sizes up to 2^53 − 1). So:
//
// * Files. Each file is written to a temporary name, `.rotree-<24 hex>.tmp`,
//   random so that no tree entry can predict it, opened
//   O_CREAT|O_EXCL|O_NOFOLLOW (never an existing file, never through a
//   link), read in full through the verifying reader, and only then renamed
//   onto its name. A refused or failed file leaves nothing behind.
// * What may be replaced. A regular file may replace a regular file, and a
//   symlink a symlink (a second `get` into the same DEST updates it).
//   Anything else in the way is refused with ROTREE_BAD_PATH: a symlink or a
//   directory where a file goes (say, left there by an earlier run), a
//   non-directory where a directory goes, a directory or a file where a
//   symlink goes. So is a second entry of this run that lands on a local
//   name this run already wrote (two names one case-insensitive or
//   normalising file system folds into one).
// * Directories. Each is created with mkdir (never recursive) or, if it
//   exists, lstat'ed: a real directory is used, anything else is refused.
//   Files are written only into directories checked this way from DEST down,
//   and nothing this run does later replaces one of them (it never removes a
//   directory, and creates symlinks only after every file).
// * Symlinks are created last, in a second pass after every file is in
//   place. A target is kept only in a form that cannot leave the download:
//   relative, with all of its `..` components leading and no more of them
//   than the link's depth below DEST (so `../x` in `DEST/a/`, not `../../x`,
//   not `/etc`, and not `a/../..`: once `a -> .` exists, `a/..` is DEST's
//   parent, so resolving `..` lexically is not enough). Other targets are
//   refused (ROTREE_SYMLINK_LOOP, "leaves DEST"), or with `rewriteLinks` an
//   absolute target, which means the tree root (FORMAT.md §4.6), is rewritten
//   to the equivalent relative target when it names a path inside the
//   download, or with `skipUnsafeLinks` the link is skipped and reported.
// * Names. Decoders already refuse '/', NUL, '.', '..' and empty names
//   (FORMAT.md §3); they are checked again here, and on Windows so are '\',
//   ':', the other characters it forbids, trailing dots and spaces and device
//   names (CON, NUL, COM1…).
// * Streaming. The walk is depth first, at most MAX_DEPTH directories deep,
//   with at most `jobs` files in flight: nothing is held for the whole tree.
//   Each directory is listed twice (pages come from the verified-blob cache,
//   or are fetched again for very large directories): first to check its
//   names and links and to count, then to do the work. Counting uses the
//   entry counts that directory entries carry (verified when the directory
//   is listed), so a few pages referenced many times (thousands³ paths) are
//   refused by `maxEntries` while the first directories are counted, before
//   anything below them is written. A file larger than the free space or
//   the rest of `maxBytes` is refused before a byte of it is written; the
//   free space is checked with statfs before each file (every file of 1 MiB
//   or more, and after each 8 MiB of smaller ones), less what the files still
//   in flight have yet to write. The progress total grows as directories are
//   counted.
// * A sync. A regular file already at its name with the entry's size and
//   mtime is left as it is (its mode set right); with `checksum` its content
//   must also hash to the entry's verified chunk handles (chunk-check.js).
//   With `deleteExtra`, what a directory of DEST holds that the tree does
//   not is removed (get-prune.js), and an entry of another kind in the way
//   (a directory where a file goes, say) is removed instead of refused;
//   never DEST itself, never anything this run wrote.
// * Interruption. `signal` stops the run (AbortedError): with `resumeDir`, a
//   large file's temporary file stays, recorded in a state file outside
//   DEST, and the next run takes it up after hashing its prefix again
//   (get-resume.js); any other temporary file is removed. Nothing left
//   looks complete. Errors name the user's path, never a temporary name.
// * Not defended: another local process changing DEST while `get` runs.
//   Node has no openat/renameat, so the checks above are made by path; they
//   hold against anything the tree holds and anything an earlier run left.
//
// Exec bit and mtimes are kept; directory mtimes are set last, deepest first.
import fs from 'node:fs/promises'
import { constants } from 'node:fs'
import path from 'node:path'
import { randomBytes } from 'node:crypto'
import { BadPathError, SymlinkLoopError, TooLargeError, TruncatedError, AbortedError } from 'rotree-client/errors'
import { MAX_DEPTH } from 'rotree-client/internal'
import { fmtBytes } from './progress.js'
import { ResumeState, RESUME_MIN } from './get-resume.js'
import { verifiedPrefix, sameContent } from './chunk-check.js'
import { pruneDir } from './get-prune.js'
import { abortable, userError, msOf } from './get-util.js'

/** Default --max-entries: generous, finite. */
export const DEFAULT_MAX_ENTRIES = 10_000_000

const RECHECK_BYTES = 8 << 20 // statfs again after this many bytes of small files
const BIG_FILE = 1 << 20 // statfs before every file at least this large
const O_TEMP = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0)

/**
 * @param {import('rotree-client').Tree} tree
 * @param {string} src path in the tree (symlinks on the way are followed, inside the tree)
 * @param {string} dest local path
 * @param {object} [o]
 * @param {number} [o.jobs=8] files fetched in parallel
 * @param {(done: number, total: number) => void} [o.onProgress] total grows as directories are counted
 * @param {number} [o.maxEntries=DEFAULT_MAX_ENTRIES] entries (files, directories, symlinks) below src
 * @param {number} [o.maxBytes=Infinity] bytes of file content; the free space bounds it in any case
 * @param {boolean} [o.rewriteLinks] rewrite absolute targets inside the download to relative ones
 * @param {boolean} [o.skipUnsafeLinks] skip symlinks that would leave DEST instead of refusing the tree
 * @param {(where: string, target: string) => void} [o.onSkippedLink] told of each skipped symlink (raw text)
 * @param {boolean} [o.checksum] an existing file of the right size and mtime is kept only if its chunks hash right
 * @param {boolean} [o.deleteExtra] remove what DEST holds that the tree does not
 * @param {(where: string, isDir: boolean) => void} [o.onDeleted] told before each removal (raw text)
 * @param {AbortSignal} [o.signal] stops the run with ROTREE_ABORTED
 * @param {string|null} [o.resumeDir] where resume state lives (<state-dir>/get); null: none kept
 * @returns {Promise<{ files: number, dirs: number, symlinks: number, bytes: number, skippedLinks: number, unchanged: number, resumedBytes: number, deleted: number }>}
 *   errors carry messages with the tree's raw names: escape them for a terminal
 */
export async function getPath (tree, src, dest, o = {}) {
  return new Download(tree, dest, o).run(src)
}

class Download {
  constructor (tree, dest, {
    jobs = 8, onProgress = () => {}, maxEntries = DEFAULT_MAX_ENTRIES, maxBytes = Infinity,
    rewriteLinks = false, skipUnsafeLinks = false, onSkippedLink = () => {}, platform = process.platform,
    checksum = false, deleteExtra = false, onDeleted = () => {}, signal = null, resumeDir = null
  } = {}) {
    Object.assign(this, { tree, dest, jobs, onProgress, maxEntries, maxBytes, rewriteLinks, skipUnsafeLinks, onSkippedLink, checksum, deleteExtra, onDeleted, signal, resumeDir })
    this.win = platform === 'win32'
    this.abs = path.resolve(dest)
    this.counts = { files: 0, dirs: 0, symlinks: 0, bytes: 0, skippedLinks: 0, unchanged: 0, resumedBytes: 0, deleted: 0 }
    this.keptBytes = 0 // of files left as they were: progress, not verified bytes
    this.resume = null
    this.entries = 0 // entries below src known so far (directories announce their counts)
    this.total = 0 // bytes of every file counted so far: the progress total
    this.started = 0 // bytes of the files started
    // free space: at the last statfs, less what was written since and what files in flight have yet to write
    this.free = 0; this.bsize = 4096; this.writtenSince = 0; this.startedSince = 0; this.inflight = 0
    this.running = new Set()
    this.error = null
    this.serial = Promise.resolve() // check-then-rename, one at a time
    this.topParts = null // the download's canonical path in the tree, for rewriteLinks
  }

  async run (src) {
    const top = await this.tree.resolve(src)
    if (this.resumeDir !== null) {
      this.resume = await new ResumeState(this.resumeDir, this.abs, top.type === 'file' ? path.dirname(this.abs) : this.abs).load()
    }
    try {
      await this.walk(src, top)
    } catch (err) {
      await this.resume?.flush()
      if (this.signal?.aborted) {
        const kept = this.resume?.files.size ?? 0
        throw new AbortedError(`interrupted${kept ? `; ${kept} partial file(s) kept: run the same command again to resume` : ''}`, { cause: err })
      }
      throw err
    }
    // a whole run: partial files of earlier runs that nothing took up are stale
    await this.resume?.discardRest()
    return this.counts
  }

  checkAbort () {
    if (this.signal?.aborted) throw new AbortedError('interrupted')
  }

  progress () { this.onProgress(this.counts.bytes + this.keptBytes, this.total) }

  async walk (src, top) {
    if (top.type === 'file') {
      this.isSingle = true
      await this.single(top)
      return
    }
    if (this.rewriteLinks) this.topParts = await this.canonical(src)
    this.entries = top.size ?? (await this.tree.stat(src)).entries
    this.checkEntries()
    await fs.mkdir(path.dirname(this.abs), { recursive: true }) // DEST's parents are the user's to name
    await this.statfs(path.dirname(this.abs))
    const root = { abs: this.abs, label: '', depth: 0 }
    await this.tally(top, root) // before DEST is created: a refused tree leaves nothing
    Object.assign(root, await this.makeDir(null, this.abs, this.dest))
    this.counts.dirs++
    await this.files(top, root)
    await this.links(top, root)
  }

  /** A single file: DEST may be absent or a regular file (replaced); anything else is refused. */
  async single (top) {
    const st = await lstatOrNull(this.abs)
    if (st && !st.isFile()) throw new BadPathError(`${this.dest} exists and is ${kindOf(st)}, not a regular file: not replaced`, { details: { path: this.dest } })
    const dir = { abs: path.dirname(this.abs), label: '', depth: 0, fresh: false, placed: new Set() }
    await this.statfs(dir.abs)
    this.countFile(top, this.dest)
    await this.getFile(top, dir, path.basename(this.abs), this.dest, path.basename(this.abs))
  }

  // ---- pass 1: directories and files ---------------------------------------

  async files (top, root) {
    const stack = [{ dir: root, it: this.tree.entriesOf(top)[Symbol.asyncIterator]() }]
    try {
      while (stack.length && !this.error) {
        this.checkAbort()
        const f = stack.at(-1)
        const n = await f.it.next()
        if (n.done) { stack.pop(); continue }
        const e = n.value
        const where = join(f.dir.label, e.name)
        if (e.type === 'dir') {
          if (stack.length >= MAX_DEPTH) throw new BadPathError(`${where} is more than ${MAX_DEPTH} directories deep`, { details: { path: where } })
          const d = { abs: path.join(f.dir.abs, e.name), label: where, depth: f.dir.depth + 1 }
          await this.tally(asDir(e), d)
          Object.assign(d, await this.makeDir(f.dir, d.abs, where))
          this.counts.dirs++
          stack.push({ dir: d, it: this.tree.entriesOf(asDir(e))[Symbol.asyncIterator]() })
        } else if (e.type === 'file') {
          while (this.running.size >= this.jobs) await Promise.race(this.running)
          if (this.error) break
          const p = this.getFile(e, f.dir, e.name, where, where).catch(err => { this.error ??= err })
            .finally(() => this.running.delete(p))
          this.running.add(p)
        } // symlinks: pass 2
      }
    } catch (err) {
      this.error ??= err
    } finally {
      await Promise.all(this.running)
      for (const f of stack) await f.it.return?.().catch(() => {})
    }
    if (this.error) throw this.error
  }

  /** List a directory once before acting on it: its names, its links, its counts. */
  async tally (dirEntry, dir) {
    for await (const e of this.tree.entriesOf(dirEntry)) {
      this.checkAbort()
      const where = join(dir.label, e.name)
      this.checkName(e.name, where)
      if (e.type === 'dir') {
        this.entries += e.size
        this.checkEntries(where)
      } else if (e.type === 'file') {
        this.countFile(e, where)
      } else {
        this.linkTarget(e, dir, where) // refuses now, before any file of the directory is written
      }
    }
    this.progress()
  }

  checkEntries (where) {
    if (this.entries > this.maxEntries) {
      throw new TooLargeError(`the download holds more than ${this.maxEntries} entries${where === undefined ? '' : ` (counted up to ${where})`}; see --max-entries`, { details: { path: where } })
    }
  }

  countFile (e, where) {
    this.total += e.size
    if (this.total > this.maxBytes) {
      throw new TooLargeError(`the files counted so far, up to ${where}, hold ${fmtBytes(this.total)}, more than --max-bytes ${fmtBytes(this.maxBytes)}`, { details: { path: where } })
    }
    if (this.disk(e.size) > this.free) throw this.noSpace(e, where)
  }

  noSpace (e, where) {
    return new TooLargeError(`${where} is ${fmtBytes(e.size)}; ${fmtBytes(Math.max(0, this.available()))} free for it on the file system of ${this.dest}`, { details: { path: where } })
  }

  disk (size) { return Math.ceil(size / this.bsize) * this.bsize }

  available () { return this.free - this.writtenSince - this.inflight }

  async statfs (dir) {
    const s = await fs.statfs(dir)
    this.bsize = s.bsize || 4096
    this.free = s.bavail * s.bsize
    this.writtenSince = 0; this.startedSince = 0
  }

  /** Make the directory `abs` in `parent` (null for DEST itself), or use the real directory already there. */
  async makeDir (parent, abs, where, retry = true) {
    try {
      await fs.mkdir(abs) // never recursive: never through something this run did not check
      if (parent?.placed) parent.placed.add(key(await fs.lstat(abs, { bigint: true })))
      return { fresh: true, placed: null }
    } catch (err) {
      if (err.code !== 'EEXIST') throw err
    }
    const st = await fs.lstat(abs, { bigint: true })
    if (parent && (parent.fresh || parent.placed.has(key(st)))) throw collision(where)
    if (!st.isDirectory()) {
      // DEST itself is never removed; below it, --delete makes room
      if (!this.deleteExtra || !parent || !retry) throw obstacle(where, st, 'a directory')
      await this.remove(abs, st, where)
      return this.makeDir(parent, abs, where, false)
    }
    parent?.placed.add(key(st))
    return { fresh: false, placed: new Set() }
  }

  /** Remove what is in the way at `abs` (lstat'ed as `st`), without following it. */
  async remove (abs, st, where) {
    this.onDeleted(where, st.isDirectory())
    if (st.isDirectory()) await fs.rm(abs, { recursive: true }); else await fs.unlink(abs)
    this.counts.deleted++
  }

  /** The user's name for a file of the download (never a temporary name). */
  shown (where) { return this.isSingle ? this.dest : path.join(this.dest, where) }

  /**
   * Download file entry `e` to `name` in `dir`, unless the file there is
   * already it. `rel` is its path below the resume base (get-resume.js).
   */
  async getFile (e, dir, name, where, rel) {
    this.checkAbort()
    if (await this.keep(e, dir, name, where)) return
    if (this.started + e.size > this.maxBytes) throw new TooLargeError(`${where} is ${fmtBytes(e.size)}, more than what is left of --max-bytes`, { details: { path: where } })
    const mode = e.exec ? 0o755 : 0o644
    let tmp = null; let fh = null; let rec = null
    let written = 0 // verified bytes in the temporary file
    let left = 0 // of this file's reservation: what it has not written yet
    try {
      const old = await this.resume?.reopen(rel, dir.abs)
      if (old) {
        ({ tmp, fh, rec } = old)
        written = await verifiedPrefix(this.tree, e, fh, Math.min(old.size, rec.verified))
        await fh.truncate(written)
        this.counts.resumedBytes += written
        this.counts.bytes += written
      }
      const need = Math.max(0, this.disk(e.size) - this.disk(written))
      if (need >= BIG_FILE || this.startedSince + need >= RECHECK_BYTES) await this.statfs(dir.abs)
      if (need > this.available()) throw this.noSpace(e, where)
      this.started += e.size; this.startedSince += need; this.inflight += need; left = need
      if (!old) {
        for (let i = 0; !fh; i++) {
          const name = path.join(dir.abs, `.rotree-${randomBytes(12).toString('hex')}.tmp`)
          try { fh = await fs.open(name, O_TEMP, mode) } catch (err) { if (err.code !== 'EEXIST' || i > 3) throw userError(err, name, this.shown(where)); continue }
          tmp = name
        }
        if (this.resume && e.size >= RESUME_MIN) rec = this.resume.add(rel, path.basename(tmp), await fh.stat({ bigint: true }))
      }
      for await (const b of abortable(this.tree.readEntry(e, written), this.signal)) {
        for (let o = 0; o < b.length;) o += (await fh.write(b, o, b.length - o, written + o)).bytesWritten
        written += b.length
        const d = Math.min(left, b.length); left -= d; this.inflight -= d; this.writtenSince += d
        this.counts.bytes += b.length
        if (rec) this.resume.progress(rec, written)
        this.progress()
      }
      if (written !== e.size) throw new TruncatedError(`${where}: ${written} bytes read of ${e.size}`)
      await fh.chmod(mode) // exact mode whatever the umask
      await fh.utimes(fsTime(e), fsTime(e))
      const ino = dir.placed ? key(await fh.stat({ bigint: true })) : undefined
      await fh.close(); fh = null
      await this.placeFile(tmp, dir, name, ino, where)
      tmp = null
      if (rec) this.resume.drop(rel)
      this.counts.files++
    } catch (err) {
      throw userError(err, tmp, this.shown(where))
    } finally {
      this.inflight -= left
      await fh?.close().catch(() => {})
      if (tmp) {
        if (rec && this.signal?.aborted) {
          rec.verified = written // kept for the next run, which hashes it again
          this.resume.save()
        } else {
          await fs.unlink(tmp).catch(() => {})
          if (rec) this.resume.drop(rel)
        }
      }
    }
  }

  /**
   * The regular file at `name` in `dir` already is `e`: same size and mtime
   * (and with `checksum`, chunks that hash to e's handles). Then it is kept,
   * with its mode set right, and claimed like a file this run placed.
   */
  async keep (e, dir, name, where) {
    if (dir.fresh) return false // a directory this run made holds only what it wrote
    const local = path.join(dir.abs, name)
    const st = await lstatOrNull(local)
    if (!st?.isFile() || st.size !== BigInt(e.size) || msOf(st) !== BigInt(e.mtime)) return false
    let fh
    try { fh = await fs.open(local, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0)) } catch { return false }
    try {
      const now = await fh.stat({ bigint: true })
      if (key(now) !== key(st) || !now.isFile()) return false
      if (this.checksum && !(await sameContent(this.tree, e, fh, Number(now.size)))) return false
      await this.claim(dir, st, where)
      const mode = e.exec ? 0o755 : 0o644
      if ((Number(now.mode) & 0o7777) !== mode) await fh.chmod(mode)
    } finally { await fh.close() }
    this.counts.unchanged++
    this.keptBytes += e.size
    this.progress()
    return true
  }

  /** Claim an existing file for this run's entry `where`: a second entry on the same local file is a collision. */
  claim (dir, st, where) {
    const p = this.serial.then(() => {
      if (dir.placed.has(key(st))) throw collision(where)
      dir.placed.add(key(st))
    })
    this.serial = p.catch(() => {})
    return p
  }

  /** Rename a verified temporary file onto its name: only a regular file from before this run is replaced. */
  placeFile (tmp, dir, name, ino, where) {
    const p = this.serial.then(async () => {
      const dest = path.join(dir.abs, name)
      const st = await lstatOrNull(dest)
      if (st && (dir.fresh || dir.placed.has(key(st)))) throw collision(where)
      if (st && !st.isFile()) {
        if (!this.deleteExtra) throw obstacle(where, st, 'a file')
        await this.remove(dest, st, where)
      }
      await fs.rename(tmp, dest)
      dir.placed?.add(ino)
    })
    this.serial = p.catch(() => {})
    return p
  }

  // ---- pass 2: symlinks, then directory mtimes ------------------------------

  async links (top, root) {
    await this.prune(top, root)
    const stack = [{ dir: root, entry: top, it: this.tree.entriesOf(top)[Symbol.asyncIterator](), made: new Set() }]
    try {
      while (stack.length) {
        this.checkAbort()
        const f = stack.at(-1)
        const n = await f.it.next()
        if (n.done) {
          stack.pop()
          await fs.utimes(f.dir.abs, fsTime(f.entry), fsTime(f.entry)) // writing into a directory changed it
          continue
        }
        const e = n.value
        const where = join(f.dir.label, e.name)
        if (e.type === 'dir') {
          const dir = { abs: path.join(f.dir.abs, e.name), label: where, depth: f.dir.depth + 1 }
          await this.prune(asDir(e), dir)
          stack.push({ dir, entry: e, it: this.tree.entriesOf(asDir(e))[Symbol.asyncIterator](), made: new Set() })
        } else if (e.type === 'symlink') {
          await this.makeLink(e, f.dir, f.made, where)
        }
      }
    } finally {
      for (const f of stack) await f.it.return?.().catch(() => {})
    }
  }

  /** --delete: remove what the local directory holds that the tree's does not, before its links are made. */
  async prune (dirEntry, dir) {
    if (!this.deleteExtra) return
    this.counts.deleted += await pruneDir(this.tree.entriesOf(dirEntry), dir.abs, (name, isDir) => this.onDeleted(join(dir.label, name), isDir))
  }

  async makeLink (e, dir, made, where) {
    const target = this.linkTarget(e, dir, where)
    if (target === null) {
      this.counts.skippedLinks++
      this.onSkippedLink(where, e.target)
      return
    }
    const dest = path.join(dir.abs, e.name)
    const st = await lstatOrNull(dest)
    if (st) {
      if (!st.isSymbolicLink()) throw obstacle(where, st, 'a symlink')
      if (made.has(key(st))) throw collision(where)
      await fs.unlink(dest) // a symlink from before this run: removed, never followed
    }
    await fs.symlink(target, dest)
    made.add(key(await fs.lstat(dest, { bigint: true })))
    await fs.lutimes(dest, fsTime(e), fsTime(e)).catch(() => {}) // not every file system keeps symlink times
    this.counts.symlinks++
  }

  /**
   * The target to write for symlink `e` in `dir`: its own when it cannot leave
   * DEST, a rewritten one (rewriteLinks), null to skip it (skipUnsafeLinks);
   * otherwise ROTREE_SYMLINK_LOOP.
   */
  linkTarget (e, dir, where) {
    const t = e.target
    const parts = t.split('/').filter(c => c !== '' && c !== '.')
    let out = null
    if (this.win && /[\\:]/.test(t)) {
      out = null
    } else if (t.startsWith('/')) {
      // FORMAT.md §4.6: '/' is the tree root, never the reader's file system
      const tp = this.topParts
      if (this.rewriteLinks && tp && !parts.includes('..') && tp.every((c, i) => parts[i] === c)) {
        out = [...Array(dir.depth).fill('..'), ...parts.slice(tp.length)].join('/') || '.'
      }
    } else {
      let up = 0
      while (up < parts.length && parts[up] === '..') up++
      if (up <= dir.depth && !parts.slice(up).includes('..')) out = t
    }
    if (out !== null || this.skipUnsafeLinks) return out
    const how = t.startsWith('/') ? 'an absolute target' : 'a target that could lead out of DEST'
    throw new SymlinkLoopError(`symlink ${where} -> ${t} has ${how}; not written (--rewrite-links, --skip-unsafe-links)`, { details: { path: where, target: t } })
  }

  /** src's path in the tree when no component of it is a symlink, else null (absolute targets are then not rewritten). */
  async canonical (src) {
    const parts = []
    for (const c of src.split('/')) {
      if (c === '' || c === '.') continue
      if (c === '..') parts.pop(); else parts.push(c)
    }
    for (let i = 1; i <= parts.length; i++) {
      if ((await this.tree.lstat('/' + parts.slice(0, i).join('/'))).type === 'symlink') return null
    }
    return parts
  }

  checkName (name, where) {
    const bad = name === '' || name === '.' || name === '..' || name.includes('/') || name.includes('\0') ||
      (this.win && (/[\\:*?"<>|\x00-\x1f]/.test(name) || /[. ]$/.test(name) || /^(con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³])(\..*)?$/i.test(name)))
    if (bad) throw new BadPathError(`${where}: a name this file system cannot hold safely`, { details: { path: where } })
  }
}

/** A directory entry from a page, in the shape entriesOf() takes (its count checked against its pages). */
function asDir (e) { return { ...e, entries: e.size } }

function join (label, name) { return label ? label + '/' + name : name }

function key (st) { return `${st.dev}:${st.ino}` }

async function lstatOrNull (p) {
  try { return await fs.lstat(p, { bigint: true }) } catch (err) { if (err.code === 'ENOENT') return null; throw err }
}

function kindOf (st) {
  return st.isSymbolicLink() ? 'a symlink' : st.isDirectory() ? 'a directory' : st.isFile() ? 'a file' : 'a special file'
}

function obstacle (where, st, want) {
  return new BadPathError(`${where || '.'}: ${kindOf(st)} is where ${want} goes (left by an earlier run?); not replaced`, { details: { path: where } })
}

function collision (where) {
  return new BadPathError(`${where}: another entry of this tree was already written under the same local name (a file system that folds case or normalises names?)`, { details: { path: where } })
}

// Seconds for utimes, aimed at the middle of the millisecond: ms / 1000 can land
// a nanosecond below it after float rounding, and a rebuild from the copy
// (which floors to ms) would then see a different mtime and a different root.
function fsTime (e) { return (e.mtime + 0.5) / 1000 }

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
//   onto its name. A refused or failed file leaves nothing behind. In a
//   download of `writerFrom` entries or more (1,024), a directory the run
//   makes has its files written and renamed on a thread of their own
//   (get-writer.js): the same steps, every placement in that directory on
//   that one thread, so no other placement comes between a check and its
//   rename.
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
//   and holds nothing for the whole tree. At a distance every listing and
//   every file is a round trip, so the walk does not wait on them one at a
//   time: directory listings are asked for ahead of it, 128 at a time
//   in the order it will reach them (get-lister.js; the listings it has not
//   reached yet are bounded in memory), and files are fetched while it goes
//   on, as many as fit in a byte budget read from the tree's fetch scheduler
//   (get-budget.js; a file under 1 MiB is fetched whole before its temporary
//   file is opened, so waiting on the network holds no file open). Each
//   directory is checked and counted when the walk reaches it, before it is
//   made, exactly as when directories were listed one at a time: its names
//   and links, and the entry counts that its directory entries carry
//   (verified when it is listed), so a few pages referenced many times
//   (thousands³ paths) are refused by `maxEntries` while the first
//   directories are counted, before anything below them is written. A
//   directory of more than 16,384 entries is not held: it is streamed page
//   by page, once to check and count, once to do the work. A file larger
//   than the free space or the rest of `maxBytes` is refused before a byte
//   of it is written; the free space is checked with statfs before each file
//   (every file of 1 MiB or more, and after each 8 MiB of smaller ones), less
//   what the files still in flight have yet to write. The progress total
//   grows as directories are counted.
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
// Exec bit and mtimes are kept. A directory's mtime is set once everything
// in it is in place: during the walk for a directory without symlinks, after
// its symlinks for one with them (get-links.js).
import fs from 'node:fs/promises'
import fsSync, { constants } from 'node:fs'
import path from 'node:path'
import { setMaxListeners } from 'node:events'
import { BadPathError, SymlinkLoopError, TooLargeError, TruncatedError, AbortedError } from 'rotree-client/errors'
import { MAX_DEPTH } from 'rotree-client/format'
import { fmtBytes } from './progress.js'
import { ResumeState, RESUME_MIN } from './get-resume.js'
import { verifiedPrefix, sameContent } from './chunk-check.js'
import { abortable, userError, msOf, frame, join, key, lstatOrNull, lstatSyncOrNull, kindOf, obstacle, collision, fsTime, tempName, O_TEMP } from './get-util.js'
import { Lister, asDir } from './get-lister.js'
import { Budget } from './get-budget.js'
import { LinkPass } from './get-links.js'
import { FileWriter } from './get-writer.js'

/** Default --max-entries: generous, finite. */
export const DEFAULT_MAX_ENTRIES = 10_000_000

const RECHECK_BYTES = 8 << 20 // statfs again after this many bytes of small files
const BIG_FILE = 1 << 20 // statfs before every file at least this large
const MAX_FILES = 1024 // files in flight at most, whatever their size (the byte budget decides first)
const MIN_BUDGET = 32 << 20 // bytes of files in flight allowed before the scheduler has measured more
const NO_SCHED_BUDGET = 64 << 20 // a tree without a fetch scheduler
const BIG_DIR = 16384 // entries: a larger directory is streamed, not held
// entries counted before directories made from then on are written by a thread of their own: below
// this a thread costs more than it saves (`rotree get` on loopback: 1,000 files about even, 2,000
// files 1.32-1.49 s against 1.48-1.54 s, /usr/share/doc's 4,241 2.44-2.81 s against 2.85-3.07 s)
const WRITER_FROM = 1024

/**
 * @param {import('rotree-client').Tree} tree
 * @param {string} src path in the tree (symlinks on the way are followed, inside the tree)
 * @param {string} dest local path
 * @param {object} [o]
 * @param {number} [o.jobs] most files in flight (default: as many as the byte budget allows, up to 1,024)
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
 * @param {number} [o.writerFrom=1024] entries counted from which directories made are written on a thread of their own (get-writer.js); 0: always, Infinity: never
 * @returns {Promise<{ files: number, dirs: number, symlinks: number, bytes: number, skippedLinks: number, unchanged: number, resumedBytes: number, deleted: number }>}
 *   errors carry messages with the tree's raw names: escape them for a terminal
 */
export async function getPath (tree, src, dest, o = {}) {
  return new Download(tree, dest, o).run(src)
}

class Download {
  constructor (tree, dest, {
    jobs, onProgress = () => {}, maxEntries = DEFAULT_MAX_ENTRIES, maxBytes = Infinity,
    rewriteLinks = false, skipUnsafeLinks = false, onSkippedLink = () => {}, platform = process.platform,
    checksum = false, deleteExtra = false, onDeleted = () => {}, signal = null, resumeDir = null, writerFrom = WRITER_FROM
  } = {}) {
    Object.assign(this, { tree, dest, jobs: jobs ?? MAX_FILES, onProgress, maxEntries, maxBytes, rewriteLinks, skipUnsafeLinks, onSkippedLink, checksum, deleteExtra, onDeleted, signal, resumeDir, writerFrom })
    // every file in flight listens for the interruption (get-util.js abortable): up to `jobs` at once, not a leak
    if (signal) setMaxListeners(this.jobs + 16, signal)
    this.win = platform === 'win32'
    this.abs = path.resolve(dest)
    this.counts = { files: 0, dirs: 0, symlinks: 0, bytes: 0, skippedLinks: 0, unchanged: 0, resumedBytes: 0, deleted: 0 }
    this.keptBytes = 0 // of files left as they were: progress, not verified bytes
    this.resume = null
    this.entries = 0 // entries below src known so far (directories announce their counts)
    this.topCount = 0 // entries of src itself
    this.total = 0 // bytes of every file counted so far: the progress total
    this.started = 0 // bytes of the files started
    // free space: at the last statfs, less what was written since and what files in flight have yet to write
    this.free = 0; this.bsize = 4096; this.writtenSince = 0; this.startedSince = 0; this.inflight = 0
    this.statting = null // the statfs in flight
    this.running = new Set() // files in flight
    this.later = new Set() // directory mtimes being set
    this.budget = null
    this.error = null
    this.topParts = null // the download's canonical path in the tree, for rewriteLinks
    this.linkPass = new LinkPass(this)
    this.writer = null // get-writer.js, once the download is large enough to pay for a thread
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
    } finally {
      await this.writer?.close()
    }
    // a whole run: partial files of earlier runs that nothing took up are stale
    await this.resume?.discardRest()
    return this.counts
  }

  checkAbort () {
    if (this.signal?.aborted) throw new AbortedError('interrupted')
  }

  progress () { this.onProgress(this.counts.bytes + this.keptBytes, this.total) }

  /** The first failure stops the walk; files in flight finish or fail on their own. */
  fail (err) {
    this.error ??= err
    this.budget?.stop()
  }

  async walk (src, top) {
    if (top.type === 'file') {
      this.isSingle = true
      await this.single(top)
      return
    }
    if (this.rewriteLinks) this.topParts = await this.canonical(src)
    this.topCount = this.entries = top.size ?? (await this.tree.stat(src)).entries
    this.checkEntries()
    await fs.mkdir(path.dirname(this.abs), { recursive: true }) // DEST's parents are the user's to name
    await this.statfs(path.dirname(this.abs))
    const lister = this.lister()
    const root = Object.assign(lister.root(top, this.topCount), { abs: this.abs, label: '', mtime: top.mtime })
    try {
      const list = await lister.take(root)
      await this.tally(root, list) // before DEST is created: a refused tree leaves nothing
      Object.assign(root, await this.makeDir(null, this.abs, this.dest))
      this.counts.dirs++
      await this.files(lister, root, list)
    } finally { lister.close() }
    await this.linkPass.run(top, root)
  }

  lister () { return new Lister(this.tree, { bigDir: BIG_DIR, maxDepth: MAX_DEPTH - 1 }) }

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

  /** Bytes of files in flight allowed now: what the fetch scheduler reads ahead for one reader (sched.js). */
  budgetBytes () {
    const m = this.tree.mirrors
    if (typeof m?.readAheadBytes !== 'function') return NO_SCHED_BUDGET
    return Math.max(MIN_BUDGET, Math.min(m.maxInflightBytes ?? NO_SCHED_BUDGET, m.readAheadBytes()))
  }

  async files (lister, root, list) {
    const budget = this.budget = new Budget({ bytes: () => this.budgetBytes(), count: this.jobs })
    this.open(root, null)
    const stack = [frame(this.tree, root, list)]
    try {
      while (stack.length && !this.error) {
        this.checkAbort()
        const f = stack.at(-1)
        const e = await f.next()
        if (e === undefined) {
          stack.pop()
          await f.close()
          lister.release(f.dir)
          this.settle(f.dir)
          continue
        }
        const where = join(f.dir.label, e.name)
        if (e.type === 'dir') {
          if (stack.length >= MAX_DEPTH) throw new BadPathError(`${where} is more than ${MAX_DEPTH} directories deep`, { details: { path: where } })
          const d = Object.assign(lister.child(f.dir, f.sub++, asDir(e)), { abs: path.join(f.dir.abs, e.name), label: where, mtime: e.mtime })
          const sub = await lister.take(d)
          await this.tally(d, sub)
          Object.assign(d, await this.makeDir(f.dir, d.abs, where))
          this.counts.dirs++
          this.open(d, f.dir)
          stack.push(frame(this.tree, d, sub))
        } else if (e.type === 'file') {
          const charge = budget.charge(e.size)
          if (!budget.fits(charge)) await budget.room(charge)
          if (this.error) break
          budget.take(charge)
          const dir = f.dir
          dir.pending++
          const p = this.getFile(e, dir, e.name, where, where)
            .catch(err => this.fail(err))
            .finally(() => { budget.give(charge); this.running.delete(p); this.settle(dir) })
          this.running.add(p)
        } else {
          this.linkPass.add(f.dir, e)
        }
      }
    } catch (err) {
      this.fail(err)
    } finally {
      await Promise.all(this.running)
      await Promise.all(this.later)
      for (const f of stack) await f.close()
    }
    if (this.error) throw this.error
  }

  /** A directory the walk entered: done when the walk has left it and its files are in place. */
  open (d, parent) {
    d.pending = 1
    d.parent = parent
    if (parent) parent.pending++
  }

  /**
   * One thing in `d` is done. When all are, its mtime is set, unless its
   * symlinks (or --delete) are still to come: that pass sets it after them.
   */
  settle (d) {
    if (--d.pending > 0) return
    if (!this.error && !this.linkPass.defers(d)) {
      const p = fs.utimes(d.abs, fsTime(d), fsTime(d)).catch(err => this.fail(err)).finally(() => this.later.delete(p))
      this.later.add(p)
    }
    if (d.parent) this.settle(d.parent)
    d.parent = null
  }

  /**
   * Check a directory's listing before acting on it: its names, its links,
   * its counts. `list`: its entries, or null to stream them (a big directory).
   */
  async tally (dir, list) {
    for await (const e of list ?? this.tree.entriesOf(dir.entry)) {
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

  /**
   * Read the free space again. Files that find it due while a statfs is in
   * flight wait for that one: hundreds of small files in flight would
   * otherwise each ask for it at once (1,536 calls for /usr/share/doc).
   */
  statfs (dir) {
    this.statting ??= fs.statfs(dir).then(s => {
      this.bsize = s.bsize || 4096
      this.free = s.bavail * s.bsize
      this.writtenSince = 0; this.startedSince = 0
    }).finally(() => { this.statting = null })
    return this.statting
  }

  /** Make the directory `abs` in `parent` (null for DEST itself), or use the real directory already there. */
  async makeDir (parent, abs, where, retry = true) {
    // Synchronous on purpose: the walk waits on each directory it makes, and
    // an async mkdir waits its turn behind every file write, rename and
    // utimes already queued on libuv's threadpool. Measured on a `get` of
    // /usr/share/doc (873 directories) at RTT 50 ms: 0.8-0.95 s of the walk's
    // 3 s went to those waits; one mkdir itself takes ~45 us here.
    try {
      fsSync.mkdirSync(abs) // never recursive: never through something this run did not check
      if (parent?.placed) parent.placed.add(key(fsSync.lstatSync(abs, { bigint: true })))
      // every placement in a directory is made by one thread (get-writer.js): decided as it is made
      return { fresh: true, placed: null, writer: this.writerFor() }
    } catch (err) {
      if (err.code !== 'EEXIST') throw err
    }
    const st = fsSync.lstatSync(abs, { bigint: true })
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

  /** The file-writing thread for a directory made now: none for a small download (a thread costs more than it saves). */
  writerFor () {
    if (this.entries < this.writerFrom) return null
    this.writer ??= new FileWriter()
    return this.writer
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
   * A file too small to be resumed is fetched whole first (small()).
   */
  async getFile (e, dir, name, where, rel) {
    this.checkAbort()
    if (await this.keep(e, dir, name, where)) return
    if (this.started + e.size > this.maxBytes) throw new TooLargeError(`${where} is ${fmtBytes(e.size)}, more than what is left of --max-bytes`, { details: { path: where } })
    const mode = e.exec ? 0o755 : 0o644
    if (e.size < RESUME_MIN && !this.resume?.get(rel)) return this.small(e, dir, name, where, mode)
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
      left = await this.reserve(e, dir, where, Math.max(0, this.disk(e.size) - this.disk(written)))
      if (!old) {
        ({ tmp, fh } = await this.openTemp(dir, mode, where))
        if (this.resume && e.size >= RESUME_MIN) rec = this.resume.add(rel, path.basename(tmp), await fh.stat({ bigint: true }))
      }
      // lent: each piece's buffer takes a later chunk once the write returned (client-js/README.md)
      for await (const b of abortable(this.tree.readEntry(e, written, e.size, { lend: true }), this.signal)) {
        for (let o = 0; o < b.length;) o += (await fh.write(b, o, b.length - o, written + o)).bytesWritten
        this.tree.release(b)
        written += b.length
        left -= this.wrote(left, b.length)
        this.counts.bytes += b.length
        if (rec) this.resume.progress(rec, written)
        this.progress()
      }
      if (written !== e.size) throw new TruncatedError(`${where}: ${written} bytes read of ${e.size}`)
      await this.finish(fh, e, mode, dir, tmp, name, where)
      fh = null; tmp = null
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
   * A file under RESUME_MIN: its verified bytes are fetched whole (a
   * version-2 file's SHA-256 checked too), and only then is its temporary
   * file opened, written, closed and renamed, so a file waiting on the
   * network holds no file descriptor and a refused file leaves no trace.
   * Those steps are synchronous calls: for thousands of small files the
   * promise API's round trips cost more than the calls themselves (4,000
   * files of 2 KB: ~0.7 s and ~0.7 s of CPU through FileHandle, ~0.3 s and
   * ~0.3 s synchronously, on the project machine), and each blocks the
   * event loop only for the few system calls of one small file.
   */
  async small (e, dir, name, where, mode) {
    let left = 0
    const bufs = []
    try {
      left = await this.reserve(e, dir, where, this.disk(e.size))
      let n = 0
      // an inline file is in hand: nothing to wait for, nothing to abort; a
      // chunked one is lent (client-js/README.md), given back once written
      for await (const b of e.inline ? this.tree.readEntry(e) : abortable(this.tree.readEntry(e, 0, e.size, { lend: true }), this.signal)) { bufs.push(b); n += b.length }
      if (n !== e.size) throw new TruncatedError(`${where}: ${n} bytes read of ${e.size}`)
      this.checkAbort()
      if (dir.writer) await this.writeSmallThere(bufs, n, e, dir, name, mode, where)
      else await this.writeSmall(bufs, e, dir, name, mode, where)
      left -= this.wrote(left, n)
      this.counts.bytes += n
      this.counts.files++
      this.progress()
    } catch (err) {
      throw userError(err, null, this.shown(where))
    } finally {
      this.inflight -= left
      for (const b of bufs) this.tree.release(b) // not lent (inline): ignored
    }
  }

  /**
   * The whole of a small file, written under a temporary name and renamed
   * onto `name`. Creating the file is the one call that can be slow (ext4
   * takes ~0.3 ms per new inode for minutes after many files were deleted
   * nearby): it runs on the thread pool; the rest is synchronous.
   */
  async writeSmall (bufs, e, dir, name, mode, where) {
    let tmp = null; let fd = null
    try {
      for (let i = 0; fd === null; i++) {
        const t = path.join(dir.abs, tempName())
        try { fd = await openFd(t, O_TEMP, mode) } catch (err) { if (err.code !== 'EEXIST' || i > 3) throw userError(err, t, this.shown(where)) }
        if (fd !== null) tmp = t
      }
      writeAllSync(fd, bufs)
      fsSync.fchmodSync(fd, mode) // exact mode whatever the umask
      fsSync.futimesSync(fd, fsTime(e), fsTime(e))
      const ino = dir.placed ? key(fsSync.fstatSync(fd, { bigint: true })) : undefined
      fsSync.closeSync(fd); fd = null
      this.placeSync(tmp, dir, name, ino, where)
      tmp = null
    } catch (err) {
      throw userError(err, tmp, this.shown(where))
    } finally {
      if (fd !== null) try { fsSync.closeSync(fd) } catch {}
      if (tmp) try { fsSync.unlinkSync(tmp) } catch {}
    }
  }

  /** writeSmall() on the directory's file-writing thread. */
  async writeSmallThere (bufs, n, e, dir, name, mode, where) {
    let r
    try {
      r = await dir.writer.small(dir.abs, name, bufs, n, mode, fsTime(e))
    } catch (err) {
      const tmp = err.tmp ?? null
      delete err.tmp
      throw userError(err, tmp, this.shown(where))
    }
    if (r.collision) throw collision(where)
  }

  /** Reserve `need` bytes of disk for file `e` (statfs first when due): what the file must give back. */
  async reserve (e, dir, where, need) {
    if (need >= BIG_FILE || this.startedSince + need >= RECHECK_BYTES) await this.statfs(dir.abs)
    if (need > this.available()) throw this.noSpace(e, where)
    this.started += e.size; this.startedSince += need; this.inflight += need
    return need
  }

  /** `n` bytes written against a reservation with `left` bytes in it: how much of it they used. */
  wrote (left, n) {
    const d = Math.min(left, n)
    this.inflight -= d; this.writtenSince += d
    return d
  }

  /** A new temporary file in `dir`: a random name, O_EXCL|O_NOFOLLOW. */
  async openTemp (dir, mode, where) {
    for (let i = 0; ; i++) {
      const name = path.join(dir.abs, tempName())
      try { return { tmp: name, fh: await fs.open(name, O_TEMP, mode) } } catch (err) {
        if (err.code !== 'EEXIST' || i > 3) throw userError(err, name, this.shown(where))
      }
    }
  }

  /** Mode and mtime on the complete temporary file, closed, then renamed onto its name. */
  async finish (fh, e, mode, dir, tmp, name, where) {
    let ino
    try {
      await fh.chmod(mode) // exact mode whatever the umask
      await fh.utimes(fsTime(e), fsTime(e))
      if (dir.placed) ino = key(await fh.stat({ bigint: true }))
    } finally { await fh.close() }
    if (!dir.writer) return this.placeSync(tmp, dir, name, ino, where)
    if ((await dir.writer.place(tmp, path.join(dir.abs, name))).collision) throw collision(where)
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
      this.claimKey(dir, key(st), where)
      const mode = e.exec ? 0o755 : 0o644
      if ((Number(now.mode) & 0o7777) !== mode) await fh.chmod(mode)
    } finally { await fh.close() }
    this.counts.unchanged++
    this.keptBytes += e.size
    this.progress()
    return true
  }

  /**
   * Claim an existing file for this run's entry `where`: a second entry on
   * the same local file is a collision. Synchronous, as is placeSync(): a
   * check and what it allows happen with no other file's check between them.
   */
  claimKey (dir, k, where) {
    if (dir.placed.has(k)) throw collision(where)
    dir.placed.add(k)
  }

  /**
   * Rename a verified temporary file onto its name: only a regular file from
   * before this run is replaced (with --delete, anything else of before this
   * run is removed first: rare, so removed synchronously too).
   */
  placeSync (tmp, dir, name, ino, where) {
    const dest = path.join(dir.abs, name)
    const st = lstatSyncOrNull(dest)
    if (st && (dir.fresh || dir.placed.has(key(st)))) throw collision(where)
    if (st && !st.isFile()) {
      if (!this.deleteExtra) throw obstacle(where, st, 'a file')
      this.onDeleted(where, st.isDirectory())
      fsSync.rmSync(dest, { recursive: st.isDirectory() }) // never follows a link: removes it
      this.counts.deleted++
    }
    fsSync.renameSync(tmp, dest)
    dir.placed?.add(ino)
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

/**
 * Every byte of `bufs` (a file's verified pieces, in order) to `fd` from
 * offset 0, with writev: the pieces go to the kernel as they are, not
 * joined into one buffer first (for the small files of a `get`, joining was
 * ~4% of its CPU). A short write goes on from where it stopped.
 * @param {number} fd @param {Uint8Array[]} bufs
 */
function writeAllSync (fd, bufs) {
  let pos = 0
  let i = 0; let done = 0 // bufs[i] is the first piece not wholly written; `done` bytes of it were
  while (i < bufs.length) {
    const batch = bufs.slice(i, i + IOV_BATCH)
    batch[0] = batch[0].subarray(done)
    const n = fsSync.writevSync(fd, batch, pos)
    if (n === 0 && batch.some(b => b.length > 0)) throw new Error('writev wrote nothing')
    pos += n
    let left = done + n
    while (i < bufs.length && left >= bufs[i].length) left -= bufs[i++].length
    done = left
  }
  return pos
}
const IOV_BATCH = 512 // under IOV_MAX (1024 on Linux)

/** open(2) on the thread pool, as a plain descriptor (no FileHandle to create and track). */
function openFd (p, flags, mode) {
  return new Promise((resolve, reject) => fsSync.open(p, flags, mode, (err, fd) => err ? reject(err) : resolve(fd)))
}

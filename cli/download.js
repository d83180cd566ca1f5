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
//   parent, so resolving `..` lexically is not enough). With `rewriteLinks`
//   an absolute target, which means the tree root (FORMAT.md §4.6), is
//   rewritten to the equivalent relative target when it names a path inside
//   the download. Any other target (one elsewhere in the tree, as a subtree's
//   link to a sibling, or absolute) is refused with ROTREE_BAD_PATH, before
//   its directory is made, or with `skipUnsafeLinks` (the CLI's default;
//   --strict-links refuses) the link is not written and is reported. Nothing
//   loops there: ROTREE_SYMLINK_LOOP stays what resolving a path meets.
// * Names. Decoders already refuse '/', NUL, '.', '..' and empty names
//   (FORMAT.md §3); they are checked again here, and on Windows so are '\',
//   ':', the other characters it forbids, trailing dots and spaces and device
//   names (CON, NUL, COM1…).
// * Streaming. The walk is depth first, at most MAX_DEPTH directories deep,
//   and holds nothing for the whole tree. At a distance every listing and
//   every file is a round trip, so the walk does not wait on them one at a
//   time: directory listings are asked for ahead of it, 128 at a time
//   in the order it will reach them (client-js walkAhead, get-dirs.js; the
//   listings it has not reached yet are bounded in memory), and files are
//   fetched while it goes on, as many as fit in a byte budget read from the
//   tree's fetch scheduler (client-js readAheadGate; a file under 1 MiB is
//   fetched whole before its temporary file is opened, so waiting on the
//   network holds no file open, get-files.js). Each
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
//   never DEST itself, never anything this run wrote. (`get --delete
//   --dry-run` does not come here: get-dry-run.js lists what would go.)
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
//
// Who does what: this file walks and tallies (the "Streaming" rules, first
// pass); get-names.js decides names and link targets, get-place.js where
// things go and what they may replace, get-quota.js maxEntries, maxBytes and
// the free space, get-files.js the files (get-writer.js its thread,
// get-resume.js a resume), get-links.js the second pass.
import fs from 'node:fs/promises'
import path from 'node:path'
import { setMaxListeners } from 'node:events'
import { BadPathError, AbortedError } from 'rotree-client/errors'
import { MAX_DEPTH } from 'rotree-client/format'
import { walkAhead, readAheadGate, GATE_COUNT } from 'rotree-client/tree'
import { ResumeState } from './get-resume.js'
import { join, lstatOrNull, kindOf, fsTime } from './get-util.js'
import { DirNode, dirsOf, WALK } from './get-dirs.js'
import { Names, canonical } from './get-names.js'
import { Quota } from './get-quota.js'
import { Placer } from './get-place.js'
import { FileSink } from './get-files.js'
import { LinkPass } from './get-links.js'

/** Default --max-entries: generous, finite. */
export const DEFAULT_MAX_ENTRIES = 10_000_000

// entries counted before directories made from then on are written by a thread
// of their own: below this a thread costs more than it saves (docs/BENCHMARKS.md P10)
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
  // one root for the whole download (docs/TRUST.md rule 6): src is resolved
  // once, and its count, and its canonical path for rewriteLinks
  // (get-names.js), are read under the same root
  const view = tree.snapshot()
  const top = await view.resolve(src)
  const topParts = o.rewriteLinks && top.type === 'dir' ? await canonical(view, src) : null
  return new Download(view, dest, o, topParts).run(top)
}

class Download {
  constructor (tree, dest, {
    jobs, onProgress = () => {}, maxEntries = DEFAULT_MAX_ENTRIES, maxBytes = Infinity,
    rewriteLinks = false, skipUnsafeLinks = false, onSkippedLink = () => {}, platform = process.platform,
    checksum = false, deleteExtra = false, onDeleted = () => {}, signal = null, resumeDir = null, writerFrom = WRITER_FROM
  } = {}, topParts = null) {
    this.tree = tree
    this.dest = dest
    this.abs = path.resolve(dest)
    this.jobs = jobs ?? GATE_COUNT
    this.onProgress = onProgress
    this.signal = signal
    this.resumeDir = resumeDir
    this.opts = { checksum, writerFrom }
    // every file in flight listens for the interruption (get-util.js abortable): up to `jobs` at once, not a leak
    if (signal) setMaxListeners(this.jobs + 16, signal)
    this.names = new Names({ win: platform === 'win32', rewriteLinks, skipUnsafeLinks, topParts })
    this.quota = new Quota({ maxEntries, maxBytes, dest })
    this.placer = new Placer({ deleteExtra, onDeleted, writerFor: () => this.sink.writerFor() })
    this.links = new LinkPass({ tree, names: this.names, deleteExtra, onSkippedLink, onDeleted, checkAbort: () => this.checkAbort() })
    this.sink = null // get-files.js, once the resume state is loaded
    this.single = false
    this.dirs = 0
    this.gate = null // files in flight (readAheadGate)
    this.running = new Set() // files in flight
    this.later = new Set() // directory mtimes being set
    this.error = null
  }

  async run (top) {
    this.single = top.type === 'file'
    const resume = this.resumeDir === null ? null : await new ResumeState(this.resumeDir, this.abs, this.single ? path.dirname(this.abs) : this.abs).load()
    this.sink = new FileSink({
      tree: this.tree, quota: this.quota, placer: this.placer, resume, signal: this.signal, ...this.opts,
      progress: () => this.progress(),
      shown: where => this.single ? this.dest : path.join(this.dest, where)
    })
    try {
      if (this.single) await this.file(top)
      else await this.walk(top)
    } catch (err) {
      await resume?.flush()
      if (this.signal?.aborted) {
        const kept = resume?.files.size ?? 0
        throw new AbortedError(`interrupted${kept ? `; ${kept} partial file(s) kept: run the same command again to resume` : ''}`, { cause: err })
      }
      throw err
    } finally {
      await this.sink.close()
    }
    // a whole run: partial files of earlier runs that nothing took up are stale
    await resume?.discardRest()
    const { sink, links } = this
    return {
      files: sink.files, dirs: this.dirs, symlinks: links.symlinks, bytes: sink.bytes, skippedLinks: links.skippedLinks,
      unchanged: sink.unchanged, resumedBytes: sink.resumedBytes, deleted: this.placer.deleted + links.deleted
    }
  }

  checkAbort () {
    if (this.signal?.aborted) throw new AbortedError('interrupted')
  }

  progress () { this.onProgress(this.sink.bytes + this.sink.keptBytes, this.quota.total) }

  /** The first failure stops the walk; files in flight finish or fail on their own. */
  fail (err) {
    this.error ??= err
    this.gate?.stop()
  }

  /** A single file: DEST may be absent or a regular file (replaced); anything else is refused. */
  async file (top) {
    const st = await lstatOrNull(this.abs)
    if (st && !st.isFile()) throw new BadPathError(`${this.dest} exists and is ${kindOf(st)}, not a regular file: not replaced`, { details: { path: this.dest } })
    const dir = new DirNode(null, { abs: path.dirname(this.abs), label: '' })
    dir.made({ fresh: false, placed: new Set() })
    await this.quota.statfs(dir.abs)
    this.quota.countFile(top, this.dest)
    const name = path.basename(this.abs)
    await this.sink.get(top, { dir, name, where: this.dest, rel: name })
  }

  // ---- pass 1: directories and files ---------------------------------------

  async walk (top) {
    // the tree root's entry carries no count (no parent page): its top page gives it, under the same pinned root
    const count = top.size ?? (await this.tree.stat('/')).entries
    this.quota.addEntries(count)
    await fs.mkdir(path.dirname(this.abs), { recursive: true }) // DEST's parents are the user's to name
    await this.quota.statfs(path.dirname(this.abs))
    const root = new DirNode(top, { count, abs: this.abs, label: '' })
    this.gate = readAheadGate(this.tree.mirrors, { count: this.jobs })
    try {
      await walkAhead(root, dirsOf(this.tree), {
        enter: (dir, list) => this.enter(dir, list),
        entry: (dir, e) => this.entry(dir, e),
        leave: dir => this.settle(dir)
      }, WALK)
    } catch (err) {
      this.fail(err)
    } finally {
      await Promise.all(this.running)
      await Promise.all(this.later)
    }
    if (this.error) throw this.error
    await this.links.run(root)
  }

  /**
   * The walk reaches directory `dir`: its listing is checked and counted
   * (DEST's before DEST is created: a refused tree leaves nothing), then the
   * directory is made.
   */
  async enter (dir, list) {
    await this.tally(dir, list)
    dir.made(await this.placer.makeDir(dir, dir.parent ? dir.label : this.dest))
    this.dirs++
    dir.hold()
    dir.parent?.hold()
  }

  /** One entry of the directory the walk is in; a subdirectory is entered next (enter). */
  async entry (dir, e) {
    if (this.error) throw this.error
    this.checkAbort()
    const where = join(dir.label, e.name)
    if (e.type === 'dir') {
      if (dir.depth + 1 >= MAX_DEPTH) throw new BadPathError(`${where} is more than ${MAX_DEPTH} directories deep`, { details: { path: where } })
    } else if (e.type === 'file') {
      const charge = this.gate.charge(e.size)
      await this.gate.enter(charge)
      if (this.error) throw this.error
      dir.hold()
      const p = this.sink.get(e, { dir, name: e.name, where, rel: where })
        .catch(err => this.fail(err))
        .finally(() => { this.gate.leave(charge); this.running.delete(p); this.settle(dir) })
      this.running.add(p)
    } else {
      this.links.add(dir, e)
    }
  }

  /**
   * One thing in `dir` is done. When all are, its mtime is set, unless its
   * symlinks (or --delete) are still to come: that pass sets it after them.
   */
  settle (dir) {
    if (!dir.done()) return
    if (!this.error && !this.links.defers(dir)) {
      const p = fs.utimes(dir.abs, fsTime(dir), fsTime(dir)).catch(err => this.fail(err)).finally(() => this.later.delete(p))
      this.later.add(p)
    }
    if (dir.parent) this.settle(dir.parent)
  }

  /**
   * Check a directory's listing before acting on it: its names, its links,
   * its counts. `list`: its entries, or null to stream them (a big directory).
   */
  async tally (dir, list) {
    for await (const e of list ?? this.tree.entriesOf(dir.entry)) {
      this.checkAbort()
      const where = join(dir.label, e.name)
      this.names.checkName(e.name, where)
      if (e.type === 'dir') this.quota.addEntries(e.size, where)
      else if (e.type === 'file') this.quota.countFile(e, where)
      else this.names.linkTarget(e, dir.depth, where) // refuses now, before any file of the directory is written
    }
    this.progress()
  }
}

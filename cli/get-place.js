// Where `rotree get` (cli/download.js) puts things, and what it may replace
// there: the "Directories" and "What may be replaced" rules of its header
// (docs/TRUST.md rule 8). A directory is made with mkdir, never recursive,
// or an existing real directory is used; a regular file replaces only a
// regular file from before this run; anything else in the way is refused,
// or with --delete removed (never DEST itself, never anything this run
// wrote); and a second entry of this run on a local name this run already
// wrote (a file system that folds case or normalises names) is a collision.
import fs from 'node:fs/promises'
import fsSync from 'node:fs'
import { key, lstatSyncOrNull, obstacle, collision } from './get-util.js'

export class Placer {
  /**
   * @param {object} o
   * @param {boolean} o.deleteExtra --delete: what is in the way is removed instead of refused
   * @param {(where: string, isDir: boolean) => void} o.onDeleted told before each removal
   * @param {() => object|null} o.writerFor the file-writing thread for a directory made now, if any (get-files.js)
   */
  constructor ({ deleteExtra, onDeleted, writerFor }) {
    this.deleteExtra = deleteExtra
    this.onDeleted = onDeleted
    this.writerFor = writerFor
    this.deleted = 0
  }

  /**
   * Make the directory of `dir` (a DirNode, get-dirs.js) in its parent (none
   * for DEST itself), or use the real directory already there; `where` names
   * it in errors. Resolves to what DirNode.made() takes.
   */
  async makeDir (dir, where, retry = true) {
    const { abs, parent } = dir
    // Synchronous on purpose: the walk waits on each directory it makes, and
    // an async mkdir waits its turn behind every file write, rename and
    // utimes already queued on libuv's threadpool (docs/BENCHMARKS.md P10).
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
      return this.makeDir(dir, where, false)
    }
    parent?.placed.add(key(st))
    return { fresh: false, placed: new Set() }
  }

  /** Remove what is in the way at `abs` (lstat'ed as `st`), without following it. */
  async remove (abs, st, where) {
    this.onDeleted(where, st.isDirectory())
    if (st.isDirectory()) await fs.rm(abs, { recursive: true }); else await fs.unlink(abs)
    this.deleted++
  }

  /**
   * Claim an existing file for this run's entry `where` in `dir`: a second
   * entry on the same local file (device:inode `k`) is a collision.
   * Synchronous, as is placeSync(): a check and what it allows happen with
   * no other file's check between them.
   */
  claim (dir, k, where) {
    if (dir.placed.has(k)) throw collision(where)
    dir.placed.add(k)
  }

  /**
   * Rename a verified temporary file onto `dest` in `dir`: only a regular
   * file from before this run is replaced (with --delete, anything else of
   * before this run is removed first: rare, so removed synchronously too).
   * `ino`: the temporary file's device:inode, claimed in a directory from before.
   * @param {string} tmp
   * @param {{ dir: import('./get-dirs.js').DirNode, dest: string, ino?: string, where: string }} to
   */
  placeSync (tmp, { dir, dest, ino, where }) {
    const st = lstatSyncOrNull(dest)
    if (st && (dir.fresh || dir.placed.has(key(st)))) throw collision(where)
    if (st && !st.isFile()) {
      if (!this.deleteExtra) throw obstacle(where, st, 'a file')
      this.onDeleted(where, st.isDirectory())
      fsSync.rmSync(dest, { recursive: st.isDirectory() }) // never follows a link: removes it
      this.deleted++
    }
    fsSync.renameSync(tmp, dest)
    dir.placed?.add(ino)
  }
}

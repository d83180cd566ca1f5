// The second pass of `rotree get` (cli/download.js): symlinks, made only once
// every file is in place, then the mtimes of the directories that hold them;
// with --delete, what each directory of DEST holds that the tree's does not
// is removed first (get-prune.js).
//
// The first pass records the symlinks it meets (name, target, mtime: not the
// pages they came in), so this pass does not list the tree again: at a
// distance a second listing of every directory would cost as many round
// trips as the first. With --delete every directory must be compared with
// its listing anyway, and past MAX_RECORDED symlinks the record would hold
// too much of the tree; then this pass walks the tree again, with listings
// asked for ahead as in the first (client-js walkAhead).
//
// Each target is checked again here (get-names.js linkTarget, docs/TRUST.md
// rule 8): relative, and never more `..` than the link's depth below DEST.
import fs from 'node:fs/promises'
import path from 'node:path'
import { walkAhead } from 'rotree-client/tree'
import { pruneDir } from './get-prune.js'
import { DirNode, dirsOf, WALK } from './get-dirs.js'
import { join, key, lstatOrNull, obstacle, collision, fsTime } from './get-util.js'

const MAX_RECORDED = 65536 // symlinks recorded by the first pass; more: the tree is walked again

export class LinkPass {
  /**
   * @param {object} o
   * @param {import('rotree-client').Tree} o.tree the tree the first pass read (walked again past MAX_RECORDED, or with --delete)
   * @param {import('./get-names.js').Names} o.names whose linkTarget() decides each target
   * @param {boolean} o.deleteExtra --delete: each directory is pruned (get-prune.js)
   * @param {(where: string, target: string) => void} o.onSkippedLink
   * @param {(where: string, isDir: boolean) => void} o.onDeleted
   * @param {() => void} o.checkAbort throws once the run is interrupted
   */
  constructor ({ tree, names, deleteExtra, onSkippedLink, onDeleted, checkAbort }) {
    Object.assign(this, { tree, names, deleteExtra, onSkippedLink, onDeleted, checkAbort })
    this.record = deleteExtra ? null : [] // directories with symlinks, in walk order: { abs, label, depth, mtime, links }
    this.recs = new WeakMap() // the first pass's DirNode → its record
    this.n = 0
    this.symlinks = 0; this.skippedLinks = 0; this.deleted = 0
  }

  /** Directory `dir` (a DirNode of the first pass) holds symlink `e`. */
  add (dir, e) {
    if (this.record === null) return
    let rec = this.recs.get(dir)
    if (rec === undefined) {
      rec = { abs: dir.abs, label: dir.label, depth: dir.depth, mtime: dir.mtime, links: [] }
      this.recs.set(dir, rec)
      this.record.push(rec)
    }
    rec.links.push({ name: e.name, target: e.target, mtime: e.mtime })
    if (++this.n > MAX_RECORDED) this.record = null
  }

  /** This pass sets the directory's mtime (after its links, or after pruning it). */
  defers (dir) { return this.record === null || this.recs.has(dir) }

  /** @param {DirNode} root the first pass's node of DEST */
  async run (root) {
    if (this.record === null) return this.walk(root)
    for (const dir of this.record) {
      this.checkAbort()
      const made = new Set()
      for (const l of dir.links) await this.makeLink(l, dir, made, join(dir.label, l.name))
      await fs.utimes(dir.abs, fsTime(dir), fsTime(dir)) // writing into a directory changed it
    }
  }

  /** Every directory again, depth first: prune (--delete), links, then its mtime once it is left. */
  async walk (root) {
    const made = new Map() // DirNode → device:inode of the links made in it
    await walkAhead(new DirNode(root.entry, { count: root.count, abs: root.abs, label: '' }), dirsOf(this.tree), {
      enter: async (dir, list) => {
        this.checkAbort()
        if (this.deleteExtra) {
          this.deleted += await pruneDir(list ?? this.tree.entriesOf(dir.entry), dir.abs, (name, isDir) => this.onDeleted(join(dir.label, name), isDir))
        }
        made.set(dir, new Set())
      },
      entry: (dir, e) => {
        this.checkAbort()
        if (e.type === 'symlink') return this.makeLink(e, dir, made.get(dir), join(dir.label, e.name))
      },
      leave: dir => {
        made.delete(dir)
        return fs.utimes(dir.abs, fsTime(dir), fsTime(dir))
      }
    }, WALK)
  }

  /** Symlink `e` ({ name, target, mtime }) in `dir` ({ abs, depth }). */
  async makeLink (e, dir, made, where) {
    const target = this.names.linkTarget(e, dir.depth, where)
    if (target === null) {
      this.skippedLinks++
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
    this.symlinks++
  }
}

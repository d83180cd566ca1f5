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
// asked for ahead as in the first (get-lister.js).
//
// Each target is checked again here (download.js linkTarget, docs/TRUST.md
// rule 8): relative, and never more `..` than the link's depth below DEST.
import fs from 'node:fs/promises'
import path from 'node:path'
import { pruneDir } from './get-prune.js'
import { asDir } from './get-lister.js'
import { frame, join, key, lstatOrNull, obstacle, collision, fsTime } from './get-util.js'

const MAX_RECORDED = 65536 // symlinks recorded by the first pass; more: the tree is walked again

export class LinkPass {
  /** @param {object} d the Download (download.js) */
  constructor (d) {
    this.d = d
    this.record = d.deleteExtra ? null : [] // directories with symlinks, in walk order
    this.n = 0
  }

  /** Directory node `dir` holds symlink `e` (pass 1). */
  add (dir, e) {
    if (this.record === null) return
    if (!dir.rec) {
      dir.rec = { abs: dir.abs, label: dir.label, depth: dir.depth, mtime: dir.mtime, links: [] }
      this.record.push(dir.rec)
    }
    dir.rec.links.push({ name: e.name, target: e.target, mtime: e.mtime })
    if (++this.n > MAX_RECORDED) this.record = null
  }

  /** This pass sets the directory's mtime (after its links, or after pruning it). */
  defers (dir) { return this.record === null || dir.rec !== undefined }

  async run (top, root) {
    if (this.record === null) return this.walk(top, root)
    for (const dir of this.record) {
      this.d.checkAbort()
      const made = new Set()
      for (const l of dir.links) await this.makeLink(l, dir, made, join(dir.label, l.name))
      await fs.utimes(dir.abs, fsTime(dir), fsTime(dir)) // writing into a directory changed it
    }
  }

  /** Every directory again, depth first: prune (--delete), links, then its mtime once it is left. */
  async walk (top, root) {
    const d = this.d
    const lister = d.lister()
    const stack = []
    const enter = async dir => {
      const list = await lister.take(dir)
      if (d.deleteExtra) {
        d.counts.deleted += await pruneDir(list ?? d.tree.entriesOf(dir.entry), dir.abs, (name, isDir) => d.onDeleted(join(dir.label, name), isDir))
      }
      stack.push(Object.assign(frame(d.tree, dir, list), { made: new Set() }))
    }
    try {
      await enter(Object.assign(lister.root(top, d.topCount), { abs: root.abs, label: '', mtime: top.mtime }))
      while (stack.length) {
        d.checkAbort()
        const f = stack.at(-1)
        const e = await f.next()
        if (e === undefined) {
          stack.pop()
          await f.close()
          lister.release(f.dir)
          await fs.utimes(f.dir.abs, fsTime(f.dir), fsTime(f.dir))
          continue
        }
        const where = join(f.dir.label, e.name)
        if (e.type === 'dir') {
          await enter(Object.assign(lister.child(f.dir, f.sub++, asDir(e)), { abs: path.join(f.dir.abs, e.name), label: where, mtime: e.mtime }))
        } else if (e.type === 'symlink') {
          await this.makeLink(e, f.dir, f.made, where)
        }
      }
    } finally {
      for (const f of stack) await f.close()
      lister.close()
    }
  }

  /** Symlink `e` ({ name, target, mtime }) in `dir` ({ abs, depth }). */
  async makeLink (e, dir, made, where) {
    const d = this.d
    const target = d.linkTarget(e, dir, where)
    if (target === null) {
      d.counts.skippedLinks++
      d.onSkippedLink(where, e.target)
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
    d.counts.symlinks++
  }
}

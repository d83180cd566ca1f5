// The directories of a `rotree get` (cli/download.js) as its walks meet them:
// nodes of the look-ahead walk (client-js walkAhead, treeDirs), one shape,
// made whole when the walk first needs them, for both passes (the files,
// then the links, get-links.js). The walk's bounds are here too, shared with
// `rotree ls -R`.
import path from 'node:path'
import { MAX_DEPTH } from 'rotree-client/format'
import { treeDirs } from 'rotree-client/tree'

/**
 * How `rotree get` and `ls -R` walk ahead: 128 listings at once (with 128
 * requests out, MANY_REQUESTS in common.js, a `get` of /usr/share/doc at RTT
 * 50 ms beat 48 listings and 64 requests, docs/BENCHMARKS.md P10; its
 * `ls -R` went from one listing per round trip to a few round trips in
 * all), never deeper than a path may go (FORMAT.md §4.6, MAX_DEPTH);
 * listings held within the engine's default bounds, and a directory of more
 * than 16,384 entries streamed, never held.
 */
export const WALK = Object.freeze({ breadth: 128, maxDepth: MAX_DEPTH - 1, bigNode: 16384 })

export class DirNode {
  /**
   * @param {object|null} entry its verified directory entry (null: a single file's directory, never listed)
   * @param {object} at
   * @param {number} [at.count] its entries, when known (its parent's page gave it; the root's top page)
   * @param {string} at.abs where it is in DEST (absolute)
   * @param {string} at.label its path below DEST, as errors show it ('' for DEST)
   * @param {number} [at.depth=0] directories above it, up to DEST
   * @param {DirNode|null} [at.parent=null]
   */
  constructor (entry, { count, abs, label, depth = 0, parent = null }) {
    this.entry = entry
    this.count = count
    this.abs = abs
    this.label = label
    this.depth = depth
    this.mtime = entry?.mtime
    this.parent = parent
    // what making it found (get-place.js makeDir), set by made()
    this.fresh = false // this run created it: it holds only what this run wrote
    this.placed = null // what this run placed in a directory from before (device:inode), to tell collisions
    this.writer = null // the file-writing thread every placement in it goes through (get-writer.js), if any
    this.pending = 0 // what in it is not done yet: the walk's stay, its files, its subdirectories
  }

  /** The node of subdirectory entry `e` (carrying its count, `entries`, to be checked against its pages). */
  child (e) {
    return new DirNode(e, { count: e.entries, abs: path.join(this.abs, e.name), label: this.label ? this.label + '/' + e.name : e.name, depth: this.depth + 1, parent: this })
  }

  /** What makeDir found or made. */
  made ({ fresh, placed, writer = null }) {
    this.fresh = fresh; this.placed = placed; this.writer = writer
  }

  /** One more thing in it to wait for. */
  hold () { this.pending++ }

  /** One thing in it is done: true when nothing is left (then its mtime may be set). */
  done () { return --this.pending === 0 }
}

/** The walk's source: `tree`'s directories as DirNodes. */
export function dirsOf (tree) { return treeDirs(tree, (parent, e) => parent.child(e)) }

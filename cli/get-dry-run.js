// `rotree get --delete --dry-run`: what --delete would remove from DEST,
// named and counted, with nothing written, removed or changed (not even DEST
// made). It compares each directory of the tree below PATH with the local
// directory at its place, as the real run's prune does (get-prune.js, the
// same decisions: names the tree does not have, and entries of another kind
// than the tree's), but only where that local directory is a real one
// reached from DEST through real directories: nothing is followed, so
// nothing outside DEST is read either (docs/TRUST.md rule 8). Files the run
// would fetch are not listed: the run itself keeps what is already right.
import fsSync from 'node:fs'
import path from 'node:path'
import { walkAhead, treeDirs } from 'rotree-client/tree'
import { DirNode, WALK } from './get-dirs.js'
import { pruneDir } from './get-prune.js'
import { join, lstatSyncOrNull, obstacle } from './get-util.js'

/**
 * @param {import('rotree-client').Tree} tree
 * @param {string} src path in the tree
 * @param {string} dest local path (as the user gave it: errors name it)
 * @param {(where: string, isDir: boolean) => void} onExtra each path --delete would remove, below DEST
 * @returns {Promise<number>} how many
 */
export async function extraPaths (tree, src, dest, onExtra) {
  const view = tree.snapshot() // one root for the whole listing (docs/TRUST.md rule 6)
  const top = await view.resolve(src)
  if (top.type !== 'dir') return 0 // one file: --delete removes nothing
  const abs = path.resolve(dest)
  const st = lstatSyncOrNull(abs)
  if (st === null) return 0 // nothing there yet
  if (!st.isDirectory()) throw obstacle(dest, st, 'a directory') // as the real run refuses it
  // a subdirectory is visited only if its place in DEST is a real directory (lstat: not through a link)
  const make = (parent, e) => {
    const child = parent.child(e)
    return lstatSyncOrNull(child.abs)?.isDirectory() ? child : null
  }
  let n = 0
  const root = new DirNode(top, { count: top.size ?? (await view.stat('/')).entries, abs, label: '' })
  await walkAhead(root, treeDirs(view, make), {
    enter: async (dir, list) => {
      n += await pruneDir(list ?? view.entriesOf(dir.entry), dir.abs, (name, isDir) => onExtra(join(dir.label, name), isDir), { dryRun: true })
    }
  }, WALK)
  return n
}

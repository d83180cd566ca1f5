// `rotree get --delete`: what a directory of DEST holds that the tree's
// directory no longer does is removed, so DEST becomes a copy of the tree.
// Only inside DEST (docs/TRUST.md rule 8): a directory is pruned only after
// the walk has checked it is a real directory below DEST, nothing is
// followed (an entry is lstat'ed; a directory is removed with everything in
// it, links removed as links), and DEST itself is never removed.
//
// A local name that is not the tree's may still be the tree's file: on a
// file system that folds case or normalises names, `README` and `readme`
// are one file. So an entry is kept when it is the same file (device and
// inode) as the local file of any tree entry in that directory.
import fs from 'node:fs/promises'
import path from 'node:path'

/**
 * @param {AsyncIterable<{ name: string, type: string }>} entries the tree directory's entries (verified)
 * @param {string} dirAbs the local directory (already checked: a real directory below DEST)
 * @param {(name: string, isDir: boolean) => void} onDelete told before each removal
 * @param {{ dryRun?: boolean }} [o] dryRun: tell of each entry, remove nothing (get --dry-run, get-dry-run.js)
 * @returns {Promise<number>} entries removed (or that would be)
 */
export async function pruneDir (entries, dirAbs, onDelete = () => {}, { dryRun = false } = {}) {
  const tree = new Map() // name → type
  for await (const e of entries) tree.set(e.name, e.type)
  const local = await fs.readdir(Buffer.from(dirAbs), { encoding: 'buffer' })
  const doubtful = []
  for (const raw of local) {
    const name = raw.toString('utf8')
    const exact = Buffer.from(name, 'utf8').equals(raw) // a name that is not UTF-8 is no tree's
    const full = Buffer.concat([Buffer.from(dirAbs + path.sep), raw])
    const st = await fs.lstat(full, { bigint: true }).catch(() => null)
    if (!st) continue
    const want = exact ? tree.get(name) : undefined
    if (want !== undefined && kind(st) === want) continue
    doubtful.push({ full, name, st })
  }
  if (doubtful.length === 0) return 0
  // the tree's own files under the names this file system gives them
  const keys = new Set()
  for (const [name, type] of tree) {
    const st = await fs.lstat(path.join(dirAbs, name), { bigint: true }).catch(() => null)
    if (st && kind(st) === type) keys.add(`${st.dev}:${st.ino}`)
  }
  let n = 0
  for (const { full, name, st } of doubtful) {
    if (keys.has(`${st.dev}:${st.ino}`)) continue
    onDelete(name, st.isDirectory())
    if (!dryRun) {
      if (st.isDirectory()) await fs.rm(full, { recursive: true })
      else await fs.unlink(full)
    }
    n++
  }
  return n
}

function kind (st) { return st.isDirectory() ? 'dir' : st.isSymbolicLink() ? 'symlink' : st.isFile() ? 'file' : 'special' }

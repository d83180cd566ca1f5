// A folder that only this process's user can write, for files opened by
// name (the gateway's disk cache). O_NOFOLLOW guards only the last component
// of a path, and O_EXCL only the file it creates: a user who can write a
// folder above it can still swap a folder for a link between any check and
// any use. So such a folder must be a real folder (not a link to one), ours,
// and writable by nobody else (docs/SECURITY.md, the local user).
import fs from 'node:fs/promises'
import { StateError } from 'rotree-client/errors'

/**
 * Why the folder lstat'ed as `st` is not one only this user can write, or
 * null when it is.
 * @param {import('node:fs').Stats} st from lstat, never stat: a link is the answer, not its target
 * @returns {string | null}
 */
export function whyNotPrivate (st) {
  if (st.isSymbolicLink()) return 'is a symlink'
  if (!st.isDirectory()) return 'is not a folder'
  const uid = process.getuid?.()
  if (uid === undefined) return null // Windows: no owner or mode bits here (its ACLs are not checked)
  if (st.uid !== uid) return `belongs to uid ${st.uid}, not to this process's user (uid ${uid})`
  if (st.mode & 0o022) return `is writable by ${st.mode & 0o002 ? 'every user' : 'its group'} (mode ${(st.mode & 0o777).toString(8)})`
  return null
}

/**
 * Make `dir` (mode 0700, and any missing folder above it), or check the one
 * there; a folder that is a symlink, belongs to another user, or is
 * group/other-writable is refused, never changed: the one who set it up
 * chooses.
 * @param {string} dir
 * @param {string} what what the folder is, for the message ('the blob cache')
 * @throws {StateError} naming the folder, what is wrong and what to do
 */
export async function ensurePrivateFolder (dir, what) {
  let st = await lstatOrNull(dir)
  if (st === null) {
    await fs.mkdir(dir, { recursive: true, mode: 0o700 })
    st = await fs.lstat(dir)
  }
  const why = whyNotPrivate(st)
  if (why === null) return
  const todo = st.isSymbolicLink()
    ? 'give the folder itself, not a link to it (whoever can change the link chooses where files are written)'
    : !st.isDirectory()
        ? 'give a folder'
        : st.uid !== process.getuid?.()
          ? `give a folder of this user's own, mode 700 (or chown it to uid ${process.getuid?.()})`
          : `another user could plant links or FIFOs in it; chmod 700 ${dir}`
  throw new StateError(`${what} ${dir} ${why}: ${todo} (docs/SECURITY.md)`)
}

async function lstatOrNull (p) {
  try { return await fs.lstat(p) } catch (err) { if (err.code === 'ENOENT') return null; throw err }
}

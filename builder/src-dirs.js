// Reading SRC without ever following a symlink on the way to a file.
//
// Between listing a directory and reading what it lists, a directory on the
// way can be renamed away and replaced by a symlink to anywhere (or by another
// directory moved in); opening "SRC/a/b/file" by its path would then follow it
// out of SRC, and the build would sign bytes the publisher never put there.
// O_NOFOLLOW guards only the last component. So every directory is opened
// once, relative to the handle of its parent, with O_DIRECTORY | O_NOFOLLOW,
// and its device and inode must be the ones the parent's listing recorded
// (an lstat taken when the parent was listed); it is listed, and its files
// opened, through that handle (chunk-file.js: O_NOFOLLOW, and a file must be
// a regular file, the inode the lstat saw when there was one). Node has no
// openat(), so "relative to a handle" is /proc/self/fd/<fd>/<name>: the kernel
// resolves the fd's magic link to the very directory the handle holds,
// whatever has been renamed since, and applies O_NOFOLLOW to <name> itself
// (by the process id rather than "self", the same for every thread of the
// process: one symlink fewer to resolve per open; docs/BENCHMARKS.md P6, notes).
//
// Without /proc (not Linux), each directory is opened by its full path and
// checked the same way, and a file's own device and inode are compared after
// it is opened when an lstat saw it: the bytes read are those of an inode
// that was in SRC, though an open may pass through a symlink swapped in
// between checks.
import { openSync, closeSync, fstatSync, lstatSync, statSync, readdirSync, readlinkSync, constants } from 'node:fs'
import { BuildInputError } from 'rotree-client/errors'

const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW
export const PROC_FD = `/proc/${process.pid}/fd/`

/**
 * An open, checked directory of SRC.
 * @typedef {{ fd: number, st: import('node:fs').Stats, abs: string, rel: string,
 *   at: string, prefix: string }} Handle
 *   at: the path that names the directory itself (/proc/self/fd/N, or abs);
 *   prefix: what its children's names are appended to, to open or stat them
 */

/** Open SRC itself. @returns {Handle & { viaProc: boolean }} */
export function openRoot (src, srcAbs) {
  // SRC itself may be a symlink to the directory to publish
  let st
  try { st = statSync(srcAbs) } catch (err) { throw new BuildInputError(`${src}: ${err.code}`, { cause: err }) }
  if (!st.isDirectory()) throw new BuildInputError(`${src} is not a directory`)
  let fd
  try { fd = openSync(srcAbs, constants.O_RDONLY | constants.O_DIRECTORY) } catch (err) {
    throw new BuildInputError(`${src}: cannot open (${err.code})`, { cause: err, details: { path: '/' } })
  }
  const fst = fstatSync(fd)
  if (fst.ino !== st.ino || fst.dev !== st.dev) { closeSync(fd); throw swapped('/', 'SRC was replaced while it was opened') }
  const viaProc = procWorks(fd, fst)
  return { fd, st: fst, abs: srcAbs, rel: '/', viaProc, ...paths(fd, srcAbs, viaProc) }
}

const paths = (fd, abs, viaProc) => viaProc ? { at: PROC_FD + fd, prefix: PROC_FD + fd + '/' } : { at: abs, prefix: abs + '/' }

/**
 * Open a subdirectory relative to its parent's handle, and check it is the
 * directory the parent's listing saw.
 * @param {Handle & { viaProc: boolean }} parent @param {string} name @param {string} rel
 * @param {{ dev: number, ino: number }} seen the lstat taken when the parent was listed
 * @returns {Handle}
 */
export function openChild (parent, name, rel, seen, viaProc) {
  const at = parent.prefix + name
  let fd
  try { fd = openSync(at, DIR_FLAGS) } catch (err) { throw swapped(rel, whatIs(at, err), err) }
  const st = fstatSync(fd)
  if (st.ino !== seen.ino || st.dev !== seen.dev) { closeSync(fd); throw swapped(rel, 'is another directory now') }
  const abs = parent.abs + '/' + name
  return { fd, st, abs, rel, ...paths(fd, abs, viaProc) }
}

/** A directory's names and their types (from readdir; lstat where the file system does not say). */
export function listDir (h) {
  return readdirSync(h.at, { withFileTypes: true })
}

/** The same names as bytes (only when some name did not decode as UTF-8). */
export function listDirBytes (h) {
  return readdirSync(h.at, { encoding: 'buffer' })
}

/** lstat a child through the handle. */
export function lstatChild (h, name) { return lstatSync(h.prefix + name) }

/** readlink a child through the handle, as bytes. */
export function readlinkChild (h, name) { return readlinkSync(h.prefix + name, { encoding: 'buffer' }) }

export function closeHandle (h) { try { closeSync(h.fd) } catch {} }

// why a directory could not be opened (O_DIRECTORY | O_NOFOLLOW gives ENOTDIR or ELOOP for a symlink)
function whatIs (at, err) {
  let st
  try { st = lstatSync(at) } catch { return `cannot open (${err.code})` }
  return st.isSymbolicLink() ? 'is a symlink now' : st.isDirectory() ? `cannot open (${err.code})` : 'is not a directory now'
}

export function swapped (rel, why, cause) {
  return new BuildInputError(`${rel}: directory changed since the scan (${why}); refusing to read through it`, { cause, details: { path: rel, changed: true } })
}

// /proc/self/fd/<fd>/. must be the directory the handle holds
function procWorks (fd, st) {
  let probe
  try { probe = openSync(PROC_FD + fd + '/.', constants.O_RDONLY | constants.O_DIRECTORY) } catch { return false }
  try { const p = fstatSync(probe); return p.ino === st.ino && p.dev === st.dev } finally { closeSync(probe) }
}

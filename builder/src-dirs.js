// Reading SRC without ever following a symlink on the way to a file.
//
// The scan lstat()s every entry, but a file is read later, by path: between
// the two, a directory on that path can be renamed away and replaced by a
// symlink to anywhere (or by another directory moved in), and opening
// "SRC/a/b/file" would then follow it out of SRC, and the build would sign
// bytes the publisher never put there. O_NOFOLLOW guards only the last
// component. So a directory whose files are read is first opened component
// by component from SRC, each with O_DIRECTORY | O_NOFOLLOW relative to the
// handle of its parent, and each handle's device and inode must be the ones
// the scan recorded; files are then opened relative to that handle (and
// chunk-file.js checks their device and inode too). Node has no openat(), so
// "relative to a handle" is /proc/self/fd/<fd>/<name>: the kernel resolves
// the fd's magic link to the very directory the handle holds, whatever has
// been renamed since, and applies O_NOFOLLOW to <name> itself.
//
// Without /proc (not Linux), each component is opened by its full path and
// checked the same way, and the file's own device and inode are compared
// after it is opened: the bytes read are still those of the inode the scan
// saw, though an open may pass through a symlink swapped in between checks.
import { openSync, closeSync, fstatSync, lstatSync, constants } from 'node:fs'
import { BuildInputError } from 'rotree-client/errors'

const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW
const PROC_FD = '/proc/self/fd/'

/** The scanned node's identity against an open handle's. */
const same = (st, node) => st.ino === node.st.ino && st.dev === node.st.dev

export class SourceDirs {
  /**
   * @param {string} srcAbs SRC, absolute (as the scan visited it)
   * @param {{ st: { dev: number, ino: number } }} root the scan's root node
   */
  constructor (srcAbs, root) {
    this.srcAbs = srcAbs
    let fd
    try { fd = openSync(srcAbs, constants.O_RDONLY | constants.O_DIRECTORY) } catch (err) {
      throw new BuildInputError(`${srcAbs}: cannot open (${err.code})`, { cause: err, details: { path: '/' } })
    }
    if (!same(fstatSync(fd), root)) {
      closeSync(fd)
      throw swapped('/', 'SRC was replaced since the scan')
    }
    this.rootFd = fd
    this.viaProc = procWorks(fd, root)
  }

  /**
   * Open the directory at the end of `chain` (the scan's nodes from the root
   * down to it), checking every component.
   * @param {{ name: string, rel: string, abs: string, st: object }[]} chain chain[0] is the root
   * @returns {{ fd: number | null, pathOf: (name: string, abs: string) => string, close: () => void }}
   *   pathOf: what to open for a child (a /proc path relative to the handle, or its absolute path)
   */
  open (chain) {
    let fd = this.rootFd
    try {
      for (let i = 1; i < chain.length; i++) {
        const node = chain[i]
        const at = this.viaProc ? PROC_FD + fd + '/' + node.name : node.abs
        let next
        try { next = openSync(at, DIR_FLAGS) } catch (err) { throw swapped(node.rel, whatIs(at, err), err) }
        if (fd !== this.rootFd) closeSync(fd)
        fd = next
        if (!same(fstatSync(fd), node)) throw swapped(node.rel, 'is another directory now')
      }
    } catch (err) {
      if (fd !== this.rootFd) closeSync(fd)
      throw err
    }
    const own = fd !== this.rootFd
    const viaProc = this.viaProc
    return {
      fd: viaProc ? fd : null,
      pathOf: (name, abs) => viaProc ? PROC_FD + fd + '/' + name : abs,
      close: () => { if (own) closeSync(fd) }
    }
  }

  close () { closeSync(this.rootFd) }
}

// why a directory could not be opened (O_DIRECTORY | O_NOFOLLOW gives ENOTDIR or ELOOP for a symlink)
function whatIs (at, err) {
  let st
  try { st = lstatSync(at) } catch { return `cannot open (${err.code})` }
  return st.isSymbolicLink() ? 'is a symlink now' : st.isDirectory() ? `cannot open (${err.code})` : 'is not a directory now'
}

function swapped (rel, why, cause) {
  return new BuildInputError(`${rel}: directory changed since the scan (${why}); refusing to read through it`, { cause, details: { path: rel, changed: true } })
}

// /proc/self/fd/<fd>/. must be the directory the handle holds
function procWorks (fd, root) {
  let probe
  try { probe = openSync(PROC_FD + fd + '/.', constants.O_RDONLY | constants.O_DIRECTORY) } catch { return false }
  try { return same(fstatSync(probe), root) } finally { closeSync(probe) }
}

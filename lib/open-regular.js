// Opening a file of a published folder that `rotree serve` hands out
// (h/<hex>, fsinfo.json, trust/<seq>.json, history/<seq>.json) or that a tool
// reads back from it (a blob pull or fsck already holds, fsinfo.json for
// serve's expiry warning). OUT may be a folder others can write (a copy made
// with `rsync -a`, a shared upload folder), and the server is not trusted to
// know better than readers what is in it (docs/SECURITY.md), but it must not
// hand out what is *not* in it: the builder writes regular files only, so
// anything else at one of these names is answered as if it were missing.
//
// O_NOFOLLOW: a symlink there would serve any file the server can read,
// outside OUT. O_NONBLOCK: a FIFO there must not hold the open (and a libuv
// thread) until someone writes to it; it has no effect on a regular file's
// reads. O_NOCTTY: a terminal is never made ours. The type is checked on the
// descriptor, so the bytes read are those of the file that was checked.

import { constants as C } from 'node:fs'
import { open } from 'node:fs/promises'

const FLAGS = C.O_RDONLY | C.O_NOFOLLOW | C.O_NONBLOCK | C.O_NOCTTY
// ELOOP: a symlink (O_NOFOLLOW); ENOTDIR: a folder on the way is not one;
// ENXIO: a socket; EISDIR where a folder cannot be opened for reading.
const MISSING = new Set(['ENOENT', 'ENOTDIR', 'ELOOP', 'ENXIO', 'EISDIR'])

/**
 * Open `path` for reading if it is a regular file (not through a symlink at
 * its last component, never blocking on a FIFO).
 * @param {string} path
 * @returns {Promise<{ fh: import('node:fs/promises').FileHandle, st: import('node:fs').Stats } | null>}
 *   null when there is no regular file there; other errors (EACCES, EMFILE…) are thrown
 */
export async function openRegular (path) {
  let fh
  try {
    fh = await open(path, FLAGS)
  } catch (err) {
    if (MISSING.has(err.code)) return null
    throw err
  }
  let st
  try {
    st = await fh.stat()
  } catch (err) {
    await fh.close()
    throw err
  }
  if (st.isFile()) return { fh, st }
  await fh.close()
  return null
}

/**
 * The bytes of the regular file at `path`, at most `cap` + 1 of them (a caller
 * that finds `cap` + 1 knows the file is too long), or null when there is no
 * regular file there (openRegular).
 * @param {string} path @param {number} cap
 * @returns {Promise<Uint8Array|null>}
 */
export async function readRegular (path, cap) {
  const opened = await openRegular(path)
  if (opened === null) return null
  const { fh, st } = opened
  try {
    const buf = Buffer.allocUnsafe(Math.min(cap, st.size) + 1)
    let n = 0
    for (;;) {
      const { bytesRead } = await fh.read(buf, n, buf.length - n, n)
      if (bytesRead === 0) break
      n += bytesRead
      if (n === buf.length) break
    }
    return new Uint8Array(buf.buffer, buf.byteOffset, n)
  } finally { await fh.close() }
}

// Small pieces of `rotree get` (cli/download.js) that are not its policy:
// stopping a read on Ctrl-C, telling errors with the user's path, reading
// mtimes the way the builder does (and setting them), writing a small file's
// pieces, and the refusals both passes raise.
import fs from 'node:fs/promises'
import fsSync, { lstatSync, constants } from 'node:fs'
import { randomBytes } from 'node:crypto'
import { AbortedError, BadPathError } from 'rotree-client/errors'

/** A bigint stat's mtime in whole milliseconds, floored (as the builder reads it). */
export function msOf (st) {
  const q = st.mtimeNs / 1000000n
  return st.mtimeNs < 0n && q * 1000000n !== st.mtimeNs ? q - 1n : q
}

/**
 * Verified bytes from `iterable`, until `signal` aborts: then AbortedError at
 * once, without waiting for a fetch in flight (the tree's close() ends it).
 */
export async function * abortable (iterable, signal) {
  if (!signal) { yield * iterable; return }
  const it = iterable[Symbol.asyncIterator]()
  let onAbort
  const aborted = new Promise((resolve, reject) => { onAbort = () => reject(new AbortedError('interrupted')) })
  aborted.catch(() => {})
  signal.addEventListener('abort', onAbort, { once: true })
  let pending = false
  try {
    while (true) {
      if (signal.aborted) throw new AbortedError('interrupted')
      pending = true
      const r = await Promise.race([it.next(), aborted])
      pending = false
      if (r.done) return
      yield r.value
    }
  } finally {
    signal.removeEventListener('abort', onAbort)
    const done = it.return?.()
    if (!pending) await done; else done?.catch(() => {}) // a next() still in flight: not waited for
  }
}

/** A system error about a temporary file, told with the user's path for it. */
export function userError (err, tmp, shown) {
  if (!(err instanceof Error) || err.code?.startsWith?.('ROTREE_')) return err
  let msg = tmp ? err.message.split(tmp).join(shown) : err.message
  if (err.path === tmp) err.path = shown
  if (err.dest === tmp) err.dest = shown
  if (!msg.includes(shown)) msg = `${shown}: ${msg}`
  err.message = msg
  return err
}

export function join (label, name) { return label ? label + '/' + name : name }

export function key (st) { return `${st.dev}:${st.ino}` }

export function lstatSyncOrNull (p) {
  try { return lstatSync(p, { bigint: true }) } catch (err) { if (err.code === 'ENOENT') return null; throw err }
}

let pool = Buffer.alloc(0); let at = 0

/** How a temporary file (tempName) is opened: never an existing file, never through a link. */
export const O_TEMP = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0)

/**
 * `.rotree-<24 hex>.tmp`: random, so no tree entry can predict it (the
 * random bytes are drawn 12 KiB at a time: one call per 1,024 names).
 */
export function tempName () {
  if (at + 12 > pool.length) { pool = randomBytes(12 << 10); at = 0 }
  at += 12
  return `.rotree-${pool.toString('hex', at - 12, at)}.tmp`
}

export async function lstatOrNull (p) {
  try { return await fs.lstat(p, { bigint: true }) } catch (err) { if (err.code === 'ENOENT') return null; throw err }
}

export function kindOf (st) {
  return st.isSymbolicLink() ? 'a symlink' : st.isDirectory() ? 'a directory' : st.isFile() ? 'a file' : 'a special file'
}

export function obstacle (where, st, want) {
  return new BadPathError(`${where || '.'}: ${kindOf(st)} is where ${want} goes (left by an earlier run?); not replaced`, { details: { path: where } })
}

export function collision (where) {
  return new BadPathError(`${where}: another entry of this tree was already written under the same local name (a file system that folds case or normalises names?)`, { details: { path: where } })
}

// Seconds for utimes, aimed at the middle of the millisecond: ms / 1000 can land
// a nanosecond below it after float rounding, and a rebuild from the copy
// (which floors to ms) would then see a different mtime and a different root.
export function fsTime (e) { return (e.mtime + 0.5) / 1000 }

/**
 * Every byte of `bufs` (a file's verified pieces, in order) to `fd` from
 * offset 0, with writev: the pieces go to the kernel as they are, not
 * joined into one buffer first (for the small files of a `get`, joining
 * cost a visible share of its CPU). A short write goes on from where it stopped.
 * @param {number} fd @param {Uint8Array[]} bufs
 */
export function writeAllSync (fd, bufs) {
  let pos = 0
  let i = 0; let done = 0 // bufs[i] is the first piece not wholly written; `done` bytes of it were
  while (i < bufs.length) {
    const batch = bufs.slice(i, i + IOV_BATCH)
    batch[0] = batch[0].subarray(done)
    const n = fsSync.writevSync(fd, batch, pos)
    if (n === 0 && batch.some(b => b.length > 0)) throw new Error('writev wrote nothing')
    pos += n
    let left = done + n
    while (i < bufs.length && left >= bufs[i].length) left -= bufs[i++].length
    done = left
  }
  return pos
}
const IOV_BATCH = 512 // under IOV_MAX (1024 on Linux)

/** open(2) on the thread pool, as a plain descriptor (no FileHandle to create and track). */
export function openFd (p, flags, mode) {
  return new Promise((resolve, reject) => fsSync.open(p, flags, mode, (err, fd) => err ? reject(err) : resolve(fd)))
}

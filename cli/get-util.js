// Small pieces of `rotree get` (cli/download.js) that are not its policy:
// stopping a read on Ctrl-C, telling errors with the user's path, reading
// mtimes the way the builder does (and setting them), the walk's place in a
// directory, and the refusals both passes raise.
import fs from 'node:fs/promises'
import { lstatSync, constants } from 'node:fs'
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

/**
 * The walk's place in one directory: its entries from the listing in hand,
 * or streamed from the tree (a big directory); `sub` counts its
 * subdirectories met so far (get-lister.js child()).
 */
export function frame (tree, dir, list) {
  if (list) {
    let i = 0
    return { dir, sub: 0, next: () => list[i++], close: async () => {} }
  }
  const it = tree.entriesOf(dir.entry)[Symbol.asyncIterator]()
  return {
    dir,
    sub: 0,
    next: async () => { const n = await it.next(); return n.done ? undefined : n.value },
    close: async () => { await it.return?.().catch(() => {}) }
  }
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

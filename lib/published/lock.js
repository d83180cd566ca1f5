// One writer per published folder. Everything that changes a folder's h/ or
// fsinfo.json takes this lock first: `rotree build`, `gc`, `sign --publish`,
// `resign` (the publisher's OUT) and `pull`, `pull --gc`, `fsck --repair-from`
// (a mirror's DIR). Two of them at once could delete a blob the other has just
// reused or fetched and is about to publish, or rename an older fsinfo.json
// over a newer one: a builder `gc` on a folder a `pull` is filling would
// delete an old blob the new root reaches again, since its mtime is old.
//
// The lock is a file, `.rotree-lock`, holding the owner's pid, the kernel's
// start time of that process (so a recycled pid is not taken for the owner)
// and what holds it. It is written under a private name and hard-linked into
// place, so it never exists without its contents (link, like O_EXCL, fails if
// the name exists). A process killed with SIGKILL cannot remove it; a lock
// whose owner is gone is stale and taken over, and the private files of dead
// owners are swept. "Gone" includes a zombie: a writer killed a moment ago
// whose parent has not reaped it yet still has its pid and start time in
// /proc, but is dead (state Z or X in /proc/<pid>/stat).
import fs from 'node:fs/promises'
import path from 'node:path'
import { LockedError } from 'rotree-client/errors'
import { procInfo, isDeadState } from '../proc-stat.js'
import { readRegular } from '../open-regular.js'

export const LOCK_NAME = '.rotree-lock'

/**
 * @param {string} dir the folder (must exist)
 * @param {string} what who takes it, for the message another process prints
 * @returns {Promise<{ release: () => Promise<void> }>}
 */
export async function lockDir (dir, what) {
  const file = path.join(dir, LOCK_NAME)
  await sweepPrivate(dir)
  const me = { pid: process.pid, start: procInfo(process.pid)?.start ?? null }
  for (let attempt = 0; attempt < 3; attempt++) {
    const tmp = `${file}.${process.pid}`
    await fs.writeFile(tmp, `${me.pid} ${me.start ?? '-'} ${what}\n`, { mode: 0o644 })
    try {
      await fs.link(tmp, file)
      await fs.rm(tmp, { force: true })
      return heldLock(file, me)
    } catch (err) {
      await fs.rm(tmp, { force: true })
      if (err.code !== 'EEXIST') throw err
    }
    const owner = await readOwner(file)
    if (owner && ownerAlive(owner)) { // our own pid too: another task of this process holds it
      throw new LockedError(`${dir} is locked by pid ${owner.pid} (${owner.what || 'rotree'}); if no such process is running, remove ${file}`, { details: { pid: owner.pid, holder: owner.what } })
    }
    // stale (its process is gone) or unreadable: take it over
    await fs.rm(file, { force: true })
  }
  throw new LockedError(`could not lock ${dir}: ${file} keeps reappearing`)
}

function heldLock (file, me) {
  let released = false
  return {
    async release () {
      if (released) return
      released = true
      // only our own lock: a stale-lock takeover elsewhere must not be undone
      const owner = await readOwner(file)
      if (owner?.pid === me.pid && owner.start === me.start) await fs.rm(file, { force: true })
    }
  }
}

/** Run fn while holding dir's lock. */
export async function withDirLock (dir, what, fn) {
  const lock = await lockDir(dir, what)
  try { return await fn() } finally { await lock.release() }
}

/**
 * Is this pid a running process? (EPERM: it exists but is another user's.)
 * A zombie is not: it has exited and only waits for its parent to reap it.
 */
export function pidAlive (pid) {
  if (!pid) return false
  try { process.kill(pid, 0) } catch (err) { if (err.code !== 'EPERM') return false }
  const info = procInfo(pid)
  return !(info && isDeadState(info.state))
}

// The private `.rotree-lock.<pid>` files of processes that died between
// writing one and linking it.
async function sweepPrivate (dir) {
  for (const n of await fs.readdir(dir)) {
    if (!n.startsWith(LOCK_NAME + '.')) continue
    const pid = Number(n.slice(LOCK_NAME.length + 1))
    if (Number.isInteger(pid) && pid !== process.pid && !pidAlive(pid)) await fs.rm(path.join(dir, n), { force: true })
  }
}

async function readOwner (file) {
  let text
  // a regular file only: a link or FIFO at the lock's name is nobody's lock (lib/open-regular.js)
  const bytes = await readRegular(file, 4096)
  if (bytes === null) return null
  text = Buffer.from(bytes).toString('utf8')
  // "<pid> <start time or -> <what>"; locks written before the start time was recorded: "<pid> <what>"
  const m = /^(\d+)(?: (\d+|-)(?= |$))? ?(.*)$/m.exec(text)
  if (!m) return { pid: 0, start: null, what: '' }
  return { pid: Number(m[1]), start: m[2] && m[2] !== '-' ? m[2] : null, what: m[3] }
}

function ownerAlive (owner) {
  if (!pidAlive(owner.pid)) return false
  // the pid is in use: by the owner, unless the process using it started at another time
  const now = procInfo(owner.pid)?.start ?? null
  return !(owner.start && now && owner.start !== now)
}

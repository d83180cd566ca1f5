// One writer per mirror folder. `pull` and `fsck --repair-from` add blobs and
// `pull --gc` deletes them; two of them at once could delete a blob the other
// just fetched and is about to publish, or rename an older fsinfo.json over a
// newer one. The lock is a file holding the owner's pid, created atomically.
// A process killed with SIGKILL cannot remove it, so a lock whose pid is no
// longer alive is stale and taken over.
import fs from 'node:fs/promises'
import path from 'node:path'
import { LockedError } from 'rotree-client/errors'

export const LOCK_NAME = '.rotree-lock'

/**
 * @param {string} dir the mirror folder (must exist)
 * @param {string} what who takes it, for the message another process prints
 * @returns {Promise<{ release: () => Promise<void> }>}
 */
export async function lockDir (dir, what) {
  const file = path.join(dir, LOCK_NAME)
  for (let attempt = 0; attempt < 3; attempt++) {
    // written under a private name and hard-linked into place, so the lock
    // never exists without its pid (link, like O_EXCL, fails if it exists)
    const tmp = `${file}.${process.pid}`
    await fs.writeFile(tmp, `${process.pid} ${what}\n`, { mode: 0o644 })
    try {
      await fs.link(tmp, file)
      await fs.rm(tmp, { force: true })
      let released = false
      return {
        async release () {
          if (released) return
          released = true
          // only our own lock: a stale-lock takeover elsewhere must not be undone
          const owner = await readOwner(file)
          if (owner?.pid === process.pid) await fs.rm(file, { force: true })
        }
      }
    } catch (err) {
      await fs.rm(tmp, { force: true })
      if (err.code !== 'EEXIST') throw err
    }
    const owner = await readOwner(file)
    if (owner && alive(owner.pid)) { // our own pid too: another task of this process holds it
      throw new LockedError(`${dir} is locked by pid ${owner.pid} (${owner.what || 'rotree'}); if no such process is running, remove ${file}`, { details: { pid: owner.pid } })
    }
    // stale (its process is gone) or unreadable: take it over
    await fs.rm(file, { force: true })
  }
  throw new LockedError(`could not lock ${dir}: ${file} keeps reappearing`)
}

async function readOwner (file) {
  let text
  try { text = await fs.readFile(file, 'utf8') } catch (err) { if (err.code === 'ENOENT') return null; throw err }
  const m = /^(\d+) ?(.*)$/m.exec(text)
  return m ? { pid: Number(m[1]), what: m[2] } : { pid: 0, what: '' }
}

function alive (pid) {
  if (!pid) return false
  try { process.kill(pid, 0); return true } catch (err) { return err.code === 'EPERM' }
}

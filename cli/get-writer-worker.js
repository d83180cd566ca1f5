// The thread behind get-writer.js (through lib/ring-worker.js): writes the
// small files of `rotree get` into directories the run made, and places its
// large files there, one job at a time, in the order they were sent. A job
// answers { collision: true } when something already had the name,
// { collision: false } when its file is in place, or throws (the error goes back as itself,
// lib/thread-error.js, with `tmp` naming the temporary file it was about).
import fs from 'node:fs'
import path from 'node:path'
import { tempName, O_TEMP } from './get-util.js'
import { answerJobs, writeSlotSync } from '../lib/ring-worker-thread.js'

answerJobs((job, bytes) => job.op === 'small' ? small(job, bytes) : place(job.tmp, job.dest))

/** A whole small file: `bytes` under a temporary name, mode and mtime set, renamed onto its name. */
function small ({ dir, name, mode, time }, bytes) {
  let tmp = null; let fd = null
  try {
    for (let i = 0; fd === null; i++) {
      tmp = path.join(dir, tempName())
      try { fd = fs.openSync(tmp, O_TEMP, mode) } catch (err) { tmp = null; if (err.code !== 'EEXIST' || i > 3) throw err }
    }
    writeSlotSync(fd, bytes)
    fs.fchmodSync(fd, mode) // exact mode whatever the umask
    fs.futimesSync(fd, time, time)
    fs.closeSync(fd); fd = null
    const r = place(tmp, path.join(dir, name))
    if (!r.collision) tmp = null // in place; after a collision `finally` removes it
    return r
  } catch (err) {
    if (tmp) err.tmp = tmp
    throw err
  } finally {
    if (fd !== null) try { fs.closeSync(fd) } catch {}
    if (tmp) try { fs.unlinkSync(tmp) } catch {}
  }
}

/**
 * A complete temporary file onto its name in a directory this run made:
 * anything already there came from this run (a second entry on one local
 * name), so it is a collision, never replaced. Check and rename happen with
 * no other placement between them: every placement in such a directory is
 * made on this thread, in turn.
 */
function place (tmp, dest) {
  try {
    fs.lstatSync(dest)
    return { collision: true }
  } catch (err) {
    if (err.code !== 'ENOENT') throw err
  }
  fs.renameSync(tmp, dest)
  return { collision: false }
}

// The thread behind disk-cache-writer.js (through lib/ring-worker.js):
// writes the disk cache's blob files, one after another, in the order they
// were sent. A job is { file } with the blob's bytes in the ring; it answers
// once the file is complete, or throws (the error goes back as itself,
// lib/thread-error.js: ROTREE_STATE for a folder that is not ours, a system
// error with its code). A file is written to a temporary name and renamed
// onto <hash> (disk-cache.js, the layout); a failed one leaves no temporary
// file behind.
import fs from 'node:fs'
import path from 'node:path'
import { randomBytes } from 'node:crypto'
import { answerJobs, writeSlotSync } from '../lib/ring-worker-thread.js'
import { whyNotPrivate } from '../lib/private-folder.js'
import { StateError } from 'rotree-client/errors'

// A new file, never an existing one and never through a link planted at its
// name: O_EXCL fails on any name already there, O_NOFOLLOW on a link (even a
// dangling one, whose target O_CREAT alone would create). docs/SECURITY.md,
// the local user.
const TEMP_FLAGS = fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | (fs.constants.O_NOFOLLOW ?? 0)

const made = new Set() // blobs/<xx> folders checked to be ours

answerJobs((job, bytes) => { write(job.file, bytes) })

/** `bytes` (a slot of the ring) as the file `file`, through a temporary file beside it. */
function write (file, bytes) {
  const dir = path.dirname(file)
  if (!made.has(dir)) { folder(dir); made.add(dir) }
  // random, so nobody can plant anything at the name beforehand; the cache's
  // start-up sweep deletes what a crash leaves (no record names it)
  const tmp = `${file}.${randomBytes(8).toString('hex')}.tmp`
  let fd = fs.openSync(tmp, TEMP_FLAGS, 0o600) // when this throws, nothing was made: nothing to remove
  try {
    writeSlotSync(fd, bytes)
    fs.closeSync(fd)
    fd = null
    // onto whatever is at <hash>, a planted link included: rename replaces
    // the name, it never opens or follows what was there
    fs.renameSync(tmp, file)
  } catch (err) {
    if (fd !== null) try { fs.closeSync(fd) } catch {}
    try { fs.rmSync(tmp, { force: true }) } catch {} // unlinks the name, never follows it
    throw err
  }
}

/** Make blobs/<xx> (mode 0700), or check the one there: a link or another's folder is not written into. */
function folder (dir) {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
  const why = whyNotPrivate(fs.lstatSync(dir))
  if (why !== null) throw new StateError(`the disk cache's folder ${dir} ${why}; not written into`)
}

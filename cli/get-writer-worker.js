// The thread behind get-writer.js: writes the small files of `rotree get`
// into directories the run made, and places its large files there, one
// operation at a time, in the order they were sent. Each message is a batch
// of files; the reply says, for each, that it is in place or why not.
import fs from 'node:fs'
import path from 'node:path'
import { parentPort, workerData } from 'node:worker_threads'
import { tempName, O_TEMP } from './get-util.js'
import { writeSlotSync } from '../lib/byte-ring.js'

const ring = new Uint8Array(workerData.ring)

parentPort.on('message', batch => {
  const replies = []
  for (const m of batch) {
    let reply
    try {
      reply = m.op === 'small' ? small(m) : place(m.tmp, m.dest)
    } catch (err) {
      reply = { error: { message: err.message, code: err.code, errno: err.errno, syscall: err.syscall, path: err.path, dest: err.dest, tmp: err.tmp } }
    }
    reply.id = m.id
    replies.push(reply)
  }
  parentPort.postMessage(replies)
})

/** A whole small file: bytes ring[off, off + len) under a temporary name, mode and mtime set, renamed onto its name. */
function small ({ dir, name, off, len, mode, time }) {
  let tmp = null; let fd = null
  try {
    for (let i = 0; fd === null; i++) {
      tmp = path.join(dir, tempName())
      try { fd = fs.openSync(tmp, O_TEMP, mode) } catch (err) { tmp = null; if (err.code !== 'EEXIST' || i > 3) throw err }
    }
    writeSlotSync(fd, ring, off, len)
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
  return {}
}

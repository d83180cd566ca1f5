// The thread behind disk-cache-writer.js: writes the disk cache's blob
// files, one after another, in the order they were sent. Each message is a
// batch; the reply says, for each blob, that its file is complete or why not.
// A file is written to <hash>.tmp and renamed onto <hash> (disk-cache.js,
// the layout); a failed one leaves no .tmp behind.
import fs from 'node:fs'
import path from 'node:path'
import { parentPort, workerData } from 'node:worker_threads'
import { writeSlotSync } from '../lib/byte-ring.js'

const ring = new Uint8Array(workerData.ring)
const made = new Set() // blobs/<xx> folders known to exist

parentPort.on('message', batch => {
  const replies = []
  for (const m of batch) {
    try {
      write(m)
      replies.push({ id: m.id })
    } catch (err) {
      replies.push({ id: m.id, error: { message: err.message, code: err.code } })
    }
  }
  parentPort.postMessage(replies)
})

/** ring[off, off + len) as the file `file`, through `file`.tmp. */
function write ({ file, off, len }) {
  const dir = path.dirname(file)
  if (!made.has(dir)) { fs.mkdirSync(dir, { recursive: true }); made.add(dir) }
  const tmp = file + '.tmp'
  let fd = null
  try {
    fd = fs.openSync(tmp, 'w')
    writeSlotSync(fd, ring, off, len)
    fs.closeSync(fd)
    fd = null
    fs.renameSync(tmp, file)
  } catch (err) {
    if (fd !== null) try { fs.closeSync(fd) } catch {}
    try { fs.rmSync(tmp, { force: true }) } catch {}
    throw err
  }
}

// Worker for scrub.js: hashes the files it is given, reading each (at most
// MAX_BLOB + 1 bytes) into one reused buffer. Only names and digests cross the
// thread boundary, never the bytes.
import { parentPort } from 'node:worker_threads'
import { openSync, readSync, fstatSync, closeSync } from 'node:fs'
import { createHash } from 'node:crypto'
import { MAX_BLOB } from 'rotree-client/format'

const buf = Buffer.allocUnsafe(MAX_BLOB + 1)

export function hashFile (file, into = buf) {
  let fd
  try { fd = openSync(file, 'r') } catch (err) { return { error: err.code ?? String(err) } }
  try {
    const size = fstatSync(fd).size
    let n = 0
    for (;;) {
      const r = readSync(fd, into, n, into.length - n, n)
      if (r === 0 || (n += r) === into.length) break
    }
    // a file past MAX_BLOB is no blob, whatever its name: its digest would mean nothing
    return { size, hash: n > MAX_BLOB ? null : createHash('sha256').update(into.subarray(0, n)).digest('hex') }
  } catch (err) {
    return { error: err.code ?? String(err) } // EIO: a latent sector error
  } finally { closeSync(fd) }
}

parentPort?.on('message', ({ id, files }) => {
  parentPort.postMessage({ id, results: files.map(f => hashFile(f)) })
})

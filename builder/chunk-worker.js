// A chunk worker of chunk-pool.js: reads, chunks, hashes and stores the files
// of each batch it is sent, and answers with one result per file, in order:
// the FileResult of chunkFileSync, { error } (encodeError: the pool rebuilds
// the same class), or { aborted } once the build has stopped.
//
//   in:  { id, files: [{ abs, rel, size, mtimeMs }] }
//   out: 'ready' once, then { id, results: [...] } per batch
import { parentPort, workerData } from 'node:worker_threads'
import { chunkFileSync, readBuffer, Aborted } from './chunk-file.js'
import { blobWriter } from '../lib/published/blob-store.js'
import { encodeError } from './chunk-pool.js'

const { dir, fsync, abort } = workerData
const flag = new Int32Array(abort)
const aborted = () => Atomics.load(flag, 0) !== 0
// this thread does not see the main thread's `have` set: it looks in h/ before writing
const store = blobWriter(dir, fsync)
const buf = readBuffer()

parentPort.on('message', ({ id, files }) => {
  const results = files.map(f => {
    if (aborted()) return { aborted: true }
    try {
      return chunkFileSync(f, store, buf, aborted)
    } catch (err) {
      return err instanceof Aborted ? { aborted: true } : { error: encodeError(err) }
    }
  })
  parentPort.postMessage({ id, results })
})
parentPort.postMessage('ready')

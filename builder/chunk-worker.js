// A chunk worker of chunk-pool.js. Two kinds of message:
//
//   { id, batch }  a batch of files (file-batch.js): stat, read, chunk, hash and
//                  store each; answers { id, data, errors } (data transferred)
//   { id, task }   a part of one large file (big-file.js): { type: 'cuts' | 'write' | 'whole', fd, ... };
//                  answers { id, value } or { id, error }
//
// and 'ready' once, at start. After the build has failed (the shared abort
// flag) every file still to do comes back ABORTED. Chunks are stored as the
// tree's format version (workerData.version) says: in version 2 they are
// compressed here, on this thread, beside the hashing.
import { parentPort, workerData } from 'node:worker_threads'
import { readBuffer } from './chunk-file.js'
import { runBatch } from './file-batch.js'
import { cutsFrom, hashChunks, hashWhole } from './big-file.js'
import { blobWriter } from '../lib/published/blob-store.js'
import { encodeError } from './chunk-pool.js'
import { sealerOf } from './seal.js'

const { dir, fsync, abort, bigAt, version, secret } = workerData
const seal = sealerOf(secret) // a private tree's chunks are sealed here too (FORMAT.md §12.8)
const flag = new Int32Array(abort)
const aborted = () => Atomics.load(flag, 0) !== 0
// this thread does not share the main thread's account of h/: it looks before writing
const store = blobWriter(dir, fsync)
const buf = readBuffer()

parentPort.on('message', ({ id, batch, task }) => {
  if (batch) {
    const { data, errors } = runBatch(batch, store, buf, aborted, bigAt, encodeError, version, seal)
    parentPort.postMessage({ id, data, errors }, [data])
    return
  }
  try {
    let value
    if (task.type === 'cuts') value = cutsFrom(task.fd, task.from, task.to, task.size, buf, task.rel, aborted)
    else if (task.type === 'write') value = hashChunks(task.fd, task.pairs, store, buf, task.rel, aborted, version, seal)
    else value = hashWhole(task.fd, task.size, buf, task.rel, aborted)
    parentPort.postMessage(value === null ? { id, aborted: true } : { id, value })
  } catch (err) {
    parentPort.postMessage({ id, error: encodeError(err) })
  }
})
parentPort.postMessage('ready')

// Re-hash every file in DIR/h (disks fail silently, so a blob is
// good only if its bytes still hash to its name). SHA-256 in node:crypto runs
// on the calling thread (docs/BENCHMARKS.md P7, notes), so files go to worker
// threads only when there are many of them and a core to spare (see defaultJobs).
import fs from 'node:fs/promises'
import path from 'node:path'
import os from 'node:os'
import { Worker } from 'node:worker_threads'
import { HEX64 } from '../lib/published/blob-store.js'
import { hashFile } from './hash-worker.js'

const WORKER_URL = new URL('./hash-worker.js', import.meta.url)
const BATCH = 32
// below this many blobs starting workers costs more than it saves
export const POOL_MIN_FILES = 512

/**
 * @param {string} dir the mirror folder
 * @param {{ jobs?: number, onProgress?: (done: number, total: number) => void }} [o]
 * @returns {Promise<{ blobs: Map<string, { size: number, ok: boolean, actual?: string|null, error?: string }>, stray: string[], bytes: number, ms: number, threads: number }>}
 *   blobs: every 64-hex name in h/; ok: it hashes to its name. stray: other names (temp files of a killed writer, foreign files).
 */
export async function scrub (dir, { jobs = defaultJobs(), onProgress = () => {} } = {}) {
  const t0 = Date.now()
  const hdir = path.join(dir, 'h')
  const names = []; const stray = []
  for (const d of await fs.readdir(hdir, { withFileTypes: true })) {
    if (HEX64.test(d.name) && d.isFile()) names.push(d.name); else stray.push(d.name)
  }
  const blobs = new Map()
  let bytes = 0; let done = 0
  const record = (name, r) => {
    if (r.error) blobs.set(name, { size: 0, ok: false, error: r.error })
    else blobs.set(name, { size: r.size, ok: r.hash === name, actual: r.hash })
    bytes += r.size ?? 0
    onProgress(++done, names.length)
  }
  const threads = names.length >= POOL_MIN_FILES && jobs > 1 ? jobs : 0
  if (threads === 0) {
    for (const n of names) {
      record(n, hashFile(path.join(hdir, n)))
      if (done % 64 === 0) await new Promise(resolve => setImmediate(resolve)) // let progress and signals through
    }
  } else {
    await pool(threads, names, hdir, record)
  }
  return { blobs, stray, bytes, ms: Date.now() - t0, threads: Math.max(threads, 1) }
}

// On 2 cores one thread hashed faster than two workers, or than async reads
// with 8 in flight (docs/BENCHMARKS.md P7, notes). So workers only when a core
// is left over for them.
function defaultJobs () { return Math.max(1, Math.min((os.availableParallelism?.() ?? os.cpus().length) - 1, 4)) }

async function pool (n, names, hdir, record) {
  const workers = Array.from({ length: Math.min(n, Math.ceil(names.length / BATCH)) }, () => new Worker(WORKER_URL))
  let next = 0
  try {
    await Promise.all(workers.map(w => new Promise((resolve, reject) => {
      w.on('error', reject)
      w.on('exit', code => { if (code !== 0) reject(new Error(`hash worker exited with ${code}`)) })
      const send = () => {
        if (next >= names.length) return resolve()
        const batch = names.slice(next, next += BATCH)
        w.once('message', ({ results }) => { batch.forEach((name, i) => record(name, results[i])); send() })
        w.postMessage({ id: next, files: batch.map(b => path.join(hdir, b)) })
      }
      send()
    })))
  } finally {
    await Promise.all(workers.map(w => w.terminate()))
  }
}

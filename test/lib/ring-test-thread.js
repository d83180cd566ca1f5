// A thread for test/lib/ring-worker.test.js: each job does what its `op`
// says, so a test can make the thread answer, throw, block, crash or exit.
import fs from 'node:fs'
import { createHash } from 'node:crypto'
import { BuildInputError } from 'rotree-client/errors'
import { answerJobs } from '../../lib/ring-worker-thread.js'

let seen = 0 // jobs run, in order
const blocker = new Int32Array(new SharedArrayBuffer(4))

answerJobs((job, bytes) => {
  seen++
  switch (job.op) {
    case 'echo': return { seq: job.seq, seen, len: bytes?.length ?? null, sha: bytes && createHash('sha256').update(bytes).digest('hex') }
    case 'rotree': throw new BuildInputError(job.message, { details: { path: job.path, changed: true } })
    case 'system': return fs.openSync(job.path, 'r')
    case 'string': throw 'not an Error' // eslint-disable-line no-throw-literal
    case 'block': Atomics.wait(blocker, 0, 0, job.ms); return 'woke'
    case 'uncloneable': return () => 'a function'
    case 'exit': process.exit(job.code); break
    default: throw new Error(`no op ${job.op}`)
  }
})

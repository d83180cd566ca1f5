// rotree-client/fetch: which mirror answers each request and how much is in
// flight (mirrors.js, sched.js, window.js), verified blobs with one fetch per
// blob in flight and an LRU charged by decoded size (blobs.js, cache.js,
// heap-cost.js), and the buffers lent reads give back (buffer-pool.js).
export { PENALTY_MS, SETTLE_FLOOR_MS, SCHED_DEFAULTS, scrubMessage, Mirrors } from './mirrors.js'
export { FetchScheduler } from './sched.js'
export { MirrorWindow } from './window.js'
export { VerifiedBlobs } from './blobs.js'
export { BufferPool } from './buffer-pool.js'
export { LRU, limiter } from './cache.js'
export { heapCost } from './heap-cost.js'
// the process's pool of chunk buffers (Node; none in browsers)
export { bufferPool } from '#platform'

// Verified blobs for one tree: fetched from a local blob cache or the
// mirrors, accepted only through verify.js (docs/TRUST.md rule 3), shared
// while in flight and kept in a byte-bounded LRU charged by what the decoded
// value really holds in memory (heap-cost.js, docs/TRUST.md rule 9).
//
// Every key is kind + hash + size (and, for a version-2 ref, its stored size
// and codec). A handle names bytes, but a hostile publisher can list one hash
// under two sizes, or one stored blob under two codecs; a blob verified for
// one ref must never answer for a ref that describes it otherwise
// (docs/TRUST.md rule 3: the exact-size check, and the decoding, are part of
// accepting a blob for a ref, not only of the first fetch). The kind is in
// the key because one blob may be both a file chunk and a directory page (a
// tree that holds a tree).
//
// Sizes: a version-2 ref's `size` is the decoded length (what the value
// holds, what the cache charges, what a chunk is clipped to); its stored
// length (storedSizeOf) caps the transfer and is what a local copy must be.
import { MIRROR_FAULT_CODES, TruncatedError } from '../errors.js'
import { VERIFIERS, storedSizeOf } from '../trust/verify.js'
import { LRU, limiter } from './cache.js'
import { heapCost } from './heap-cost.js'

export class VerifiedBlobs {
  /**
   * @param {object} o
   * @param {import('./mirrors.js').Mirrors} o.mirrors
   * @param {number} o.cacheBytes
   * @param {number} o.concurrency most blob fetches at once
   * @param {{ get(hash, pool?), put(hash, bytes, done?), delete?(hash), releases?: boolean }} [o.local] e.g. the
   *   gateway's disk store; `releases`: put() calls done() once it no longer holds `bytes`, and
   *   get() may read into a buffer of the pool it is given (claimed once; the Tree gives it back)
   * @param {{ localFaults: number }} o.counters
   * @param {import('./buffer-pool.js').BufferPool} [o.pool] buffers for data chunks a reader lends back
   */
  constructor ({ mirrors, cacheBytes, concurrency, local, counters, pool = null }) {
    this.mirrors = mirrors
    this.cache = new LRU(cacheBytes)
    this.inflight = new Map()
    this.limit = limiter(concurrency)
    this.local = local
    this.counters = counters
    this.pool = pool
  }

  /**
   * One verified blob (decoded for 'dir' and 'cindex'; a data chunk decoded
   * by its codec).
   * @param {{ hash: string, size: number, storedSize?: number, codec?: string }} ref
   * @param {'data'|'dir'|'cindex'} kind
   * @param {boolean} [cache=true] keep it in the LRU (big streaming reads do not)
   * @param {boolean} [lend=false] a data chunk not cached may be read into a
   *   buffer of `pool`, which every caller handed it gives back (buffer-pool.js)
   */
  get (ref, kind, cache = true, lend = false) {
    // a sealed blob (FORMAT.md §12.8) opens as its key says: one stored blob under two keys is two values
    const key = ref.codec === undefined ? kind + ':' + ref.hash + ':' + ref.size : kind + ':' + ref.hash + ':' + ref.size + ':' + ref.storedSize + ':' + ref.codec + (ref.key === undefined ? '' : ':' + ref.key)
    const hit = this.cache.get(key)
    if (hit !== undefined) return Promise.resolve(hit)
    let f = this.inflight.get(key)
    if (f) { f.holders++; return f.p }
    const check = VERIFIERS[kind]
    // a local store may keep what it is given: only one that says when it is
    // done with it (releases: put's third argument) stores a pooled buffer
    const pool = lend && !cache && kind === 'data' && (this.local === undefined || this.local.releases === true) ? this.pool : null
    f = { p: null, holders: 1 } // holders: every caller this fetch answers
    f.p = this.limit(() => this._fetchVerified(ref, check, pool))
      .then(v => {
        // deleted here, not a tick later, so no caller joins after the count is taken
        this.inflight.delete(key)
        if (pool !== null && pool.owns(v)) pool.lend(v, f.holders)
        if (cache) this.cache.set(key, v, heapCost(kind, v, ref.size))
        return v
      }, err => { this.inflight.delete(key); throw err })
    this.inflight.set(key, f)
    return f.p
  }

  /**
   * Verified bytes of one data chunk, exactly ref.size long. The cache keys
   * make a longer value impossible; the clip is defence in depth, so no
   * caller can be handed bytes beyond its ref even if that ever changed.
   */
  async chunk (ref, cache = true, lend = false) {
    const bytes = await this.get(ref, 'data', cache, lend)
    if (bytes.length === ref.size) return bytes
    if (bytes.length > ref.size) return bytes.subarray(0, ref.size)
    throw new TruncatedError(`chunk ${ref.hash.slice(0, 16)}… is ${bytes.length} bytes, not ${ref.size}`)
  }

  /**
   * A local blob cache is tried before the mirrors. What it returns is
   * verified again like mirror bytes: disks rot, and a cache is only as
   * trustworthy as the check on the way out.
   */
  async _fetchVerified (ref, check, pool = null) {
    const local = this.local
    if (local) {
      // a store that releases may read into a buffer of the pool (claimed
      // once, as a mirror fetch's): handed on when it verifies, else given back
      const bytes = await local.get(ref.hash, pool)
      const pooled = pool !== null && pool.owns(bytes)
      // a copy of another length is no answer for this ref, but it may be the
      // right blob for another ref of this hash (a hostile publisher lists one
      // hash under two sizes): it is neither used nor counted as damage here;
      // the mirrors decide, and a good fetch replaces it
      if (bytes && bytes.length === storedSizeOf(ref)) {
        try {
          const value = await check(bytes, ref)
          if (pooled && value.buffer !== bytes.buffer) pool.lend(bytes, 0) // inflated: the stored bytes are done with
          return value
        } catch (err) {
          if (pooled) pool.lend(bytes, 0)
          if (!MIRROR_FAULT_CODES.has(err.code)) throw err
          this.counters.localFaults++
          await local.delete?.(ref.hash)
        }
      } else if (pooled) pool.lend(bytes, 0)
    }
    let raw
    // pages first: the requests they name wait on them (sched.js)
    const value = await this.mirrors.fetch('h/' + ref.hash, storedSizeOf(ref), async bytes => { const v = await check(bytes, ref); raw = bytes; return v }, undefined, { urgent: check !== VERIFIERS.data, pool })
    if (local) {
      if (pool !== null && pool.owns(raw)) { pool.hold(raw); await local.put(ref.hash, raw, () => pool.drop(raw)) } else await local.put(ref.hash, raw)
    }
    // a compressed chunk was inflated into a buffer of its own: the stored bytes are done with
    if (pool !== null && raw.buffer !== value.buffer) pool.lend(raw, 0)
    return value
  }
}

// Step 3 of `rotree pull`: walk the new root and make every blob it reaches
// present and good in DIR/h, fetching only what DIR lacks (or holds damaged).
//
// Pages (directory pages, chunk indexes) are needed to walk on, so a local
// copy is read and verified either way (lib/published/pages.js). A data chunk
// already in DIR with the right size is taken as good without reading it
// (localChunkFault: it was renamed into place only after it verified; fsck
// scrubs); --rehash hashes those too. Every reference is checked, not only
// the first one to a blob: a tree that lists one hash under two sizes cannot
// be served whole, and fails naming the path whose reference is wrong (the
// first one's fetch fails, or a later one's size is not the blob's).
//
// Format version 2 (FORMAT.md §12.6): a blob is copied as its STORED bytes,
// which its handle names; they are capped at the ref's stored size and
// hashed, and pages are decoded by their codec to be walked. Sizes counted
// here (progress, fetched, present) are stored bytes, what moves and what
// DIR holds. A later reference that names the same stored blob under
// another codec or decoded size is checked by decoding the local copy as
// it says (a hostile tree cannot be served whole that way either).
//
// How much at once: at a distance every page and every blob is a round
// trip, so the walk keeps PAGE_BREADTH page loads going ahead of it
// (walk.js, on client-js's look-ahead walk), and data blobs are fetched as
// long as their bytes fit through the reader's byte gate (client-js
// readAheadGate: what the fetch scheduler reads ahead for one reader, which
// grows with the measured bandwidth × delay, within the tree's memory
// budget; `rotree get` passes its files through the same gate), not a fixed
// count: a tree of thousands of small blobs then fills the link instead of
// waiting on 8 round trips at a time. The walk waits while the gate is
// full, so what it holds stays bounded.
import { readAheadGate } from 'rotree-client/tree'
import { walkRoot } from '../lib/published/walk-root.js'
import { storedSizeOf } from 'rotree-client/verify'
import { pageLoader, localDataFault, atPath, blobPath } from '../lib/published/index.js'
import { fetchVerified } from './fetch.js'
import { bufferPool } from 'rotree-client/fetch'

const PAGE_BREADTH = 64 // page loads at once (local reads, or fetches of what DIR lacks)

export class TreeCopy {
  /**
   * @param {object} o
   * @param {string} o.dir @param {import('../lib/published/blob-store.js').BlobStore} o.store
   * @param {import('rotree-client/fetch').Mirrors} o.mirrors
   * @param {object} o.report pull's result: fetched, present, damaged, fetchedHashes are filled in
   * @param {number} [o.jobs] most data blobs in flight (default: as many as the byte budget allows, up to 1,024)
   * @param {boolean} o.rehash
   * @param {(done: number, total: number) => void} o.progress @param {(m: string) => void} o.warn
   */
  constructor ({ dir, store, mirrors, report, jobs, rehash, progress, warn }) {
    Object.assign(this, { dir, store, mirrors, r: report, jobs, rehash, warn })
    this._progress = progress
    this.pool = bufferPool() // data blobs' bodies (fetch)
    this.total = 0; this.done = 0
    this.failed = null // the first error: stops work not yet started
    this.sizes = new Map() // hash → the stored size, codec and decoded size its first reference gave
    this.others = [] // later references that gave another size: { ref, path }, checked once every blob is in
    this.reachable = new Set()
    this.walked = new Set() // page keys, for gc (see client-js/src/tree/walk.js)
    this.loads = new Set() // walkTree stops at the first error while sibling loads still run
    this.tasks = new Set() // data blobs in flight
    this.gate = readAheadGate(mirrors, { count: jobs ?? undefined })
    this.pages = pageLoader(dir, {
      has: hash => store.have.has(hash),
      onLocal: ref => this.present(ref),
      onDamage: (ref, kind, fault) => { this.damaged(ref, fault); return this.fetch(ref, kind) }
    })
  }

  progress () { this._progress(this.done, this.total) }

  /** Walk `root`; resolves when every blob is in place, or throws the first failure. */
  async run (root) {
    try {
      // a private release: its manifest's pages, every blob they list and the keyring (FORMAT.md §12.8)
      await walkRoot(root, (ref, kind) => this.load(ref, kind), (ref, kind, p) => this.onRef(ref, kind, p), { concurrency: PAGE_BREADTH })
    } catch (err) {
      this.fail(err)
    }
    while (this.tasks.size) await Promise.allSettled([...this.tasks])
    while (this.loads.size) await Promise.allSettled([...this.loads])
    if (this.failed) throw this.failed
    // every blob is in and verified against its first reference: the others must agree with it
    for (const { ref, path } of this.others) {
      // version 2: the same stored bytes under another codec or decoded size, decoded as this ref says
      let fault
      try { fault = await localDataFault(this.dir, ref, { rehash: ref.codec !== undefined }) } catch (err) { throw atPath(err, path, ref) }
      if (fault) throw atPath(fault, path)
    }
    return { reachable: this.reachable, walked: this.walked }
  }

  /** The first failure stops work not yet started; the walk no longer waits for room. */
  fail (err) {
    this.failed ??= err
    this.gate.stop()
  }

  load (ref, kind) {
    if (this.failed) return Promise.reject(this.failed)
    this.walked.add((kind === 'dir' ? 'd' : kind === 'manifest' ? 'm' : 'c') + ref.hash)
    const p = this.pages(ref, kind)
    this.loads.add(p); p.catch(() => {}).finally(() => this.loads.delete(p))
    return p
  }

  onRef (ref, kind, p) {
    this.reachable.add(ref.hash)
    const first = this.sizes.get(ref.hash)
    const key = refKey(ref, kind)
    if (first !== undefined) {
      if (first !== key) this.others.push({ ref, path: p })
      return
    }
    this.sizes.set(ref.hash, key)
    const size = storedSizeOf(ref)
    this.total += size; this.progress()
    if (kind !== 'data') return
    // the walk goes on once the blob has room, not once it is in
    return this.gate.enter(size).then(() => {
      const task = this.data(ref)
        .catch(err => this.fail(atPath(err, p, ref)))
        .finally(() => { this.gate.leave(size); this.tasks.delete(task) })
      this.tasks.add(task)
    })
  }

  async data (ref) {
    if (this.failed) return
    if (this.store.have.has(ref.hash)) {
      const fault = await localDataFault(this.dir, ref, { rehash: this.rehash })
      if (!fault) return this.present(ref)
      if (!fault.missing) this.damaged(ref, fault)
      this.store.have.delete(ref.hash)
    }
    await this.fetch(ref, 'data', this.pool)
  }

  present (ref) {
    const size = storedSizeOf(ref)
    this.r.present.blobs++; this.r.present.bytes += size
    this.done += size; this.progress()
  }

  // disks corrupt silently: a damaged local copy is replaced, not trusted
  damaged (ref, err) {
    if (err.missing) return
    this.r.damaged.push({ hash: ref.hash, code: err.code })
    this.warn(`${blobPath(this.dir, ref.hash)} is damaged (${err.code}); fetching it again`)
  }

  /**
   * Fetch, verify and store one blob. With `pool` (a data blob, whose value
   * nobody keeps) the body is read into a pooled buffer, taken back once
   * the blob is written, so the next blob reuses that memory.
   */
  async fetch (ref, kind, pool = null) {
    const { value, raw } = await fetchVerified(this.mirrors, ref, kind, pool)
    await this.store.replace(ref.hash, raw) // over a damaged copy, atomically
    this.r.fetched.blobs++; this.r.fetched.bytes += raw.length; this.r.fetchedHashes.push(ref.hash)
    this.done += raw.length; this.progress()
    if (pool !== null) { pool.lend(raw, 0); return undefined }
    return value
  }
}

/**
 * What a reference says about the blob's bytes: its stored size, and for a
 * version-2 ref its codec and decoded size. A page's kind is part of it (a
 * page must decode as what its parent names); a data chunk's is not.
 */
function refKey (ref, kind) {
  const k = `${storedSizeOf(ref)}`
  return ref.codec === undefined ? k : `${k} ${ref.codec} ${ref.size}${kind === 'data' ? '' : ' ' + kind}`
}

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
import { limiter } from 'rotree-client/src/cache.js'
import { walkTree } from 'rotree-client/src/walk.js'
import { pageLoader, localDataFault, atPath, blobPath } from '../lib/published/index.js'
import { fetchVerified } from './fetch.js'

export class TreeCopy {
  /**
   * @param {object} o
   * @param {string} o.dir @param {import('../lib/published/blob-store.js').BlobStore} o.store
   * @param {import('rotree-client/src/mirrors.js').Mirrors} o.mirrors
   * @param {object} o.report pull's result: fetched, present, damaged, fetchedHashes are filled in
   * @param {number} o.jobs @param {boolean} o.rehash
   * @param {(done: number, total: number) => void} o.progress @param {(m: string) => void} o.warn
   */
  constructor ({ dir, store, mirrors, report, jobs, rehash, progress, warn }) {
    Object.assign(this, { dir, store, mirrors, r: report, jobs, rehash, warn })
    this._progress = progress
    this.total = 0; this.done = 0
    this.failed = null // the first error: stops work not yet started
    this.sizes = new Map() // hash → the size its first reference gave
    this.others = [] // later references that gave another size: { ref, path }, checked once every blob is in
    this.reachable = new Set()
    this.walked = new Set() // page keys, for gc (see client-js/src/walk.js)
    this.loads = new Set() // walkTree stops at the first error while sibling loads still run
    this.tasks = []
    this.limit = limiter(jobs)
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
      await walkTree(root, (ref, kind) => this.load(ref, kind), (ref, kind, p) => this.onRef(ref, kind, p), { concurrency: this.jobs })
    } catch (err) {
      this.failed ??= err
    }
    await Promise.all(this.tasks)
    while (this.loads.size) await Promise.allSettled([...this.loads])
    if (this.failed) throw this.failed
    // every blob is in and verified against its first reference: the others must agree with it
    for (const { ref, path } of this.others) {
      const fault = await localDataFault(this.dir, ref)
      if (fault) throw atPath(fault, path)
    }
    return { reachable: this.reachable, walked: this.walked }
  }

  load (ref, kind) {
    if (this.failed) return Promise.reject(this.failed)
    this.walked.add((kind === 'dir' ? 'd' : 'c') + ref.hash)
    const p = this.pages(ref, kind)
    this.loads.add(p); p.catch(() => {}).finally(() => this.loads.delete(p))
    return p
  }

  onRef (ref, kind, p) {
    this.reachable.add(ref.hash)
    const first = this.sizes.get(ref.hash)
    if (first !== undefined) {
      if (first !== ref.size) this.others.push({ ref, path: p })
      return
    }
    this.sizes.set(ref.hash, ref.size)
    this.total += ref.size; this.progress()
    if (kind === 'data') this.tasks.push(this.limit(() => this.data(ref)).catch(err => { this.failed ??= atPath(err, p, ref) }))
  }

  async data (ref) {
    if (this.failed) return
    if (this.store.have.has(ref.hash)) {
      const fault = await localDataFault(this.dir, ref, { rehash: this.rehash })
      if (!fault) return this.present(ref)
      if (!fault.missing) this.damaged(ref, fault)
      this.store.have.delete(ref.hash)
    }
    await this.fetch(ref, 'data')
  }

  present (ref) {
    this.r.present.blobs++; this.r.present.bytes += ref.size
    this.done += ref.size; this.progress()
  }

  // disks corrupt silently: a damaged local copy is replaced, not trusted
  damaged (ref, err) {
    if (err.missing) return
    this.r.damaged.push({ hash: ref.hash, code: err.code })
    this.warn(`${blobPath(this.dir, ref.hash)} is damaged (${err.code}); fetching it again`)
  }

  async fetch (ref, kind) {
    const { value, raw } = await fetchVerified(this.mirrors, ref, kind)
    await this.store.replace(ref.hash, raw) // over a damaged copy, atomically
    this.r.fetched.blobs++; this.r.fetched.bytes += ref.size; this.r.fetchedHashes.push(ref.hash)
    this.done += ref.size; this.progress()
    return value
  }
}

// Directory read-ahead, for clients that walk a tree through its listings:
// `wget -r`, rclone and davfs2 over WebDAV, a file manager copying a folder.
// Such a client asks for one listing or file at a time, so behind a distant
// mirror every directory page and every file blob it reaches costs it a round
// trip to the mirror, one after another (docs/BENCHMARKS.md P10: its wget rows
// with --no-prefetch, against `rotree get` of the same tree).
//
// When a listing has been sent, the gateway fetches what such a client asks
// for next, so that it is in the tree's caches (memory, and disk when the
// gateway has one) before the request comes:
//   - the listed directory's small files (chunk-listed, at most FILE_MAX
//     bytes: exactly the blobs their GET reads);
//   - its first AHEAD subdirectories: their first directory page, and their
//     own small files;
//   - when the listing of its parent was sent too (and is remembered), the
//     next AHEAD directories after it in that listing not fetched yet (round
//     to the start), the same way. A client going through a directory's
//     children, breadth-first (wget) or depth-first (cp -r over davfs2), in
//     the listing's order or another, finds the next ones warm.
// Only fetches: every blob is verified by the Tree, and a blob named by one
// root is fetched under that root's pinned view, as a request would. The
// directories read ahead from one listing are a walk of client-js's
// look-ahead engine (walkAhead): the listing's neighbourhood is its root,
// those directories its children, each listed (its first page) through this
// tree's job queue, all of them at once, and each one's small files fetched
// ahead as the walk reaches it, in the listing's order, so the credit goes
// to the nearest first.
//
// Bounded, whatever the tree (docs/TRUST.md rule 9): per listing, at most
// 2 × AHEAD directories and BYTES of blobs and directory pages (listingBudget:
// less when only the memory cache holds them); per tree, JOBS fetches at once
// (half the tree's default request cap, so clients' own requests keep the
// rest) and QUEUE waiting (more are dropped: read-ahead is a hint); the
// directories of REMEMBER listings of at most REMEMBER_ENTRIES entries each
// (a longer one is not remembered); a warmed directory is looked at for its
// first DIR_ENTRIES entries only. Errors are dropped: a
// failure shows when the client asks for the thing itself.
//
// And bounded by what clients take (docs/GATEWAY.md, "Read-ahead for clients
// that walk the listings"): a listing
// alone names enough to make the gateway fetch tens of MiB, so every byte
// fetched ahead (a blob's stored size, each directory page's) is paid from
// the tree's credit. It starts at CREDIT_START; each listing sent earns
// EARN_LISTED × its body's bytes, each byte a client's request reads from a
// blob fetched ahead earns EARN_READ (each blob once), and a directory fetched
// ahead that a client then lists gives back what its pages cost. What no
// client takes is never earned back. So, per tree:
//   fetched ahead ≤ CREDIT_START + EARN_LISTED × listing bytes sent
//                   + EARN_READ × bytes clients' requests read from blobs fetched ahead
//                   + directory pages fetched ahead that clients then listed
// A crawler that reads what was fetched ahead (wget -r, cp -r) earns it back
// twice over and soon has its full per-listing budget, and a read-ahead that
// stopped for want of credit goes on as its reads earn more; a client that
// only lists makes the gateway fetch ahead, besides the pages its own
// listings read, at most CREDIT_START + EARN_LISTED × what it downloads. The
// credit never exceeds CREDIT_MAX_LISTINGS listings' budgets, so what a long
// walk earned is not banked for whoever comes next.
import { walkAhead } from 'rotree-client/tree'
import { entriesOf } from './tree-access.js'

export const AHEAD = 16
export const FILE_MAX = 1 << 20
export const BYTES = 16 << 20
export const DIR_ENTRIES = 256
export const JOBS = 32
export const QUEUE = 4096
export const REMEMBER = 8
export const REMEMBER_ENTRIES = 4096
// Without a disk cache what is fetched ahead waits in the tree's memory cache,
// where a walk that lists many directories before it reads their files (wget's
// breadth-first order) evicts it before it is asked for: each listing then
// fetches at most this share of that cache ahead.
export const MEMORY_SHARE = 16
export const CREDIT_START = 512 << 10 // what a tree's first listings may fetch ahead before any client took anything
export const EARN_LISTED = 4 // credit per byte of a listing sent
export const EARN_READ = 2 // credit per byte a client's request reads from a blob fetched ahead
export const CREDIT_MAX_LISTINGS = 2
const STALLED = 2 * AHEAD + 1 // read-aheads waiting for credit: a listing's, and its directories'
const WARMED = 16_384 // handles remembered as asked for already (~2 MB); one forgotten and asked for again is most likely a cache hit

/**
 * The bytes one listing fetches ahead: BYTES with a disk cache, else a
 * MEMORY_SHARE-th of the memory cache (at least one FILE_MAX, at most BYTES).
 * @param {{ disk: boolean, memoryBytes: number }} o
 */
export function listingBudget ({ disk, memoryBytes }) {
  return disk ? BYTES : Math.max(FILE_MAX, Math.min(BYTES, Math.floor(memoryBytes / MEMORY_SHARE)))
}

export class ReadAhead {
  /** @param {{ bytes?: number }} [o] bytes: what one listing fetches ahead at most (listingBudget) */
  constructor ({ bytes = BYTES } = {}) {
    this.bytes = bytes
    this.creditMax = CREDIT_MAX_LISTINGS * bytes
    this.credit = Math.min(CREDIT_START, this.creditMax)
    this.lists = new Map() // root hash + path → { dirs: the listing's directory entries, index: name → position }
    // dir and chunk handles already asked for (insertion order: oldest first) → the bytes
    // fetched ahead for them that no client has taken yet, or TAKEN
    this.warmed = new Map()
    this.stalled = [] // read-aheads of files waiting for credit (_stall)
    this.queue = []
    this.running = 0
    this.walks = 0 // directory read-aheads (_dirs) not yet through their directories
    this.idleWaiters = []
    // bytes: fetched ahead; taken: of them, taken by a client (blobs read, directories listed)
    this.counts = { listings: 0, dirs: 0, blobs: 0, dropped: 0, bytes: 0, taken: 0 }
  }

  /**
   * A listing of directory `rel` was sent from `pin`.
   * @param {import('./mount.js').Pin} pin
   * @param {string[]} rel its names below the tree root
   * @param {object} dirEntry the listed directory's entry
   * @param {object[]} entries its verified entries, in order, as listed (symlinks as themselves)
   * @param {boolean} complete every entry of the directory is in `entries`
   * @param {number} sent the listing body's bytes
   */
  listed (pin, rel, dirEntry, entries, complete, sent) {
    this.counts.listings++
    this._earn(EARN_LISTED * sent)
    // its pages, if fetched ahead, are taken now; and it is not read ahead again
    const owed = this._take(dirEntry.dir.hash)
    if (owed > 0) this._earn(owed)
    const root = pin.root.root.hash
    if (complete && entries.length <= REMEMBER_ENTRIES) this._remember(root + '/' + rel.join('/'), entries)
    const budget = { bytes: this.bytes }
    this._files(pin, entries, budget)
    this._dirs(pin, entries, 0, budget)
    if (rel.length === 0) return
    const key = root + '/' + rel.slice(0, -1).join('/')
    const parent = this.lists.get(key)
    if (parent === undefined) return
    this.lists.delete(key) // the most recently used listing is the last to be forgotten
    this.lists.set(key, parent)
    const at = parent.index.get(rel.at(-1))
    if (at !== undefined) this._dirs(pin, parent.dirs, at + 1, budget, true)
  }

  /**
   * A client's request reads bytes [start, end) of file `entry`: each blob
   * among them is taken (and never fetched ahead after this); one that was
   * fetched ahead earns EARN_READ × the bytes read from it, and what waited
   * for credit goes on.
   */
  read (entry, start, end) {
    if (entry.chunks === undefined || entry.size > FILE_MAX) return
    let off = 0
    let earned = 0
    for (const c of entry.chunks) {
      const from = Math.max(start, off); const to = Math.min(end, off + c.size)
      off += c.size
      if (to <= from) continue
      const owed = this._take(c.hash)
      if (owed > 0) earned += EARN_READ * Math.min(owed, to - from)
    }
    if (earned === 0) return
    this._earn(earned)
    this._resume()
  }

  /** Resolves when no read-ahead is running or waiting (for tests). */
  idle () {
    if (this._idle()) return Promise.resolve()
    return new Promise(resolve => this.idleWaiters.push(resolve))
  }

  _idle () { return this.running === 0 && this.queue.length === 0 && this.walks === 0 }

  _settled () { if (this._idle()) for (const w of this.idleWaiters.splice(0)) w() }

  /** Keep a listing's directories (only they are read ahead from it), by name. */
  _remember (key, entries) {
    if (this.lists.has(key)) return
    if (this.lists.size >= REMEMBER) this.lists.delete(this.lists.keys().next().value)
    const dirs = entries.filter(e => e.type === 'dir')
    const index = new Map()
    dirs.forEach((e, i) => index.set(e.name, i))
    this.lists.set(key, { dirs, index })
  }

  /**
   * Up to AHEAD directories of `entries` not asked for yet, from `from` on
   * (wrapping round to the start when `wrap`): each one's first page, then
   * its small files. Skipping those asked for already keeps a client that
   * goes through the directories in another order than the listing's (davfs2
   * hands them to `cp -r` in its own order) ahead of the read-ahead too.
   */
  _dirs (pin, entries, from, budget, wrap = false) {
    const dirs = []
    const len = entries.length
    for (let k = 0; k < (wrap ? len : len - from) && dirs.length < AHEAD; k++) {
      const e = entries[(from + k) % len]
      if (e.type !== 'dir') continue
      if (!this._affords(budget, sizeOf(e.dir))) break
      if (this._first(e.dir.hash)) dirs.push(e)
    }
    if (dirs.length === 0) return
    // the neighbourhood is the root, the directories its children: all listed at once, visited in order
    const source = {
      expand: node => node.dirs !== undefined ? { entries: node.dirs } : this._listAhead(pin, node.e, budget),
      child: (node, e) => node.dirs !== undefined ? { e } : null
    }
    this.walks++
    walkAhead({ dirs }, source, {
      enter: (node, seen) => { if (node.e !== undefined && seen.length > 0) this._files(pin, seen, budget) }
    }, { breadth: AHEAD }).catch(() => {}).finally(() => { this.walks--; this._settled() })
  }

  /**
   * Directory `e`'s first DIR_ENTRIES entries, read through the job queue,
   * each page paid for before it is read (out of credit, the listing ends
   * there and what it saw is used); resolves to { entries } whatever happens.
   */
  _listAhead (pin, e, budget) {
    const h = e.dir.hash
    const admit = ref => {
      if (this.warmed.get(h) === TAKEN) return // a client listed it meanwhile: its own listing reads these pages
      const size = sizeOf(ref)
      if (!this._spend(budget, size)) {
        if (this.warmed.get(h) === 0) this.warmed.delete(h) // nothing fetched: a later listing may try again
        throw OUT_OF_CREDIT
      }
      this.warmed.set(h, (this.warmed.get(h) ?? 0) + size)
    }
    return new Promise(resolve => {
      const seen = []
      const queued = this._run(h, async () => {
        try {
          if (this.warmed.get(h) === TAKEN) return // a client listed it meanwhile: its pages are in the cache
          this.counts.dirs++
          for await (const c of entriesOf(pin, e, { admit })) {
            seen.push(c)
            if (seen.length >= DIR_ENTRIES) break
          }
        } finally { resolve({ entries: seen }) }
      })
      if (!queued) resolve({ entries: [] })
    })
  }

  /**
   * Each small chunk-listed file's chunks, from entries[from] on, while the
   * listing's budget and the tree's credit last. Stopped by the credit, it
   * waits to go on where it stopped once a client's read earns more (so a
   * crawler's reads pace the read-ahead of the listing it is reading).
   */
  _files (pin, entries, budget, from = 0) {
    for (let i = from; i < entries.length; i++) {
      const e = entries[i]
      if (e.type !== 'file' || e.chunks === undefined || e.size > FILE_MAX) continue
      for (const c of e.chunks) {
        const size = sizeOf(c)
        if (!this._affords(budget, size)) {
          if (budget.bytes >= size) this._stall(() => this._files(pin, entries, budget, i))
          return
        }
        if (!this._first(c.hash)) continue
        this._spend(budget, size)
        this.warmed.set(c.hash, size)
        this._run(c.hash, () => { this.counts.blobs++; return pin.view.readChunk(c, { cache: true }) }, size)
      }
    }
  }

  _affords (budget, size) { return budget.bytes >= size && this.credit >= size }

  _spend (budget, size) {
    if (!this._affords(budget, size)) return false
    budget.bytes -= size
    this.credit -= size
    this.counts.bytes += size
    return true
  }

  _earn (n) { this.credit = Math.min(this.creditMax, this.credit + n) }

  /** A read-ahead stopped for want of credit, to go on when a read earns some (the latest STALLED). */
  _stall (resume) {
    if (this.stalled.length >= STALLED) this.stalled.shift()
    this.stalled.push(resume)
  }

  /** Go on with what stopped for want of credit, oldest first; each that stops again waits again. */
  _resume () {
    const waiting = this.stalled
    this.stalled = []
    for (const resume of waiting) resume()
  }

  /** A client takes `hash`: what was fetched ahead for it and not taken yet (0 if nothing); it is not fetched ahead again. */
  _take (hash) {
    const owed = this.warmed.get(hash) ?? 0
    if (owed === 0 && !this.warmed.has(hash)) this._first(hash)
    this.warmed.set(hash, TAKEN)
    if (owed > 0) this.counts.taken += owed
    return Math.max(owed, 0)
  }

  /** True the first time a handle is seen (within the last WARMED); forgetting one that was never taken is a miss. */
  _first (hash) {
    if (this.warmed.has(hash)) return false
    if (this.warmed.size >= WARMED) this.warmed.delete(this.warmed.keys().next().value)
    this.warmed.set(hash, 0)
    return true
  }

  /** Queue a fetch (true); one dropped because the queue is full (false) gives back the `paid` it was charged. */
  _run (hash, job, paid = 0) {
    if (this.queue.length >= QUEUE) {
      this.counts.dropped++
      this.warmed.delete(hash)
      this._earn(paid); this.counts.bytes -= paid
      return false
    }
    this.queue.push(job)
    this._next()
    return true
  }

  _next () {
    while (this.running < JOBS && this.queue.length > 0) {
      const job = this.queue.shift()
      this.running++
      Promise.resolve().then(job).catch(() => {}).finally(() => { this.running--; this._next() })
    }
    this._settled()
  }
}

const TAKEN = -1 // a warmed handle a client has taken: nothing owed, never fetched ahead again
const OUT_OF_CREDIT = new Error('read-ahead: out of credit') // ends a directory walk (entriesOf's admit); never shown

/** What fetching a ref costs: its stored size (FORMAT.md §12.6), what crosses the wire. */
function sizeOf (ref) { return ref.storedSize ?? ref.size }

/**
 * A listing's read-ahead: `items(it)` passes withTargets' items through and
 * keeps their entries; `sent(bytes)`, once the listing's body is complete,
 * reports them to `ra` (nothing when the listing failed). With ra null, both
 * do nothing.
 * @param {ReadAhead|null} ra
 * @param {import('./mount.js').Pin} pin
 * @param {string[]} rel
 * @param {object} dirEntry the listed directory's entry
 */
export function listingTap (ra, pin, rel, dirEntry) {
  if (ra === null) return { items: it => it, sent: undefined }
  const entries = []
  let complete = false
  return {
    async * items (it) {
      for await (const item of it) {
        if (entries.length <= REMEMBER_ENTRIES) entries.push(item.entry)
        yield item
      }
      complete = entries.length <= REMEMBER_ENTRIES
    },
    sent: bytes => ra.listed(pin, rel, dirEntry, entries, complete, bytes)
  }
}

// Directory read-ahead, for clients that walk a tree through its listings:
// `wget -r`, rclone and davfs2 over WebDAV, a file manager copying a folder.
// Such a client asks for one listing or file at a time, so behind a distant
// mirror every directory page and every file blob it reaches costs it a round
// trip to the mirror, one after another (through a mirror 50 ms away,
// `wget -r` of /usr/share/doc took 80 s where `rotree get` takes 3 s).
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
// root is fetched under that root's pinned view, as a request would.
//
// Bounded, whatever the tree (docs/TRUST.md rule 9): per listing, at most
// 2 × AHEAD directories and BYTES of blobs (listingBudget: less when only the
// memory cache holds them); per tree, JOBS fetches at once
// (half the tree's default request cap, so clients' own requests keep the
// rest) and QUEUE waiting (more are dropped: read-ahead is a hint); the
// directories of REMEMBER listings of at most REMEMBER_ENTRIES entries each
// (a longer one is not remembered); a warmed directory is looked at for its
// first DIR_ENTRIES entries only. Errors are dropped: a
// failure shows when the client asks for the thing itself.
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
  /** @param {{ bytes?: number }} [o] bytes: what one listing fetches ahead (listingBudget) */
  constructor ({ bytes = BYTES } = {}) {
    this.bytes = bytes
    this.lists = new Map() // root hash + path → { dirs: the listing's directory entries, index: name → position }
    this.warmed = new Set() // dir and chunk handles already asked for (insertion order: oldest first)
    this.queue = []
    this.running = 0
    this.idleWaiters = []
    this.counts = { listings: 0, dirs: 0, blobs: 0, dropped: 0 }
  }

  /**
   * A listing of directory `rel` was sent from `pin`.
   * @param {import('./mount.js').Pin} pin
   * @param {string[]} rel its names below the tree root
   * @param {object[]} entries its verified entries, in order, as listed (symlinks as themselves)
   * @param {boolean} complete every entry of the directory is in `entries`
   */
  listed (pin, rel, entries, complete) {
    this.counts.listings++
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

  /** Resolves when no read-ahead is running or waiting (for tests). */
  idle () {
    if (this.running === 0 && this.queue.length === 0) return Promise.resolve()
    return new Promise(resolve => this.idleWaiters.push(resolve))
  }

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
    let n = 0
    const len = entries.length
    for (let k = 0; k < (wrap ? len : len - from) && n < AHEAD; k++) {
      const e = entries[(from + k) % len]
      if (e.type !== 'dir' || !this._first(e.dir.hash)) continue
      n++
      this._run(e.dir.hash, async () => {
        this.counts.dirs++
        const seen = []
        for await (const c of entriesOf(pin, e)) {
          seen.push(c)
          if (seen.length >= DIR_ENTRIES) break
        }
        this._files(pin, seen, budget)
      })
    }
  }

  /** Each small chunk-listed file's chunks, while the listing's budget lasts. */
  _files (pin, entries, budget) {
    for (const e of entries) {
      if (e.type !== 'file' || e.chunks === undefined || e.size > FILE_MAX) continue
      for (const c of e.chunks) {
        const size = c.storedSize ?? c.size
        if (budget.bytes < size) return
        if (!this._first(c.hash)) continue
        budget.bytes -= size
        this._run(c.hash, () => { this.counts.blobs++; return pin.view.readChunk(c, { cache: true }) })
      }
    }
  }

  /** True the first time a handle is seen (within the last WARMED). */
  _first (hash) {
    if (this.warmed.has(hash)) return false
    if (this.warmed.size >= WARMED) this.warmed.delete(this.warmed.values().next().value)
    this.warmed.add(hash)
    return true
  }

  _run (hash, job) {
    if (this.queue.length >= QUEUE) { this.counts.dropped++; this.warmed.delete(hash); return }
    this.queue.push(job)
    this._next()
  }

  _next () {
    while (this.running < JOBS && this.queue.length > 0) {
      const job = this.queue.shift()
      this.running++
      Promise.resolve().then(job).catch(() => {}).finally(() => { this.running--; this._next() })
    }
    if (this.running === 0 && this.queue.length === 0) for (const w of this.idleWaiters.splice(0)) w()
  }
}

/**
 * A listing's items (withTargets'), passed through; when they end, or the
 * response stops early, the entries seen are reported to `ra` (null: none).
 * @param {ReadAhead|null} ra
 * @param {AsyncIterable<{ entry: object }>} items
 */
export async function * tapListing (ra, pin, rel, items) {
  if (ra === null) return yield * items
  const entries = []
  let complete = false
  try {
    for await (const item of items) {
      if (entries.length <= REMEMBER_ENTRIES) entries.push(item.entry)
      yield item
    }
    complete = entries.length <= REMEMBER_ENTRIES
  } finally {
    ra.listed(pin, rel, entries, complete)
  }
}

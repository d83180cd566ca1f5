// Directory listings for `rotree get` (cli/download.js) and `rotree ls -R`,
// asked for ahead of the walk that uses them. The walk goes depth first, one
// directory after another; at a distance each listing is a round trip, so
// listing them in turn makes the round trips, not the bytes, set the time.
// Here listings run `breadth` at a time, in the order the walk will want
// them (depth-first pre-order, the order of a directory's entries), so the
// walk usually finds its next directory's entries already verified and in
// hand.
//
// Nothing here decides anything about the entries: listings come from the
// Tree (every page verified and placed by it, docs/TRUST.md rules 3 and 5),
// and the walk checks and counts a listing (names, links, --max-entries) only
// when it reaches it, as it did when it listed one directory at a time. So a
// hostile tree is refused at the same point as before; listing ahead only
// costs memory, which is bounded: listings held and not yet released by the
// walk may estimate at most `aheadBytes` before no more are started (the ones
// the walk asks for itself are always started), and a directory of more than
// `bigDir` entries is never held: the walk streams it page by page, twice.
//
// Which directory next: a heap of cursors, one per listed directory whose
// subdirectories are not all asked for yet, keyed by the position of the
// next one in depth-first order (the list of ordinals from the top). Each
// pop starts one listing and moves that cursor one subdirectory on.

const ENTRY_COST = 256 // an entry held in a listing, roughly (object, name, fields)
// listings in flight: with 128 requests out (MANY_REQUESTS, common.js), a `get` of
// /usr/share/doc at RTT 50 ms took 2.40-2.51 s against 2.65-2.80 s with 48 listings
// and 64 requests (BENCHMARKS.md P10); its `ls -R` 1.4 s against 42 s one at a time
const BREADTH = 128
const RELEASED = Promise.resolve(null)

export class Lister {
  /**
   * @param {{ entriesOf(dir: object): AsyncIterable<object> }} tree
   * @param {object} [o]
   * @param {number} [o.breadth=128] listings in flight at once (the walk's own requests come on top)
   * @param {number} [o.aheadBytes=16 MiB] estimated size of the listings held before no more are started
   * @param {number} [o.bigDir=16384] directories with more entries are streamed, not held
   * @param {number} [o.maxDepth] directories deeper than this are never listed ahead
   * @param {(err: Error) => void} [o.onError] a listing failed (the walk gets the same error when it takes it)
   */
  constructor (tree, { breadth = BREADTH, aheadBytes = 16 << 20, bigDir = 16384, maxDepth = Infinity, onError = () => {} } = {}) {
    Object.assign(this, { tree, breadth, aheadBytes, bigDir, maxDepth, onError })
    this.heap = []
    this.inflight = 0
    this.held = 0
    this.closed = false
  }

  /** The node of the top directory: `count` entries (its entry may not carry the count). */
  root (entry, count) { return node(entry, count, [], 0) }

  /**
   * The node of the `ordinal`-th subdirectory (0-based, counting only
   * directories) of `parent`, whose entry is `entry`.
   */
  child (parent, ordinal, entry) {
    let n = parent.kids?.[ordinal]
    if (!n) {
      n = node(entry, entry.entries, parent.key && [...parent.key, ordinal], parent.depth + 1)
      if (parent.kids) parent.kids[ordinal] = n
    }
    return n
  }

  /** A node's listing, tallied by nobody yet: an array of entries, or null for a big directory (stream it). */
  take (n) {
    this.start(n)
    return n.p
  }

  /** The walk is done with this node's listing. */
  release (n) {
    this.held -= n.held
    n.held = 0
    n.p = RELEASED
    n.kids = null
    n.subdirs = null // a cursor still in the heap skips it
    this.pump()
  }

  close () { this.closed = true; this.heap.length = 0 }

  start (n) {
    if (n.p) return
    if (!(n.count <= this.bigDir)) { n.p = Promise.resolve(null); n.kids = null; return } // big, or a count not known
    n.held = n.count * ENTRY_COST
    this.held += n.held
    this.inflight++
    n.p = this.list(n)
    n.p.then(list => {
      this.inflight--
      if (n.p === RELEASED) return this.pump()
      // what it holds, now that it is known: inline bytes are most of a page
      let cost = 0
      const subdirs = []
      for (const e of list) {
        cost += entryCost(e)
        if (e.type === 'dir') subdirs.push(e)
      }
      this.held += cost - n.held
      n.held = cost
      if (subdirs.length && n.key && n.depth < this.maxDepth && !this.closed) {
        n.subdirs = subdirs
        this.push({ n, i: 0, key: [...n.key, 0] })
      }
      this.pump()
    }, err => {
      this.inflight--
      this.onError(err)
      this.pump()
    })
  }

  async list (n) {
    const out = []
    for await (const e of this.tree.entriesOf(n.entry)) out.push(e)
    return out
  }

  pump () {
    while (!this.closed && this.heap.length && this.inflight < this.breadth && this.held < this.aheadBytes) {
      const c = this.pop()
      const { n, i } = c
      if (n.kids && i + 1 < n.subdirs.length) this.push({ n, i: i + 1, key: [...n.key, i + 1] })
      if (!n.kids) continue // released: the walk has taken every subdirectory it will
      const kid = this.child(n, i, asDir(n.subdirs[i]))
      this.start(kid)
    }
  }

  // ---- a binary heap of cursors, smallest depth-first position first ----

  push (c) {
    const h = this.heap
    h.push(c)
    let i = h.length - 1
    while (i > 0) {
      const p = (i - 1) >> 1
      if (before(h[p].key, c.key)) break
      h[i] = h[p]; i = p
    }
    h[i] = c
  }

  pop () {
    const h = this.heap
    const top = h[0]
    const last = h.pop()
    if (h.length) {
      let i = 0
      for (;;) {
        const l = 2 * i + 1
        if (l >= h.length) break
        const r = l + 1
        const m = r < h.length && before(h[r].key, h[l].key) ? r : l
        if (before(last.key, h[m].key)) break
        h[i] = h[m]; i = m
      }
      h[i] = last
    }
    return top
  }
}

/** What an entry held in memory costs, roughly: the object, its name and fields, and its inline bytes. */
export function entryCost (e) { return ENTRY_COST + (e.inline?.length ?? 0) }

/** A directory entry from a page, in the shape entriesOf() takes (its count checked against its pages). */
export function asDir (e) { return { ...e, entries: e.size } }

function node (entry, count, key, depth) {
  return { entry, count, key, depth, p: null, held: 0, kids: [], subdirs: null }
}

/** a comes before b in depth-first pre-order (a prefix first). */
function before (a, b) {
  const n = Math.min(a.length, b.length)
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i] < b[i]
  return a.length < b.length
}

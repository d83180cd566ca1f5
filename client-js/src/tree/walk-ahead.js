// The one look-ahead walk: nodes in depth-first pre-order, each handed to
// its consumer with its listing, while the nodes the consumer will reach
// next are expanded ahead of it, in that order. At a distance every listing
// is a round trip, so a walk that lists one node after another is paced by
// round trips, not bytes (docs/BENCHMARKS.md P10); here `breadth` expansions
// run at once, nearest first, and the consumer usually finds its next node
// expanded and in hand. `rotree get` and `ls -R` (directories of one tree),
// `rotree diff` (pairs of directories of two trees), walkTree (the pages of
// a published folder: pull, fsck, gc) and the gateway's read-ahead (the
// neighbourhood of a listing) are its consumers.
//
// What a node is, the engine does not know; a source says (WalkSource):
//   expand(node) → { entries, cost? }   its verified listing, and what
//                                       holding it costs (bytes, estimated)
//   child(node, entry) → node | null    the node an entry leads to, or null:
//                                       a leaf, or a child not worth entering,
//                                       which is then never expanded (pruned)
//   count(node) → number | undefined    entries before it is expanded
//   stream(node) → AsyncIterable         entries of a node too big to hold
// and a visitor (WalkVisitor) takes them: enter(node, entries) in pre-order
// (entries null for a streamed node), entry(node, entry, child) for each
// entry in order (a child's enter comes right after its entry), leave(node)
// once its last entry and every child's leave are done. Each may return a
// promise: the walk waits for it (back-pressure), the look-ahead does not.
//
// No trust decision is made here (docs/TRUST.md rules 3 and 5): every
// listing comes from the source, which takes it from a Tree or from the
// caller's verified loader, and the consumer checks what it uses when it
// reaches it, exactly as if it had expanded each node itself. Expanding
// ahead costs only memory and requests, both bounded:
//   - at most `breadth` expansions run ahead at once (the consumer's own,
//     for a node it reached first, come on top);
//   - none is started while the listings expanded and not yet released
//     (the consumer's own included) estimate more than `aheadBytes`, or hold
//     more than `aheadEntries` entries: a node is charged count × ENTRY_COST
//     when it starts (one entry's worth when `count` says nothing, so those
//     may overshoot by what `breadth` expansions hold) and its cost once it
//     is expanded; the consumer releases a node when it leaves it;
//   - a node that `count` says holds more than `bigNode` entries (or does
//     not say, when the source can stream) is never held: when the consumer
//     reaches it, it is streamed, `window` entries read ahead of the
//     consumer, and the children among them expanded ahead;
//   - nothing deeper than `maxDepth` (the root is 0) is expanded ahead.
// A failed expansion ahead is the consumer's to meet when it reaches the
// node (the walk then rejects with it). Files are not fetched here: what a
// file costs is counted against other budgets (get's byte gate and the
// scheduler's read-ahead, the gateway's credit), so each consumer fetches
// its files in its own sink, as it visits them.
//
// Which node next: a binary heap of cursors, one per node whose children
// are not all scanned yet, keyed by the position of its next entry in
// depth-first order (the entry indexes from the root); each pop scans that
// node on to its next child and starts it.
import { slicer } from './resolve.js'

/** What an entry held in a listing costs, roughly (object, name, fields): a node is charged this per entry. */
export const ENTRY_COST = 256

const NEW = 0; const BIG = 1; const EXPANDING = 2; const HELD = 3; const STREAMED = 4; const RELEASED = 5

/**
 * Walk from `root` in depth-first pre-order, expanding ahead (see above).
 * Resolves once the consumer has left the root; rejects with the first error
 * of an expansion it reached or of a visitor call, and then stops expanding.
 * @param {N} root
 * @param {import('../../types/tree-layer-parts.js').WalkSource<N, E>} source
 * @param {import('../../types/tree-layer-parts.js').WalkVisitor<N, E>} visitor
 * @param {import('../../types/tree-layer-parts.js').WalkAheadOptions} [o]
 * @template N, E
 */
export async function walkAhead (root, source, visitor, o = {}) {
  const w = new Walk(source, visitor, o)
  try { await w.run(root) } finally { w.close() }
}

class Slot {
  constructor (node, key, depth) {
    this.node = node
    this.key = key // its position in depth-first pre-order: entry indexes from the root
    this.depth = depth
    this.state = NEW
    this.p = null // the expansion: resolves to its entries
    this.entries = null // held: the listing; streamed: the window, entries read and not yet taken
    this.base = 0 // streamed: the index of entries[0]
    this.pos = 0 // the consumer's next entry
    this.scanned = 0 // entries passed to source.child() (by the consumer or a cursor)
    this.kids = null // entry index → child Slot a cursor found and the consumer has not reached
    this.cost = 0; this.count = 0 // what it is charged
    this.queued = false // a cursor of it is in the heap
    this.idle = false // streamed: its cursor waits for more entries
    this.it = null; this.ended = false; this.error = null; this.filling = false; this.wake = null
    this.taken = null // streamed: the child of the entry the consumer took last
  }
}

class Walk {
  constructor (source, visitor, { breadth = 64, aheadBytes = 16 << 20, aheadEntries = 1 << 16, bigNode = 16384, window = 256, maxDepth = Infinity } = {}) {
    this.source = source; this.visitor = visitor
    this.o = { breadth, aheadBytes, aheadEntries, bigNode, window, maxDepth }
    this.heap = []
    this.inflight = 0 // expansions running
    this.held = 0; this.heldEntries = 0
    this.stack = []
    this.closed = false
  }

  async run (root) {
    const { visitor, stack } = this
    const pause = slicer() // cached listings resolve as microtasks: let timers and I/O in now and then (docs/TRUST.md rule 9)
    await this.enter(new Slot(root, [], 0))
    while (stack.length) {
      const s = stack[stack.length - 1]
      let e = DONE; let kid = null
      if (s.state === STREAMED) {
        e = await this.nextStreamed(s)
        kid = s.taken
      } else if (s.pos < s.entries.length) {
        e = s.entries[s.pos]
        kid = this.kidAt(s, s.pos++, e)
      }
      if (e === DONE) {
        stack.pop()
        this.release(s)
        const r = visitor.leave?.(s.node)
        if (r) await r
        continue
      }
      const r = visitor.entry?.(s.node, e, kid === null ? null : kid.node)
      if (r) await r
      if (kid !== null) await this.enter(kid)
      const p = pause()
      if (p) await p
    }
  }

  /** The consumer reaches `s`: its listing (expanded now if no cursor did), then the visitor's enter. */
  async enter (s) {
    this.start(s)
    let entries = null
    if (s.state === BIG) this.open(s)
    else entries = await s.p
    this.stack.push(s)
    const r = this.visitor.enter?.(s.node, entries)
    if (r) await r
    if (s.state === STREAMED) this.fill(s)
  }

  /** The child at entry `i` of `s`, which the consumer has reached: found by a cursor, or looked at now. */
  kidAt (s, i, e) {
    if (i < s.scanned) {
      const kid = s.kids.get(i)
      if (kid === undefined) return null
      s.kids.delete(i)
      return kid
    }
    s.scanned = i + 1
    return this.child(s, i, e)
  }

  child (s, i, e) {
    const n = this.source.child(s.node, e)
    return n === null || n === undefined ? null : new Slot(n, [...s.key, i], s.depth + 1)
  }

  /** Expand `s` unless it is already, or is to be streamed. */
  start (s) {
    if (s.state !== NEW) return
    const n = this.source.count?.(s.node)
    if (this.source.stream && !(n <= this.o.bigNode)) { s.state = BIG; return }
    s.state = EXPANDING
    this.charge(s, (n ?? 1) * ENTRY_COST, n ?? 0)
    this.inflight++
    s.p = Promise.resolve(s.node).then(node => this.source.expand(node)).then(x => this.expanded(s, x), err => {
      this.inflight--
      this.charge(s, 0, 0)
      this.pump()
      throw err
    })
    s.p.catch(() => {}) // met by the consumer when it reaches the node, or never
  }

  expanded (s, { entries, cost }) {
    this.inflight--
    if (this.closed) return entries
    this.charge(s, cost ?? entries.length * ENTRY_COST, entries.length)
    s.state = HELD
    s.entries = entries
    s.kids = new Map()
    if (s.depth < this.o.maxDepth && entries.length > 0) this.push(s)
    this.pump()
    return entries
  }

  /** A node too big to hold, reached: its entries are read `window` ahead of the consumer. */
  open (s) {
    s.state = STREAMED
    s.entries = []
    s.kids = new Map()
    s.idle = s.depth < this.o.maxDepth
    this.charge(s, this.o.window * ENTRY_COST, this.o.window)
    s.it = this.source.stream(s.node)[Symbol.asyncIterator]()
  }

  async nextStreamed (s) {
    while (s.entries.length === 0) {
      if (s.ended) {
        if (s.error) throw s.error
        return DONE
      }
      this.fill(s)
      await new Promise(resolve => { s.wake = resolve })
    }
    // taken and looked at in one step: a cursor never sees the window without it and the entry unscanned
    const e = s.entries.shift()
    s.taken = this.kidAt(s, s.base++, e)
    s.pos++
    this.fill(s)
    return e
  }

  /** Read `s`'s stream until `window` entries wait ahead of the consumer; a new entry wakes it and its cursor. */
  async fill (s) {
    if (s.filling || s.ended) return
    s.filling = true
    try {
      while (!s.ended && s.entries.length < this.o.window) {
        const r = await s.it.next()
        if (this.closed || s.state !== STREAMED) return
        if (r.done) s.ended = true
        else {
          s.entries.push(r.value)
          if (s.idle) { s.idle = false; this.push(s); this.pump() }
        }
        wake(s)
      }
    } catch (err) {
      s.error = err; s.ended = true
      wake(s)
    } finally { s.filling = false }
  }

  /** The consumer has left `s`. */
  release (s) {
    this.charge(s, 0, 0)
    s.state = RELEASED
    s.entries = null; s.kids = null
    if (s.it !== null) s.it.return?.()?.catch(() => {})
    this.pump()
  }

  charge (s, cost, count) {
    this.held += cost - s.cost; this.heldEntries += count - s.count
    s.cost = cost; s.count = count
  }

  /** Start expansions ahead, nearest first, while the bounds allow. */
  pump () {
    const o = this.o
    while (!this.closed && this.heap.length > 0 && this.inflight < o.breadth && this.held < o.aheadBytes && this.heldEntries < o.aheadEntries) {
      const s = this.pop()
      s.queued = false
      if (s.state === RELEASED) continue
      // on to the next child not yet scanned (the consumer may be past some)
      const end = s.base + s.entries.length
      while (s.scanned < end) {
        const i = s.scanned++
        const kid = this.child(s, i, s.entries[i - s.base])
        if (kid === null) continue
        s.kids.set(i, kid)
        this.start(kid)
        break
      }
      if (s.scanned < end) this.push(s)
      else if (s.state === STREAMED && !s.ended) s.idle = true
    }
  }

  close () {
    this.closed = true
    this.heap.length = 0
    for (const s of this.stack) if (s.it !== null) s.it.return?.()?.catch(() => {})
    this.stack.length = 0
  }

  // ---- a binary heap of nodes with children to scan, the nearest in depth-first order first ----

  push (s) {
    if (s.queued) return
    s.queued = true
    const key = [...s.key, s.scanned]
    const h = this.heap
    let i = h.length
    h.push(null)
    while (i > 0) {
      const p = (i - 1) >> 1
      if (before(h[p].k, key)) break
      h[i] = h[p]; i = p
    }
    h[i] = { s, k: key }
  }

  pop () {
    const h = this.heap
    const top = h[0]
    const last = h.pop()
    if (h.length > 0) {
      let i = 0
      for (;;) {
        const l = 2 * i + 1
        if (l >= h.length) break
        const r = l + 1
        const m = r < h.length && before(h[r].k, h[l].k) ? r : l
        if (before(last.k, h[m].k)) break
        h[i] = h[m]; i = m
      }
      h[i] = last
    }
    return top.s
  }
}

const DONE = Symbol('done')

function wake (s) { const w = s.wake; s.wake = null; w?.() }

/** a comes before b in depth-first pre-order (a prefix first). */
function before (a, b) {
  const n = Math.min(a.length, b.length)
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i] < b[i]
  return a.length < b.length
}

/** What an entry of a tree held in memory costs, roughly: the object, its name and fields, and its inline bytes. */
export function entryCost (e) { return ENTRY_COST + (e.inline?.length ?? 0) }

/**
 * The directories of one Tree as walkAhead nodes. A node has `entry` (the
 * directory entry entriesOf() takes) and `count` (its entries, when known);
 * `make(parent, entry)` makes the node of a subdirectory entry, whose
 * `entry.entries` is the count its parent's page gave, so its listing is
 * checked against it (FORMAT.md §4.4, dirExpectation).
 * @param {{ entriesOf(dirEntry: object): AsyncIterable<object> }} tree
 * @param {(parent: N, dirEntry: object) => N | null} make
 * @template {{ entry: object, count?: number }} N
 */
export function treeDirs (tree, make) {
  return {
    count: n => n.count,
    async expand (n) {
      const entries = []
      let cost = 0
      for await (const e of tree.entriesOf(n.entry)) { entries.push(e); cost += entryCost(e) }
      return { entries, cost }
    },
    stream: n => tree.entriesOf(n.entry),
    child: (n, e) => e.type === 'dir' ? make(n, { ...e, entries: e.size }) : null
  }
}

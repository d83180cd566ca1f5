// The read pipeline: a file entry's byte range [start, end) as verified
// chunks, in order, with chunk fetches running ahead of the consumer. It maps
// the range onto chunks through the entry's chunk list or its chunk-index
// tree (FORMAT.md §4.5). It decides nothing about trust: every chunk and
// index it sees comes through the source it is given, which verifies
// (verify.js) before handing anything over, and whether a lead chunk may go
// out is verify.js's checkLeadRef.
//
// How far ahead: with a scheduler (the Tree's Mirrors, sched.js), by bytes:
// as far as the scheduler says one reader should (three times the mirrors'
// windows, which grow with measured bandwidth × delay), within the tree's
// memory budget (maxInflightBytes, shared by every read); never fewer than
// `readAhead` chunks. Without one, `readAhead` chunks, as before. The two
// are counted in different bytes: the windows carry stored bytes (what
// crosses the wire), so what is asked for ahead is counted as stored too,
// or a file that compresses 4× would keep a quarter of the windows busy;
// the budget holds decoded bytes (what a chunk is in memory once it
// arrives), so that is what is reserved against it.
// Walking the chunk index runs beside the consumer, not before it: the next
// index page is asked for while the current one's chunks are read, and a
// page's first chunks are asked for as soon as it arrives.
//
// The source (a Tree provides one):
//   chunk(ref, { cache, lend }) -> Promise<Uint8Array> verified bytes of one data chunk
//   chunkIndex(ref, expect) -> Promise<object>      a verified, placed chunk-index page
//   sched (optional)        { readAheadBytes(), held, maxInflightBytes, reserve(n), release(n) }
import { storedSizeOf, checkLeadRef } from '../trust/verify.js'

/**
 * Verified bytes of file `entry` in [start, end), in order, with read-ahead.
 * @param {{ chunk: Function, chunkIndex: Function, sched?: object }} source
 * @param {object} entry a decoded file entry (inline, chunks or index)
 * @param {number} start
 * @param {number} end exclusive
 * @param {{ cache?: boolean, lend?: boolean, readAhead?: number, sched?: object }} [o] cache: keep
 *   fetched chunks in the blob cache; lend: the consumer gives each piece back (buffer-pool.js);
 *   readAhead: chunks always asked for ahead; sched: overrides source.sched
 * @returns {AsyncGenerator<Uint8Array>}
 */
export async function * readChunks (source, entry, start, end, { cache = true, lend = false, readAhead = 8, sched = source.sched } = {}) {
  if (entry.inline) { if (end > start) yield entry.inline.subarray(start, end); return }
  if (end <= start) return
  const queue = [] // { s, p }: asked for, not yet handed out
  const spans = chunkSpans(source, entry, start, end)
  let ahead = 0 // stored bytes in `queue`: against the windows
  let reserved = 0 // decoded bytes in `queue`, reserved with the scheduler: against the budget
  let ended = false
  let failure = null // from walking the index: thrown once the chunks before it are out
  let filling = null
  let wake = null // resolves the consumer's wait when fill() queues a chunk
  const room = () => queue.length < readAhead ||
    (sched != null && ahead < sched.readAheadBytes() && sched.held < sched.maxInflightBytes)
  const fill = async () => {
    try {
      while (!ended && room()) {
        const n = await spans.next()
        if (n.done || ended) { ended = true; break }
        const s = n.value
        const p = source.chunk(s.ref, { cache, lend })
        p.catch(() => {}) // surfaced when awaited in order below
        queue.push({ s, p })
        ahead += storedSizeOf(s.ref)
        reserved += s.ref.size
        sched?.reserve(s.ref.size)
        wake?.(); wake = null
      }
    } catch (err) { failure ??= err; ended = true }
  }
  const kick = () => { if (!filling && !ended) filling = fill().finally(() => { filling = null }) }
  const drop = () => { sched?.release(reserved); ahead = 0; reserved = 0; queue.length = 0 }
  try {
    for (;;) {
      kick()
      if (queue.length === 0) {
        // the first chunk queued, not the whole fill: a lead chunk comes before the index page that follows it
        if (filling) { await Promise.race([filling, new Promise(resolve => { wake = resolve })]); continue }
        if (failure) throw failure
        return
      }
      const { s, p } = queue[0]
      const bytes = await p
      // a lead chunk goes out only once the index confirms it (chunkSpans, FORMAT.md §5.1)
      if (s.confirmed) await s.confirmed
      queue.shift()
      ahead -= storedSizeOf(s.ref)
      reserved -= s.ref.size
      sched?.release(s.ref.size)
      const from = Math.max(start - s.offset, 0)
      const to = Math.min(end - s.offset, bytes.length)
      kick()
      yield bytes.subarray(from, to)
    }
  } finally {
    ended = true
    drop()
    if (filling) { await filling; drop() }
    await spans.return?.()
  }
}

/**
 * The chunks of `entry` that overlap [start, end): { ref, offset }, fetching
 * chunk-index pages through `source.chunkIndex` as needed (the next sibling
 * page is asked for while this one is walked).
 * @returns {AsyncGenerator<{ ref: { hash: string, size: number }, offset: number }>}
 */
export async function * chunkSpans (source, entry, start, end) {
  if (entry.chunks) {
    let off = 0
    for (const c of entry.chunks) {
      if (off + c.size > start && off < end) yield { ref: c, offset: off }
      off += c.size
    }
    return
  }
  // version 2: the entry names the first chunk beside the index (FORMAT.md §5.1, §12.6), so a
  // read that starts inside it asks for it at once, before any index page has arrived. Its bytes
  // are another blob than the index's first chunk if the publisher signed two first chunks, and a
  // read inside the lead would then show other bytes than every read past it (docs/TRUST.md rule 3:
  // one file, one content). So the lead span carries `confirmed`, which settles once the index's
  // first leaf child has been compared with it; readChunks hands out no byte of the lead before.
  // The walk from offset 0 starts here, beside the lead's fetch: an honest tree with a one-level
  // index still has its first byte one round trip after the directory page.
  if (!entry.lead || start >= entry.lead.size) {
    for await (const s of indexSpans(source, entry, start, end)) {
      if (s.offset === 0 && entry.lead) checkLeadRef(entry.lead, s.ref)
      yield s
    }
    return
  }
  const walk = indexSpans(source, entry, 0, end)
  const first = walk.next() // runs to the first leaf child on its own: nothing waits for the consumer
  const confirmed = first.then(n => checkLeadRef(entry.lead, n.done || n.value.offset !== 0 ? null : n.value.ref))
  confirmed.catch(() => {}) // surfaced by whoever awaits it first
  let open = true
  try {
    yield { ref: entry.lead, offset: 0, confirmed }
    await confirmed
    open = false
    // the rest of the walk from 0 is the walk from `start`: the lead is [0, lead.size) and start lies in it
    for await (const s of walk) yield s
  } finally {
    // the walk may be on its way to the first leaf: let it end there, not wait for it
    if (open) first.then(() => walk.return(), () => {}).catch(() => {})
  }
}

async function * indexSpans (source, entry, start, end) {
  const page = (ref, level, bytes) => {
    const p = source.chunkIndex(ref, { level, bytes })
    p.catch(() => {}) // surfaced when awaited in walk
    return p
  }
  async function * walk (pending, level, base) {
    const cs = (await pending).children
    let off = base
    let ahead = null // the next sibling page, asked for early
    for (let i = 0; i < cs.length; i++) {
      const c = cs[i]
      if (off >= end) return
      if (off + c.bytes > start) {
        if (level === 1) yield { ref: c, offset: off }
        else {
          // this page first (it is needed now, and gets the first free connection), then the next
          const here = ahead ?? page(c, level - 1, c.bytes)
          const next = cs[i + 1]
          ahead = next && off + c.bytes < end ? page(next, level - 1, next.bytes) : null
          yield * walk(here, level - 1, off)
        }
      }
      off += c.bytes
    }
  }
  yield * walk(page(entry.index, entry.index.levels, entry.size), entry.index.levels, 0)
}

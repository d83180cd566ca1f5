// One large file chunked on several threads, with exactly the cut points a
// single sequential pass gives (FORMAT.md §5: what a file becomes must not
// depend on how it was read).
//
// FastCDC's next cut is a function of where the current chunk starts and of
// the at most CHUNK_MAX bytes after it: cut(p). A sequential pass is the chain
// 0, cut(0), cut(cut(0)), ... Here the file is split into segments; a thread
// runs the chain from each segment's first byte, as if a chunk started there,
// through the last chunk that starts inside the segment (`cutsFrom`). Those
// chains are candidates: a segment's chain need not be the true one at
// first, since the true chunk that crosses into the segment does not start
// at its first byte. Stitching (`stitch`) walks the true chain across each
// boundary one cut(p) at a time, computed here from the file's bytes, until
// it lands on a point of the segment's chain; from that point on the two
// chains are the same chain (same start, same bytes, same function), so the
// rest of the segment's cuts are taken as they are. A segment whose chain the
// true one never meets (data with no cut points, cut every CHUNK_MAX bytes
// from a different phase; periodic data) is walked here to its end: the
// result is still exact, only slower. Nothing is assumed about how soon two
// chains meet; test/builder/big-file.test.js checks the cuts against
// chunkLengths on random, zero, periodic and adversarial data.
//
// Only then are the true chunks hashed and stored (`hashChunks`, again on
// several threads; in format version 2 each is compressed there too, as
// chunk-file.js storeChunk does, never on the main thread): a candidate
// chunk that is not a true one is never written, so h/ is the same as after
// a sequential build. The whole file's
// SHA-256 is one sequential pass (`hashWhole`), run on a thread of its own
// beside the others. The file is opened once (by the thread that found it
// large, relative to its directory's checked handle, chunk-file.js); every
// thread reads it with positional reads through that descriptor, and its
// size and mtime are checked again after the last read.
//
// Format version 2 (FORMAT.md §5.1): a file of at least LEAD_MIN_FILE bytes
// starts with a chunk of exactly LEAD_CHUNK bytes, and the true chain starts
// there: segment 0 runs its chain from LEAD_CHUNK, not 0, and the lead chunk
// is hashed and stored with segment 0's chunks.
import { readSync, fstatSync, closeSync } from 'node:fs'
import { createHash } from 'node:crypto'
import { nextCut, leadCut, CHUNK_MAX } from 'rotree-client/format'
import { BuildInputError } from 'rotree-client/errors'
import { changed, statOf, storeChunk } from './chunk-file.js'

/** Files of at least this many bytes are chunked on several threads (when there are ≥ 2). */
export const BIG_FILE = 64 << 20
/** Bytes of a segment: several per thread, so a slow thread does not hold the rest up. */
export const SEGMENT = 32 << 20

// fill buf with the file's bytes [pos, pos + len), by positional reads
function preadFully (fd, buf, len, pos, rel) {
  let got = 0
  while (got < len) {
    let n
    try { n = readSync(fd, buf, got, len - got, pos + got) } catch (err) {
      throw new BuildInputError(`${rel}: cannot read (${err.code})`, { cause: err, details: { path: rel } })
    }
    if (n === 0) throw changed({ rel }) // shorter than its stat: it shrank
    got += n
  }
}

/**
 * The chain of cut points that starts at `from`, through the end of the last
 * chunk that starts before `to` (worker side).
 * @param {number} fd @param {number} from @param {number} to @param {number} size the file's size
 * @param {Buffer} buf ≥ 2 × CHUNK_MAX bytes
 * @returns {number[]} the end of each chunk, in order (the last one ≥ to, or = size)
 */
export function cutsFrom (fd, from, to, size, buf, rel, aborted) {
  const ends = []
  let base = 0; let len = 0 // buf holds the file's bytes [base, base + len)
  for (let p = from; p < to && p < size;) {
    if (p + CHUNK_MAX > base + len && base + len < size) {
      if (aborted?.()) return null
      base = p; len = Math.min(buf.length, size - p)
      preadFully(fd, buf, len, base, rel)
    }
    // either CHUNK_MAX bytes from p are in buf, or every byte up to the end of the file
    const n = nextCut(buf, p - base, len, base + len === size)
    p += n
    ends.push(p)
  }
  return ends
}

/**
 * Hash and store chunks given as [offset, length] pairs (worker side), each
 * as the tree's format version stores it (chunk-file.js storeChunk).
 * @param {1|2} [version=1]
 * @returns {{ refs: import('./chunk-file.js').ChunkRef[], written: boolean[] }}
 */
export function hashChunks (fd, pairs, store, buf, rel, aborted, version = 1, seal = null) {
  const refs = []; const written = []
  let base = 0; let len = 0
  for (let i = 0; i < pairs.length; i += 2) {
    const off = pairs[i]; const n = pairs[i + 1]
    if (off < base || off + n > base + len) {
      if (aborted?.()) return null
      // read ahead as many whole chunks as fit
      let end = off + n
      for (let j = i + 2; j < pairs.length && pairs[j] + pairs[j + 1] - off <= buf.length; j += 2) end = pairs[j] + pairs[j + 1]
      base = off; len = end - off
      preadFully(fd, buf, len, base, rel)
    }
    const c = storeChunk(buf.subarray(off - base, off - base + n), store, version, seal)
    written.push(c.written)
    refs.push(c.ref)
  }
  return { refs, written }
}

/** The SHA-256 of the file's first `size` bytes, one sequential pass (worker side). */
export function hashWhole (fd, size, buf, rel, aborted) {
  const h = createHash('sha256')
  for (let pos = 0; pos < size;) {
    if (aborted?.()) return null
    const n = Math.min(buf.length, size - pos)
    preadFully(fd, buf, n, pos, rel)
    h.update(buf.subarray(0, n))
    pos += n
  }
  return h.digest('hex')
}

/**
 * The true chain across every boundary, from the candidate chains of the
 * segments (main side). `cutAt(p)` computes one true cut from the file.
 * @param {number[]} starts each segment's first byte; starts[0] is where the true
 *   chain starts (0, or the end of the lead chunk: FORMAT.md §5.1)
 * @param {number[][]} chains each segment's cutsFrom(starts[k], starts[k + 1])
 * @param {(p: number) => number} cutAt the end of the chunk that starts at p
 * @returns {{ ends: number[], walked: number }} every chunk's end; how many cuts were computed here
 */
export function stitch (starts, chains, cutAt) {
  const ends = [...chains[0]] // segment 0's chain starts where the true one does: it is the true one
  let walked = 0
  for (let k = 1; k < starts.length; k++) {
    const next = k + 1 < starts.length ? starts[k + 1] : Infinity
    const chain = chains[k]
    let t = ends.length ? ends[ends.length - 1] : starts[0]
    if (t >= next) continue // a chunk of an earlier segment ran past this one
    // the candidate chain's points: its start, and the end of each of its chunks
    const points = new Map([[starts[k], -1]])
    chain.forEach((p, i) => points.set(p, i))
    while (t < next && !points.has(t)) {
      t = cutAt(t); walked++
      ends.push(t)
    }
    // met: the rest of the candidate chain is the true one
    if (points.has(t)) for (let i = points.get(t) + 1; i < chain.length; i++) ends.push(chain[i])
  }
  return { ends, walked }
}

/**
 * Chunk a large file on the pool's threads (main side).
 * @param {{ task: (msg: object) => Promise<any> }} pool runs one big-file task on a worker
 * @param {{ fd: number, st: import('./chunk-file.js').FileStat, readStart: number }} big what chunkFileSync handed back
 * @param {string} rel the file's path in the tree, for errors
 * @param {number} [segment] bytes per segment
 * @param {1|2} [version=1] the tree's format version: how chunks are stored, and
 *   whether the file starts with a lead chunk (FORMAT.md §5.1)
 * @returns {Promise<import('./chunk-file.js').FileResult>}
 */
export async function chunkBig (pool, big, rel, segment = SEGMENT, version = 1) {
  const { fd, st } = big
  try {
    const size = st.size
    const lead = leadCut(size, version) // 0 or LEAD_CHUNK (< LEAD_MIN_FILE ≤ size)
    // segment k ≥ 1 starts at k × segment; segment 0 at the end of the lead chunk
    const starts = [lead]
    for (let p = segment; p < size; p += segment) if (p > lead) starts.push(p)
    // the whole-file hash is the longest task: it goes first
    const whole = pool.task({ type: 'whole', fd, size, rel })
    // progress inside the file (the build's bar): half a segment's bytes when it is cut, half when stored
    const moved = n => pool.onBigBytes?.(rel, n / 2)
    const chains = await Promise.all(starts.map((s, k) => pool.task({ type: 'cuts', fd, from: s, to: starts[k + 1] ?? size, size, rel }).then(c => { moved((starts[k + 1] ?? size) - s); return c })))
    const buf = Buffer.allocUnsafe(CHUNK_MAX)
    const cutAt = p => {
      const n = Math.min(CHUNK_MAX, size - p)
      preadFully(fd, buf, n, p, rel)
      return p + nextCut(buf, 0, n, p + n === size)
    }
    const { ends } = stitch(starts, chains, cutAt)
    if (lead) ends.unshift(lead)
    if (ends[ends.length - 1] !== size) throw changed({ rel })
    // the true chunks, grouped by the segment they start in (the lead chunk
    // with segment 0) for the threads that hash and store them
    const groups = starts.map(() => [])
    for (let i = 0, p = 0, k = 0; i < ends.length; p = ends[i++]) {
      while (k + 1 < starts.length && p >= starts[k + 1]) k++
      groups[k].push(p, ends[i] - p)
    }
    const stored = await Promise.all(groups.map(async pairs => {
      if (!pairs.length) return { refs: [], written: [] }
      const r = await pool.task({ type: 'write', fd, pairs, rel })
      let n = 0
      for (let j = 1; j < pairs.length; j += 2) n += pairs[j]
      moved(n)
      return r
    }))
    const sha256 = await whole
    const after = fstatSync(fd)
    if (!after.isFile() || after.size !== size || after.mtimeMs !== st.mtimeMs) throw changed({ rel })
    // in file order: the groups are, and so is each group's list (its size is its pair's length)
    const chunks = stored.flatMap(s => s.refs); const written = stored.flatMap(s => s.written)
    return { size, mtime: Math.floor(after.mtimeMs), exec: (after.mode & 0o111) !== 0, st: statOf(after), readStart: big.readStart, sha256, chunks, written }
  } finally {
    closeSync(fd)
  }
}

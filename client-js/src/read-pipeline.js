// The read pipeline: a file entry's byte range [start, end) as verified
// chunks, in order, with a window of chunk fetches running ahead of the
// consumer. It maps the range onto chunks through the entry's chunk list or
// its chunk-index tree (FORMAT.md §4.5). It decides nothing about trust: every
// chunk and index it sees comes through the source it is given, which
// verifies (verify.js) before handing anything over.
//
// The source (a Tree provides one):
//   chunk(ref, { cache })   -> Promise<Uint8Array>  verified bytes of one data chunk
//   chunkIndex(ref, expect) -> Promise<object>      a verified, placed chunk-index page

/**
 * Verified bytes of file `entry` in [start, end), in order, with read-ahead.
 * @param {{ chunk: Function, chunkIndex: Function }} source
 * @param {object} entry a decoded file entry (inline, chunks or index)
 * @param {number} start
 * @param {number} end exclusive
 * @param {{ cache?: boolean, readAhead?: number }} [o] cache: keep fetched chunks in the blob cache
 * @returns {AsyncGenerator<Uint8Array>}
 */
export async function * readChunks (source, entry, start, end, { cache = true, readAhead = 8 } = {}) {
  if (entry.inline) { if (end > start) yield entry.inline.subarray(start, end); return }
  if (end <= start) return
  const window = []
  const spans = chunkSpans(source, entry, start, end)
  const fill = async () => {
    while (window.length < readAhead) {
      const n = await spans.next()
      if (n.done) return
      const s = n.value
      const p = source.chunk(s.ref, { cache })
      p.catch(() => {}) // surfaced when awaited in order below
      window.push({ s, p })
    }
  }
  await fill()
  try {
    while (window.length) {
      const { s, p } = window.shift()
      const bytes = await p
      const from = Math.max(start - s.offset, 0)
      const to = Math.min(end - s.offset, bytes.length)
      await fill()
      yield bytes.subarray(from, to)
    }
  } finally {
    await spans.return?.()
  }
}

/**
 * The chunks of `entry` that overlap [start, end): { ref, offset }, fetching
 * chunk-index pages through `source.chunkIndex` as needed.
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
  async function * walk (ref, level, bytes, base) {
    const idx = await source.chunkIndex(ref, { level, bytes })
    let off = base
    for (const c of idx.children) {
      if (off >= end) return
      if (off + c.bytes > start) {
        if (level === 1) yield { ref: { hash: c.hash, size: c.size }, offset: off }
        else yield * walk(c, level - 1, c.bytes, off)
      }
      off += c.bytes
    }
  }
  yield * walk(entry.index, entry.index.levels, entry.size, 0)
}

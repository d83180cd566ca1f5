// What the gateway needs from a pinned Tree view, in one file. A request
// resolves its path once (Tree.resolve) and then serves, lists or reads the
// resolved entry (Tree.readEntry, Tree.entriesOf), instead of resolving again
// in stat() and in readRange() on every small-file request. Every byte still
// passes verify.js. readOneChunk is the one place that uses an internal
// (_blob): a fast path for a range inside one chunk.
import { createHash } from 'node:crypto'
import { toStat } from 'rotree-client'
import { contentType } from './mime.js'
import { treePath } from './paths.js'

/**
 * @param {import('./mount.js').Pin} pin
 * @param {string[]} segments names below the tree root
 * @param {boolean} [follow=true] follow a final symlink
 * @returns {Promise<object>} the verified entry (a directory's carries `dir`, a file's its chunks)
 */
export async function resolve (pin, segments, follow = true) {
  return pin.view.resolve(treePath(segments), { follow })
}

/**
 * Verified bytes of `entry` in [start, end), in order. Reads larger than an
 * eighth of the memory cache stream past it (as Tree.readRange does), so one
 * big download does not flush every directory page.
 * @returns {AsyncGenerator<Uint8Array>}
 */
export function readEntry (pin, entry, start, end) {
  return pin.view.readEntry(entry, start, end)
}

/**
 * The fast path for the common small file: when [start, end) lies inside one
 * chunk listed in the entry, its verified bytes, from the same cache and the
 * same verified fetch as Tree._read uses, without an async generator per
 * request. null when the range needs more (several chunks, a chunk index).
 * @returns {Promise<Uint8Array>|null}
 */
export function readOneChunk (pin, entry, start, end) {
  const cs = entry.chunks
  if (cs === undefined) return null
  let off = 0
  for (let i = 0; i < cs.length; i++) {
    const c = cs[i]
    if (start < off + c.size) {
      if (end > off + c.size) return null
      const from = start - off
      const to = end - off
      return pin.view._blob(c, 'data', end - start <= pin.view.opts.cacheBytes / 8)
        .then(b => from === 0 && to === b.length ? b : b.subarray(from, to))
    }
    off += c.size
  }
  return null
}

/** A directory's entries (raw, verified) in name order, one page at a time. */
export function entriesOf (pin, dirEntry) { return pin.view.entriesOf(dirEntry) }

export { toStat }

const META = new WeakMap() // file entry → its response metadata; entries live as long as their cached page

/**
 * A file's validators and type. The ETag is the content's identity in the
 * signed tree, so it is strong (RFC 9110 §8.8.1) and the same on every
 * gateway: the chunk or index handle, a hash over the chunk list, or for an
 * inline file the SHA-256 of its bytes.
 */
export function fileMeta (entry) {
  let m = META.get(entry)
  if (m !== undefined) return m
  let id
  if (entry.inline) id = sha(entry.inline)
  else if (entry.index) id = entry.index.hash
  else if (entry.chunks.length === 1) id = entry.chunks[0].hash
  else id = sha(entry.chunks.map(c => `${c.hash} ${c.size}`).join('\n'))
  const d = new Date(entry.mtime)
  m = {
    etag: `"${id}"`,
    lastModified: Number.isNaN(d.getTime()) ? null : d.toUTCString(),
    mtimeS: Math.floor(entry.mtime / 1000),
    type: contentType(entry.name),
    size: entry.size
  }
  META.set(entry, m)
  return m
}

/** A directory's ETag for one representation ('html', 'json', 'dav'): its top page's handle. */
export function dirEtag (dirEntry, kind) { return `"d-${dirEntry.dir.hash}-${kind}"` }

function sha (bytes) { return createHash('sha256').update(bytes).digest('hex') }

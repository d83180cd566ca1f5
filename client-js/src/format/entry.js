// FORMAT.md §4.2 (and §12.6, §12.7 for version 2): one directory entry. An
// entry is the SFSRO inode folded into its directory (bulk stat: a listing
// needs no further fetches).
//
//   entry := lbytes(name) u8(kind) u8(flags) sint(mtime ms) uint(size) [sha256] body
//   kind 1 file, inline   body := size bytes of content (size ≤ INLINE_MAX; version 2: INLINE_MAX_V2)
//   kind 2 file, chunks   body := uint(n) n × ref(data chunk)   (Σ size = size)
//   kind 3 file, index    body := uint(levels) ref(chunk index) [ref(first chunk): version 2]
//   kind 4 directory      body := ref(top page)   (size = entry count)
//   kind 5 symlink        body := size bytes of target (UTF-8)
//   flags bit 0: executable (files only); other bits must be zero.
//   sha256: version 2, kinds 2 and 3 only: 32 bytes, SHA-256 of the whole file.
//   first chunk (version 2, kind 3): the file's first chunk, also the first leaf
//   of its index, named here so a reader asks for it beside the index
//   (FORMAT.md §12.6: the lead ref).
//   ref: ref.js (version 1: hash uint(size); version 2 adds the codec and decoded size).
import { BadFormatError } from '../errors.js'
import { toHex, fromHex, utf8, decodeUtf8 } from './bytes.js'
import { readRef, writeRef, versionOf } from './ref.js'
import {
  HASH_LEN, MAX_NAME, MAX_SYMLINK, inlineMax, MAX_DIRECT_CHUNKS, CHUNK_MAX, MAX_BLOB, MAX_INDEX_LEVELS
} from './limits.js'

export const KIND = { INLINE: 1, CHUNKS: 2, INDEX: 3, DIR: 4, SYMLINK: 5 }
const FLAG_EXEC = 1

/** A name is 1..255 bytes of UTF-8 with no '/' or NUL, and not '.' or '..'. */
export function checkName (name, bytes = utf8.encode(name)) {
  if (bytes.length === 0 || bytes.length > MAX_NAME) return false
  if (name === '.' || name === '..') return false
  for (const b of bytes) if (b === 0 || b === 0x2f) return false
  return true
}

/**
 * @typedef {{ hash: string, size: number, storedSize?: number, codec?: 'none'|'deflate-raw' }} Ref
 *   hash: 64 lowercase hex; size: the blob's bytes (version 2: its decoded bytes; storedSize
 *   and codec say how it is stored, ref.js)
 * @typedef {{ name: string, type: 'file'|'dir'|'symlink', size: number, mtime: number,
 *   exec: boolean, inline?: Uint8Array, chunks?: Ref[], index?: Ref & { levels: number }, lead?: Ref,
 *   dir?: Ref, target?: string, sha256?: string|null }} Entry  sha256: version 2 files (hex for
 *   chunked files, null for inline ones, whose hash is that of their bytes); lead: version 2
 *   files under a chunk index, their first chunk
 */

const HEX64 = /^[0-9a-f]{64}$/

/** @param {import('./bytes.js').Writer} w @param {Entry} e @param {{ version?: 1|2 }} [o] */
export function writeEntry (w, e, o) {
  const version = versionOf(o)
  const nameBytes = utf8.encode(e.name)
  if (!checkName(e.name, nameBytes)) throw new RangeError('bad entry name: ' + JSON.stringify(e.name))
  w.lbytes(nameBytes)
  if (e.type === 'file') {
    const kind = e.inline ? KIND.INLINE : e.index ? KIND.INDEX : KIND.CHUNKS
    w.byte(kind); w.byte(e.exec ? FLAG_EXEC : 0); w.sint(e.mtime); w.uint(e.size)
    if (kind === KIND.INLINE) {
      if (e.inline.length !== e.size || e.size > inlineMax(version)) throw new RangeError('bad inline size')
      w.bytes(e.inline)
      return
    }
    // FORMAT.md §12.7: the whole file's SHA-256, right after the size
    if (version === 2) {
      if (typeof e.sha256 !== 'string' || !HEX64.test(e.sha256)) throw new RangeError('a version-2 chunked file needs its sha256 (64 hex)')
      w.bytes(fromHex(e.sha256))
    }
    if (kind === KIND.INDEX) {
      w.uint(e.index.levels); writeRef(w, e.index, version)
      if (version === 2) {
        if (!e.lead || e.lead.size > e.size) throw new RangeError('a version-2 file under a chunk index needs its first chunk\'s ref (lead)')
        writeRef(w, e.lead, version)
      }
    } else {
      if (e.chunks.length < 1 || e.chunks.length > MAX_DIRECT_CHUNKS) throw new RangeError('bad chunk count')
      w.uint(e.chunks.length)
      for (const c of e.chunks) writeRef(w, c, version)
    }
  } else if (e.type === 'dir') {
    w.byte(KIND.DIR); w.byte(0); w.sint(e.mtime); w.uint(e.size)
    writeRef(w, e.dir, version)
  } else if (e.type === 'symlink') {
    const t = utf8.encode(e.target)
    if (t.length === 0 || t.length > MAX_SYMLINK) throw new RangeError('bad symlink target')
    w.byte(KIND.SYMLINK); w.byte(0); w.sint(e.mtime); w.uint(t.length); w.bytes(t)
  } else {
    throw new RangeError('bad entry type: ' + e.type)
  }
}

/**
 * @param {import('./bytes.js').Reader} r @param {{ version?: 1|2 }} [o]
 * @returns {Entry & { nameBytes: Uint8Array }}
 */
export function readEntry (r, o) {
  const version = versionOf(o)
  const nameBytes = r.lbytes(MAX_NAME)
  const name = decodeUtf8(nameBytes)
  if (!checkName(name, nameBytes)) r.fail('bad entry name')
  const kind = r.byte()
  const flags = r.byte()
  const mtime = r.sint()
  if (flags & ~FLAG_EXEC || (flags && kind > KIND.INDEX)) r.fail('bad entry flags')
  const e = { name, nameBytes, type: 'file', size: 0, mtime, exec: flags === FLAG_EXEC }
  switch (kind) {
    case KIND.INLINE:
      e.size = r.uint(inlineMax(version))
      e.inline = r.bytes(e.size)
      // FORMAT.md §12.7: an inline file's SHA-256 is that of its bytes, not
      // recorded; null says "version 2: compute it when asked" (tree.js toStat)
      if (version === 2) e.sha256 = null
      break
    case KIND.CHUNKS: {
      e.size = r.uint()
      if (version === 2) e.sha256 = toHex(r.bytes(HASH_LEN))
      const n = r.uint(MAX_DIRECT_CHUNKS)
      if (n === 0) r.fail('empty chunk list')
      e.chunks = new Array(n)
      let sum = 0
      for (let i = 0; i < n; i++) {
        const c = readRef(r, version, CHUNK_MAX)
        e.chunks[i] = c; sum += c.size
      }
      if (sum !== e.size) r.fail('chunk sizes do not add up to file size')
      break
    }
    case KIND.INDEX: {
      e.size = r.uint()
      if (version === 2) e.sha256 = toHex(r.bytes(HASH_LEN))
      const levels = r.uint(MAX_INDEX_LEVELS)
      if (levels === 0) r.fail('index with zero levels')
      if (e.size === 0) r.fail('empty index')
      e.index = readRef(r, version, MAX_BLOB)
      e.index.levels = levels
      if (version === 2) {
        e.lead = readRef(r, version, CHUNK_MAX)
        if (e.lead.size > e.size) r.fail('first chunk larger than the file')
      }
      break
    }
    case KIND.DIR:
      e.type = 'dir'
      e.size = r.uint()
      e.dir = readRef(r, version, MAX_BLOB)
      break
    case KIND.SYMLINK:
      e.type = 'symlink'
      e.size = r.uint(MAX_SYMLINK)
      if (e.size === 0) r.fail('empty symlink target')
      e.target = decodeUtf8(r.bytes(e.size))
      if (e.target.includes('\0')) r.fail('NUL in symlink target')
      break
    default:
      r.fail('unknown entry kind ' + kind)
  }
  return e
}

/** The blob references an entry holds, in file order (for fetchers and pull). */
export function entryRefs (e) {
  if (e.type === 'dir') return [e.dir]
  if (e.chunks) return e.chunks
  if (e.index) return e.lead ? [e.index, e.lead] : [e.index]
  return []
}

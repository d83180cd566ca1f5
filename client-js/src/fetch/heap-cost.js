// What a verified blob costs in memory once decoded: what the blob cache
// charges for it (docs/TRUST.md rule 9: a reader's memory stays bounded by
// what it was configured to spend, whatever the publisher put in a page).
//
// Charging a directory page its encoded size let a gateway grow to 3 GB while
// reporting 64 MiB cached: a decoded page is the encoded buffer (entries keep
// subarrays of it) plus one object per entry, a name string, a view of the
// name's bytes and a hex string per blob reference. Measured on Node 20 with
// process.memoryUsage() (heapUsed + arrayBuffers, after gc) over 40 decoded
// copies of 4,000-entry leaf pages with 21-byte names (and one 4,096-child
// index page), per entry beyond the encoded bytes:
//   one-chunk files 448 B, four-chunk files 833 B (so ~128 B per chunk ref),
//   directories 392 B, inline files 368 B, symlinks 313 B, index children 280 B,
//   chunk-index children ~100 B (a 4,096-child page).
// Format version 2 entries (FORMAT.md §12.6, §12.7) measured the same way:
// one-chunk files 544 B, four-chunk files 855 B: the file's SHA-256 string
// adds ~100 B per chunked file, a ref's stored size and codec almost nothing.
// The constants below round those up: checked the same way on pages of 2,000
// entries of each kind (and 200-byte names), the estimate came out 1.02-1.24x
// the measured heap, chunk indexes 1.08x. A page of one-chunk files costs ~8x
// its encoded size, a chunk index ~4x, a data chunk its own length.

const ENTRY = 300 // the entry object, its slot, its name string and name view
const REF = 130 // { hash, size } and a 64-character hex string
const VIEW = 80 // a Uint8Array view over the page (inline content)
const INDEX_CHILD = 290 // { firstName, firstNameBytes, hash, size, entries }
const CINDEX_CHILD = 110 // { hash, size, bytes } and the hex string
const BLOB = 200 // the Uint8Array and ArrayBuffer objects around any blob
const SHA = 110 // a version-2 chunked file's SHA-256, a 64-character hex string

/**
 * Bytes of memory a verified, decoded blob holds.
 * @param {'data'|'dir'|'cindex'} kind
 * @param {any} value what VERIFIERS[kind] returned
 * @param {number} size the blob's encoded size
 */
export function heapCost (kind, value, size) {
  let n = size + BLOB
  if (kind === 'dir') {
    if (value.kind === 'leaf') {
      for (const e of value.entries) {
        n += ENTRY + 2 * e.name.length
        if (typeof e.sha256 === 'string') n += SHA
        if (e.chunks) n += REF * e.chunks.length
        else if (e.index || e.dir) n += e.lead ? 2 * REF : REF
        else if (e.inline) n += VIEW
        else if (e.target !== undefined) n += 2 * e.target.length
      }
    } else {
      for (const c of value.children) n += INDEX_CHILD + 2 * c.firstName.length
    }
  } else if (kind === 'cindex') {
    n += CINDEX_CHILD * value.children.length
  }
  return n
}

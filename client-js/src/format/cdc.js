// FORMAT.md §5: content-defined chunking, FastCDC (Xia et al., USENIX ATC 2016)
// with normalized chunking level 2. Cut points depend only on the bytes near
// them, so an insertion changes only the chunks around it.
//
// GEAR[i] = first 4 bytes (big-endian) of SHA-256("rotree-gear" || byte i). It is
// pinned as a constant so the chunker needs no hash at load time;
// test/vectors/vectors.test.js recomputes it from that definition.
import { CHUNK_MIN, CHUNK_AVG, CHUNK_MAX } from './limits.js'
import { GEAR } from './gear.js'

const BITS = Math.log2(CHUNK_AVG) // 18
// the fingerprint shifts left, so its top bits depend on the last 32 bytes; masks test the top bits
const MASK_S = ~0 << (32 - (BITS + 2)) // 20 bits before the average size: harder to cut
const MASK_L = ~0 << (32 - (BITS - 2)) // 16 bits after it: easier to cut
// The same table read as signed 32-bit words. The fingerprint is kept as an
// int32 (`| 0`) rather than a uint32 (`>>> 0`): the bits, and so every cut
// point, are identical (addition and shifts are the same modulo 2^32, the
// masks test the same bits), but V8 keeps an int32 in a register where a
// uint32 above 2^31 becomes a double. Several times faster on this loop, the
// hottest of a build (docs/BENCHMARKS.md P6, notes).
const GEAR32 = new Int32Array(GEAR.buffer, GEAR.byteOffset, GEAR.length)

/**
 * Length of the next chunk at the start of buf[start..end).
 * @param {Uint8Array} buf @param {number} start @param {number} end
 * @param {boolean} final true when no more data follows end (the last chunk may be short)
 * @returns {number} chunk length, or 0 when more data is needed to decide
 */
export function nextCut (buf, start, end, final) {
  const n = end - start
  if (n <= CHUNK_MIN) return final ? n : 0
  if (n < CHUNK_MAX && !final) {
    // deciding needs up to CHUNK_MAX bytes unless a cut point turns up sooner
    const cut = scan(buf, start, end)
    return cut === end - start ? 0 : cut
  }
  return scan(buf, start, Math.min(end, start + CHUNK_MAX))
}

// The loop is unrolled four times: the same test at every byte, in the same
// order, so the same cuts, with a quarter of the loop's own compares and
// jumps (docs/BENCHMARKS.md P6, notes: FastCDC was the slowest step of
// chunking a large file, slower than its SHA-256).
function scan (buf, start, end) {
  const normal = Math.min(end, start + CHUNK_AVG)
  const gear = GEAR32
  let fp = 0
  let i = start + CHUNK_MIN
  for (; i + 4 <= normal; i += 4) {
    fp = ((fp << 1) + gear[buf[i]]) | 0; if ((fp & MASK_S) === 0) return i + 1 - start
    fp = ((fp << 1) + gear[buf[i + 1]]) | 0; if ((fp & MASK_S) === 0) return i + 2 - start
    fp = ((fp << 1) + gear[buf[i + 2]]) | 0; if ((fp & MASK_S) === 0) return i + 3 - start
    fp = ((fp << 1) + gear[buf[i + 3]]) | 0; if ((fp & MASK_S) === 0) return i + 4 - start
  }
  for (; i < normal; i++) {
    fp = ((fp << 1) + gear[buf[i]]) | 0
    if ((fp & MASK_S) === 0) return i + 1 - start
  }
  for (; i + 4 <= end; i += 4) {
    fp = ((fp << 1) + gear[buf[i]]) | 0; if ((fp & MASK_L) === 0) return i + 1 - start
    fp = ((fp << 1) + gear[buf[i + 1]]) | 0; if ((fp & MASK_L) === 0) return i + 2 - start
    fp = ((fp << 1) + gear[buf[i + 2]]) | 0; if ((fp & MASK_L) === 0) return i + 3 - start
    fp = ((fp << 1) + gear[buf[i + 3]]) | 0; if ((fp & MASK_L) === 0) return i + 4 - start
  }
  for (; i < end; i++) {
    fp = ((fp << 1) + gear[buf[i]]) | 0
    if ((fp & MASK_L) === 0) return i + 1 - start
  }
  return end - start
}

/**
 * FORMAT.md §5.1 (format version 2): the lead chunk. A file of at least
 * LEAD_MIN_FILE bytes starts with a chunk of exactly LEAD_CHUNK bytes, and
 * FastCDC goes on from there. A verified byte needs its whole chunk, and a
 * 256 KiB chunk on a connection still in TCP slow start (10 segments, ~14 KB,
 * in its first round trip, doubling after) takes 4-5 round trips to arrive;
 * 12 KiB and the response's headers fit in the first window, so a reader's
 * first verified byte comes one round trip after it asks (docs/BENCHMARKS.md
 * P3t: its format-1 rows, whose first chunk is ~256 KiB, against format 2's).
 * Cuts after it are content-defined as before: FastCDC from offset 12 KiB
 * meets the chain from offset 0 at its first common cut point, so only the
 * first chunk or two differ from a file cut without a lead chunk.
 */
export const LEAD_CHUNK = 12 * 1024
export const LEAD_MIN_FILE = 1024 * 1024

/** The lead chunk's length for a file of `size` bytes in format `version`, or 0 for none. */
export function leadCut (size, version = 1) {
  return version >= 2 && size >= LEAD_MIN_FILE ? LEAD_CHUNK : 0
}

/**
 * Split a whole buffer (a whole file) into chunk lengths (tests, small inputs).
 * @param {Uint8Array} buf @param {{ version?: number }} [o] version 2: with a lead chunk (leadCut)
 */
export function chunkLengths (buf, { version = 1 } = {}) {
  const out = []
  const lead = leadCut(buf.length, version)
  if (lead) out.push(lead)
  for (let pos = lead; pos < buf.length;) {
    const len = nextCut(buf, pos, buf.length, true)
    out.push(len); pos += len
  }
  return out
}

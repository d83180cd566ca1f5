// C2SP tlog-proof (c2sp.org/tlog-proof@v1): an offline-verifiable proof that
// an entry is in a log, a text of lines: the header, an optional `extra`
// line, `index <n>`, the RFC 6962 §2.1.1 inclusion proof (one base64 hash a
// line, from the leaf's sibling up to the root's child), an empty line, and
// the log's checkpoint verbatim (a signed note, with any cosignatures).
// Nothing of rotree here: docs/FORMAT.md §13.2 is what rotree puts in it.
import { TlogError, HASH_SIZE, verifyInclusion } from './hash.js'
import { encodeBase64, decodeBase64 } from './note.js'

export const TLOG_PROOF_HEADER = 'c2sp.org/tlog-proof@v1'
const MAX_PROOF_HASHES = 63

/**
 * @param {{ index: number, proof: Uint8Array[], checkpoint: Uint8Array|string, extra?: Uint8Array }} p
 * @returns {string}
 */
export function formatTlogProof ({ index, proof, checkpoint, extra }) {
  if (!Number.isSafeInteger(index) || index < 0) throw new TlogError(`bad leaf index ${index}`)
  const cp = typeof checkpoint === 'string' ? checkpoint : new TextDecoder('utf-8', { fatal: true }).decode(checkpoint)
  const lines = [TLOG_PROOF_HEADER]
  if (extra !== undefined) lines.push(`extra ${encodeBase64(extra)}`)
  lines.push(`index ${index}`)
  for (const h of proof) {
    if (h.length !== HASH_SIZE) throw new TlogError('an inclusion proof hash is not 32 bytes')
    lines.push(encodeBase64(h))
  }
  return lines.join('\n') + '\n\n' + cp
}

/**
 * Parse a tlog-proof: { extra (Uint8Array|null), index, proof, checkpoint (the note's text) }.
 * Throws TlogError for anything the spec does not allow.
 * @param {Uint8Array|string} input
 */
export function parseTlogProof (input) {
  let s
  try { s = typeof input === 'string' ? input : new TextDecoder('utf-8', { fatal: true }).decode(input) } catch { throw new TlogError('malformed tlog-proof: not UTF-8') }
  const split = s.indexOf('\n\n')
  if (split < 0) throw new TlogError('malformed tlog-proof: no empty line before the checkpoint')
  const lines = s.slice(0, split).split('\n')
  const checkpoint = s.slice(split + 2)
  if (lines.shift() !== TLOG_PROOF_HEADER) throw new TlogError(`malformed tlog-proof: the first line is not ${TLOG_PROOF_HEADER}`)
  let extra = null
  if (lines[0]?.startsWith('extra ')) {
    extra = decodeBase64(lines.shift().slice(6))
    if (extra === null) throw new TlogError('malformed tlog-proof: extra is not base64')
  }
  const m = /^index (0|[1-9][0-9]{0,15})$/.exec(lines.shift() ?? '')
  if (!m || !Number.isSafeInteger(Number(m[1]))) throw new TlogError('malformed tlog-proof: no index line')
  if (lines.length > MAX_PROOF_HASHES) throw new TlogError('malformed tlog-proof: too many proof hashes')
  const proof = lines.map(l => {
    const h = decodeBase64(l)
    if (h === null || h.length !== HASH_SIZE) throw new TlogError('malformed tlog-proof: a proof line is not a base64 SHA-256 hash')
    return h
  })
  if (checkpoint === '') throw new TlogError('malformed tlog-proof: no checkpoint')
  return { extra, index: Number(m[1]), proof, checkpoint }
}

/**
 * Does the parsed proof put the leaf hash at its index in the tree of the
 * checkpoint's size and root hash (both from the checkpoint the caller has
 * opened and checked)? Throws TlogError when not.
 */
export function verifyTlogProof ({ index, proof }, leaf, { size, hash }) {
  verifyInclusion(proof, size, index, leaf, hash)
}

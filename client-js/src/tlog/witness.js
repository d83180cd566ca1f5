// C2SP tlog-witness, add-checkpoint: the request body a log sends a witness
// and the checks a witness makes before it cosigns. The body is
//
//   "old " <size, decimal> LF
//   (<base64 hash> LF)*          a consistency proof from the old size, at most 63 lines
//   LF
//   <the signed checkpoint note>
//
// and the answer one or more cosignature lines (200), the witness's size
// (409, text/x.tlog.size), or a status alone: 400 malformed, 403 no valid
// log signature, 404 unknown origin, 422 a proof that does not hold.
import { HASH_SIZE, TlogError, emptyHash, equalHash, verifyConsistency } from './hash.js'
import { encodeBase64, decodeBase64, openNote } from './note.js'
import { parseCheckpoint } from './checkpoint.js'

export const MAX_PROOF_LINES = 63
export const SIZE_CONTENT_TYPE = 'text/x.tlog.size'

/** The add-checkpoint request body. @param {{ oldSize: number, proof: Uint8Array[], note: string }} r */
export function formatAddCheckpoint ({ oldSize, proof, note }) {
  if (!Number.isSafeInteger(oldSize) || oldSize < 0) throw new TlogError(`old size ${oldSize} is not a whole number`)
  return `old ${oldSize}\n${proof.map(h => encodeBase64(h) + '\n').join('')}\n${note}`
}

/** An add-checkpoint body read strictly: { oldSize, proof, note }; TlogError (a 400) when malformed. */
export function parseAddCheckpoint (body) {
  const s = typeof body === 'string' ? body : new TextDecoder().decode(body)
  const end = s.indexOf('\n\n')
  if (end < 0) throw new TlogError('malformed add-checkpoint body: no empty line before the checkpoint')
  const [first, ...lines] = s.slice(0, end).split('\n')
  const m = /^old (0|[1-9][0-9]*)$/.exec(first)
  if (!m || !Number.isSafeInteger(Number(m[1]))) throw new TlogError('malformed add-checkpoint body: the first line is not "old <size>"')
  if (lines.length > MAX_PROOF_LINES) throw new TlogError(`malformed add-checkpoint body: more than ${MAX_PROOF_LINES} proof lines`)
  const proof = lines.map(l => {
    const h = decodeBase64(l)
    if (h === null || h.length !== HASH_SIZE) throw new TlogError('malformed add-checkpoint body: a proof line is not a base64 hash')
    return h
  })
  return { oldSize: Number(m[1]), proof, note: s.slice(end + 2) }
}

/** A witness's refusal: the HTTP status the spec names, and (409) the size it holds. */
export class WitnessRefusal extends TlogError {
  constructor (status, message, size) { super(message); this.status = status; if (size !== undefined) this.size = size }
}

/**
 * What a witness decides about one add-checkpoint request, given the log's
 * verifiers and the checkpoint it last cosigned for that origin (null: none).
 * Returns the checkpoint to cosign ({ origin, size, hash, text }); throws
 * WitnessRefusal with the spec's status otherwise.
 * @param {{ oldSize: number, proof: Uint8Array[], note: string }} req
 * @param {(origin: string) => object[] | null} verifiersFor the log's note verifiers, null for an unknown origin
 * @param {(origin: string) => { size: number, hash: Uint8Array } | null} latest
 */
export function checkAddCheckpoint (req, verifiersFor, latest) {
  const origin = req.note.slice(0, req.note.indexOf('\n'))
  const verifiers = verifiersFor(origin)
  if (!verifiers) throw new WitnessRefusal(404, `unknown log ${JSON.stringify(origin)}`)
  let opened
  try { opened = openNote(req.note, verifiers) } catch (err) {
    if (/signature/.test(err.message)) throw new WitnessRefusal(403, `the checkpoint is not signed by the log: ${err.message}`)
    throw new WitnessRefusal(400, `the checkpoint is not a signed note: ${err.message}`)
  }
  let cp
  try { cp = parseCheckpoint(opened.text) } catch (err) { throw new WitnessRefusal(400, err.message) }
  if (cp.origin !== origin) throw new WitnessRefusal(400, 'malformed checkpoint')
  if (req.oldSize > cp.size) throw new WitnessRefusal(400, `old size ${req.oldSize} is above the checkpoint's ${cp.size}`)
  const have = latest(origin)
  const haveSize = have ? have.size : 0
  if (req.oldSize !== haveSize) throw new WitnessRefusal(409, `this witness holds size ${haveSize} of ${origin}, not ${req.oldSize}`, haveSize)
  if (cp.size === 0 && !equalHash(cp.hash, emptyHash())) throw new WitnessRefusal(422, 'a checkpoint of size 0 must have the empty tree\'s hash')
  if (req.oldSize === 0) {
    if (req.proof.length !== 0) throw new WitnessRefusal(422, 'a proof from size 0 must be empty')
  } else {
    try { verifyConsistency(req.proof, cp.size, req.oldSize, cp.hash, have.hash) } catch (err) {
      throw new WitnessRefusal(422, `the checkpoint is not consistent with size ${req.oldSize} this witness cosigned: ${err.message}`)
    }
  }
  return { origin, size: cp.size, hash: cp.hash, text: opened.text }
}

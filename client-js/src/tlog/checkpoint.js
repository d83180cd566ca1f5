// C2SP tlog-checkpoint: the signed note text a log signs for a tree size,
//
//   <origin>\n<tree size, decimal>\n<base64 root hash>\n[<extension line>\n …]
//
// every line non-empty, the size without leading zeroes.
import { HASH_SIZE, TlogError } from './hash.js'
import { encodeBase64, decodeBase64 } from './note.js'

/** @typedef {{ origin: string, size: number, hash: Uint8Array, extensions: string[] }} Checkpoint */

/** The checkpoint text (a note text, ending in a newline). */
export function formatCheckpoint ({ origin, size, hash, extensions = [] }) {
  if (typeof origin !== 'string' || origin === '' || /\n/.test(origin)) throw new TlogError('a checkpoint origin is one non-empty line')
  if (!Number.isSafeInteger(size) || size < 0) throw new TlogError(`tree size ${size} is not a whole number`)
  if (!(hash instanceof Uint8Array) || hash.length !== HASH_SIZE) throw new TlogError('a checkpoint root hash is 32 bytes')
  for (const e of extensions) if (typeof e !== 'string' || e === '' || /\n/.test(e)) throw new TlogError('a checkpoint extension is one non-empty line')
  return [origin, String(size), encodeBase64(hash), ...extensions].join('\n') + '\n'
}

/** A checkpoint text (the text of a note, not the signed note) read strictly; TlogError when malformed. */
export function parseCheckpoint (text) {
  if (typeof text !== 'string' || !text.endsWith('\n')) throw new TlogError('malformed checkpoint: it must end in a newline')
  const lines = text.slice(0, -1).split('\n')
  if (lines.length < 3 || lines.some(l => l === '')) throw new TlogError('malformed checkpoint: at least three lines, none empty')
  const [origin, sizeText, hashText, ...extensions] = lines
  if (!/^(0|[1-9][0-9]*)$/.test(sizeText) || !Number.isSafeInteger(Number(sizeText))) throw new TlogError(`malformed checkpoint: tree size ${JSON.stringify(sizeText)}`)
  const hash = decodeBase64(hashText)
  if (hash === null || hash.length !== HASH_SIZE) throw new TlogError('malformed checkpoint: the root hash is not 32 bytes of base64')
  return { origin, size: Number(sizeText), hash, extensions }
}

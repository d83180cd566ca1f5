// The root a build ends with: fsinfo.json's fields signed (FORMAT.md §6), or
// written out unsigned for `rotree sign` on another machine. Signing only:
// sign.js, which re-exports both, also checks what it is given to sign.
import { encodeFsinfo, fsinfoMessage, FORMAT_VERSION } from 'rotree-client/format'
import { sign } from './ed25519-node.js'

/** FORMAT.md §6: sign the message rebuilt from the fields; the fsinfo.json text. */
export function signFields (fields, secretKey) {
  return encodeFsinfo({ ...fields, sig: sign(fsinfoMessage(fields), secretKey) })
}

/** unsigned.json: the fsinfo.json members in their usual order, without sig. */
export function encodeUnsigned (f) {
  const o = { version: FORMAT_VERSION, key: f.key, seq: f.seq, issued: f.issued, expires: f.expires, root: f.root, rootSize: f.rootSize, rootMtime: f.rootMtime }
  return JSON.stringify(o, null, 2) + '\n'
}

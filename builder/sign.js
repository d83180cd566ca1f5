// Signing apart from building (SFSRO §3: the database is signed offline and
// the private key never touches the servers):
//
//   build --unsigned   OUT/unsigned.json: every fsinfo.json field except sig
//   signUnsigned       on the signing machine: unsigned.json → fsinfo.json text
//   installSigned      on the publishing host: check a signed fsinfo.json against
//                      OUT, then publish it (history, atomic rename)
//   resign             re-issue the current root with a new seq and expiry
//                      (SFSRO's certificate authority re-signs daily); no blob changes
import fs from 'node:fs/promises'
import path from 'node:path'
import { decodeFsinfo, decodeUtf8 } from 'rotree-client/format'
import { verifyFsinfo, verifyFsinfoSignature } from 'rotree-client/verify'
import { BadFormatError, BadKeyError, BadSignatureError, ExpiredError, RollbackError, UsageError } from 'rotree-client/errors'
import { nextSeq, lastSeq, publishFsinfo, readPublished, UNSIGNED_FILE } from '../lib/published/publish.js'
import { withDirLock } from '../lib/published/lock.js'
import { walkLocal } from '../lib/published/pages.js'
import { signFields, encodeUnsigned } from './sign-root.js'

const UNSIGNED_FIELDS = ['version', 'key', 'seq', 'issued', 'expires', 'root', 'rootSize', 'rootMtime']
const NO_SIG = '0'.repeat(128)
const iso = ms => new Date(ms).toISOString()

/** The signed fields of a decoded fsinfo (decodeFsinfo's shape → fsinfoMessage's). */
export function fieldsOf (info) {
  return { key: info.key, seq: info.seq, issued: info.issued, expires: info.expires, root: info.root.hash, rootSize: info.root.size, rootMtime: info.rootMtime }
}

export { signFields, encodeUnsigned }

/** Run fn under OUT's folder lock (OUT is created if missing, so the errors below can say what is absent). */
export async function withOutLock (out, what, fn) {
  await fs.mkdir(out, { recursive: true })
  return withDirLock(out, what, fn)
}

/**
 * Strict parse of unsigned.json: exactly the fsinfo.json members but sig, each
 * checked by the reader's own fsinfo decoder. A file with a sig is refused:
 * it is already signed (install it with `rotree sign FILE --publish OUT`).
 * @returns {{ key, seq, issued, expires, root, rootSize, rootMtime }}
 */
export function decodeUnsigned (input) {
  let j
  try { j = JSON.parse(typeof input === 'string' ? input : decodeUtf8(input)) } catch (err) { throw new BadFormatError('unsigned root is not JSON', { cause: err }) }
  if (j === null || typeof j !== 'object' || Array.isArray(j)) throw new BadFormatError('unsigned root is not a JSON object')
  if ('sig' in j) throw new BadFormatError('this file is already signed (it has "sig"); install it with rotree sign FILE --publish OUT')
  for (const k of UNSIGNED_FIELDS) if (!(k in j)) throw new BadFormatError(`unsigned root: ${k} missing`)
  const info = decodeFsinfo(JSON.stringify({ ...j, sig: NO_SIG })) // every other check is the reader's
  return fieldsOf(info)
}

/**
 * Sign an unsigned root with a secret key (the offline step). The sequence
 * number becomes max(its own, the signing time in seconds): signing happens
 * after the build, so this stays above anything published meanwhile (a
 * resign of the old root, say). With ttlMs, issued and expires are re-stamped
 * from the signing time; without it they are signed as the build wrote them.
 * @param {string|Uint8Array} input unsigned.json
 * @param {{ secretKey: string, publicKey: string }} key
 * @param {{ now?: number, ttlMs?: number }} [o]
 * @returns {{ text: string, fields: object }}
 */
export function signUnsigned (input, key, { now = Date.now(), ttlMs } = {}) {
  const f = decodeUnsigned(input)
  if (f.key !== key.publicKey) throw new BadKeyError(`this root is for key ${f.key}, not for the key file's ${key.publicKey}`)
  const fields = { ...f, seq: Math.max(f.seq, Math.floor(now / 1000)) }
  if (ttlMs !== undefined) { fields.issued = iso(now); fields.expires = iso(now + ttlMs) }
  if (Date.parse(fields.expires) <= now) throw new ExpiredError(`this root expired at ${fields.expires}; sign it with --ttl to re-stamp issued and expires`)
  return { text: signFields(fields, key.secretKey), fields }
}

/**
 * Publish a fsinfo.json signed elsewhere into OUT. Before the rename it must
 * verify (signature, expiry, clock skew) under OUT's key, be newer than
 * anything OUT has published, and every blob it reaches must be in OUT/h
 * (directory pages and chunk indexes verified, data chunks present at their
 * size), so a mistaken file cannot make OUT serve a broken tree.
 * @param {string} out @param {string|Uint8Array} text
 * @param {{ now?: number, fsync?: boolean, publicKey?: string }} [o] publicKey: the key expected (default: OUT's)
 */
export async function installSigned (out, text, { now = Date.now(), fsync = true, publicKey } = {}) {
  const bytes = Buffer.from(text)
  return withOutLock(out, 'rotree sign --publish', async () => {
    const current = await readPublished(out)
    const pending = await readUnsigned(out)
    const claimed = decodeFsinfo(bytes)
    const expected = publicKey ?? current?.key ?? pending?.key ?? claimed.key
    if (claimed.key !== expected) throw new BadKeyError(`${out} is published under key ${expected}; this fsinfo.json is for ${claimed.key}`)
    const info = verifyFsinfo(bytes, { publicKey: expected, now })
    const currentBytes = await fs.readFile(path.join(out, 'fsinfo.json')).catch(() => null)
    if (currentBytes && currentBytes.equals(bytes)) return { seq: info.seq, root: info.root.hash, key: info.key, already: true }
    const last = await lastSeq(out)
    if (info.seq <= last) throw new RollbackError(`this fsinfo.json has seq ${info.seq}, but ${out} already published ${last}; sign the root again (rotree sign picks a higher seq)`, { details: { seq: info.seq, seen: last } })
    const reached = await walkLocal(out, info.root)
    await publishFsinfo(out, bytes, fsync)
    if (pending && pending.root === info.root.hash) await fs.rm(path.join(out, UNSIGNED_FILE), { force: true })
    return { seq: info.seq, root: info.root.hash, key: info.key, expires: info.expires, blobs: reached.size, already: false }
  })
}

/** OUT/unsigned.json decoded, or null when there is none. */
export async function readUnsigned (out) {
  let text
  try { text = await fs.readFile(path.join(out, UNSIGNED_FILE)) } catch (err) {
    if (err.code === 'ENOENT') return null
    throw err
  }
  return decodeUnsigned(text)
}

/**
 * `rotree resign`: the current root, re-signed with seq = max(old + 1, now in
 * seconds) and a fresh issued/expires. Refuses a current fsinfo.json that this
 * key did not sign, so it can never launder a root someone dropped into OUT.
 * With `ifExpiringWithinMs`, a root that stays valid longer than that is left
 * as it is ({ skipped: true }): a timer can run it often and sign rarely.
 * @param {string} out @param {{ secretKey: string, publicKey: string }} key
 * @param {{ ttlMs: number, now?: number, fsync?: boolean, ifExpiringWithinMs?: number }} o
 */
export async function resign (out, key, { ttlMs, now = Date.now(), fsync = true, ifExpiringWithinMs }) {
  if (!(ttlMs > 0)) throw new UsageError('resign needs a positive ttl')
  return withOutLock(out, 'rotree resign', async () => {
    let bytes
    try { bytes = await fs.readFile(path.join(out, 'fsinfo.json')) } catch (err) {
      if (err.code === 'ENOENT') throw new UsageError(`${out} has no fsinfo.json to re-sign; run rotree build first`)
      throw err
    }
    const cur = decodeFsinfo(bytes)
    if (cur.key !== key.publicKey) throw new BadKeyError(`${out} is published under key ${cur.key}, not the key file's ${key.publicKey}`)
    try { verifyFsinfoSignature(bytes, { publicKey: key.publicKey }) } catch (err) {
      if (err.code !== 'ROTREE_BAD_SIGNATURE') throw err
      throw new BadSignatureError(`${out}/fsinfo.json is not signed by this key; refusing to re-sign it`, { cause: err })
    }
    const left = Date.parse(cur.expires) - now
    if (ifExpiringWithinMs !== undefined && left > ifExpiringWithinMs) {
      return { skipped: true, seq: cur.seq, previousSeq: cur.seq, root: cur.root.hash, issued: cur.issued, expires: cur.expires, leftMs: left }
    }
    const { seq } = await nextSeq(out, now)
    const fields = { ...fieldsOf(cur), seq, issued: iso(now), expires: iso(now + ttlMs) }
    await publishFsinfo(out, signFields(fields, key.secretKey), fsync, { keys: [key] })
    return { skipped: false, seq, previousSeq: cur.seq, root: cur.root.hash, issued: fields.issued, expires: fields.expires }
  })
}

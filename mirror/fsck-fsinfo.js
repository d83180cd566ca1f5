// fsck's first step (FORMAT.md §7 "Opening a tree", steps 3–6): is DIR's
// fsinfo.json well-formed, for the key, signed, and not expired? Never throws
// for what is wrong with it: that is the report.
import fs from 'node:fs/promises'
import path from 'node:path'
import { decodeFsinfo } from 'rotree-client/format'
import { verifyFsinfoSignature, checkFreshness, DEFAULT_SKEW_MS } from 'rotree-client/verify'

/**
 * @param {string} dir
 * @param {{ publicKey?: string|null, keySource?: string, skewMs?: number }} o
 * @param {number} now
 * @param {(m: string) => void} warn
 * @returns {Promise<{ info: object|null, key: string|null, keySource: string, problems: { code: string, message: string }[],
 *   trusted: boolean, report: object }>} trusted: its refs may be used for repair (authentic, even if expired)
 */
export async function checkFsinfo (dir, o, now, warn) {
  const out = { info: null, key: o.publicKey ?? null, keySource: o.publicKey ? (o.keySource ?? 'given') : 'fsinfo', problems: [], trusted: false, report: { present: false } }
  let raw
  try { raw = new Uint8Array(await fs.readFile(path.join(dir, 'fsinfo.json'))) } catch (err) {
    if (err.code !== 'ENOENT') throw err
    out.problems.push({ code: 'ROTREE_NOT_FOUND', message: `${dir} has no fsinfo.json` })
    return out
  }
  let d
  try { d = decodeFsinfo(raw) } catch (err) {
    out.problems.push({ code: err.code, message: err.message })
    out.report = { present: true }
    return out
  }
  out.report = { present: true, seq: d.seq, root: d.root.hash, rootSize: d.root.size, issued: d.issued, expires: d.expires, key: d.key }
  if (!out.key) {
    out.key = d.key
    warn(`no --key given: checked against the key inside fsinfo.json (${d.key}), which is self-asserted; a forger would put their own key there. Pass --key PUBKEY to check who signed it`)
  }
  out.info = d
  try {
    verifyFsinfoSignature(raw, { publicKey: out.key })
  } catch (err) {
    out.problems.push({ code: err.code, message: err.message })
    return out
  }
  // key and signature hold, so the root is authentic and its refs can be used
  // for repair even when it is expired or future-dated (a problem all the same)
  out.trusted = true
  try { checkFreshness(d, { now, skewMs: o.skewMs ?? DEFAULT_SKEW_MS }) } catch (err) {
    out.problems.push({ code: err.code, message: err.message })
  }
  return out
}

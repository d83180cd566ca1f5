// fsck's first step (FORMAT.md §7 "Opening a tree", steps 3–6; §12.9 for
// format version 2): is DIR's fsinfo.json well-formed, for the anchor and
// name, signed as they require, and not expired? For version 2 the trust
// documents in DIR/trust are part of it: a reader of DIR walks them from
// document 1 (FORMAT.md §12.2), so a missing or broken one is a problem even
// when fsinfo.json names an earlier one. Every decision is the reader's
// (lib/published/signed-roots.js calls client-js/src/trust/roles.js and
// verify.js). Never throws for what is wrong with it: that is the report.
// A gated tree's trust/revoked.json (FORMAT.md §12.12) that does not verify
// under the access role is a warning: no blob is wrong, but an exchange
// gating DIR gives no token until it is put right.
import path from 'node:path'
import { accessRoleOf, verifyRevoked, MAX_REVOKED } from 'rotree-client/grant'
import { readRegular } from '../lib/open-regular.js'
import { checkFreshness, storedSizeOf, DEFAULT_SKEW_MS } from 'rotree-client/verify'
import { decodeRoot, rootContext, verifyRoot, checkRootTimes, TRUST_DIR } from '../lib/published/signed-roots.js'
import { readFsinfoFile } from '../lib/published/publish.js'

/**
 * @param {string} dir
 * @param {{ publicKey?: string|null, anchor?: object|null, name?: string, keySource?: string, skewMs?: number }} o
 *   anchor and name: an address's (FORMAT.md §12.5); publicKey alone: a key anchor; neither: the folder's own claims
 * @param {number} now
 * @param {(m: string) => void} warn
 * @returns {Promise<{ info: object|null, key: string|null, keySource: string, problems: { code: string, message: string }[],
 *   trusted: boolean, report: object, ctx: object|null }>} trusted: its refs may be used for repair (authentic, even if expired);
 *   info: decodeRoot's value, verifyRoot's once it verifies (root: the tree's root ref, with its codec in
 *   version 2); ctx: what roots are checked against
 */
export async function checkFsinfo (dir, o, now, warn) {
  const anchor = o.anchor ?? (o.publicKey ? { kind: 'key', key: o.publicKey } : null)
  const given = anchor ? { anchor, name: o.name ?? '' } : null
  const out = { info: null, key: anchorText(anchor), keySource: anchor ? (o.keySource ?? 'given') : 'fsinfo', problems: [], trusted: false, report: { present: false }, ctx: null }
  const problem = (code, message) => out.problems.push({ code, message })
  let raw
  raw = await readFsinfoFile(dir)
  if (raw === null) {
    problem('ROTREE_NOT_FOUND', `${dir} has no fsinfo.json`)
    out.ctx = await rootContext(dir, { given })
    return out
  }
  let d
  try { d = decodeRoot(raw) } catch (err) {
    problem(err.code, err.message)
    out.report = { present: true }
    out.ctx = await rootContext(dir, { given })
    return out
  }
  out.report = { present: true, version: d.version, seq: d.seq, root: d.root.hash, rootSize: storedSizeOf(d.root), issued: d.info.issued, expires: d.info.expires }
  if (d.version === 1) out.report.key = d.key
  else Object.assign(out.report, { name: d.name, trustSeq: d.trust?.seq ?? null, releaseSeq: d.info.release.seq, releaseExpires: d.info.release.expires })
  const ctx = out.ctx = await rootContext(dir, { given, current: d })
  if (!given) {
    out.key = anchorText(ctx.anchor)
    warn(d.version === 1
      ? `no --key given: checked against the key inside fsinfo.json (${d.key}), which is self-asserted; a forger would put their own key there. Pass --key PUBKEY to check who signed it`
      : `no --key given: checked against ${ctx.anchor?.kind === 'trust' ? `${TRUST_DIR}/1.json (anchor ${out.key})` : `the key that signed fsinfo.json (${out.key})`} and the name in fsinfo.json (${JSON.stringify(d.name)}), which are self-asserted; pass --key ANCHOR[:NAME] (what follows # in the tree's address) to check who signed it`)
  }
  // FORMAT.md §12.2: every document of the chain is served, from 1 on
  const { chain } = ctx
  if (chain.fault) problem(chain.fault.code, chain.fault.message)
  const named = d.version === 2 ? d.trust?.seq ?? 0 : 0
  if (named > chain.highest) problem('ROTREE_NOT_FOUND', `fsinfo.json names trust document ${named}, but ${TRUST_DIR}/${chain.highest + 1}.json is missing`)
  out.report.trust = { docs: chain.docs.length, highest: chain.highest, anchor: anchorText(ctx.anchor) }
  // walked for the report even when it does not verify (as version 1 always was); repair needs `trusted`
  out.info = d
  let v
  try { v = verifyRoot(raw, ctx) } catch (err) {
    problem(err.code, err.message)
    return out
  }
  out.info = v
  // signatures hold, so the root is authentic and its refs can be used for
  // repair even when it is expired or future-dated (a problem all the same)
  out.trusted = true
  if (d.version === 2) await checkRevoked(dir, ctx, warn)
  try { checkRootTimes(v, ctx, { now, skewMs: o.skewMs ?? DEFAULT_SKEW_MS, checkFreshness }) } catch (err) {
    problem(err.code, err.message)
  }
  return out
}

/** DIR/trust/revoked.json, where there is one, against the access role of the newest trust document (as server/gate.js reads it). */
async function checkRevoked (dir, ctx, warn) {
  const file = path.join(TRUST_DIR, 'revoked.json')
  let bytes
  try { bytes = await readRegular(path.join(dir, file), MAX_REVOKED) } catch (err) { return warn(`${file} cannot be read (${err.code ?? err.message})`) }
  if (bytes === null) return
  try {
    verifyRevoked(bytes, { anchor: anchorText(ctx.anchor), name: ctx.name, access: accessRoleOf(ctx.chain.docs.at(-1) ?? null, ctx.anchor) })
  } catch (err) {
    warn(`${file} does not verify (${err.code ?? 'ROTREE_BAD_FORMAT'}: ${err.message}): an exchange gating this folder gives no token until it is put right (FORMAT.md §12.12)`)
  }
}

/** An anchor as an address spells it after '#': the key, or 't' and the trust document hash. */
function anchorText (a) { return !a ? null : a.kind === 'key' ? a.key : 't' + a.hash }

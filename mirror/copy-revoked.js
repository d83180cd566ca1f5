// `rotree pull`, step 3d: DIR/trust/revoked.json, a gated tree's revocation
// list (docs/FORMAT.md §12.12), so that a gated gateway reading the tree
// from DIR's mirror, and an exchange gating DIR, refuse the grants the
// publisher revoked. Asked of every mirror of the source, and copied only
// when it verifies under the access role of the trust document this pull
// accepted (a single-key tree: its key) for the tree at this address; of
// those, the newest by `issued`. A list that does not verify is that
// mirror's fault: not copied, said on stderr, and the pull goes on. A list
// older than DIR's (by `issued`, as server/gate.js compares) is not copied
// over it, and DIR's list is never removed: a mirror that serves an older
// list, or none, cannot bring a revoked grant back through a pull. Written
// under a temporary name and renamed, before the new fsinfo.json.
import fs from 'node:fs/promises'
import path from 'node:path'
import { accessRoleOf, verifyRevoked, MAX_REVOKED } from 'rotree-client/grant'
import { anchorText } from 'rotree-client/trust'
import { writeDurable } from '../lib/published/history.js'
import { syncDir } from '../lib/published/index.js'
import { readRegular } from '../lib/open-regular.js'
import { TRUST_DIR } from '../lib/published/signed-roots.js'

export const REVOKED_FILE = 'revoked.json'
const REL = `${TRUST_DIR}/${REVOKED_FILE}`

/**
 * @param {object} tree the open source (its mirrors, and the anchor and name it was opened for)
 * @param {string} dir
 * @param {object|null} trust the trust document the pull accepted (null: a single-key tree)
 * @returns {Promise<{ issued: string, copied: boolean } | null>} DIR's list after the pull (null: none that verifies)
 */
export async function copyRevoked (tree, dir, trust, fsync, warn) {
  const access = accessRoleOf(trust, tree.anchor)
  if (access === null) return null // no access role: no grants, nothing could verify a list
  const role = { anchor: anchorText(tree.anchor), name: tree.name, access }
  const file = path.join(dir, TRUST_DIR, REVOKED_FILE)
  let held = null
  const heldBytes = await readRegular(file, MAX_REVOKED).catch(() => null)
  if (heldBytes !== null) {
    try { held = verifyRevoked(heldBytes, role) } catch (err) { warn(`DIR's ${REL} does not verify (${err.code ?? ''} ${err.message}); a list from the source that does replaces it`) }
  }
  const results = await tree.fetchFromEveryMirror(REL, MAX_REVOKED, bytes => ({ bytes, v: verifyRevoked(bytes, role) }))
  let best = null
  for (const r of results) {
    if (r.value !== undefined) { if (best === null || r.value.v.issuedMs > best.v.issuedMs) best = r.value } else if (r.error !== undefined) warn(`not copying ${REL} from ${r.mirror}: ${r.error.code} ${r.error.message}`)
  }
  const kept = held === null ? null : { issued: held.issued, copied: false }
  if (best === null) return kept
  if (held !== null && best.v.issuedMs <= held.issuedMs) {
    if (best.v.issuedMs < held.issuedMs) warn(`not copying ${REL}: the source's (issued ${best.v.issued}) is older than DIR's (issued ${held.issued}); keeping DIR's`)
    return kept
  }
  const tdir = path.join(dir, TRUST_DIR)
  await fs.mkdir(tdir, { recursive: true })
  const tmp = path.join(tdir, `.tmp-revoked-${process.pid}`)
  await writeDurable(tmp, best.bytes, fsync)
  await fs.rename(tmp, file)
  if (fsync) await syncDir(tdir)
  return { issued: best.v.issued, copied: true }
}

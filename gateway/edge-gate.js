// A gated gateway (`rotree gateway --grants SECRETFILE`; docs/GATEWAY.md, "A
// gated gateway"; docs/FORMAT.md §12.11): its clients get a tree's content
// only with an edge token for that tree, which they trade a grant for at the
// tree's own `<mount>.rotree/token` (`/.rotree/token` for the tree at `/`,
// `/NAME/.rotree/token` for `--tree NAME=…`). The exchange, the tokens and
// the expiry → holder book are server/gate.js's, as `rotree serve --grants`
// and `rotree token-server` run them; what this file adds is where a tree's
// state comes from: the gateway has no published folder, so each tree is the
// one its reader verified from the mirrors (anchor, name, the access role of
// the newest trust document it trusts), and its revocation list
// (trust/revoked.json, FORMAT.md §12.12) is fetched from those mirrors and
// verified under that access role, as gatedTree verifies a folder's.
//
// The list: the newest (by `issued`) that verifies among the mirrors'
// answers, and never older than one read before, so a mirror that serves an
// older list, none, or one that does not verify (that mirror's fault,
// logged) cannot bring a revoked grant back once the gateway has read the
// list. A mirror can withhold a list the gateway has never read: the
// operator gives it mirrors that serve the list (rotree serve does).
import { accessRoleOf, verifyRevoked, MAX_REVOKED } from 'rotree-client/grant'
import { parseFragment } from 'rotree-client/trust'
import { createSourceGate } from '../server/gate.js'
import { rootRecord, newestTrust, fetchFromMirrors } from './tree-access.js'

export const REVOKED_PATH = 'trust/revoked.json'

/** Is `rel` (names below a mount) the exchange, `.rotree/token`? */
export const isTokenPath = rel => rel.length === 2 && rel[0] === '.rotree' && rel[1] === 'token'

/** The tree a mount's tokens are minted for, `<anchor>:<name>` as its verified root names it; null before it has one. */
export function treeIdOf (mount) {
  const r = rootRecord(mount.tree)
  if (r === null) return null
  return r.version === 2 ? `${r.anchor}:${r.name}` : `${r.key}:` // version 1: the key, no name
}

/**
 * @param {import('./mount.js').Mount[]} mounts
 * @param {{ secret: string, ttlS?: number, log?: { info?: Function, error?: Function } | null }} o
 * @returns {{ token: (req, res, mount) => void, admit: (req, mount) => Promise<{ verdict: string, holder: string }> }}
 */
export function gatewayGate (mounts, { secret, ttlS, log = null }) {
  const gate = createSourceGate({ sources: mounts.map(m => ({ key: m.label, label: m.label, load: () => treeState(m, log) })), secret, ttlS, log })
  return {
    token: (req, res, mount) => gate.token(req, res, mount.label),
    async admit (req, mount) {
      let id = treeIdOf(mount)
      if (id === null) { await mount.current(); id = treeIdOf(mount) }
      return gate.admit(req, id)
    }
  }
}

/** One mount's tree as server/gate.js checks grants against it (gatedTree's value), from its verified root and its mirrors. */
async function treeState (mount, log) {
  await mount.current() // a verified, fresh root
  const id = treeIdOf(mount)
  const anchor = id.slice(0, id.indexOf(':'))
  const name = id.slice(id.indexOf(':') + 1)
  const access = accessRoleOf(rootRecord(mount.tree).version === 2 ? newestTrust(mount.tree) : null, parseFragment(anchor).anchor)
  const list = access === null ? null : await newestList(mount, { anchor, name, access }, log)
  return { anchor, name, id, access, revoked: list?.hashes ?? null, revokedIssuedMs: list?.issuedMs ?? -Infinity }
}

const kept = new WeakMap() // mount → the newest revocation list it verified

async function newestList (mount, role, log) {
  const results = await fetchFromMirrors(mount.tree, REVOKED_PATH, MAX_REVOKED, bytes => verifyRevoked(bytes, role))
  let best = kept.get(mount) ?? null
  for (const r of results) {
    if (r.value !== undefined && (best === null || r.value.issuedMs > best.issuedMs)) best = r.value
    else if (r.error !== undefined && !TRANSIENT.has(r.error.code)) log?.error?.(`rotree gateway: ${mount.label}: ${REVOKED_PATH} from ${r.mirror} is refused: ${r.error.code ?? ''} ${r.error.message}`)
  }
  if (best !== null) kept.set(mount, best)
  return best
}

const TRANSIENT = new Set(['ROTREE_MIRROR_NETWORK', 'ROTREE_TIMEOUT', 'ROTREE_MIRROR_HTTP'])


// A reader without a grant at a gated edge (docs/FORMAT.md §12.10–12.11):
// the edge answers 403 for every blob, which the reader's transport reports
// as the mirror's HTTP error. Before the CLI blames the mirror, it asks that
// mirror's token exchange once, as the web app does (web/grant.js
// needsGrant): an edge whose `.rotree/token` refuses an empty request with
// 403 ROTREE_NO_ACCESS is gated, and the reader is told it needs a grant.
import { NoAccessError } from 'rotree-client/errors'
import { createTransport } from 'rotree-client/net'
import { caOption } from './common.js'

const PROBE_TIMEOUT_MS = 5000
const PROBE_CAP = 16 * 1024

/** The mirror bases (`<origin><path>/`) that answered 403 for a blob in `err` (one mirror's error, or every mirror's). */
export function refusingBases (err) {
  const all = Array.isArray(err?.errors) ? err.errors : [err]
  const bases = new Set()
  for (const e of all) {
    // transport-node's words: "<origin> answered 403 for <base path>h/<hash>"
    const m = e?.code === 'ROTREE_MIRROR_HTTP' && /^(\S+) answered 403 for ((?:\/[^/\s]+)*\/)h\/[0-9a-f]{64}$/.exec(e.message ?? '')
    if (m) bases.add(m[1] + m[2])
  }
  return [...bases]
}

/** Does `base`'s token exchange answer as a gated edge does: 403 ROTREE_NO_ACCESS to a request without a grant? */
async function probe (base, { ca } = {}) {
  let url
  try { url = new URL('.rotree/token', base).href } catch { return false }
  // the reader's own transport: the same TLS trust (--ca) and a deadline
  const t = createTransport(ca ? { ca } : {})
  try {
    const r = await t.post(url, '{}', { cap: PROBE_CAP, timeoutMs: PROBE_TIMEOUT_MS })
    return r.status === 403 && JSON.parse(new TextDecoder().decode(r.body)).code === 'ROTREE_NO_ACCESS'
  } catch { return false } finally { t.close() }
}

/**
 * `err`, or, when a mirror refused its blobs with 403 and that mirror's
 * exchange answers as a gated edge, ROTREE_NO_ACCESS naming the edge (`edge`:
 * its origin, as gatedTransport's refusals carry) and what to do: a grant.
 * @param {any} err @param {{ ca?: Buffer }} [o] the reader's --ca
 */
export async function gatedRefusal (err, o = {}) {
  for (const base of refusingBases(err)) {
    if (!(await probe(base, o))) continue
    const origin = new URL(base).origin
    const e = new NoAccessError(`${base} is a gated edge: it serves this tree's blobs only with an edge token, given for a grant (docs/FORMAT.md §12.10–12.11), and none was given`, { cause: err, details: { edge: origin } })
    e.todo = 'Give a grant for this tree and its holder\'s key: --grant FILE --grant-key KEYFILE (the publisher issues one: rotree grant issue OUT --to KEY.pub).'
    return e
  }
  return err
}

/** gatedRefusal for a reading command run without --grant (one that takes it); any other error as it is. */
export async function noGrantRefusal (err, cmd, v) {
  if (!Object.hasOwn(cmd.options ?? {}, 'grant') || v.grant !== undefined) return err
  let ca
  try { ca = caOption(v) } catch { return err } // the command's own error stands
  return gatedRefusal(err, { ca })
}

// Edge tokens (docs/FORMAT.md §12.11): what a gated edge hands a grant's
// holder, and checks on every blob request. The token is nginx's
// secure_link value, so stock nginx checks it with no code of ours
// (ngx_http_secure_link_module, `secure_link` and `secure_link_md5`):
//
//   token   = base64url(MD5(<expires> " rotree-edge-v2 " <tree> " " <secret>)) "," <expires>
//   expires = unix seconds; the token is good through that second
//   tree    = <anchor> ":" <name>, the tree the edge serves (FORMAT.md §12.5)
//   secret  = the edge's secret, 64 hex (rotree grant secret)
//
// carried as the request header X-Rotree-Token or the query argument
// rotree_token. It covers every blob of that tree and nothing of another
// tree, whatever the secret. MD5 here is a MAC-like check keyed by a secret
// at the end of the input (no length extension applies); its strength is the
// secret's and the token's few minutes (docs/SECURITY.md).
import fs from 'node:fs/promises'
import { createHash, timingSafeEqual } from 'node:crypto'
import { UsageError } from 'rotree-client/errors'

export const TOKEN_PATH = '/.rotree/token'
export const TOKEN_HEADER = 'x-rotree-token'
export const TOKEN_QUERY = 'rotree_token'
/** How long a token lives by default: ten minutes. */
export const TOKEN_TTL_S = 600
const SECRET_RE = /^[0-9a-f]{64}$/

/** The string nginx's secure_link_md5 hashes, with `$secure_link_expires` for the expiry. */
export const md5Input = (expires, tree, secret) => `${expires} rotree-edge-v2 ${tree} ${secret}`

const digest = (expires, tree, secret) => createHash('md5').update(md5Input(expires, tree, secret)).digest()

/** A token for `tree` good through unix second `expires`. */
export function mintToken ({ secret, tree, expires }) {
  return `${digest(expires, tree, secret).toString('base64url')},${expires}`
}

/**
 * Is `value` a token for `tree` under `secret`, unexpired at `nowMs`? As
 * nginx's secure_link: the MD5 first, then the expiry.
 * @returns {'ok'|'expired'|'bad'}
 */
export function checkToken (value, { secret, tree, nowMs = Date.now() }) {
  if (typeof value !== 'string') return 'bad'
  // a reader sends one token with every blob for minutes: the MD5 of one that
  // passed is not computed again (P18: about a third of a gated request's
  // extra CPU). Only tokens that passed are kept, under the token itself (a
  // key of ~35 characters; one made of tree, secret and token cost ~1 µs a
  // request to build and hash), with the tree and secret they passed for.
  let hit = passed.get(value)
  if (hit === undefined || hit.tree !== tree || hit.secret !== secret) {
    const m = /^([A-Za-z0-9_-]{22}),([0-9]{1,12})$/.exec(value)
    if (!m) return 'bad'
    const want = digest(m[2], tree, secret)
    const got = Buffer.from(m[1], 'base64url')
    // one spelling per token: the last character's spare bits must be zero (canonical base64url)
    if (got.length !== 16 || got.toString('base64url') !== m[1] || !timingSafeEqual(got, want)) return 'bad'
    hit = { tree, secret, expires: Number(m[2]) }
    passed.delete(value)
    if (passed.size >= PASSED_MAX) passed.delete(passed.keys().next().value)
    passed.set(value, hit)
  }
  return hit.expires < Math.floor(nowMs / 1000) ? 'expired' : 'ok'
}

// tokens that passed the MD5 check, oldest first (one per reader per token lifetime)
const passed = new Map()
const PASSED_MAX = 1024

/** The edge secret in FILE: 64 hex digits (what `rotree grant secret` writes). */
export async function readSecret (file) {
  let text
  try { text = await fs.readFile(file, 'utf8') } catch (err) { throw new UsageError(`cannot read the edge secret ${file}: ${err.code ?? err.message}`) }
  const s = text.trim()
  if (!SECRET_RE.test(s)) throw new UsageError(`${file} is not an edge secret (64 hex digits, as rotree grant secret writes)`)
  return s
}

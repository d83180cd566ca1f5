// `rotree caddy-config`: a Caddyfile serving a published folder as
// `rotree nginx-config` does (docs/DEPLOY.md): BASE/fsinfo.json, BASE/h/<64
// hex> and BASE/trust/<seq>.json (and a gated tree's BASE/trust/revoked.json,
// FORMAT.md §12.12) with the headers readers and caches need, and a 404 that
// no cache keeps for everything else (.rotree/, unsigned.json, temporary
// files, listings). Blobs are octet-stream with
// nosniff (Caddy would otherwise guess a type from the bytes), never
// compressed, cached for a year; fsinfo.json (and trust/revoked.json) is cached briefly and sent
// without validators, since Caddy's ETag, like nginx's, is made of mtime and
// size and a new root renamed in within the same second at the same length
// would look unchanged.
//
// full: true adds the global options a Caddyfile of its own needs (no admin
// endpoint, no automatic HTTPS for a bare port); without it the site block
// goes into the operator's Caddyfile, where TLS is theirs to add.
import path from 'node:path'
import { BLOB_RE, FSINFO_RE, TRUST_RE, REVOKED_RE, HISTORY_RE, LOG_CHECKPOINT_RE, LOG_PROOF_RE, LOG_TILE_RE, LOG_PARTIAL_RE, TILE_MAX_AGE, IMMUTABLE, CORS_EXPOSE, CORS_ALLOW_METHODS, CORS_ALLOW_HEADERS, checkBase, splitListen, escapeRegex, maxAgeOf } from './edge-paths.js'
import { UsageError } from 'rotree-client/errors'

/** A Caddyfile token in double quotes; refuses what would need escaping in a path. */
function q (s, what) {
  if (/["\\{}\x00-\x1f\x7f\s]/.test(s)) throw new UsageError(`${what} ${JSON.stringify(s)} has a character a Caddyfile cannot take literally (quotes, backslash, braces, spaces or control characters)`)
  return `"${s}"`
}

/**
 * A gated tree (docs/FORMAT.md §12.11, docs/DEPLOY.md "Caddy and Varnish in
 * front of a gated tree"): stock Caddy cannot compute the token's MD5 (no
 * secure_link, and its CEL expressions have no hash), so each blob request
 * is first asked of `rotree token-server` at `upstream`, a local process
 * that checks the token (forward_auth to GET /.rotree/check), and
 * /.rotree/token is passed to it.
 * @param {{ tree: string, upstream: string }} gate tree: <anchor>:<name>
 */
function gatedCaddy ({ tree, upstream }, base) {
  if (!/^t?[0-9a-f]{64}:[a-z0-9._-]*$/.test(tree)) throw new UsageError(`${JSON.stringify(tree)} is not <anchor>:<name>`)
  const { host } = splitListen(upstream)
  if (host === null) throw new UsageError(`--token-upstream ${upstream}: expected HOST:PORT`)
  const auth = `
\t\t\t# gated: the edge token checked by rotree token-server (a local request per blob, never the origin's files)
\t\t\tforward_auth ${upstream} {
\t\t\t\turi /.rotree/check?tree=${tree}
\t\t\t}`
  return {
    // forward_auth first, in a route (in a handle the header lines would be sorted before it, onto its 403)
    route: inner => `\n\t\troute {${auth}${inner.replace(/\n/g, '\n\t')}\n\t\t}`,
    exchange: `\t# the token exchange: a grant in, an edge token out (rotree token-server, with the edge's secret)
\t@token path ${base}.rotree/token
\thandle @token {
\t\trewrite * /.rotree/token
\t\treverse_proxy ${upstream}
\t}

`
  }
}

/** What a file replaced by rename at a publish is sent without: validators (mtime and size) a cache could revalidate an older copy with. */
const NO_VALIDATORS = `
\t\theader -ETag
\t\theader -Last-Modified
\t\trequest_header -If-None-Match
\t\trequest_header -If-Modified-Since`

/**
 * @param {{ out: string, listen: string, base?: string, fsinfoMaxAge?: number, full?: boolean, gate?: { tree: string, upstream: string } | null }} o
 *   listen: HOST:PORT or PORT (plain HTTP; for TLS put the site block under your own site address)
 * @returns {string} a Caddyfile
 */
export function caddyConfig ({ out, listen, base = '/', fsinfoMaxAge = 30, full = false, gate = null }) {
  const { host, port } = splitListen(listen)
  base = checkBase(base)
  const root = q(path.resolve(out), 'OUT')
  const b = escapeRegex(base)
  const maxAge = maxAgeOf(fsinfoMaxAge)
  const strip = base === '/' ? '' : `\n\t\turi strip_prefix ${base.slice(0, -1)}`
  const cors = `\t\theader Access-Control-Allow-Origin *
\t\theader Access-Control-Expose-Headers "${CORS_EXPOSE}"`
  const g = gate === null ? null : gatedCaddy(gate, base)
  const file = (cacheControl, type, extra = '') => `${strip}
\t\theader Cache-Control "${cacheControl}"
\t\theader Content-Type ${type}
\t\theader X-Content-Type-Options nosniff
${cors}${extra}
\t\tfile_server`
  const global = full
    ? `{
\tadmin off
\tauto_https off
}

`
    : ''
  return `# Caddyfile for the rotree tree in ${path.resolve(out)}, from \`rotree caddy-config\` (docs/DEPLOY.md).
# Readers ask for ${base}fsinfo.json, ${base}h/<64 hex>, ${base}trust/<seq>.json, ${base}history/… and ${base}log/…,
# a gated gateway for ${base}trust/revoked.json; everything else is a 404.
#   caddy run --config <this file> --adapter caddyfile
${global}http://:${port} {${host === null ? '' : `\n\tbind ${host}`}
\troot * ${root}

\t@blob path_regexp ^${b}${BLOB_RE}$
\t@fsinfo path_regexp ^${b}${FSINFO_RE}$
\t@trust path_regexp ^${b}${TRUST_RE}$
\t@revoked path_regexp ^${b}${REVOKED_RE}$
\t@history path_regexp ^${b}${HISTORY_RE}$
\t@checkpoint path_regexp ^${b}(${LOG_CHECKPOINT_RE}|${LOG_PROOF_RE})$
\t@partial path_regexp ^${b}${LOG_PARTIAL_RE}$
\t@tile path_regexp ^${b}${LOG_TILE_RE}$
\t@preflight {
\t\tmethod OPTIONS
\t\tpath_regexp ^${b}(${FSINFO_RE}|${BLOB_RE}|${TRUST_RE}|${REVOKED_RE}|${HISTORY_RE}|${LOG_CHECKPOINT_RE}|${LOG_PROOF_RE}|${LOG_PARTIAL_RE}|${LOG_TILE_RE})$
\t}
\t@write not method GET HEAD OPTIONS

${g === null ? '' : g.exchange}\t# a read-only tree: every other method is refused before any file is looked at
\thandle @write {
\t\theader Allow "${CORS_ALLOW_METHODS}"
\t\theader Cache-Control no-store
${cors}
\t\trespond "method not allowed
" 405
\t}

\t# CORS preflight (a cross-origin Range or conditional GET) of a served path
\thandle @preflight {
\t\theader Access-Control-Allow-Origin *
\t\theader Access-Control-Allow-Methods "${CORS_ALLOW_METHODS}"
\t\theader Access-Control-Allow-Headers "${CORS_ALLOW_HEADERS}"
\t\theader Access-Control-Max-Age 86400
\t\theader Allow "${CORS_ALLOW_METHODS}"
\t\trespond 204
\t}

\t# blobs: immutable, named by the SHA-256 of their bytes (docs/FORMAT.md §1.2)
\thandle @blob {${g === null ? file(IMMUTABLE, 'application/octet-stream') : g.route(file(IMMUTABLE.replace(/^public/, 'private'), 'application/octet-stream'))}
\t}

\t# the signed root: the one file that changes; short caching, no validators (see above)
\thandle @fsinfo {${file(`public, max-age=${maxAge}`, 'application/json', NO_VALIDATORS)}
\t}

\t# format version 2: trust documents, trust/<seq>.json (docs/FORMAT.md §12.2)
\thandle @trust {${file(`public, max-age=${maxAge}`, 'application/json')}
\t}

\t# a gated tree's revocation list (docs/FORMAT.md §12.12), for a gated gateway: replaced at every
\t# revocation, so cached and sent as fsinfo.json is (short lifetime, no validators)
\thandle @revoked {${file(`public, max-age=${maxAge}`, 'application/json', NO_VALIDATORS)}
\t}

\t# the signed roots OUT published and their list, for rotree log (lib/published/history.js)
\thandle @history {${file(`public, max-age=${maxAge}`, 'application/json')}
\t}

\t# the log (docs/FORMAT.md §13): the checkpoint and fsinfo.proof are renamed in at every publish, like fsinfo.json
\thandle @checkpoint {${file(`public, max-age=${maxAge}`, '"text/plain; charset=utf-8"', NO_VALIDATORS)}
\t}

\t# partial tiles and bundles (<tile>.p/<W>): cached as briefly as the checkpoint that names them
\thandle @partial {${file(`public, max-age=${maxAge}`, 'application/octet-stream')}
\t}

\t# full tiles and entry bundles: their bytes never change once a checkpoint covers them
\thandle @tile {${file(`public, max-age=${TILE_MAX_AGE}`, 'application/octet-stream')}
\t}

\t# nothing else is served (.rotree/, temporary files, listings)
\thandle {
\t\theader Cache-Control no-store
${cors}
\t\trespond "not found
" 404
\t}

\t# a served path whose file is not there (yet): never kept by a cache
\thandle_errors {
\t\theader Cache-Control no-store
\t\theader Content-Type "text/plain; charset=utf-8"
\t\theader -Last-Modified
\t\theader -ETag
${cors}
\t\trespond "{err.status_code} {err.status_text}
" {err.status_code}
\t}
}
`
}

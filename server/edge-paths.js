// What of a published folder an edge in front of an origin may serve, for
// the generated nginx, Caddy and Varnish configurations alike: the paths
// readers ask for (docs/FORMAT.md §1.1, §12.2, and history/ for `rotree log`),
// trust/revoked.json for a gated gateway (§12.12), and their caching.
// Everything else (.rotree/, .rotree-lock, unsigned.json, temporary files,
// directory listings) stays behind the edge as a 404 that no cache keeps.
import { UsageError } from 'rotree-client/errors'

export const IMMUTABLE = 'public, max-age=31536000, immutable'
export const NO_STORE = 'no-store'
export const CORS_EXPOSE = 'Content-Length, Content-Range, ETag, Accept-Ranges, Last-Modified'
export const CORS_ALLOW_METHODS = 'GET, HEAD, OPTIONS'
export const CORS_ALLOW_HEADERS = 'Range, If-None-Match, If-Modified-Since'

/** Regex sources, relative to the base path: a blob, the signed root, a trust document, history. */
export const BLOB_RE = 'h/[0-9a-f]{64}'
export const FSINFO_RE = 'fsinfo\\.json'
export const TRUST_RE = 'trust/[1-9][0-9]{0,15}\\.json'
/**
 * A gated tree's revocation list (FORMAT.md §12.12), for a gated gateway that
 * reads the tree through this edge: replaced whenever a grant is revoked, so
 * cached as fsinfo.json is (short max-age, never a 304), never as a trust document.
 */
export const REVOKED_RE = 'trust/revoked\\.json'
/** Every signed root the folder published, and their list (lib/published/history.js): for `rotree log`. */
export const HISTORY_RE = 'history/(index|0|[1-9][0-9]{0,15})\\.json'
/**
 * The log (docs/FORMAT.md §13), in C2SP tlog-tiles paths: tile/<L>/<N> with L
 * 0–63 or `entries`, N in 3-digit elements all but the last prefixed with x;
 * a partial tile or bundle adds .p/<W>, W 1–255. The checkpoint, fsinfo.proof
 * and partial tiles change at every publish (cached as fsinfo.json is); a full tile never.
 */
export const TILE_RE = 'tile/(?:entries|[0-9]|[1-5][0-9]|6[0-3])(?:/x[0-9]{3})*/[0-9]{3}'
export const TILE_WIDTH_RE = '(?:[1-9]|[1-9][0-9]|1[0-9][0-9]|2[0-4][0-9]|25[0-5])'
export const LOG_CHECKPOINT_RE = 'log/checkpoint'
/** The tlog-proof of the current fsinfo.json (FORMAT.md §13): renamed in at every publish, cached as the checkpoint. */
export const LOG_PROOF_RE = 'log/fsinfo\\.proof'
export const LOG_TILE_RE = `log/${TILE_RE}`
export const LOG_PARTIAL_RE = `log/${TILE_RE}\\.p/${TILE_WIDTH_RE}`
/** Seconds a full tile or entry bundle is cached: its bytes never change once a checkpoint covers them. */
export const TILE_MAX_AGE = 86400

/** Regex special characters of a base path ('/pub/') escaped (checkBase allows only [A-Za-z0-9._~-/]). */
export const escapeRegex = s => s.replace(/[.]/g, '\\.')

/** fsinfo.json's max-age as a whole number of seconds. */
export const maxAgeOf = s => Math.max(0, Math.floor(s ?? 30))

/** HOST:PORT, [v6]:PORT or PORT, as nginx's listen takes it (and Caddy's bind, Varnish's backend); throws otherwise. */
export function checkListen (listen) {
  const m = /^(?:(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):)?(\d{1,5})$/.exec(String(listen))
  if (!m || Number(m[2]) < 1 || Number(m[2]) > 65535) throw new UsageError(`--listen ${listen}: expected HOST:PORT, [IPv6]:PORT or PORT`)
  return listen
}

/** URL path the tree is served under: '/' or '/pub/' (leading and trailing slash). */
export function checkBase (base) {
  let b = String(base)
  if (!b.startsWith('/')) b = '/' + b
  if (!b.endsWith('/')) b += '/'
  if (!/^\/(?:[A-Za-z0-9._~-]+\/)*$/.test(b) || /\/\.\.?\//.test(b)) throw new UsageError(`--base ${base}: expected a URL path such as /pub/`)
  return b
}


/** HOST:PORT (checked by checkListen) → { host, port }; host null when only a port was given. */
export function splitListen (listen) {
  checkListen(listen)
  const m = /^(?:(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):)?(\d{1,5})$/.exec(String(listen))
  return { host: m[1] === undefined ? null : m[1].replace(/^\[(.*)\]$/, '$1'), port: Number(m[2]) }
}

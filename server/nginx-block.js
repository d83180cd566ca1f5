// The nginx server block of one published folder (nginx-config.js explains
// what it serves and why), shared by `rotree nginx-config` and its --web
// variant (nginx-web.js), which adds the web app's locations below the
// tree's own.
import path from 'node:path'
import { CORS_EXPOSE, IMMUTABLE, TILE_RE, TILE_WIDTH_RE, TILE_MAX_AGE, checkListen, checkBase, escapeRegex } from './edge-paths.js'
import { UsageError } from 'rotree-client/errors'

/** A path nginx will read literally inside double quotes. */
export function q (p, what) {
  if (/["\\$\x00-\x1f\x7f]/.test(p)) throw new UsageError(`${what} ${JSON.stringify(p)} has a character nginx cannot take literally (", \\, $ or a control character)`)
  return `"${p}"`
}


// C2SP tlog-tiles paths (docs/FORMAT.md §13), as every generated edge serves them (edge-paths.js)
const TILE = TILE_RE
const WIDTH = TILE_WIDTH_RE

/** The location blocks of a missing file (error_page) and of paths that are not served: 404, never stored by a cache. */
const NO_STORE = 'add_header Cache-Control "no-store" always;'

/**
 * The server block.
 * @param {{ out: string, listen: string, base?: string, fsinfoMaxAge?: number, accessLog?: string|null, serverName?: string, site?: string|null }} o
 *   serverName: a server_name line (the --web variant); site: location blocks that serve `/` instead of
 *   the 404 (the web app, nginx-web.js), below the tree's own locations
 */
export function serverBlock ({ out, listen, base = '/', fsinfoMaxAge = 30, accessLog, serverName, site = null, gate = null }) {
  checkListen(listen)
  base = checkBase(base)
  const root = path.resolve(out)
  const g = gate === null ? null : gatedParts(gate, base)
  const cors = `        add_header Access-Control-Allow-Origin "*" always;
        add_header Access-Control-Expose-Headers "${CORS_EXPOSE}" always;`
  // add_header in a block replaces every inherited one, so each block lists its own
  const preflight = `        # CORS preflight (a cross-origin Range or conditional GET)
        if ($request_method = OPTIONS) {
            add_header Access-Control-Allow-Origin "*" always;
            add_header Access-Control-Allow-Methods "GET, HEAD, OPTIONS" always;
            add_header Access-Control-Allow-Headers "Range, If-None-Match, If-Modified-Since" always;
            add_header Access-Control-Max-Age "86400" always;
            add_header Allow "GET, HEAD, OPTIONS" always;
            return 204;
        }`
  const notFound = `        default_type text/plain;
        ${NO_STORE}
${cors}
        return 404 "not found\\n";`
  // a blob, fsinfo.json or trust document that is not (yet) on disk: the same 404
  const missing = '        error_page 404 = @rotree_missing;'
  // a small file OUT replaces by rename at a publish (trust/revoked.json, log/checkpoint,
  // log/fsinfo.proof): short caching, and sent whole, never a 304 (as fsinfo.json, below)
  const renamed = (rel, type) => `    location = ${base}${rel} {
        alias ${q(root + '/' + rel, 'OUT')};
        disable_symlinks on "from=${q(root, 'OUT').slice(1, -1)}";
        types { }
        default_type ${type};
${preflight}
        add_header Cache-Control "public, max-age=${Math.max(0, Math.floor(fsinfoMaxAge))}";
        add_header X-Content-Type-Options "nosniff" always;
${cors}
        open_file_cache off;
        etag off;
        if_modified_since off;
${missing}
    }`
  const lines = [`server {
    listen ${listen};${serverName === undefined ? '' : `
    server_name ${serverName};`}
    # the published folder: ${root}
    # readers request only ${base}fsinfo.json, ${base}h/<64 hex> (docs/FORMAT.md §1.1), ${base}trust/<seq>.json (§12.2),
    # ${base}history/<seq>.json and the log, ${base}log/checkpoint, ${base}log/fsinfo.proof and ${base}log/tile/… (§13);
    # a gated gateway also ${base}trust/revoked.json (§12.12)
    autoindex off;
    etag on;
    gzip off;                 # blobs are served byte for byte: readers cap them at their exact size
    charset off;
    server_tokens off;
    max_ranges 1;             # one range per request, as readers send; multipart ranges get a 200
    sendfile on;
    tcp_nopush on;`]
  if (accessLog !== undefined) lines.push(`    access_log ${accessLog === null ? 'off' : q(accessLog, 'access log')};`)
  lines.push(`
    # Every file served from OUT is opened without following a symlink below OUT
    # (disable_symlinks): OUT may be a folder others can write (synced with rsync -a,
    # a shared upload folder), and a link there must not serve a file outside it.

    # blobs: immutable, named by the SHA-256 of their bytes (docs/FORMAT.md §1.2)
    location ~ "^${escapeRegex(base)}h/([0-9a-f]{64})$" {
        alias "${q(root, 'OUT').slice(1, -1)}/h/$1";
        disable_symlinks on "from=${q(root, 'OUT').slice(1, -1)}";
        types { }
        default_type application/octet-stream;
${preflight}${g === null ? '' : g.check}
        add_header Cache-Control "${g === null ? IMMUTABLE : 'private, ' + IMMUTABLE.replace(/^public, /, '')}";
        add_header X-Content-Type-Options "nosniff" always;
${cors}
        open_file_cache max=10000 inactive=60s;
        open_file_cache_errors off;   # a blob that is missing now may be pulled in a moment
${missing}
    }

    # anything else under h/ (temporary files of a build or pull, other names): not a blob
    location ${base}h/ {
${preflight}
${notFound}
    }

    # the signed root: the one file that changes; short caching so a new publish is seen soon
    location = ${base}fsinfo.json {
        alias ${q(root + '/fsinfo.json', 'OUT')};
        disable_symlinks on "from=${q(root, 'OUT').slice(1, -1)}";
        types { }
        default_type application/json;
${preflight}
        add_header Cache-Control "public, max-age=${Math.max(0, Math.floor(fsinfoMaxAge))}";
        add_header X-Content-Type-Options "nosniff" always;
${cors}
        open_file_cache off;          # it is replaced by rename: always open the current one
        # nginx's validators are mtime and size: a root renamed in within the same second as the
        # last one, at the same length, would get its ETag and a 304, and a cache would keep the
        # old root. fsinfo.json is small: always send it whole.
        etag off;
        if_modified_since off;
${missing}
    }

    # format version 2: the trust documents, trust/<seq>.json (docs/FORMAT.md §12.2); written once each
    location ~ "^${escapeRegex(base)}trust/([1-9][0-9]{0,15})\\.json$" {
        alias "${q(root, 'OUT').slice(1, -1)}/trust/$1.json";
        disable_symlinks on "from=${q(root, 'OUT').slice(1, -1)}";
        types { }
        default_type application/json;
${preflight}
        add_header Cache-Control "public, max-age=${Math.max(0, Math.floor(fsinfoMaxAge))}";
        add_header X-Content-Type-Options "nosniff" always;
${cors}
${missing}
    }

    # a gated tree's revocation list (docs/FORMAT.md §12.12), for a gated gateway reading through this edge:
    # replaced by rename whenever a grant is revoked, so cached and validated as fsinfo.json is
${renamed('trust/revoked.json', 'application/json')}

    # the signed roots OUT published, and their list: history/<seq>.json, history/index.json (rotree log)
    location ~ "^${escapeRegex(base)}history/(index|0|[1-9][0-9]{0,15})\\.json$" {
        alias "${q(root, 'OUT').slice(1, -1)}/history/$1.json";
        disable_symlinks on "from=${q(root, 'OUT').slice(1, -1)}";
        types { }
        default_type application/json;
${preflight}
        add_header Cache-Control "public, max-age=${Math.max(0, Math.floor(fsinfoMaxAge))}";
        add_header X-Content-Type-Options "nosniff" always;
${cors}
        open_file_cache off;          # index.json is replaced by rename
${missing}
    }

    # the log (docs/FORMAT.md §13): log/checkpoint and log/fsinfo.proof are replaced by rename at every publish, like fsinfo.json
${renamed('log/checkpoint', '"text/plain; charset=utf-8"')}

${renamed('log/fsinfo.proof', '"text/plain; charset=utf-8"')}

    # full tiles and entry bundles (C2SP tlog-tiles paths): their bytes never change once a checkpoint covers them
    location ~ "^${escapeRegex(base)}log/(${TILE})$" {
        alias "${q(root, 'OUT').slice(1, -1)}/log/$1";
        disable_symlinks on "from=${q(root, 'OUT').slice(1, -1)}";
        types { }
        default_type application/octet-stream;
${preflight}
        add_header Cache-Control "public, max-age=${TILE_MAX_AGE}";
        add_header X-Content-Type-Options "nosniff" always;
${cors}
${missing}
    }

    # partial tiles and bundles (<tile>.p/<W>): short caching, as the checkpoint that names them
    location ~ "^${escapeRegex(base)}log/(${TILE}\\.p/${WIDTH})$" {
        alias "${q(root, 'OUT').slice(1, -1)}/log/$1";
        disable_symlinks on "from=${q(root, 'OUT').slice(1, -1)}";
        types { }
        default_type application/octet-stream;
${preflight}
        add_header Cache-Control "public, max-age=${Math.max(0, Math.floor(fsinfoMaxAge))}";
        add_header X-Content-Type-Options "nosniff" always;
${cors}
        open_file_cache off;
${missing}
    }

    # anything else under log/: not served
    location ${base}log/ {
${preflight}
${notFound}
    }

    # a file above that is not there: 404 without a lifetime, so no cache in front keeps the absence
    location @rotree_missing {
${notFound}
    }
${g === null ? '' : g.locations(cors)}
${base === '/' && site !== null ? site : `    # nothing else is served (.rotree/, temporary files, listings)
    location ${base} {
${preflight}
${notFound}
    }`}${base === '/' ? '' : site !== null ? `

${site}` : `

    # outside ${base}: nothing here either
    location / {
${notFound}
    }`}
}
`)
  return lines.join('\n')
}


/**
 * The gate of a gated tree (FORMAT.md §12.11): blobs only with an edge token,
 * checked by nginx's own secure_link module against the secret, and the
 * token exchange passed to a `rotree serve --grants` (tokenUpstream).
 * @param {{ secret: string, tree: string, tokenUpstream?: string|null }} gate tree: <anchor>:<name>
 */
function gatedParts ({ secret, tree, tokenUpstream = null }, base) {
  if (!/^[0-9a-f]{64}$/.test(secret)) throw new UsageError('the edge secret is not 64 hex digits')
  if (!/^t?[0-9a-f]{64}:[a-z0-9._-]*$/.test(tree)) throw new UsageError(`${JSON.stringify(tree)} is not <anchor>:<name>`)
  if (tokenUpstream !== null) checkListen(tokenUpstream)
  const refused = `        default_type text/plain;
        ${NO_STORE}`
  return {
    check: `
        # gated (docs/FORMAT.md §12.11): the edge token from X-Rotree-Token or ?rotree_token=,
        # MD5 over its expiry, the tree and the secret (this file holds the secret: keep it 0600)
        secure_link $http_x_rotree_token$arg_rotree_token;
        secure_link_md5 "$secure_link_expires rotree-edge-v2 ${tree} ${secret}";
        error_page 403 = @rotree_refused;
        if ($secure_link = "") { return 403; }
        if ($secure_link = "0") { return 403; }`,
    locations: cors => `
    # a blob asked for without a valid edge token
    location @rotree_refused {
${refused}
${cors}
        return 403 "this tree is gated: an edge token is required (POST ${base}.rotree/token)\\n";
    }
${tokenUpstream === null
  ? ''
  : `
    # the token exchange: a grant in, an edge token out (rotree serve --grants, with the same secret; it says no-store)
    location = ${base}.rotree/token {
        proxy_pass http://${tokenUpstream}/.rotree/token;
        proxy_set_header Host $host;
        client_max_body_size 32k;
    }
`}`
  }
}

// `rotree nginx-config`: an nginx configuration that serves a published folder
// the way readers and caches need it (FORMAT.md §1.1, §8; docs/DEPLOY.md).
//
// Only two kinds of path exist: BASE/fsinfo.json and BASE/h/<64 hex>. Both are
// whitelisted; everything else (history/, .rotree/, temporary files in h/, a
// directory listing) is a 404. Blobs are immutable, so they are cached for a
// year; fsinfo.json is the one file that changes, so it is cached briefly.
// Nothing is compressed: a reader caps each blob at its exact size, and a
// CDN's gzip would change the bytes it stores (the ETag would then name
// something else). CORS lets a browser on another origin read the tree.
//
// The full config (--full) runs nginx as an ordinary user: `nginx -p PREFIX -c FILE`
// keeps its pid file, logs and every temporary directory under PREFIX. It does
// not contain `daemon off;`: run it in the foreground with -g 'daemon off;'
// (systemd, containers, tests) or let it daemonise and stop it with -s quit.
import path from 'node:path'

const CORS_EXPOSE = 'Content-Length, Content-Range, ETag, Accept-Ranges, Last-Modified'
const IMMUTABLE = 'public, max-age=31536000, immutable'

/** A path nginx will read literally inside double quotes. */
function q (p, what) {
  if (/["\\$\x00-\x1f\x7f]/.test(p)) throw new RangeError(`${what} ${JSON.stringify(p)} has a character nginx cannot take literally (", \\, $ or a control character)`)
  return `"${p}"`
}

/** HOST:PORT, [v6]:PORT or PORT, as nginx's listen takes it; throws otherwise. */
export function checkListen (listen) {
  const m = /^(?:(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):)?(\d{1,5})$/.exec(String(listen))
  if (!m || Number(m[2]) < 1 || Number(m[2]) > 65535) throw new RangeError(`--listen ${listen}: expected HOST:PORT, [IPv6]:PORT or PORT`)
  return listen
}

/** URL path the tree is served under: '/' or '/pub/' (leading and trailing slash). */
export function checkBase (base) {
  let b = String(base)
  if (!b.startsWith('/')) b = '/' + b
  if (!b.endsWith('/')) b += '/'
  if (!/^\/(?:[A-Za-z0-9._~-]+\/)*$/.test(b) || /\/\.\.?\//.test(b)) throw new RangeError(`--base ${base}: expected a URL path such as /pub/`)
  return b
}

const escapeRegex = s => s.replace(/[.]/g, '\\.')

/**
 * The server block.
 * @param {{ out: string, listen: string, base?: string, fsinfoMaxAge?: number, accessLog?: string|null }} o
 */
export function serverBlock ({ out, listen, base = '/', fsinfoMaxAge = 30, accessLog }) {
  checkListen(listen)
  base = checkBase(base)
  const root = path.resolve(out)
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
${cors}
        return 404 "not found\\n";`
  const lines = [`server {
    listen ${listen};
    # the published folder: ${root}
    # readers request only ${base}fsinfo.json and ${base}h/<64 hex> (docs/FORMAT.md §1.1)
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
    # blobs: immutable, named by the SHA-256 of their bytes (docs/FORMAT.md §1.2)
    location ~ "^${escapeRegex(base)}h/([0-9a-f]{64})$" {
        alias "${q(root, 'OUT').slice(1, -1)}/h/$1";
        types { }
        default_type application/octet-stream;
${preflight}
        add_header Cache-Control "${IMMUTABLE}";
        add_header X-Content-Type-Options "nosniff" always;
${cors}
        open_file_cache max=10000 inactive=60s;
        open_file_cache_errors off;   # a blob that is missing now may be pulled in a moment
    }

    # anything else under h/ (temporary files of a build or pull, other names): not a blob
    location ${base}h/ {
${preflight}
${notFound}
    }

    # the signed root: the one file that changes; short caching so a new publish is seen soon
    location = ${base}fsinfo.json {
        alias ${q(root + '/fsinfo.json', 'OUT')};
        types { }
        default_type application/json;
${preflight}
        add_header Cache-Control "public, max-age=${Math.max(0, Math.floor(fsinfoMaxAge))}";
        add_header X-Content-Type-Options "nosniff" always;
${cors}
        open_file_cache off;          # it is replaced by rename: always open the current one
    }

    # nothing else is served (history/, .rotree/, temporary files, listings)
    location ${base} {
${preflight}
${notFound}
    }${base === '/' ? '' : `

    # outside ${base}: nothing here either
    location / {
${notFound}
    }`}
}
`)
  return lines.join('\n')
}

/**
 * A complete nginx.conf that an unprivileged user runs with
 * `nginx -p PREFIX -c FILE -g 'daemon off;'` (foreground) or without -g (daemon).
 * @param {{ out: string, listen: string, prefix: string, base?: string, fsinfoMaxAge?: number, workers?: string|number }} o
 */
export function fullConfig ({ out, listen, prefix, base, fsinfoMaxAge, workers = 'auto' }) {
  const p = path.resolve(prefix)
  if (!(workers === 'auto' || (Number.isInteger(Number(workers)) && Number(workers) > 0))) throw new RangeError('--workers must be a positive integer or auto')
  const under = name => q(path.join(p, name), '--prefix')
  return `# nginx.conf for the rotree tree in ${path.resolve(out)}, from \`rotree nginx-config --full\`.
# Runs as an ordinary user; everything it writes is under ${p}:
#   nginx -p ${p} -c <this file> -g 'daemon off;'   # foreground (systemd, containers)
#   nginx -p ${p} -c <this file>                    # daemon; stop with: nginx -p ${p} -c <this file> -s quit
# Started as root instead, nginx runs its workers as "nobody": OUT must then be world-readable.
worker_processes ${workers};
pid ${under('nginx.pid')};
lock_file ${under('nginx.lock')};
error_log ${under('error.log')} warn;

events {
    worker_connections 1024;
}

http {
    access_log ${under('access.log')};
    client_body_temp_path ${under('client_body_temp')};
    proxy_temp_path ${under('proxy_temp')};
    fastcgi_temp_path ${under('fastcgi_temp')};
    uwsgi_temp_path ${under('uwsgi_temp')};
    scgi_temp_path ${under('scgi_temp')};
    keepalive_timeout 65;
    keepalive_requests 10000;   # readers fetch many blobs over one connection

${serverBlock({ out, listen, base, fsinfoMaxAge }).replace(/^(?=.)/gm, '    ')}}
`
}

// `rotree varnish-config`: a VCL for a Varnish edge in front of a rotree
// origin (nginx from `rotree nginx-config`, `rotree serve`, an object store).
// It is what docs/DEPLOY.md "A CDN in front" asks of any edge, spelled out:
//
//   - only BASE/fsinfo.json, BASE/h/<64 hex>, BASE/trust/<seq>.json,
//     BASE/history/(index|<seq>).json (docs/FORMAT.md §1.1, §12.2; rotree
//     log), the log, and a gated tree's BASE/trust/revoked.json (§12.12, for
//     a gated gateway; kept as fsinfo.json is) are looked up; everything
//     else is a 404 from the edge itself, so nothing else of the origin
//     (.rotree/, unsigned.json, temporary files, listings) can leave through
//     it, even when the origin would serve it;
//   - a 404 or any other error is never cached (a blob asked for a moment
//     before its upload finished is fetched again on the next request);
//   - blobs keep the origin's year-long lifetime (they never change);
//   - fsinfo.json keeps the origin's max-age, plus at most GRACE seconds in
//     which a stale copy is served while a fresh one is fetched: a publish
//     reaches readers within max-age + grace;
//   - bytes are never compressed or transformed (readers cap every blob at
//     its exact size), and the query string is not part of the cache key.
//
// The edge does no cryptography: readers verify everything it serves.
import { BLOB_RE, FSINFO_RE, TRUST_RE, REVOKED_RE, HISTORY_RE, LOG_CHECKPOINT_RE, LOG_PROOF_RE, LOG_TILE_RE, LOG_PARTIAL_RE, CORS_EXPOSE, CORS_ALLOW_METHODS, CORS_ALLOW_HEADERS, checkBase, splitListen, escapeRegex } from './edge-paths.js'
import { UsageError } from 'rotree-client/errors'

/** A VCL string literal; the values here are checked names and numbers, but never trust that. */
function lit (s) {
  if (/["\x00-\x1f\x7f]/.test(s)) throw new UsageError(`${JSON.stringify(s)} cannot be a VCL string`)
  return `"${s}"`
}

/**
 * @param {object} o
 * @param {string} o.backend the origin, HOST:PORT (HOST an address or a name Varnish resolves when it loads the VCL)
 * @param {string} [o.base='/'] URL path of the tree, on the edge and on the origin alike
 * @param {number} [o.grace=10] seconds a stale fsinfo.json may be served while a fresh one is fetched (and while the origin is down)
 * @param {string} [o.hostHeader] Host sent to the origin (default: the client's)
 * @param {boolean} [o.gated] the origin is a gated nginx (nginx-config --gated, docs/DEPLOY.md): Varnish has no MD5
 *   without a vmod, so it checks no token itself; it passes the token on and keys each cached blob by the token
 *   the origin admitted, kept no longer than that token lives, and passes /.rotree/token through
 * @returns {string} VCL 4.1
 */
export function varnishConfig ({ backend, base = '/', grace = 10, hostHeader, gated = false } = {}) {
  const { host, port } = splitListen(backend)
  if (host === null) throw new UsageError(`--backend ${backend}: expected HOST:PORT`)
  base = checkBase(base)
  if (!Number.isInteger(grace) || grace < 0) throw new UsageError('--grace must be a whole number of seconds')
  const served = `^${escapeRegex(base)}(${FSINFO_RE}|${BLOB_RE}|${TRUST_RE}|${REVOKED_RE}|${HISTORY_RE}|${LOG_CHECKPOINT_RE}|${LOG_PROOF_RE}|${LOG_PARTIAL_RE}|${LOG_TILE_RE})(\\?.*)?$`
  // the files replaced by a rename at every publish (trust/revoked.json: at every revocation): fetched whole, served stale only briefly
  const renamed = `(${FSINFO_RE}|${REVOKED_RE}|${LOG_CHECKPOINT_RE}|${LOG_PROOF_RE})$`
  const blob = `^${escapeRegex(base)}${BLOB_RE}(\\?.*)?$`
  return `vcl 4.1;${gated ? '\nimport std;' : ''}
# A Varnish edge for a rotree tree, from \`rotree varnish-config\` (docs/DEPLOY.md "A CDN in front").
# Readers verify every byte; this edge only keeps them close, and never keeps an absence.
#   varnishd -a :80 -f <this file> -s malloc,1G

backend rotree_origin {
    .host = ${lit(host)};
    .port = "${port}";
    .connect_timeout = 5s;
    .first_byte_timeout = 30s;
    .between_bytes_timeout = 30s;
}

sub vcl_recv {${!gated ? '' : `
    # gated: the token exchange goes to the origin (and on to rotree token-server), never cached
    if (req.url ~ ${lit(`^${escapeRegex(base)}\\.rotree/token$`)} && (req.method == "POST" || req.method == "OPTIONS")) {
        return (pass);
    }`}
    # only what readers ask for: fsinfo.json, h/<64 hex>, trust/<seq>.json, trust/revoked.json, history/(index|<seq>).json, log/ (checkpoint, tiles); the rest is a 404 from here
    if (req.url !~ ${lit(served)}) {
        return (synth(404, "Not Found"));
    }
    if (req.method == "OPTIONS") {
        return (synth(204, "No Content"));   # the CORS preflight, answered at the edge
    }
    if (req.method != "GET" && req.method != "HEAD") {
        return (synth(405, "Method Not Allowed"));
    }
${!gated ? '' : `    if (req.url ~ ${lit(blob)}) {
        # gated: the edge token, from the header or ?rotree_token=, goes to the origin as the header
        if (!req.http.X-Rotree-Token && req.url ~ "[?&]rotree_token=") {
            set req.http.X-Rotree-Token = regsub(req.url, "^.*[?&]rotree_token=([^&]*).*$", "\\1");
        }
        if (!req.http.X-Rotree-Token) {
            return (synth(403, "this tree is gated: an edge token is required (POST ${base}.rotree/token)"));
        }
    } else {
        unset req.http.X-Rotree-Token;
    }
`}    set req.url = regsub(req.url, "\\?.*$", "");   # readers send no query: one object per path
    unset req.http.Cookie;
    unset req.http.Authorization;
    unset req.http.Accept-Encoding;                # the bytes as they are, never compressed${hostHeader === undefined ? '' : `
    set req.http.Host = ${lit(hostHeader)};`}
    return (hash);
}

sub vcl_hash {
    hash_data(req.url);                            # one tree per edge: the Host is not part of the key${!gated ? '' : `
    if (req.http.X-Rotree-Token) {
        # gated: a blob is kept per token, so it is only ever served again to a token the origin admitted
        hash_data(req.http.X-Rotree-Token);
    }`}
    return (lookup);
}

sub vcl_backend_fetch {
    if (bereq.url ~ ${lit(renamed)}) {
        # always fetch fsinfo.json (and trust/revoked.json, log/checkpoint, log/fsinfo.proof) whole: an origin whose validators are mtime and size (nginx)
        # would answer 304 for a new root renamed in within the same second at the same length
        unset bereq.http.If-None-Match;
        unset bereq.http.If-Modified-Since;
    }
}

sub vcl_backend_response {
    if (beresp.status != 200) {
        # a 404 (a blob not uploaded yet, no fsinfo.json yet) or an error: passed on, never kept
        set beresp.http.Cache-Control = "no-store";
        set beresp.ttl = 0s;
        set beresp.grace = 0s;
        set beresp.keep = 0s;
        set beresp.uncacheable = true;
        return (deliver);
    }
    set beresp.do_gzip = false;
    set beresp.do_gunzip = false;${!gated ? '' : `
    if (bereq.http.X-Rotree-Token) {
        # gated: kept no longer than the token the origin admitted lives (its expiry: after the comma)
        if (std.time(regsub(bereq.http.X-Rotree-Token, "^.*,", ""), now) - now < beresp.ttl) {
            set beresp.ttl = std.time(regsub(bereq.http.X-Rotree-Token, "^.*,", ""), now) - now;
        }
        set beresp.grace = 0s;
        set beresp.keep = 0s;
    }`}
    if (bereq.url ~ ${lit(renamed)}) {
        # the files that change (fsinfo.json, trust/revoked.json, log/checkpoint, log/fsinfo.proof): the origin's max-age, then at most ${grace} s stale while refetching
        set beresp.grace = ${grace}s;
        set beresp.keep = 0s;
    }
    return (deliver);
}

sub vcl_backend_error {
    # the origin is down or timed out: say so, keep nothing
    set beresp.http.Content-Type = "text/plain; charset=utf-8";
    set beresp.http.Cache-Control = "no-store";
    set beresp.http.Access-Control-Allow-Origin = "*";
    set beresp.ttl = 0s;
    set beresp.grace = 0s;
    synthetic("origin unreachable" + {"
"});
    return (deliver);
}

sub vcl_synth {
    set resp.http.Access-Control-Allow-Origin = "*";
    set resp.http.Cache-Control = "no-store";
    if (resp.status == 204) {
        set resp.http.Access-Control-Allow-Methods = ${lit(CORS_ALLOW_METHODS)};
        set resp.http.Access-Control-Allow-Headers = ${lit(CORS_ALLOW_HEADERS)};
        set resp.http.Access-Control-Max-Age = "86400";
        set resp.http.Allow = ${lit(CORS_ALLOW_METHODS)};
        return (deliver);
    }
    if (resp.status == 405) {
        set resp.http.Allow = ${lit(CORS_ALLOW_METHODS)};
    }
    set resp.http.Access-Control-Expose-Headers = ${lit(CORS_EXPOSE)};
    set resp.http.Content-Type = "text/plain; charset=utf-8";
    if (resp.status == 404) {
        synthetic("not found" + {"
"});
    } else {
        synthetic(resp.reason + {"
"});
    }
    return (deliver);
}

sub vcl_deliver {
    # for operators: whether this answer came from the edge's cache
    if (obj.hits > 0) {
        set resp.http.X-Cache = "HIT";
    } else {
        set resp.http.X-Cache = "MISS";
    }
    unset resp.http.Via;
}
`
}

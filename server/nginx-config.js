// `rotree nginx-config`: an nginx configuration that serves a published folder
// the way readers and caches need it (FORMAT.md §1.1, §8; docs/DEPLOY.md).
//
// Readers ask for BASE/fsinfo.json and BASE/h/<64 hex>, and a format-2 reader
// also for BASE/trust/<seq>.json (FORMAT.md §12.2); a gated gateway reads a
// gated tree's BASE/trust/revoked.json (§12.12). Those are whitelisted;
// everything else (.rotree/, temporary files in h/, a directory
// listing) is a 404. Blobs are immutable, so they are cached for a year;
// fsinfo.json changes at every publish (trust/revoked.json at every
// revocation), so it is cached briefly. Every
// 404 carries Cache-Control: no-store, so no cache in front (a CDN, a Varnish
// edge) keeps a blob's absence: a blob asked for a moment before its upload
// finished must be served as soon as it is there.
// Nothing is compressed: a reader caps each blob at its exact size, and a
// CDN's gzip would change the bytes it stores (the ETag would then name
// something else). CORS lets a browser on another origin read the tree.
//
// The full config (--full) runs nginx as an ordinary user: `nginx -p PREFIX -c FILE`
// keeps its pid file, logs and every temporary directory under PREFIX. It does
// not contain `daemon off;`: run it in the foreground with -g 'daemon off;'
// (systemd, containers, tests) or let it daemonise and stop it with -s quit.
import fs from 'node:fs'
import path from 'node:path'
import { execFileSync } from 'node:child_process'

import { checkListen, checkBase } from './edge-paths.js'
import { webServerBlocks } from './nginx-web.js'
import { serverBlock, q } from './nginx-block.js'
import { UsageError } from 'rotree-client/errors'

export { checkListen, checkBase, serverBlock }
export { webServerBlocks } from './nginx-web.js'

/**
 * Who nginx's workers run as, for --full. nginx started by root switches its
 * workers to `nobody` unless the config says otherwise, and `nobody` cannot
 * read a folder only its owner may read: every blob would be a 403. So when
 * this runs as root and OUT belongs to another account, the config names
 * that account (`user NAME GROUP;`): the workers read OUT as its owner and
 * nothing more. OUT owned by root gets no `user` line (workers as root would
 * be a needless risk); then, and whenever the workers could not reach OUT,
 * a warning says what to do.
 * @param {string} out
 * @param {{ uid?: number }} [o] the uid that will start nginx (default: this process's)
 * @returns {{ user: string|null, warnings: string[] }} user: the `user` directive's argument
 */
export function workerUser (out, { uid = process.getuid?.() } = {}) {
  const root = path.resolve(out)
  if (uid !== 0) return { user: null, warnings: [] } // an ordinary user: nginx cannot switch, workers run as that user
  let st
  try { st = fs.statSync(root) } catch { return { user: null, warnings: [`${root} does not exist yet: started as root, nginx runs its workers as nobody, who must be able to read it`] } }
  const who = st.uid === 0 ? { uid: 65534, gid: 65534, name: 'nobody' } : { uid: st.uid, gid: st.gid, name: accountName('passwd', st.uid) }
  const warnings = []
  let user = null
  if (st.uid !== 0) {
    const group = accountName('group', st.gid)
    if (who.name === null) warnings.push(`${root} belongs to uid ${st.uid}, which has no account name: add \`user NAME;\` for it yourself, or nginx's workers run as nobody`)
    else user = group === null ? who.name : `${who.name} ${group}`
  }
  const blocked = unreachable(root, who)
  if (blocked !== null) {
    warnings.push(st.uid === 0
      ? `nginx started as root runs its workers as nobody, and nobody cannot read ${blocked} (every request would be a 403): chown -R ${root} to a service account (this command then names it in \`user\`), or chmod -R a+rX it`
      : `nginx's workers (user ${who.name ?? st.uid}) cannot read ${blocked}: let that account search every folder above ${root}`)
  }
  return { user, warnings }
}

/** An account's name by id (getent, so NSS sources count), or null. */
function accountName (db, id) {
  try {
    const line = execFileSync('getent', [db, String(id)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })
    const name = line.split(':')[0]
    return /^[A-Za-z_][A-Za-z0-9._-]*\$?$/.test(name) ? name : null
  } catch {
    return null
  }
}

/** The first of OUT's folders (its ancestors, OUT, OUT/h) the account cannot search, or null. Primary group only: a warning, not a proof. */
function unreachable (root, { uid, gid }) {
  const dirs = []
  for (let d = root; ; d = path.dirname(d)) { dirs.unshift(d); if (d === path.dirname(d)) break }
  dirs.push(path.join(root, 'h'))
  for (const d of dirs) {
    let st
    try { st = fs.statSync(d) } catch { continue }
    const bits = st.uid === uid ? (st.mode >> 6) & 7 : st.gid === gid ? (st.mode >> 3) & 7 : st.mode & 7
    const need = d === root || d.endsWith('/h') ? 5 : 1 // search, and read where files are looked up
    if ((bits & need) !== need) return d
  }
  return null
}

/**
 * A complete nginx.conf that an unprivileged user runs with
 * `nginx -p PREFIX -c FILE -g 'daemon off;'` (foreground) or without -g (daemon).
 * @param {{ out: string, listen: string, prefix: string, base?: string, fsinfoMaxAge?: number, workers?: string|number, uid?: number, warn?: ((msg: string) => void) | null }} o
 *   uid: who will start nginx (default: this process); warn: called with each warning (workerUser), also written into the config as a comment;
 *   web: { appHost, webRoot } for the web app and its per-key origins (nginx-web.js);
 *   gate: { secret, tree, tokenUpstream } for a gated tree (nginx-block.js, FORMAT.md §12.11)
 */
export function fullConfig ({ out, listen, prefix, base, fsinfoMaxAge, workers = 'auto', uid, warn = null, web = null, gate = null }) {
  const p = path.resolve(prefix)
  const { user, warnings } = workerUser(out, { uid })
  for (const w of warnings) warn?.(w)
  if (!(workers === 'auto' || (Number.isInteger(Number(workers)) && Number(workers) > 0))) throw new UsageError('--workers must be a positive integer or auto')
  const under = name => q(path.join(p, name), '--prefix')
  return `# nginx.conf for the rotree tree in ${path.resolve(out)}, from \`rotree nginx-config --full\`.
# Runs as an ordinary user; everything it writes is under ${p}:
#   nginx -p ${p} -c <this file> -g 'daemon off;'   # foreground (systemd, containers)
#   nginx -p ${p} -c <this file>                    # daemon; stop with: nginx -p ${p} -c <this file> -s quit
${user !== null
  ? `# Generated as root: the workers run as the owner of ${path.resolve(out)}, so they can read it.\nuser ${user};\n`
  : '# Started as root, nginx runs its workers as "nobody": OUT must then be readable by nobody.\n'}${warnings.map(w => `# warning: ${w}\n`).join('')}worker_processes ${workers};
pid ${under('nginx.pid')};
lock_file ${under('nginx.lock')};
error_log ${under('error.log')} warn;

events {
    worker_connections 1024;
}

http {${gate === null ? '' : `
    # gated: the path without its query (a token is a bearer token: kept out of the log) and the
    # admitted token's expiry, which names its holder in the exchange's own log (docs/DEPLOY.md "Who fetched")
    log_format rotree_gated '$remote_addr [$time_local] "$request_method $uri $server_protocol" $status $body_bytes_sent token_expires=$secure_link_expires';`}
    access_log ${under('access.log')}${gate === null ? '' : ' rotree_gated'};
    client_body_temp_path ${under('client_body_temp')};
    proxy_temp_path ${under('proxy_temp')};
    fastcgi_temp_path ${under('fastcgi_temp')};
    uwsgi_temp_path ${under('uwsgi_temp')};
    scgi_temp_path ${under('scgi_temp')};
    keepalive_timeout 65;
    keepalive_requests 10000;   # readers fetch many blobs over one connection

${(web === null ? serverBlock({ out, listen, base, fsinfoMaxAge, gate }) : webServerBlocks({ out, listen, base, fsinfoMaxAge, ...web })).replace(/^(?=.)/gm, '    ')}}
`
}

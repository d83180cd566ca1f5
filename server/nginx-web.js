// `rotree nginx-config --web`: the tree and the verifying web app behind one
// nginx, as `rotree serve --web` serves them (docs/WEB.md "One origin per
// site"):
//
//   APP              the tree (fsinfo.json, h/, trust/) and every file of the
//                    web app, each with Origin-Agent-Cluster: ?1 and nosniff
//   <label>.APP      a site's own origin, one per public key (its 52-letter
//                    base32 label): only the site's bootstrap and its Service
//                    Worker with their imports, site-boot.html framed by APP
//                    alone (frame-ancestors); not the app, not site.html, not
//                    the tree; everything else a 404 no cache keeps
//
// APP must be a name with names under it (wildcard DNS *.APP and, for https,
// a certificate for it): per-key origins are subdomains of the app's host.
import path from 'node:path'
import { UsageError } from 'rotree-client/errors'
import { serverBlock } from './nginx-block.js'
import { checkListen } from './edge-paths.js'

/**
 * What a per-key origin is given: the same list as server/app.js's
 * SITE_ORIGIN_FILES (test/server/nginx-web.test.js checks the two agree on
 * every file of web/).
 */
export const KEY_HOST_FILES = ['/site-boot.html', '/site-boot.js', '/register.js', '/sw.js', '/rotree-client.js',
  '/origins.js', '/mime.js', '/explain.js', '/redirects.js', '/grant.js', '/style.css', '/site.css', '/favicon.svg']

// a key's label: 52 letters of base32, the last holding one bit (web/origins.js keyLabel)
const LABEL_RE = '[a-z2-7]{51}[aq]'

// the types of the app's files (as express.static gives them), charset for the text ones
const WEB_TYPES = `        types {
            text/html html;
            text/javascript js mjs;
            text/css css;
            image/svg+xml svg;
            application/json json;
        }
        default_type application/octet-stream;
        charset utf-8;
        charset_types text/html text/css text/javascript application/json image/svg+xml;`

// every web file: its own agent cluster (no document.domain merging with another origin), no sniffing,
// and revalidated, so an updated app is picked up at once
const WEB_HEADERS = `        add_header Origin-Agent-Cluster "?1" always;
        add_header X-Content-Type-Options "nosniff" always;
        add_header Cache-Control "no-cache";`

function q (p, what) {
  if (/["\\$\x00-\x1f\x7f]/.test(p)) throw new UsageError(`${what} ${JSON.stringify(p)} has a character nginx cannot take literally (", \\, $ or a control character)`)
  return `"${p}"`
}

/** The app's host name: a DNS name (per-key origins live under it), not an address. */
export function checkAppHost (h) {
  const host = String(h ?? '').toLowerCase()
  if (!/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/.test(host) || /^[0-9.]+$/.test(host)) {
    throw new UsageError(`--app-host ${h}: expected a host name such as verify.example.org (per-key origins are <label>.${h}), not an address`)
  }
  return host
}

/**
 * Both server blocks.
 * @param {{ out: string, listen: string, appHost: string, webRoot: string, base?: string, fsinfoMaxAge?: number }} o
 */
export function webServerBlocks ({ out, listen, appHost, webRoot, base = '/', fsinfoMaxAge = 30 }) {
  checkListen(listen)
  const app = checkAppHost(appHost)
  const web = q(path.resolve(webRoot), 'the web app folder')
  const notFound = `        default_type text/plain;
        add_header Cache-Control "no-store" always;
        return 404 "not found\\n";`
  const site = `    # the web app (docs/WEB.md), on the app's host only
    location / {
        root ${web};
        index index.html;
${WEB_TYPES}
${WEB_HEADERS}
        error_page 404 = @rotree_missing;
        location ~ "/\\." {
            return 404;                # dotfiles are not part of the app
        }
    }`
  const keyFiles = KEY_HOST_FILES.filter(f => f !== '/site-boot.html').map(f => f.slice(1).replace(/[.]/g, '\\.')).join('|')
  const appEsc = app.replace(/[.]/g, '\\.')
  const keyHost = `server {
    listen ${listen};
    # a site's own origin <label>.${app} (docs/WEB.md "One origin per site"): its bootstrap and Service Worker only
    server_name "~^${LABEL_RE}\\.${appEsc}$";
    autoindex off;
    server_tokens off;
    # the app's origin, as the browser sees it (host and port), for frame-ancestors; 'none' if the Host is odd
    set $rotree_app_host "'none'";
    if ($http_host ~* "^[a-z2-7]{52}\\.([a-z0-9.-]+(:[0-9]+)?)$") {
        set $rotree_app_host $1;
    }

    # the bootstrap: framed by the app's origin and nothing else
    location = /site-boot.html {
        root ${web};
${WEB_TYPES}
${WEB_HEADERS}
        add_header Content-Security-Policy "frame-ancestors $rotree_app_host" always;
        # opened as a window (a private site's identity picker), no other window keeps a handle on it
        add_header Cross-Origin-Opener-Policy "same-origin" always;
    }

    # its script, the Service Worker and their imports, the styles
    location ~ "^/(${keyFiles})$" {
        root ${web};
${WEB_TYPES}
${WEB_HEADERS}
    }

    # nothing else: not the app, not site.html, not the tree
    location / {
${notFound}
    }
}
`
  return serverBlock({ out, listen, base, fsinfoMaxAge, serverName: app, site }) + '\n' + keyHost
}

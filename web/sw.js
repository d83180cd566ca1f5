// The verified static site Service Worker (docs/WEB.md). Registered as
// sw.js?key=<public key>&mirror=<url>… with the scope site/<key>/ (by
// site-boot.js on the key's own origin, or by site.html on a shared one), it
// answers every request under that scope from the signed tree on the
// (untrusted) mirrors: a response is built only from bytes that have
// verified, so the page never sees a tampered script, style, image or font.
// Requests outside the scope (other origins, other paths) are not touched.
// An optional &timeout=<ms> (100 to 600000) bounds each request to a mirror
// (openTree's timeoutMs); without it the client's default applies.
//
// One tree never acts with the rights of another, or of the app (docs/WEB.md
// "One origin per site"):
// - a worker serves only its own key's scope, and on a per-key origin only
//   that origin's key: registered for anything else, it refuses to install,
//   so a worker already there stays;
// - on a per-key origin its pages may be framed only by their bootstrap
//   (site-boot.html) under the app that shows the bar;
// - on a shared origin every response is sandboxed (an opaque origin: no
//   storage, no Service Workers, no access to the bar) and may load nothing
//   but itself: a sandboxed page is not controlled by this worker, so its
//   subresources would otherwise reach the network unverified.
//
// A private tree (FORMAT.md §12.8) is read with the reader's identity, which
// this worker holds in memory only (docs/WEB.md "Private trees in the
// browser"): it arrives by postMessage from the page the reader picked the
// file in, a window of its own on this origin (site-boot.html#identity) or
// the bar on a shared origin, never in the registration's URL, never stored.
// A worker the browser stopped and started again has none: the tree answers
// ROTREE_NO_ACCESS, and the bar asks for the file again.
//
// A gated tree (FORMAT.md §12.10–12.11) is read with a grant and its holder's
// key, which arrive and are kept the same way (docs/WEB.md "Gated trees in
// the browser"): the tree's transport is wrapped with gatedTransport, which
// trades the grant for edge tokens at the mirrors and renews them before they
// expire, here in the worker, however long the site stays open. Without a
// grant, a gated mirror's refusal is not blamed on it: the bar asks for one.
//
// A module worker (Chromium 91+, Safari 15+, Firefox 147+): static imports only.
import { openTree, BadAddressError, BadPathError, ABSENT_CODES, parseRange, statusOf } from './rotree-client.js'
import { contentType } from './mime.js'
import { explain, GATED_TEXT, GATED_TODO } from './explain.js'
import { KEY_RE, keyOfHost, appOriginOf } from './origins.js'
import { REDIRECTS_PATH, MAX_BYTES as REDIRECTS_MAX, parseRedirects, matchRedirect } from './redirects.js'
import { IDENTITY_MAX } from './register.js'
import { GRANT_FILE_MAX, KEY_FILE_MAX, checkGrant, gatedOptions, edgeRefused, needsGrant } from './grant.js'

const HERE = new URL(self.location.href)
const conf = HERE.searchParams
const KEY = (conf.get('key') ?? '').toLowerCase()
const MIRRORS = conf.getAll('mirror').length ? conf.getAll('mirror') : [new URL('./', HERE).href]
const SCOPE = new URL(self.registration.scope)
// non-null on a per-key origin: the one key this origin belongs to
const ORIGIN_KEY = keyOfHost(HERE.hostname)
const TIMEOUT = conf.get('timeout')
const TIMEOUT_MS = TIMEOUT === null ? undefined : Number(TIMEOUT)
// Files up to this size are verified whole before the response starts; larger
// ones, and every Range request, stream, each chunk verified before it is
// passed on, and a bad chunk aborts the response (the browser sees a network
// error, never the bad bytes).
const WHOLE_MAX = 16 << 20
// the only page an identity is taken from: the one the reader picks the file
// in, in a window of its own (site-boot.js), or the bar itself on a shared origin
const PICKER_PATH = new URL(ORIGIN_KEY !== null ? 'site-boot.html' : 'site.html', HERE).pathname

// What a shared origin lets a site's page do: run its own inline scripts and
// styles, show data: images, follow links. No allow-same-origin: the page gets
// an opaque origin. Everything else is blocked, never fetched unverified.
const SHARED_CSP = [
  'sandbox allow-scripts allow-forms allow-popups allow-modals allow-downloads',
  "default-src 'none'", "script-src 'unsafe-inline'", "style-src 'unsafe-inline'",
  'img-src data:', 'font-src data:', 'media-src data:',
  "form-action 'none'", "base-uri 'none'", "frame-ancestors 'self'"
].join('; ')
const CSP = ORIGIN_KEY !== null ? `frame-ancestors 'self' ${appOriginOf(HERE)}` : SHARED_CSP
// the error pages this worker writes run nothing at all
const ERROR_CSP = `${ORIGIN_KEY !== null ? CSP : "sandbox; frame-ancestors 'self'"}; default-src 'none'; style-src 'unsafe-inline'`

/** Why this worker must not serve anything, or null. */
function misfit () {
  if (!KEY_RE.test(KEY)) return `sw.js was registered without a valid ?key=: ${JSON.stringify(KEY)}`
  const own = new URL(`site/${KEY}/`, HERE).href
  if (SCOPE.href !== own) return `sw.js?key=${KEY} serves the scope ${own} only, not ${SCOPE.href}`
  if (ORIGIN_KEY !== null && ORIGIN_KEY !== KEY) return `this origin belongs to the key ${ORIGIN_KEY}, not ${KEY}`
  if (TIMEOUT_MS !== undefined && !(Number.isInteger(TIMEOUT_MS) && TIMEOUT_MS >= 100 && TIMEOUT_MS <= 600_000)) {
    return `sw.js?timeout= is a whole number of milliseconds from 100 to 600000, not ${JSON.stringify(TIMEOUT)}`
  }
  return null
}
const MISFIT = misfit()

self.addEventListener('install', ev => {
  if (MISFIT) {
    // a failed install leaves the registration's current worker (if any) in place
    console.error(`rotree sw.js: ${MISFIT}`)
    ev.waitUntil(Promise.reject(new BadAddressError(MISFIT)))
    return
  }
  self.skipWaiting()
})
self.addEventListener('activate', ev => ev.waitUntil(self.clients.claim()))

self.addEventListener('fetch', ev => {
  if (MISFIT) return
  const url = new URL(ev.request.url)
  if (url.origin !== SCOPE.origin || !url.pathname.startsWith(SCOPE.pathname)) return
  ev.respondWith(handle(ev.request, url))
})

// ---- the tree -------------------------------------------------------------

let treeP = null
// the text of the reader's identity file, or undefined: memory only (above)
let identity
// a gated tree's grant and key (grant.js checkGrant), or null: memory only (above)
let gate = null

function treeOptions () {
  const opts = { mirrors: MIRRORS.slice(1), fsinfoSettleMs: 500 }
  if (TIMEOUT_MS !== undefined) opts.timeoutMs = TIMEOUT_MS
  if (identity !== undefined) opts.identity = identity
  return { ...opts, ...gatedOptions(gate) }
}

/**
 * The open tree. A navigation (a page load or reload) first asks the mirrors
 * for a newer fsinfo.json, so a new publish shows on refresh; the page's
 * scripts, styles and images then come from the root that refresh accepted.
 */
async function getTree (navigate) {
  let opened = false
  if (!treeP) {
    opened = true
    const p = openTree(`${MIRRORS[0]}#${KEY}`, treeOptions())
    treeP = p
    p.catch(() => { if (treeP === p) treeP = null }) // try again on the next request
  }
  const tree = await treeP
  if (navigate && !opened) {
    try {
      await tree.refresh()
    } catch (err) {
      // The accepted root stays in use (it is signed and not expired: the
      // client refreshes it itself once it expires). Say what the mirrors did.
      tell({ type: 'warning', code: err.code ?? 'ERROR', message: err.message })
    }
  }
  // trust rule 2: an expired root is never served, whatever the refresh did
  // (a snapshot pins its root and would not refresh it by itself)
  if (!tree.isFresh()) await tree.refresh()
  if (navigate) {
    // the root's _redirects, parsed (once per root) before the page's requests need it, so the bar can say it is broken
    const rules = await redirectsOf(tree.snapshot()).catch(err => ({ rules: [], error: `_redirects could not be read: ${err.code ?? 'ERROR'}: ${err.message}` }))
    tell({ type: 'info', navigate: true, info: tree.info, mirrors: tree.stats.mirrors, redirects: { rules: rules.rules.length, error: rules.error } })
  }
  return tree
}

let redirects = { root: null, p: null }

/**
 * The _redirects rules of a view's root: { rules, error }, read and parsed
 * once per root (redirects.js; bounded in size and count). A file that is
 * not there is no rules; one that cannot be read now (every mirror failed) is
 * tried again by the next request.
 */
function redirectsOf (view) {
  const root = view.info.root
  if (redirects.root !== root) {
    const p = (async () => {
      let st
      try { st = await view.stat(REDIRECTS_PATH) } catch (err) {
        if (ABSENT_CODES.has(err?.code)) return { rules: [], error: null }
        throw err
      }
      if (st.type !== 'file') return { rules: [], error: '_redirects ignored: it is not a file' }
      if (st.size > REDIRECTS_MAX) return { rules: [], error: `_redirects ignored: ${st.size} bytes, over the limit of ${REDIRECTS_MAX}` }
      return parseRedirects(await view.readFile(REDIRECTS_PATH))
    })()
    redirects = { root, p }
    p.catch(() => { if (redirects.p === p) redirects = { root: null, p: null } })
  }
  return redirects.p
}

// ---- a private tree's identity ---------------------------------------------

self.addEventListener('message', ev => {
  const m = ev.data
  if (MISFIT || (m?.source !== 'rotree-identity' && m?.source !== 'rotree-grant') || m.key !== KEY || !ev.ports[0]) return
  const reply = ev.ports[0]
  // nothing but the picker's own window hands this worker an identity
  const from = ev.source
  if (from?.type !== 'window' || from.frameType !== 'top-level' || new URL(from.url).pathname !== PICKER_PATH) {
    reply.postMessage({ ok: false, code: 'ROTREE_USAGE', message: `an identity or a grant is taken from ${PICKER_PATH} in a window of its own only` })
    return
  }
  ev.waitUntil((m.source === 'rotree-grant' ? takeGrant(m.grant, m.grantKey) : takeIdentity(m.identity)).then(r => reply.postMessage(r)))
})

/**
 * Open the tree with `text` and keep it only when it reads the tree: an
 * identity that is not a reader (ROTREE_NO_ACCESS), or not an identity, is
 * dropped, and the one held before (if any) stays. The answer says which,
 * and never holds the identity.
 */
async function takeIdentity (text) {
  if (typeof text !== 'string' || text.length > IDENTITY_MAX) return { ok: false, code: 'ROTREE_USAGE', message: 'not the text of an age identity file' }
  let tree
  try {
    tree = await openTree(`${MIRRORS[0]}#${KEY}`, { ...treeOptions(), identity: text })
  } catch (err) {
    return { ok: false, code: err?.code ?? 'ERROR', message: err?.message ?? String(err) }
  }
  identity = text
  treeP = Promise.resolve(tree)
  // every window of this origin: the bootstrap reloads the site, and tells the bar
  tell({ type: 'unlocked' })
  return { ok: true }
}

/**
 * Check a grant and its holder's key against this tree, and keep them only
 * when a mirror's edge trades the grant for a token (the root's listing is
 * read through it); the grant held before, if any, stays otherwise. The
 * answer says why not (grant.js's reason, or the edge's ROTREE_NO_ACCESS),
 * and never holds the key.
 */
async function takeGrant (grantText, keyText) {
  if (typeof grantText !== 'string' || typeof keyText !== 'string' || grantText.length > GRANT_FILE_MAX || keyText.length > KEY_FILE_MAX) {
    return { ok: false, code: 'ROTREE_USAGE', message: 'not the text of a grant file and a key file' }
  }
  let held, tree
  try {
    held = checkGrant({ grantText, keyText }, { anchor: KEY, name: '' })
    tree = await openTree(`${MIRRORS[0]}#${KEY}`, { ...treeOptions(), ...gatedOptions(held) })
    await tree.stat('/')
  } catch (err) {
    tree?.close()
    return { ok: false, code: err?.code ?? 'ERROR', message: err?.message ?? String(err), reason: err?.reason, tree: err?.tree, expires: err?.expires, holder: err?.holder }
  }
  gate = held
  treeP = Promise.resolve(tree)
  tell({ type: 'unlocked' })
  return { ok: true, holder: held.holder, expires: held.expires }
}

/** Post to every window of this origin: the bar shows it above the site (site-boot.html relays it there). */
async function tell (msg) {
  const all = await self.clients.matchAll({ type: 'window', includeUncontrolled: true })
  for (const c of all) c.postMessage({ source: 'rotree-sw', key: KEY, ...msg })
}

// ---- answering ------------------------------------------------------------

async function handle (req, url) {
  const navigate = req.mode === 'navigate'
  // which page a frame is about to show (the bar keeps it in its address)
  if (navigate) tell({ type: 'navigate', page: url.pathname })
  let path = '/'
  try {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      return new Response('a verified site is read-only\n', { status: 405, headers: { allow: 'GET, HEAD', 'content-type': 'text/plain', 'content-security-policy': ERROR_CSP } })
    }
    try {
      path = '/' + url.pathname.slice(SCOPE.pathname.length).split('/').map(decodeURIComponent).join('/')
    } catch (err) {
      throw new BadPathError(`malformed %-escape in ${url.pathname}`, { cause: err })
    }
    const tree = await getTree(navigate)
    const view = tree.snapshot() // one root for the stat, the rules and the read (trust rule 6)
    let st
    try {
      st = await view.stat(path)
      if (st.type === 'dir') {
        if (!url.pathname.endsWith('/')) return Response.redirect(url.origin + url.pathname + '/' + url.search, 301)
        st = await view.stat(path.replace(/\/?$/, '/index.html'))
        path = path.replace(/\/?$/, '/index.html')
      }
    } catch (err) {
      // only a path the signed tree proves absent (trust rule 5) may be redirected or rewritten
      if (!ABSENT_CODES.has(err?.code)) throw err
      const answer = await redirected(view, req, path)
      if (answer) return answer
      throw err
    }
    return await respond(view, req, path, st, 200)
  } catch (err) {
    return failure(err, path, req, navigate)
  }
}

/** The answer _redirects gives for an absent path, or null when no rule matches. */
async function redirected (view, req, path) {
  const { rules } = await redirectsOf(view)
  const hit = matchRedirect(rules, path)
  if (!hit) return null
  if (hit.status !== 200 && hit.status !== 404) {
    // a path on this site only: each segment is one encoded name, so the URL
    // stays in this scope (no '//host', no '..'); checked again all the same
    const to = new URL(hit.to.map(encodeURIComponent).join('/'), SCOPE)
    if (to.origin !== SCOPE.origin || !to.pathname.startsWith(SCOPE.pathname)) return null
    return Response.redirect(to.href, hit.status)
  }
  // a rewrite (200) or a custom not-found page (404): the target's verified bytes
  let target = '/' + hit.to.join('/')
  let st = await view.stat(target)
  if (st.type === 'dir') { target = target.replace(/\/?$/, '/index.html'); st = await view.stat(target) }
  return respond(view, req, target, st, hit.status)
}

async function respond (view, req, path, st, status) {
  const info = view.info
  const headers = {
    'content-type': contentType(path),
    'x-content-type-options': 'nosniff',
    'cache-control': 'no-cache',
    'accept-ranges': 'bytes',
    'x-rotree-seq': String(info.seq),
    'x-rotree-root': info.root,
    'content-security-policy': CSP
  }
  let start = 0
  let end = st.size - 1
  // one range (media elements ask for them), as `rotree serve` and the gateway
  // answer it (rotree-client's parseRange): an invalid one is ignored, an unsatisfiable one is a 416
  const range = status === 200 ? parseRange(req.headers.get('range'), st.size) : null
  if (range === 'unsatisfiable') {
    return new Response(null, { status: 416, headers: { 'content-range': `bytes */${st.size}`, 'accept-ranges': 'bytes', 'cache-control': 'no-cache', 'content-security-policy': CSP } })
  }
  if (range) {
    ({ start, end } = range)
    status = 206
    headers['content-range'] = `bytes ${start}-${end}/${st.size}`
  }
  const length = Math.max(end - start + 1, 0)
  headers['content-length'] = String(length)
  if (req.method === 'HEAD' || length === 0) return new Response(null, { status, headers })
  if (status !== 206 && length <= WHOLE_MAX) return new Response(await view.readFile(path), { status, headers })
  // only the chunks covering [start, end] are fetched and verified, and the
  // first goes out as soon as it has: a video starts at once, and seeks
  const body = view.createReadStream(path, { start, end })
  return new Response(reportErrors(body, path, req), { status, headers })
}

/** A streamed body that fails mid-way is reported like any other blocked resource. */
function reportErrors (body, path, req) {
  const reader = body.getReader()
  return new ReadableStream({
    async pull (ctl) {
      try {
        const { done, value } = await reader.read()
        if (done) ctl.close(); else ctl.enqueue(value)
      } catch (err) {
        blocked(err, path, req)
        ctl.error(err)
      }
    },
    cancel (reason) { return reader.cancel(reason) }
  }, { highWaterMark: 0 })
}

function blocked (err, path, req) {
  const { code } = explain(err)
  tell({ type: 'blocked', path, code, message: err?.message ?? String(err), destination: req.destination || (req.mode === 'navigate' ? 'document' : '') })
}

async function failure (err, path, req, navigate) {
  const { code, title, text, todo } = explain(err)
  // the status is the gateway's (statusOf, docs/ERRORS.md): 404 only for what
  // the signed tree proves absent (docs/TRUST.md rule 5), 504 when every
  // mirror stalled, 410 for a retired tree, 508 for a symlink loop
  const status = statusOf(err)
  const absent = ABSENT_CODES.has(err?.code)
  if (absent && navigate && treeP) {
    // the publisher's own 404 page, when the tree has one
    try {
      const view = (await treeP).snapshot()
      const st = await view.stat('/404.html')
      return await respond(view, req, '/404.html', st, 404)
    } catch {}
  }
  // a private tree without an identity that reads it is the reader's to
  // unlock, not an attack: the bar asks for the identity file
  // a gated edge that refuses this worker (no grant, or the grant held): the bar asks for a grant
  const gated = edgeRefused(err) || (gate === null && await needsGrant(err))
  const locked = err?.code === 'ROTREE_NO_ACCESS' && !gated
  if (gated) tell({ type: 'gated', message: err?.message ?? String(err) })
  else if (locked) tell({ type: 'locked', message: err.message })
  // a missing path is proven absent by the signed tree: a plain 404, not an attack
  else if (!absent) blocked(err, path, req)
  const headers = { 'x-rotree-error': code, 'cache-control': 'no-store' }
  if (!navigate) {
    return new Response(`rotree: blocked ${path}: ${code}: ${err?.message ?? err}\n`, { status, headers: { ...headers, 'content-type': 'text/plain; charset=utf-8' } })
  }
  const html = `<!doctype html><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>${esc(title)}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;margin:3rem auto;max-width:42rem;padding:0 1rem;color:#1d2330}
h1{color:#b3261e;font-size:1.4rem}code,.m{font-family:ui-monospace,monospace;font-size:.9em;overflow-wrap:anywhere}
.box{background:#fdecea;border:1px solid #f0b4ae;border-radius:8px;padding:1rem 1.2rem}</style>
<div class="box" id="rotree-error" data-code="${esc(code)}"${gated ? ' data-gated="true"' : ''}>
<h1>${absent || locked || gated ? '' : '✗ Blocked: '}${esc(gated ? 'Gated site' : title)}</h1>
<p>${esc(gated ? GATED_TEXT : text)}</p>
<p id="rotree-todo"><strong>What to do:</strong> ${esc(gated ? GATED_TODO : todo)}${locked ? ' The bar above this site asks for your identity file.' : gated ? ' The bar above this site asks for them.' : ''}</p>
<p class="m">${esc(code)}: ${esc(err?.message ?? String(err))}</p>
<p class="m">path: ${esc(path)}</p>
${(err?.errors ?? []).map(e => `<p class="m">${esc(e.mirror)}: ${esc(e.code)}: ${esc(e.message)}</p>`).join('\n')}
</div>
<p>This page was written by the verifying Service Worker of this site, not by a mirror.</p>`
  return new Response(html, { status, headers: { ...headers, 'content-type': 'text/html; charset=utf-8', 'content-security-policy': ERROR_CSP } })
}

function esc (s) {
  return String(s).replace(/[&<>"']/g, c => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c])
}

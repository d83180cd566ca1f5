// The bar of a verified static site (docs/WEB.md):
//   site.html?key=<64-hex public key>&mirror=<url>[&mirror=<url>…][&path=/page.html]
// Without ?mirror= the tree is read from this page's own directory.
//
// Each tree runs in its own origin or in a sandbox, never with the rights of
// this origin or of another tree (docs/WEB.md "One origin per site"):
// - per-key origins (the default): the site of key K is served from
//   <label(K)>.<this host>, whose site-boot.html installs sw.js there and
//   frames the site. This bar is cross-origin to it: the site cannot touch
//   the bar, this origin's storage, or another key's origin. What the bar
//   shows comes by postMessage from that origin's frame only.
// - a shared origin (<meta name="rotree-site-origins" content="shared">, or a
//   host that is an IP address): sw.js runs on this origin and serves every
//   page sandboxed, with an opaque origin, loading nothing but itself.
//
// A private site (FORMAT.md §12.8): when sw.js says it holds no identity
// that reads the tree, this bar asks for the reader's identity file
// (docs/WEB.md "Private trees in the browser"). On per-key origins the file
// is picked in a window of its own on the site's origin, which this bar
// opens without an opener (site-boot.html#identity), and goes from there to
// sw.js: the site's pages share that origin, and nothing of theirs holds a
// reference to that window. On a shared origin the site's pages have opaque
// origins, and this bar picks the file and hands it to sw.js itself.
import { explain, identityRefusal } from './explain.js'
import { BadAddressError, UsageError, mirrorUrl } from './rotree-client.js'
import { KEY_RE, keyOfHost, siteOrigin } from './origins.js'
import { installVerifier, sendIdentity, sendGrant, keepVerifierAlive, readIdentityFile } from './register.js'
import { wireGrantInputs } from './grant.js'
import { expiry, agoText } from './dates.js'

const $ = id => document.getElementById(id)
const q = new URLSearchParams(location.search)
const key = (q.get('key') ?? '').toLowerCase()
const frame = $('frame')
const blockedSeen = new Set()
// how long the site's own origin may take to install its verifier and say so
const READY_MS = 30_000
// the app's name on this machine when it was opened as localhost or 127.0.0.1
const LOCAL_HOST = 'rotree.localhost'
// what reloads the site's frame once sw.js holds an identity that reads it (per mode, below)
let reloadSite = () => {}

function fail (code, message) {
  const { title, text, todo } = explain({ code })
  $('site-error-title').textContent = `${title} (${code})`
  $('site-error-text').textContent = `${text} ${message}`
  $('site-error-todo-text').textContent = todo
  $('site-error').hidden = false
  status('✗ not verified', 'bad')
  frame.hidden = true
  document.body.dataset.state = 'error'
}

function status (text, cls = '') {
  $('site-status').textContent = text
  $('site-status').className = 'pill ' + cls
}

/** Mirror base URLs as the client wants them; relative ones are relative to this page. */
function mirrors () {
  const list = q.getAll('mirror')
  if (list.length === 0) return [new URL('./', location.href).href]
  return list.map(m => mirrorUrl(new URL(m, location.href).href))
}

/** What sw.js reports (directly on a shared origin, relayed by site-boot.js otherwise). */
function onVerifier (m) {
  if (m.type === 'info') {
    // a navigation started: a new page, so a new list of what was blocked
    blockedSeen.clear()
    $('blocked-list').replaceChildren()
    $('blocked').hidden = true
    const info = m.info ?? {}
    $('s-seq').textContent = String(info.seq)
    $('s-issued').textContent = agoText(Date.now() - Date.parse(info.issued))
    $('s-issued').title = new Date(info.issued).toLocaleString()
    const x = expiry(info)
    // the bar is one line: the date itself is in the tooltip
    $('s-expires').textContent = x.text
    $('s-expires').title = new Date(info.expires).toLocaleString()
    $('s-expires').classList.toggle('warn', x.warn)
    // the site's _redirects: one that breaks the rules is ignored, and said so here
    const broken = typeof m.redirects?.error === 'string' ? m.redirects.error : ''
    $('site-notice').textContent = broken
    $('site-notice').hidden = !broken
    $('s-root').textContent = String(info.root).slice(0, 8) + '…'
    $('s-root').title = String(info.root)
    $('s-mirror').textContent = String(info.mirror)
    const failed = (Array.isArray(m.mirrors) ? m.mirrors : []).filter(x => x?.lastError)
    status(failed.length ? `✓ verified (${failed.length} mirror${failed.length > 1 ? 's' : ''} failed)` : '✓ verified', 'ok')
    $('site-status').title = failed.map(x => `${x.url}: ${x.lastError.code}`).join('\n')
    document.body.dataset.seq = String(info.seq)
  } else if (m.type === 'blocked') {
    const id = `${m.path} ${m.code}`
    if (blockedSeen.has(id)) return
    blockedSeen.add(id)
    const li = document.createElement('li')
    li.textContent = `${m.path}${m.destination ? ` (${m.destination})` : ''}: ${m.code}: ${m.message}`
    $('blocked-list').append(li)
    $('blocked').hidden = false
    status('✗ content blocked', 'bad')
    document.body.dataset.blocked = String(blockedSeen.size)
  } else if (m.type === 'warning') {
    $('site-status').title = `refresh failed: ${m.code}: ${m.message}`
  } else if (m.type === 'locked') {
    locked()
  } else if (m.type === 'gated') {
    // a gated site whose verifier holds no grant its mirrors take (docs/WEB.md "Gated trees in the browser")
    $('site-gated').hidden = false
    status('gated: grant needed')
    document.body.dataset.state = 'gated'
  } else if (m.type === 'unlocked') {
    $('site-private').hidden = true
    $('site-gated').hidden = true
    status('identity accepted')
    reloadSite()
  }
  if (m.type === 'info') { $('site-private').hidden = true; $('site-gated').hidden = true }
}

/** sw.js holds no identity that reads this private site: ask for the reader's identity file. */
function locked () {
  $('site-private').hidden = false
  status('private: identity needed')
  document.body.dataset.state = 'private'
}

function privateProblem (text) {
  $('site-private-problem').textContent = text
  $('site-private-problem').hidden = !text
}

/**
 * The link to this tree's files in the app (index.html beside this page), at
 * `path` (the page shown: a folder's own listing, a page's file), reading the
 * mirrors this bar reads: without ?mirror= that is this page's directory, which
 * is the app's own origin; else those mirrors, and the app's origin only if it
 * is one of them (?self=0 otherwise, so it is not tried and reported failing).
 */
function browseLink (path) {
  const own = new URL('./', location.href)
  own.search = ''
  own.hash = ''
  const p = new URLSearchParams()
  if (q.getAll('mirror').length) {
    const list = mirrors()
    if (!list.includes(own.href)) p.set('self', '0')
    for (const m of list) if (m !== own.href) p.append('mirror', m)
  }
  const rest = String(path).replace(/^\/+/, '').replace(/\/+$/, '')
  const u = new URL(own)
  u.search = p.toString()
  u.hash = key + (rest ? '/' + rest : '')
  $('s-browse').href = u.href
}

/** The page shown in the frame (a path on the site's scope): kept in the address so a reload stays on it. */
function shown (scope, page, title) {
  if (typeof page !== 'string' || !page.startsWith(scope.pathname)) return
  const p = new URLSearchParams(location.search)
  p.set('path', '/' + page.slice(scope.pathname.length))
  browseLink(p.get('path'))
  history.replaceState(null, '', '?' + p.toString())
  document.title = (typeof title === 'string' && title ? title.slice(0, 200) : 'site') + ' · verified by rotree'
  document.body.dataset.loaded = page
}

/** The site on its own origin, framed; everything the bar hears comes from that frame. */
function perKeyOrigin () {
  const origin = siteOrigin(location, key)
  const scope = new URL(location.pathname.replace(/[^/]*$/, `site/${key}/`), origin)
  const boot = new URL(location.pathname.replace(/[^/]*$/, 'site-boot.html'), origin)
  const list = mirrors()
  document.body.dataset.siteOrigin = origin

  const slow = setTimeout(() => fail('ROTREE_USAGE', `The site's own origin ${origin} did not answer. Per-key origins need every name under this host (*.${location.host}) to reach the server of this page; see docs/WEB.md.`), READY_MS)
  window.addEventListener('message', ev => {
    if (ev.origin !== origin || ev.source !== frame.contentWindow) return
    const m = ev.data
    if (m?.key !== key) return
    if (m.source === 'rotree-sw') return onVerifier(m)
    if (m.source !== 'rotree-site') return
    switch (m.type) {
      case 'hello': {
        // the mirrors and the page go to this key's own frame only, never in its URL
        const path = new URLSearchParams(location.search).get('path') ?? '/'
        frame.contentWindow.postMessage({ source: 'rotree-bar', type: 'welcome', key, mirrors: list, path }, origin)
        break
      }
      case 'ready': clearTimeout(slow); status('verifier installed'); break
      case 'loaded': shown(scope, m.page, m.title); break
      case 'error': clearTimeout(slow); fail(String(m.code), String(m.message)); break
    }
  })
  // allow-same-origin keeps the frame its own (per-key) origin; without
  // allow-top-navigation the site cannot replace this bar unless clicked
  frame.setAttribute('sandbox', 'allow-scripts allow-same-origin allow-forms allow-popups allow-popups-to-escape-sandbox allow-modals allow-downloads allow-top-navigation-by-user-activation')
  frame.referrerPolicy = 'origin' // site-boot.js checks who frames it
  frame.src = boot.href
  const reload = () => frame.contentWindow.postMessage({ source: 'rotree-bar', type: 'reload' }, origin)
  $('s-reload').addEventListener('click', reload)
  reloadSite = reload
  // the identity is picked on the site's origin, in a window nothing else holds (noopener)
  $('s-identity').hidden = false
  $('s-identity').addEventListener('click', () => {
    window.open(new URL(boot.pathname + '#identity', origin).href, '_blank', 'noopener,popup,width=640,height=520')
  })
  // a gated site's grant and key likewise (site-boot.html#grant)
  $('s-grant').hidden = false
  $('s-grant').addEventListener('click', () => {
    window.open(new URL(boot.pathname + '#grant', origin).href, '_blank', 'noopener,popup,width=640,height=560')
  })
}

/** sw.js on this very origin, serving every page sandboxed. */
async function sharedOrigin (start) {
  document.body.dataset.shared = 'true'
  $('s-shared').hidden = false
  let page = null // the page the frame navigated to last, as sw.js saw it
  if ('serviceWorker' in navigator) {
    // only a Service Worker posts here: a sandboxed page cannot reach this container
    navigator.serviceWorker.onmessage = ev => {
      const m = ev.data
      if (m?.source !== 'rotree-sw' || m.key !== key) return
      if (m.type === 'navigate') page = m.page; else onVerifier(m)
      // sw.js holds a private tree's identity: keep it from being stopped while the site is open
      if (m.type === 'unlocked' || (m.type === 'info' && m.info?.private === true)) keepVerifierAlive(key)
    }
  }
  status('installing verifier…')
  const scope = await installVerifier(key, mirrors())
  let first = new URL(start, scope)
  if (first.origin !== scope.origin || !first.pathname.startsWith(scope.pathname)) first = scope
  page = first.pathname
  // the frame's document has an opaque origin: its load is all this page sees of it
  frame.addEventListener('load', () => shown(scope, page, ''))
  frame.src = first.href
  $('s-reload').addEventListener('click', () => { frame.src = new URL(page, scope).href })
  reloadSite = () => { frame.src = new URL(page, scope).href }
  // the site's pages are sandboxed (opaque origins): this bar picks the file and hands it to sw.js
  $('s-identity-pick').hidden = false
  $('s-identity-file').addEventListener('change', async ev => {
    const input = ev.target
    const file = input.files?.[0]
    input.value = '' // this page keeps nothing of the file
    if (!file) return
    privateProblem('')
    let r
    try {
      r = await sendIdentity(key, await readIdentityFile(file))
    } catch (err) {
      r = { ok: false, code: err?.code ?? 'ERROR', message: err?.message ?? String(err) }
    }
    if (r?.ok !== true) privateProblem(identityRefusal(file.name, r))
    // else sw.js tells this page 'unlocked', and the site reloads
  })
  // a gated site: the bar takes the grant and key files itself, and sw.js tells 'unlocked' when they read
  $('s-grant-pick').hidden = false
  wireGrantInputs($('s-grant-file'), $('s-grant-key-file'), (g, k) => sendGrant(key, g, k), text => {
    $('site-gated-problem').textContent = text
    $('site-gated-problem').hidden = !text
  })
}

/** On a phone only the bar's first line shows; this opens and closes the rest (site.css). */
function wireMore () {
  $('s-more').addEventListener('click', () => {
    const open = document.querySelector('header.sitebar').classList.toggle('open')
    $('s-more').setAttribute('aria-expanded', String(open))
  })
}

async function main () {
  wireMore()
  // a short fingerprint; the whole key in its title
  $('s-key').textContent = key.length === 64 ? `${key.slice(0, 4)}…${key.slice(-4)}` : key.slice(0, 16) + '…'
  $('s-key').title = key
  if (!KEY_RE.test(key)) throw new BadAddressError('Open this page as site.html?key=<64-hex public key>&mirror=<url>.')
  if (keyOfHost(location.hostname) !== null) throw new UsageError(`${location.host} is a site's own origin; open site.html on the app's origin.`)
  // a site's own origin has this page's scheme: it is no more secure than this one
  if (!window.isSecureContext || !('serviceWorker' in navigator)) {
    throw new UsageError(`Service Workers need a secure context (https:// or localhost); ${location.origin} is not one.`)
  }
  browseLink(q.get('path') ?? '/')
  const start = (q.get('path') ?? '/').replace(/^\/+/, '')
  const ip = /^\d+\.\d+\.\d+\.\d+$/.test(location.hostname) || location.hostname.startsWith('[')
  const shared = document.querySelector('meta[name="rotree-site-origins"]')?.content === 'shared'
  if (!shared && (location.hostname === 'localhost' || /^127\.|^\[::1\]$/.test(location.hostname))) {
    // Names under this host must be same-site with it, or browsers that block
    // third-party storage (private windows, Safari, Firefox) refuse their
    // Service Workers: <label>.localhost is another site than localhost, but
    // <label>.rotree.localhost is the same site as rotree.localhost. Browsers
    // resolve every *.localhost name to this machine.
    const u = new URL(location.href)
    u.hostname = LOCAL_HOST
    location.replace(u.href)
    return
  }
  return shared || ip ? sharedOrigin(start) : perKeyOrigin()
}

main().catch(err => fail(err.code ?? 'ROTREE_USAGE', err.message))

// The bootstrap of one key's own origin (docs/WEB.md "One origin per site"):
// <label(key)>.<app host>/site-boot.html, framed by site.html on <app host>.
// The key is this origin's own (its first label), never a parameter, so no
// page can make this origin serve another key. It asks the bar for the
// mirrors and the page to show (the bar answers only a frame of the key it
// shows), installs sw.js for site/<key>/, frames the site below, and passes
// to the bar (postMessage to the app's origin only) what sw.js verified and
// blocked and which page is shown. Opened by anything but that bar, it does
// nothing: no other page can re-register the verifier here.
//
// site-boot.html#identity is another page: the window of its own the bar
// opens (without an opener) when a private site needs the reader's
// identity file (docs/WEB.md "Private trees in the browser"). The file is
// picked there and posted to sw.js from there, the one page sw.js takes it
// from: no page of the site holds a reference to that window, where in the
// framed bootstrap the site's pages (this origin, the frame below) could
// reach the picker and read the file.
import { explain, identityRefusal } from './explain.js'
import { BadAddressError, UsageError } from './rotree-client.js'
import { keyOfHost, appOriginOf } from './origins.js'
import { installVerifier, sendIdentity, sendGrant, keepVerifierAlive, readIdentityFile } from './register.js'
import { wireGrantInputs } from './grant.js'

const $ = id => document.getElementById(id)
const key = keyOfHost(location.hostname)
const app = appOriginOf(location)
// how long the bar may take to answer
const WELCOME_MS = 10_000

/** The origin of the page framing this one, as the browser reports it (a page cannot forge it), or null. */
function framedBy () {
  if (window.parent === window) return null
  if (location.ancestorOrigins?.length) return location.ancestorOrigins[0]
  try { return new URL(document.referrer).origin } catch { return null } // browsers without ancestorOrigins
}

const trusted = () => key !== null && framedBy() === app

function tell (msg) { window.parent.postMessage({ source: 'rotree-site', key, ...msg }, app) }

function fail (err) {
  const { code, title, text, todo } = explain(err)
  $('boot-error-title').textContent = `${title} (${code})`
  $('boot-error-text').textContent = `${text} ${err?.message ?? err}`
  $('boot-error-todo-text').textContent = todo
  $('boot-error').hidden = false
  document.body.dataset.state = 'error'
  if (trusted()) tell({ type: 'error', code, message: String(err?.message ?? err) })
}

/** The bar's answer to this frame: { mirrors, path }. */
function welcome () {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new UsageError(`the bar on ${app} did not ask for the site of ${key}`)), WELCOME_MS)
    window.addEventListener('message', function once (ev) {
      const m = ev.data
      if (ev.source !== window.parent || ev.origin !== app || m?.source !== 'rotree-bar' || m.type !== 'welcome' || m.key !== key) return
      window.removeEventListener('message', once)
      clearTimeout(timer)
      if (!Array.isArray(m.mirrors) || !m.mirrors.every(x => typeof x === 'string') || typeof m.path !== 'string') {
        reject(new UsageError('the bar sent a malformed welcome'))
      } else resolve({ mirrors: m.mirrors, path: m.path })
    })
    tell({ type: 'hello' })
  })
}

async function main () {
  if (key === null) throw new BadAddressError(`${location.host} is not a site's own origin: its first label must be a public key in base32`)
  if (!trusted()) throw new UsageError(`this page runs only inside site.html on ${app}, not opened by ${framedBy() ?? 'no page'}`)
  const { mirrors, path } = await welcome()
  if ('serviceWorker' in navigator) {
    // what sw.js tells this origin's windows goes to the bar (setting onmessage also starts the queue)
    navigator.serviceWorker.onmessage = ev => {
      const m = ev.data
      if (m?.source !== 'rotree-sw' || m.key !== key) return
      window.parent.postMessage(m, app)
      // the verifier holds a private tree's identity: keep it from being stopped while the site is open
      if (m.type === 'unlocked' || (m.type === 'info' && m.info?.private === true)) keepVerifierAlive(key)
    }
  }
  const scope = await installVerifier(key, mirrors)
  tell({ type: 'ready' })

  const site = document.createElement('iframe')
  site.id = 'site'
  site.title = 'verified site'
  site.addEventListener('load', () => {
    let page
    try { page = site.contentWindow.location.pathname } catch { return } // a link led off this origin
    if (page.startsWith(scope.pathname)) tell({ type: 'loaded', page, title: site.contentDocument?.title ?? '' })
  })
  let start = new URL(path.replace(/^\/+/, ''), scope)
  if (start.origin !== scope.origin || !start.pathname.startsWith(scope.pathname)) start = scope
  site.src = start.href
  document.body.append(site)

  window.addEventListener('message', ev => {
    if (ev.source !== window.parent || ev.origin !== app || ev.data?.source !== 'rotree-bar' || ev.data.type !== 'reload') return
    try { site.contentWindow.location.reload() } catch { site.src = start.href }
  })
}

/** site-boot.html#identity: the reader picks the identity file here, and it goes to sw.js. */
async function identityPage () {
  document.body.className = 'site-identity'
  if (key === null) throw new BadAddressError(`${location.host} is not a site's own origin: its first label must be a public key in base32`)
  // A frame, or a window another page holds (its opener), could be scripted
  // by that page (this origin's site, say) while the reader picks the file.
  // The referrer, which the browser sets and no page can forge, says the
  // bar's origin opened this window: not a page of the site, which could
  // open it without an opener or navigate its own tab here while a window
  // of its own keeps a reference to that tab.
  let from = null
  try { from = new URL(document.referrer).origin } catch {}
  if (window.parent !== window || window.opener !== null || from !== app) {
    throw new UsageError('the identity of a private site is picked only in the window the bar\'s "Choose identity file" button opens, not in a frame or a window another page opened')
  }
  if (location.hash === '#grant') return grantPage()
  $('identity-key').textContent = key
  $('identity-origin').textContent = location.origin
  $('identity').hidden = false
  document.body.dataset.state = 'identity'
  const problem = text => {
    $('identity-problem').textContent = text
    $('identity-problem').hidden = !text
  }
  $('identity-file').addEventListener('change', async ev => {
    const input = ev.target
    const file = input.files?.[0]
    input.value = '' // this page keeps nothing of the file
    if (!file) return
    problem('')
    document.body.dataset.state = 'sending'
    let r
    try {
      r = await sendIdentity(key, await readIdentityFile(file))
    } catch (err) {
      r = { ok: false, code: err?.code ?? 'ERROR', message: err?.message ?? String(err) }
    }
    if (r?.ok === true) {
      $('identity-done').textContent = '✓ Identity accepted: the site opens in the window of its bar. This window closes.'
      $('identity-done').hidden = false
      document.body.dataset.state = 'accepted'
      setTimeout(() => window.close(), 1500)
      return
    }
    document.body.dataset.state = 'identity'
    problem(identityRefusal(file.name, r))
  })
}

/** site-boot.html#grant (checked as #identity is, above): a gated site's grant and key go from here to sw.js. */
function grantPage () {
  document.body.className = 'site-identity'
  $('grant-key').textContent = key
  $('grant-page').hidden = false
  document.body.dataset.state = 'grant'
  const problem = text => {
    $('grant-problem').textContent = text
    $('grant-problem').hidden = !text
  }
  wireGrantInputs($('grant-file'), $('grant-key-file'), (g, k) => sendGrant(key, g, k), problem, () => {
    $('grant-done').textContent = '✓ Grant accepted: the site opens in the window of its bar. This window closes.'
    $('grant-done').hidden = false
    document.body.dataset.state = 'accepted'
    setTimeout(() => window.close(), 1500)
  })
}

if (location.hash === '#identity' || location.hash === '#grant') identityPage().catch(fail)
else main().catch(fail)

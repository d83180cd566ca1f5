// The bootstrap of one key's own origin (docs/WEB.md "One origin per site"):
// <label(key)>.<app host>/site-boot.html, framed by site.html on <app host>.
// The key is this origin's own (its first label), never a parameter, so no
// page can make this origin serve another key. It asks the bar for the
// mirrors and the page to show (the bar answers only a frame of the key it
// shows), installs sw.js for site/<key>/, frames the site below, and passes
// to the bar (postMessage to the app's origin only) what sw.js verified and
// blocked and which page is shown. Opened by anything but that bar, it does
// nothing: no other page can re-register the verifier here.
import { explain } from './explain.js'
import { BadAddressError, UsageError } from './rotree-client.js'
import { keyOfHost, appOriginOf } from './origins.js'
import { installVerifier } from './register.js'

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
  const { code, title, text } = explain(err)
  $('boot-error-title').textContent = `${title} (${code})`
  $('boot-error-text').textContent = `${text} ${err?.message ?? err}`
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
      if (m?.source === 'rotree-sw' && m.key === key) window.parent.postMessage(m, app)
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

main().catch(fail)

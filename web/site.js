// The bootstrap of a verified static site (docs/WEB.md):
//   site.html?key=<64-hex public key>&mirror=<url>[&mirror=<url>…][&path=/page.html]
// installs sw.js for the scope site/<key>/ and shows that scope in a frame,
// under a bar that says what was verified and lists anything sw.js blocked.
// Without ?mirror= the tree is read from this page's own directory.
import { explain } from './explain.js'

const $ = id => document.getElementById(id)
const q = new URLSearchParams(location.search)
const key = (q.get('key') ?? '').toLowerCase()
const frame = $('frame')
const blockedSeen = new Set()

function fail (code, message) {
  const { title, text } = explain({ code })
  $('site-error-title').textContent = `${title} (${code})`
  $('site-error-text').textContent = `${text} ${message}`
  $('site-error').hidden = false
  status('✗ not verified', 'bad')
  frame.hidden = true
  document.body.dataset.state = 'error'
}

function status (text, cls = '') {
  $('site-status').textContent = text
  $('site-status').className = 'pill ' + cls
}

/** Mirror base URLs as the client wants them: http(s), no query or fragment, ending in '/'. */
function mirrorBase (s) {
  const u = new URL(s, location.href)
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error(`mirror must be http(s): ${s}`)
  u.search = ''; u.hash = ''
  if (!u.pathname.endsWith('/')) u.pathname += '/'
  return u.href
}

function onMessage (ev) {
  const m = ev.data
  if (m?.source !== 'rotree-sw' || m.key !== key) return
  if (m.type === 'info') {
    // a navigation started: a new page, so a new list of what was blocked
    blockedSeen.clear()
    $('blocked-list').replaceChildren()
    $('blocked').hidden = true
    $('s-seq').textContent = String(m.info.seq)
    $('s-expires').textContent = new Date(m.info.expires).toLocaleString()
    $('s-root').textContent = m.info.root.slice(0, 16) + '…'
    $('s-root').title = m.info.root
    $('s-mirror').textContent = m.info.mirror
    const failed = m.mirrors.filter(x => x.lastError)
    status(failed.length ? `✓ verified (${failed.length} mirror${failed.length > 1 ? 's' : ''} failed)` : '✓ verified', 'ok')
    $('site-status').title = failed.map(x => `${x.url}: ${x.lastError.code}`).join('\n')
    document.body.dataset.seq = String(m.info.seq)
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
  }
}

/** Resolves when `reg` has an activated worker running `scriptURL`. */
function activated (reg, scriptURL) {
  return new Promise((resolve, reject) => {
    const check = () => {
      const w = reg.active
      if (w && w.scriptURL === scriptURL && w.state === 'activated') { resolve(); return true }
      return false
    }
    if (check()) return
    for (const w of [reg.installing, reg.waiting, reg.active]) {
      w?.addEventListener('statechange', () => { if (w.state === 'redundant' && w !== reg.active) reject(new Error('the Service Worker failed to install')); else check() })
    }
    reg.addEventListener('updatefound', () => reg.installing?.addEventListener('statechange', check))
  })
}

async function main () {
  $('s-key').textContent = key.slice(0, 16) + '…'
  $('s-key').title = key
  if (!/^[0-9a-f]{64}$/.test(key)) return fail('ROTREE_BAD_ADDRESS', 'Open this page as site.html?key=<64-hex public key>&mirror=<url>.')
  if (!('serviceWorker' in navigator)) {
    return fail('ROTREE_USAGE', `Service Workers need a secure context (https:// or localhost); ${location.origin} is not one.`)
  }
  const mirrors = q.getAll('mirror').map(mirrorBase)
  const sw = new URL('sw.js', location.href)
  sw.searchParams.set('key', key)
  for (const m of mirrors) sw.searchParams.append('mirror', m)
  const scope = new URL(`site/${key}/`, location.href)

  navigator.serviceWorker.onmessage = onMessage // also starts the message queue
  const reg = await navigator.serviceWorker.register(sw.href, { type: 'module', scope: scope.pathname, updateViaCache: 'none' })
  status('installing verifier…')
  await activated(reg, sw.href)

  const start = (q.get('path') ?? '/').replace(/^\/+/, '')
  frame.addEventListener('load', () => {
    // keep the address bar in step with the page inside, so a reload stays on it
    let inner
    try { inner = frame.contentWindow.location.pathname } catch { return }
    if (!inner.startsWith(scope.pathname)) return
    const p = new URLSearchParams(location.search)
    p.set('path', '/' + inner.slice(scope.pathname.length))
    history.replaceState(null, '', '?' + p.toString())
    document.title = (frame.contentDocument?.title || 'site') + ' · verified by rotree'
    document.body.dataset.loaded = inner
  })
  frame.src = new URL(start, scope).href
  $('s-reload').addEventListener('click', () => frame.contentWindow.location.reload())
}

main().catch(err => fail(err.code ?? 'ROTREE_USAGE', err.message))

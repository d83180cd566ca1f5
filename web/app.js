// The rotree web app: browse a signed tree and preview or save its files,
// verified in this browser. Address: <this page>#<public key>[/path], with
// more mirrors as ?mirror=URL (repeatable); ?self=0 leaves this page's own
// origin out of the mirror list. All verification is rotree-client's; this
// file only shows what it verified, and nothing when it refuses.
import { Tree, mirrorUrl, BadAddressError, UsageError } from './rotree-client.js'
import { explain, mirrorErrors } from './explain.js'
import { isImage, extension } from './mime.js'
import { keyOfHost } from './origins.js'
import { canStreamToDisk, pickFile, saveChunks } from './save.js'

const PREVIEW_TEXT_MAX = 2 << 20
const PREVIEW_IMAGE_MAX = 32 << 20
const PAGE_ROWS = 1000
const KEY_RE = /^[0-9a-f]{64}$/

const $ = id => document.getElementById(id)
const el = (tag, props = {}, ...children) => {
  const e = Object.assign(document.createElement(tag), props)
  e.append(...children)
  return e
}

// Same test the client makes (sha256-web.js): WebCrypto exists only in secure contexts.
const HASH_BACKEND = globalThis.crypto?.subtle ? 'WebCrypto (native)' : '@noble/hashes (no WebCrypto on this insecure origin)'

const ownBase = new URL('./', location.href)
ownBase.search = ''
ownBase.hash = ''

const state = {
  tree: null, // the open Tree
  treeId: '', // key + mirrors it was opened with
  nav: 0, // bumped per navigation: late answers for an old path are dropped
  blobUrl: null, // the current image preview
  listing: null // { iter, path } for "Show more"
}

// ---- the address ----------------------------------------------------------

/** '#<key>/a/b' → { key, path }; null when there is no key. */
function parseHash (hash) {
  const m = /^#?([0-9a-fA-F]{64})(\/.*)?$/.exec(hash)
  if (!m) return null
  let path = '/'
  if (m[2]) {
    try { path = '/' + m[2].split('/').filter(Boolean).map(decodeURIComponent).join('/') } catch { path = m[2] }
  }
  return { key: m[1].toLowerCase(), path }
}

function hashFor (key, path) {
  const parts = path.split('/').filter(Boolean).map(c => encodeURIComponent(c))
  return '#' + key + (parts.length ? '/' + parts.join('/') : '')
}

function mirrorsFromQuery () {
  const q = new URLSearchParams(location.search)
  const list = q.get('self') === '0' ? [] : [ownBase.href]
  for (const m of q.getAll('mirror')) list.push(mirrorUrl(m))
  return [...new Set(list)]
}

// ---- showing things -------------------------------------------------------

function clearContent () {
  state.listing = null
  $('listing').replaceChildren()
  $('dir').hidden = true
  $('file').hidden = true
  $('preview').replaceChildren()
  $('file-meta').replaceChildren()
  $('more').hidden = true
  if (state.blobUrl) { URL.revokeObjectURL(state.blobUrl); state.blobUrl = null }
}

/** An error hides every piece of tree content (the page shows no unverified or half-verified data). */
function showError (err) {
  clearContent()
  const { code, title, text } = explain(err)
  $('error-title').textContent = `${title} (${code})`
  $('error-text').textContent = text
  $('error-detail').textContent = err?.message ?? String(err)
  $('error-mirrors').replaceChildren(...mirrorErrors(err).map(e =>
    el('li', { className: 'bad' }, el('span', { className: 'mono' }, e.mirror), ' ', el('strong', {}, e.code), ': ' + e.message)))
  $('error').hidden = false
  $('status').textContent = '✗ ' + title
  $('status').className = 'status bad'
  document.body.dataset.state = 'error'
  console.error(err)
  renderPanel()
}

function hideError () { $('error').hidden = true }

function setBusy () { $('busy').hidden = false; document.body.dataset.state = 'busy' }

const fmtDate = iso => { const d = new Date(iso); return isNaN(d) ? String(iso) : d.toLocaleString() }

function fmtSize (n) {
  if (n === undefined || n === null) return ''
  if (n < 1024) return `${n} B`
  const units = ['KiB', 'MiB', 'GiB', 'TiB']
  let v = n / 1024; let i = 0
  while (v >= 1024 && i < units.length - 1) { v /= 1024; i++ }
  return `${v < 10 ? v.toFixed(1) : Math.round(v)} ${units[i]}`
}

function renderPanel () {
  const t = state.tree
  const i = t?.info
  $('v-key').textContent = t?.publicKey ?? ''
  $('v-seq').textContent = i ? String(i.seq) : '—'
  $('v-issued').textContent = i ? fmtDate(i.issued) : '—'
  $('v-expires').textContent = i ? fmtDate(i.expires) : '—'
  $('v-root').textContent = i ? i.root : '—'
  $('v-mirror').textContent = i ? i.mirror : '—'
  $('v-hash').textContent = HASH_BACKEND
  $('v-mirrors').replaceChildren(...(t ? t.stats.mirrors : []).map(m => {
    const li = el('li', { className: m.lastError ? 'bad' : m.ok ? 'ok' : '' },
      el('span', { className: 'mono' }, m.url),
      el('span', { className: 'small' }, ` ${m.ok} verified, ${m.failed} failed`))
    if (m.lastError) li.append(el('div', { className: 'small' }, el('strong', {}, m.lastError.code), ': ' + m.lastError.message))
    return li
  }))
}

function renderCrumbs (key, path) {
  const parts = path.split('/').filter(Boolean)
  const nav = $('crumbs')
  nav.replaceChildren(el('a', { href: hashFor(key, '/') }, '/'))
  parts.forEach((p, i) => {
    const to = '/' + parts.slice(0, i + 1).join('/')
    if (i > 0) nav.append(el('span', { className: 'sep' }, '/'))
    nav.append(i === parts.length - 1 ? el('span', { className: 'here' }, p) : el('a', { href: hashFor(key, to) }, p))
  })
}

function rowFor (key, dirPath, s) {
  const path = (dirPath === '/' ? '' : dirPath) + '/' + s.name
  const name = el('a', { href: hashFor(key, path), className: 'entry ' + s.type }, `${s.name}${s.type === 'dir' ? '/' : ''}`)
  const cell = el('td', {}, name)
  if (s.type === 'symlink') cell.append(el('span', { className: 'small target' }, ` → ${s.target}`))
  return el('tr', {},
    cell,
    el('td', { className: 'num' }, s.type === 'dir' ? `${s.entries} ${s.entries === 1 ? 'item' : 'items'}` : s.type === 'file' ? fmtSize(s.size) : ''),
    el('td', { className: 'small' }, s.mtime.toLocaleString()))
}

async function showMore (nav) {
  const l = state.listing
  const rows = []
  let done = false
  while (rows.length < PAGE_ROWS) {
    const n = await l.iter.next()
    if (nav !== state.nav) return
    if (n.done) { done = true; break }
    rows.push(rowFor(l.key, l.path, n.value))
  }
  $('listing').append(...rows)
  $('more').hidden = done
}

async function showDir (key, path, nav) {
  state.listing = { iter: state.tree.list(path)[Symbol.asyncIterator](), key, path }
  $('dir').hidden = false
  await showMore(nav)
}

async function showFile (key, path, stat, nav) {
  $('file-name').textContent = stat.name || path
  const facts = [['Size', `${fmtSize(stat.size)} (${stat.size} bytes)`], ['Modified', stat.mtime.toLocaleString()],
    ['Executable', stat.exec ? 'yes' : 'no'], ['Content hash', stat.hash ?? 'inline in its directory']]
  $('file-meta').replaceChildren(...facts.flatMap(([k, v]) => [el('dt', {}, k), el('dd', { className: k === 'Content hash' ? 'mono' : '' }, v)]))
  $('progress').hidden = true
  $('progress-text').textContent = canStreamToDisk() ? 'saved to disk as it verifies' : 'saved once every byte has verified'
  $('file').hidden = false
  const preview = $('preview')
  if (isImage(path) && stat.size <= PREVIEW_IMAGE_MAX) {
    const bytes = await state.tree.readFile(path) // whole file verified before anything is shown
    if (nav !== state.nav) return
    preview.replaceChildren(el('img', { src: imageUrl(path, bytes), alt: stat.name, id: 'preview-image' }))
  } else if (stat.size <= PREVIEW_TEXT_MAX) {
    const bytes = await state.tree.readFile(path)
    if (nav !== state.nav) return
    const text = asText(bytes)
    preview.replaceChildren(text === null
      ? el('p', { className: 'small' }, 'Binary file: no preview. Download it to use it.')
      : el('pre', { id: 'preview-text' }, text))
  } else {
    preview.replaceChildren(el('p', { className: 'small' }, 'Too large to preview. Download it: it is verified as it arrives.'))
  }
}

/**
 * A URL for an <img> of verified image bytes. Raster types get a blob: URL
 * (this origin's, but an image document runs nothing, even opened as a page).
 * An SVG can hold script, which a blob: URL of this origin would run with the
 * app's rights if opened as a page: it gets a data: URL, whose document has an
 * opaque origin (and which Chromium will not open as a top-level page).
 */
function imageUrl (path, bytes) {
  const ext = extension(path)
  if (ext === 'svg') {
    let bin = ''
    for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000))
    return 'data:image/svg+xml;base64,' + btoa(bin)
  }
  const type = ext === 'jpg' ? 'image/jpeg' : ext === 'ico' ? 'image/x-icon' : 'image/' + ext
  state.blobUrl = URL.createObjectURL(new Blob([bytes], { type }))
  return state.blobUrl
}

/** Text when the bytes are valid UTF-8 without NULs, else null. */
function asText (bytes) {
  if (bytes.includes(0)) return null
  try { return new TextDecoder('utf-8', { fatal: true }).decode(bytes) } catch { return null }
}

// ---- navigation -----------------------------------------------------------

async function openTree (key, mirrors) {
  const id = key + ' ' + mirrors.join(' ')
  if (state.tree && state.treeId === id) return state.tree
  state.tree?.close()
  const [first, ...rest] = mirrors
  // new Tree() + refresh() rather than openTree(): when refresh fails the Tree
  // still holds each mirror's fault for the panel
  state.tree = new Tree(`${first}#${key}`, { mirrors: rest, fsinfoSettleMs: 1000 })
  state.treeId = id
  try {
    await state.tree.refresh()
  } catch (err) {
    state.treeId = '' // try again on the next navigation
    throw err
  }
  return state.tree
}

async function route () {
  const nav = ++state.nav
  const addr = parseHash(location.hash)
  if (!addr) {
    $('layout').hidden = true
    $('start').hidden = false
    document.body.dataset.state = 'start'
    document.body.dataset.shown = location.hash
    return
  }
  $('start').hidden = true
  $('layout').hidden = false
  const { key, path } = addr
  renderCrumbs(key, path)
  setBusy()
  try {
    if (keyOfHost(location.hostname) !== null) throw new UsageError(`${location.host} is a verified site's own origin (docs/WEB.md), not the app's: open the app on its own origin`)
    if (!KEY_RE.test(key)) throw new BadAddressError(`the public key must be 64 hex digits, got ${JSON.stringify(key)}`)
    await openTree(key, mirrorsFromQuery())
    if (nav !== state.nav) return
    clearContent()
    const stat = await state.tree.stat(path)
    if (nav !== state.nav) return
    if (stat.type === 'dir') await showDir(key, path, nav)
    else await showFile(key, path, stat, nav)
    if (nav !== state.nav) return
    hideError()
    $('status').textContent = '✓ Verified: signature, expiry, version and every byte shown'
    $('status').className = 'status ok'
    document.body.dataset.state = 'ok'
    renderPanel()
  } catch (err) {
    if (nav === state.nav) showError(err)
  } finally {
    if (nav === state.nav) {
      $('busy').hidden = true
      document.body.dataset.shown = location.hash // tests wait on this: the page has settled
    }
  }
}

async function download () {
  const addr = parseHash(location.hash)
  if (!addr || !state.tree) return
  const { path } = addr
  const name = path.slice(path.lastIndexOf('/') + 1) || 'download'
  const btn = $('download')
  // the picker must open inside the click's user activation, before any await on the network
  const handle = canStreamToDisk() ? await pickFile(name) : null
  if (canStreamToDisk() && !handle) return // cancelled
  btn.disabled = true
  document.body.dataset.download = 'running'
  const bar = $('progress')
  const label = $('progress-text')
  const nav = state.nav
  try {
    const stat = await state.tree.stat(path)
    bar.max = Math.max(stat.size, 1); bar.value = 0; bar.hidden = false
    const onProgress = n => { bar.value = n; label.textContent = `${fmtSize(n)} of ${fmtSize(stat.size)} verified` }
    onProgress(0)
    const r = await saveChunks(state.tree.readRange(path), { name, handle, onProgress })
    label.textContent = `✓ ${fmtSize(r.bytes)} verified and saved${r.method === 'stream' ? ' (streamed to disk)' : ''}`
    document.body.dataset.download = 'done'
    renderPanel()
  } catch (err) {
    bar.hidden = true
    label.textContent = ''
    document.body.dataset.download = 'failed'
    if (nav === state.nav) showError(err)
  } finally {
    btn.disabled = false
  }
}

// ---- wiring ---------------------------------------------------------------

$('own-origin').textContent = location.origin
$('download').addEventListener('click', download)
$('more').addEventListener('click', () => showMore(state.nav).catch(showError))
$('refresh').addEventListener('click', async () => {
  if (!state.tree) return route()
  try {
    const changed = await state.tree.refresh()
    $('status').textContent = changed ? '✓ Newer version adopted' : '✓ Already the newest version'
    route()
  } catch (err) { showError(err) }
})
$('start-form').addEventListener('submit', ev => {
  ev.preventDefault()
  const key = $('start-key').value.trim().toLowerCase()
  const mirrors = $('start-mirrors').value.split(/\s+/).filter(Boolean)
  const q = new URLSearchParams(location.search)
  q.delete('mirror')
  for (const m of mirrors) q.append('mirror', m)
  const search = q.toString()
  location.assign(`${location.pathname}${search ? '?' + search : ''}#${key}`)
})
window.addEventListener('hashchange', route)
route()

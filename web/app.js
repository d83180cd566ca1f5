// The rotree web app: browse a signed tree and preview or save its files,
// verified in this browser. Address: <this page>#<public key>[/path], with
// more mirrors as ?mirror=URL (repeatable); ?self=0 leaves this page's own
// origin out of the mirror list. All verification is rotree-client's; this
// file only shows what it verified, and nothing when it refuses. A private
// tree (FORMAT.md §12.8) is read with an identity file the user picks, kept
// in this page's memory only (docs/WEB.md "Private trees in the browser"); a
// gated tree's grant likewise (gated-card.js, "Gated trees in the browser").
import { Tree, mirrorUrl, ABSENT_CODES, UsageError } from './rotree-client.js'
import { explain, mirrorErrors, identityRefusal } from './explain.js'
import { readIdentityFile } from './register.js'
import { isImage, extension } from './mime.js'
import { keyOfHost, KEY_RE } from './origins.js'
import { wireDownloads } from './downloads.js'
import { fmtSize, asText } from './text.js'
import { SERVED, servedTree, showServed } from './served.js'
import { canStreamToDisk } from './save.js'
import { parseFragment, parseKeyInput } from './address.js'
import { nameNode, proseNode } from './names.js'
import { renderPanel, setVerdict, wirePanel } from './panel.js'
import { wireGrant, showGated, gatedFailure, gateOptions, showGrant } from './gated-card.js'
import { edgeRefused } from './grant.js'

const PREVIEW_TEXT_MAX = 2 << 20
const PREVIEW_IMAGE_MAX = 32 << 20
const PAGE_ROWS = 1000

const $ = id => document.getElementById(id)
const el = (tag, props = {}, ...children) => {
  const e = Object.assign(document.createElement(tag), props)
  e.append(...children)
  return e
}

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

// The reader's identity for private trees (FORMAT.md §12.8): the text of the
// file the user picked, in this variable and in the Tree it is given to, and
// nowhere else: never in storage (localStorage, IndexedDB, cookies, the Cache
// API), never in the address, never sent (docs/WEB.md). Reloading the page
// forgets it.
const reader = {
  identity: null, // { text, name }: the identity that opened a tree
  picked: null, // { text, name }: a file just picked, tried on the next open and kept only if it reads the tree
  refused: null, // { name, err }: why the file just picked was not kept
  gen: 0 // bumped when the identity changes: the open tree is opened again
}

// ---- the address ----------------------------------------------------------

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
  if (document.body.dataset.zip !== 'running') { $('zip-progress').hidden = true; $('zip-text').textContent = '' }
  $('site-link').hidden = true
  $('listing').replaceChildren()
  $('dir').hidden = true
  $('file').hidden = true
  $('absent').hidden = true
  $('private').hidden = true
  $('gated').hidden = true
  $('preview').replaceChildren()
  $('file-meta').replaceChildren()
  $('more').hidden = true
  if (state.blobUrl) { URL.revokeObjectURL(state.blobUrl); state.blobUrl = null }
}

/** An error hides every piece of tree content (the page shows no unverified or half-verified data). */
function showError (err) {
  if (edgeRefused(err)) return showGated(err)
  if (err?.code === 'ROTREE_NO_ACCESS' || (reader.refused && reader.refused.err === err)) return showPrivate(err)
  clearContent()
  const { code, title, text, todo } = explain(err)
  // prose breaks between words; hashes and URLs in it may break anywhere (names.js proseNode)
  $('error-title').replaceChildren(proseNode(`${title} (${code})`))
  $('error-text').replaceChildren(proseNode(text))
  $('error-todo-text').replaceChildren(proseNode(todo))
  $('error-detail').replaceChildren(proseNode(err?.message ?? String(err)))
  $('error-mirrors').replaceChildren(...mirrorErrors(err).map(e =>
    el('li', { className: 'bad' }, el('span', { className: 'mono' }, e.mirror), ' ', el('strong', { className: 'tech' }, e.code), ': ', proseNode(e.message))))
  $('error').hidden = false
  setVerdict('bad', '✗ ' + title, `${title} (${code})`)
  document.body.dataset.state = 'error'
  console.error(err)
  renderPanel(state.tree)
}

/**
 * A path the signed tree proves absent (docs/TRUST.md rule 5) is a verified
 * fact about the tree, not a failure: the panel stays green.
 */
function showAbsent (err, path) {
  clearContent()
  const parent = path.replace(/\/[^/]*\/?$/, '') || '/'
  $('absent-text').replaceChildren(proseNode(err.code === 'ROTREE_NOT_A_DIRECTORY'
    ? `${path} is not in this tree: a part of it is a file, as the signed listing shows.`
    : `${path} is not in this tree: proven by the signed listing of ${parent}, which has no such name.`))
  $('absent').hidden = false
  setVerdict('ok', '✓ Verified: the signed listing proves this path is not in the tree')
  document.body.dataset.state = 'absent'
  renderPanel(state.tree)
}

/**
 * A private tree this page holds no reader identity for (ROTREE_NO_ACCESS,
 * FORMAT.md §12.8), or an identity file just picked that cannot be used:
 * not a failure of verification, a locked door with the file picker beside it.
 */
function showPrivate (err) {
  clearContent()
  const refused = reader.refused?.err === err ? reader.refused : null
  reader.refused = null
  let problem = ''
  if (refused) problem = identityRefusal(refused.name, err)
  else if (reader.identity) problem = identityRefusal(reader.identity.name, err)
  $('private-text').textContent = 'This tree is private: choose your identity file (from rotree keygen --reader or age-keygen) to read it.'
  $('private-problem').replaceChildren(proseNode(problem))
  $('private-problem').hidden = !problem
  $('private-todo-text').replaceChildren(proseNode(explain({ code: 'ROTREE_NO_ACCESS' }).todo))
  $('private').hidden = false
  setVerdict('locked', 'Private tree: no identity in this page reads it', 'Private tree')
  document.body.dataset.state = 'private'
  showIdentity()
  renderPanel(state.tree)
}

/** The panel's line about the identity this page holds, if any. */
function showIdentity () {
  $('identity').hidden = reader.identity === null
  $('identity-name').textContent = reader.identity?.name ?? ''
}

function hideError () { $('error').hidden = true }

function setBusy () { $('busy').hidden = false; document.body.dataset.state = 'busy'; setVerdict('busy', 'Verifying…') }

function renderCrumbs (key, path) {
  const parts = path.split('/').filter(Boolean)
  const nav = $('crumbs')
  nav.replaceChildren(el('a', { href: hashFor(key, '/') }, '/'))
  parts.forEach((p, i) => {
    const to = '/' + parts.slice(0, i + 1).join('/')
    if (i > 0) nav.append(el('span', { className: 'sep' }, '/'))
    nav.append(i === parts.length - 1 ? el('span', { className: 'here' }, nameNode(p)) : el('a', { href: hashFor(key, to) }, nameNode(p)))
  })
}

function rowFor (key, dirPath, s, links) {
  const path = (dirPath === '/' ? '' : dirPath) + '/' + s.name
  // a symlink is drawn as a link until what it leads to is known (showLink)
  const name = el('a', { href: hashFor(key, path), className: 'entry ' + s.type + (s.type === 'symlink' ? ' pending' : '') }, nameNode(s.name, s.type === 'dir' ? '/' : ''))
  const cell = el('td', { className: 'name-cell' }, name)
  const size = el('td', { className: 'num' }, s.type === 'dir' ? items(s.entries) : s.type === 'file' ? fmtSize(s.size) : '')
  if (s.type === 'symlink') {
    const target = el('span', { className: 'small target' }, ` → ${s.target}`)
    cell.append(target)
    links?.push({ key, path, link: s, a: name, target, size })
  }
  return el('tr', {}, cell, size, el('td', { className: 'small mtime' }, s.mtime.toLocaleString()))
}

const items = n => `${n} ${n === 1 ? 'item' : 'items'}`

/**
 * Where a symlink's target is, by its text (FORMAT.md §4.6: from the link's
 * folder, or from the tree's root for a leading '/'), or null when it climbs
 * above the root.
 */
function targetPath (linkPath, target) {
  const parts = target.startsWith('/') ? [] : linkPath.split('/').filter(Boolean).slice(0, -1)
  for (const c of target.split('/')) {
    if (c === '' || c === '.') continue
    if (c === '..') { if (parts.length === 0) return null; parts.pop() } else parts.push(c)
  }
  return '/' + parts.join('/')
}

/**
 * What a listed symlink leads to, verified (stat follows it inside the tree):
 * a folder is drawn as a folder that opens its target, a file as a file, and
 * a link to nothing (or in a loop, or out of the tree) as a broken link.
 */
async function showLink ({ key, path, link, a, target, size }, nav) {
  let st
  try {
    st = await state.tree.stat(path)
  } catch (err) {
    if (nav !== state.nav) return
    if (!ABSENT_CODES.has(err?.code) && err?.code !== 'ROTREE_SYMLINK_LOOP') throw err
    a.className = 'entry symlink broken'
    a.title = `Broken link: this tree has nothing at ${link.target} (${err.code})`
    size.textContent = 'broken'
    return
  }
  if (nav !== state.nav) return
  // open the target itself (its own path in the address), when the link's text names it
  let to = targetPath(path, link.target)
  if (to !== null && to !== path) {
    const there = await state.tree.stat(to).catch(() => null)
    if (there?.type !== st.type || there.hash !== st.hash || there.size !== st.size) to = null
  }
  if (nav !== state.nav) return
  if (to !== null) a.href = hashFor(key, to)
  if (st.type === 'dir') {
    a.className = 'entry dir symlink'
    a.replaceChildren(nameNode(link.name, '/'))
    target.textContent = ` → ${link.target.replace(/\/?$/, '/')}`
    size.textContent = items(st.entries)
  } else {
    a.className = 'entry file symlink'
    size.textContent = fmtSize(st.size)
  }
  a.title = `Link to ${to ?? link.target}`
}

/** showLink for each of `links`, a few at a time. */
async function showLinks (links, nav) {
  const next = async () => {
    while (links.length && nav === state.nav) await showLink(links.shift(), nav)
  }
  await Promise.all(Array.from({ length: Math.min(8, links.length) }, next))
}

async function showMore (nav) {
  const l = state.listing
  const rows = []
  const links = []
  let done = false
  while (rows.length < PAGE_ROWS) {
    const n = await l.iter.next()
    if (nav !== state.nav) return
    if (n.done) { done = true; break }
    rows.push(rowFor(l.key, l.path, n.value, links))
  }
  $('listing').append(...rows)
  $('more').hidden = done
  await showLinks(links, nav)
}

async function showDir (key, path, nav) {
  state.listing = { iter: state.tree.list(path)[Symbol.asyncIterator](), key, path }
  $('dir').hidden = false
  await showMore(nav)
}

async function showFile (key, path, stat, nav) {
  $('file-name').replaceChildren(nameNode(stat.name || path))
  const facts = [['Size', `${fmtSize(stat.size)} (${stat.size} bytes)`], ['Modified', stat.mtime.toLocaleString()],
    ['Executable', stat.exec ? 'yes' : 'no'],
    // the file's SHA-256 (signed in format 2, FORMAT.md §12.7): what sha256sum prints for the download
    typeof stat.sha256 === 'string' ? ['SHA-256', stat.sha256] : ['Content hash', stat.hash ?? 'inline in its directory']]
  $('file-meta').replaceChildren(...facts.flatMap(([k, v]) => [el('dt', {}, k), el('dd', { className: k === 'Content hash' || k === 'SHA-256' ? 'mono' : '' }, v)]))
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
// ---- navigation -----------------------------------------------------------

async function openTree (key, mirrors) {
  const id = `${key} ${mirrors.join(' ')} ${reader.gen}`
  if (state.tree && state.treeId === id) return state.tree
  state.tree?.close()
  state.tree = null
  const [first, ...rest] = mirrors
  const picked = reader.picked
  reader.picked = null
  const identity = picked ?? reader.identity
  try {
    // new Tree() + refresh() rather than openTree(): when refresh fails the Tree
    // still holds each mirror's fault for the panel. A public tree never uses the identity.
    state.tree = new Tree(`${first}#${key}`, { mirrors: rest, fsinfoSettleMs: 1000, ...(identity ? { identity: identity.text } : {}), ...gateOptions() })
    state.treeId = id
    await state.tree.refresh()
  } catch (err) {
    state.treeId = '' // try again on the next navigation
    // a file that is not an identity, a post-quantum one (read by the Node
    // reader and the gateway only), or one that is not a reader: not kept
    if (picked && (err?.code === 'ROTREE_NO_ACCESS' || err?.code === 'ROTREE_USAGE')) reader.refused = { name: picked.name, err }
    throw err
  }
  if (picked) reader.identity = picked
  return state.tree
}

/**
 * The link to the same tree as a verified site (site.html), at this page: for
 * a folder with an index.html and for an HTML file. Verified sites run per
 * key (docs/WEB.md): a tree named by a trust anchor, or by a name, has none.
 * The mirrors go along, unless this page's own origin is the only one, which
 * is where site.html reads by default.
 */
async function showSiteLink (key, path, stat, nav) {
  const link = $('site-link')
  link.hidden = true
  if (!KEY_RE.test(key)) return
  let page = null
  if (stat.type === 'file' && /\.html?$/i.test(path)) page = path
  if (stat.type === 'dir') {
    const index = (path === '/' ? '' : path) + '/index.html'
    const st = await state.tree.stat(index).catch(() => null)
    if (st?.type === 'file') page = path === '/' ? '/' : path + '/'
  }
  if (nav !== state.nav || page === null) return
  const q = new URLSearchParams({ key })
  const mirrors = mirrorsFromQuery()
  if (!(mirrors.length === 1 && mirrors[0] === ownBase.href)) for (const m of mirrors) q.append('mirror', m)
  q.set('path', page)
  link.href = `site.html?${q}`
  link.hidden = false
}

/** The page that asks for a key; `problem` says what was wrong with the one in the address. */
function showStart (problem = null, given = '') {
  $('layout').hidden = true
  $('served').hidden = true
  $('start').hidden = false
  $('start-error').replaceChildren(proseNode(problem ?? ''))
  $('start-error').hidden = !problem
  if (given) $('start-key').value = given
  document.body.dataset.state = 'start'
  document.body.dataset.shown = location.hash
}

async function route () {
  const nav = ++state.nav
  // what the last address left on screen must not stand beside the next one
  hideError()
  $('start-error').hidden = true
  const addr = parseFragment(location.hash)
  if (!addr) {
    // no key given: the tree this page's own server serves, if it serves one
    $('served').hidden = true
    const served = await servedTree()
    if (nav !== state.nav) return
    if (served === null) return showStart()
    try { sessionStorage.setItem(SERVED, served) } catch {}
    history.replaceState(null, '', '#' + served)
    return route()
  }
  if (addr.error) return showStart(addr.error, addr.given)
  showServed(addr.key)
  $('start').hidden = true
  $('layout').hidden = false
  const { key, path } = addr
  renderCrumbs(key, path)
  clearContent()
  setBusy()
  try {
    if (keyOfHost(location.hostname) !== null) throw new UsageError(`${location.host} is a verified site's own origin (docs/WEB.md), not the app's: open the app on its own origin`)
    await openTree(key, mirrorsFromQuery())
    if (nav !== state.nav) return
    clearContent()
    let stat
    try {
      stat = await state.tree.stat(path)
    } catch (err) {
      if (nav === state.nav && ABSENT_CODES.has(err?.code)) return showAbsent(err, path)
      throw err
    }
    if (nav !== state.nav) return
    if (stat.type === 'dir') await showDir(key, path, nav)
    else await showFile(key, path, stat, nav)
    if (nav !== state.nav) return
    await showSiteLink(key, path, stat, nav)
    if (nav !== state.nav) return
    hideError()
    setVerdict('ok', '✓ Verified: signature, expiry, version and every byte shown')
    document.body.dataset.state = 'ok'
    showIdentity()
    showGrant()
    renderPanel(state.tree)
  } catch (err) {
    // a gated edge that wants a grant is asked for one (gated-card.js), not blamed
    if (nav === state.nav && !(await gatedFailure(err, () => nav === state.nav))) showError(err)
  } finally {
    if (nav === state.nav) {
      $('busy').hidden = true
      document.body.dataset.shown = location.hash // tests wait on this: the page has settled
    }
  }
}

// ---- wiring ---------------------------------------------------------------

$('own-origin').textContent = location.origin
wirePanel()
wireDownloads({ state, showError, fmtSize })
wireGrant({ clearContent, tree: () => state.tree, reopen: () => { reader.gen++; route() } })
$('more').addEventListener('click', () => showMore(state.nav).catch(showError))
$('refresh').addEventListener('click', async () => {
  if (!state.tree) return route()
  try {
    const changed = await state.tree.refresh()
    $('status').textContent = changed ? '✓ Newer version adopted' : '✓ Already the newest version'
    route()
  } catch (err) { showError(err) }
})
$('identity-file').addEventListener('change', async ev => {
  const input = ev.target
  const file = input.files?.[0]
  input.value = '' // the page keeps the text it read, not a handle on the file
  if (!file) return
  let text
  try { text = await readIdentityFile(file) } catch (err) {
    $('private-problem').replaceChildren(proseNode(identityRefusal(file.name, err)))
    $('private-problem').hidden = false
    return
  }
  reader.picked = { text, name: file.name }
  reader.gen++
  route()
})
$('forget').addEventListener('click', () => {
  reader.identity = null
  reader.gen++
  route()
})
$('start-key').addEventListener('input', () => { $('start-error').hidden = true })
$('start-form').addEventListener('submit', ev => {
  ev.preventDefault()
  // a bare key, or a whole address pasted in: <url>#<key>[:<name>][/path]
  const got = parseKeyInput($('start-key').value)
  if (got.error) {
    $('start-error').replaceChildren(proseNode(got.error))
    $('start-error').hidden = false
    $('start-key').focus()
    return
  }
  const mirrors = [...$('start-mirrors').value.split(/\s+/).filter(Boolean), ...got.mirrors]
  try { sessionStorage.removeItem(SERVED) } catch {} // the reader's own key now
  const q = new URLSearchParams(location.search)
  q.delete('mirror')
  q.delete('start')
  for (const m of new Set(mirrors)) if (m !== ownBase.href) q.append('mirror', m)
  const search = q.toString()
  location.assign(`${location.pathname}${search ? '?' + search : ''}${hashFor(got.key, got.path)}`)
})
window.addEventListener('hashchange', route)
route()

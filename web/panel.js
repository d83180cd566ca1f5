// The web app's verification panel: what was verified, by whom, until when.
// On a narrow screen (style.css) only its one-line summary shows, e.g.
// "✓ verified · seq 3 · expires in 5 days", which opens the whole panel.
import { expiry } from './dates.js'
import { proseNode } from './names.js'

const $ = id => document.getElementById(id)
const el = (tag, props = {}, ...children) => {
  const e = Object.assign(document.createElement(tag), props)
  e.append(...children)
  return e
}

// Same test the client makes (sha256-web.js): WebCrypto exists only in secure contexts.
const HASH_BACKEND = globalThis.crypto?.subtle ? 'WebCrypto (native)' : '@noble/hashes (no WebCrypto on this insecure origin)'

const fmtDate = iso => { const d = new Date(iso); return isNaN(d) ? String(iso) : d.toLocaleString() }

/**
 * The verdict on what the page shows: 'ok' (verified; an absence the signed
 * listing proves is verified too), 'bad' (refused), 'locked' (a private tree
 * this page holds no reader identity for: FORMAT.md §12.8) or 'busy'.
 * @param {'ok'|'bad'|'locked'|'busy'} kind
 * @param {string} text the panel's status line
 * @param {string} [short] the summary's lead for 'bad' and 'locked' (the error's title)
 */
export function setVerdict (kind, text, short = '') {
  $('status').textContent = text
  $('status').className = 'status' + (kind === 'busy' ? '' : ' ' + kind)
  const s = $('panel-summary')
  s.classList.toggle('ok', kind === 'ok')
  s.classList.toggle('bad', kind === 'bad')
  s.classList.toggle('locked', kind === 'locked')
  s.dataset.kind = kind
  if (kind === 'bad') $('summary-text').textContent = '✗ ' + short
  else if (kind === 'locked') $('summary-text').textContent = short
  else if (kind === 'busy') $('summary-text').textContent = 'Verifying…'
}

/** @param {import('./rotree-client.js').Tree | null} tree */
export function renderPanel (tree) {
  const i = tree?.rootRecord ? tree.info : null
  // a format-2 tree: its anchor (a key, or t + the hash of its first trust document) and name
  $('v-key').textContent = i?.anchor ? i.anchor + (i.name ? ':' + i.name : '') : tree?.publicKey ?? ''
  $('v-seq').textContent = i ? String(i.seq) : '—'
  $('v-issued').textContent = i ? fmtDate(i.issued) : '—'
  const x = i ? expiry(i) : null
  $('v-expires').replaceChildren(...(x ? [fmtDate(i.expires), ' ', el('span', { className: 'rel', id: 'v-expires-rel' }, `(${x.text})`)] : ['—']))
  $('v-expires').classList.toggle('warn', !!x?.warn)
  $('v-root').textContent = i ? i.root : '—'
  $('v-mirror').textContent = i ? i.mirror : '—'
  $('v-hash').textContent = HASH_BACKEND
  $('v-mirrors').replaceChildren(...(tree ? tree.stats.mirrors : []).map(m => {
    const li = el('li', { className: m.lastError ? 'bad' : m.ok ? 'ok' : '' },
      el('span', { className: 'mono' }, m.url),
      el('span', { className: 'small' }, ` ${m.ok} verified, ${m.failed} failed`))
    if (m.lastError) li.append(el('div', { className: 'small' }, el('strong', { className: 'tech' }, m.lastError.code), ': ', proseNode(m.lastError.message)))
    return li
  }))
  const s = $('panel-summary')
  if (s.dataset.kind === 'ok' && i) {
    // whole parts: on a very narrow screen the line wraps between them, never inside one
    $('summary-text').replaceChildren(el('span', { className: 'part' }, '✓ verified'), ' · ',
      el('span', { className: 'part' }, `seq ${i.seq}`), ' · ',
      el('span', { className: x.warn ? 'part rel warn' : 'part rel' }, `expires ${x.text}`))
  }
  s.classList.toggle('warn', !!x?.warn && s.dataset.kind === 'ok')
}

/** The summary opens and closes the whole panel (narrow screens only show the summary). */
export function wirePanel () {
  $('panel-summary').addEventListener('click', () => {
    const open = $('panel').classList.toggle('open')
    $('panel-summary').setAttribute('aria-expanded', String(open))
  })
}

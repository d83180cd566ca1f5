// The web app's verification panel: what was verified, by whom, until when,
// in words first ("Published 12 minutes ago by key 3f2a…91c9", "Valid until
// Mon, Dec 14 (in 5 days)"); the numbers (whole keys, sequence, root) under
// Details. On a narrow screen (style.css) only its one-line summary shows,
// "✓ verified · published 12 minutes ago · expires in 5 days", which opens
// the whole panel.
import { expiry, agoText, dayText } from './dates.js'
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

/** A key's short fingerprint, '3f2a…91c9' ('t3f2a…91c9' for a trust anchor), whole in its title. */
export function fingerprint (hex) {
  const s = String(hex)
  const lead = s.startsWith('t') ? 5 : 4
  return el('code', { className: 'fp', title: s }, s.length > lead + 8 ? `${s.slice(0, lead)}…${s.slice(-4)}` : s)
}

/** The keys that signed the release the page reads, as the client counted them (FORMAT.md §12.3), or []. */
function releaseSigners (tree) {
  const r = tree?.rootRecord?.signers?.release
  return r ? [...r].filter(k => typeof k === 'string') : []
}

/** The line that says who published the tree, and when: words first, fingerprints whole in their titles. */
function lead (tree, i) {
  const ago = `Published ${agoText(Date.now() - Date.parse(i.issued))}`
  const anchor = i.anchor ?? i.key ?? tree.publicKey
  if (!String(anchor).startsWith('t')) return [ago, ' by key ', fingerprint(anchor)]
  // a trust-document anchor (FORMAT.md §12.5) certifies keys; it is not one
  const keys = releaseSigners(tree)
  const by = keys.length ? [` by key${keys.length > 1 ? 's' : ''} `, ...keys.flatMap((k, n) => n ? [', ', fingerprint(k)] : [fingerprint(k)]), ','] : []
  return [ago, ...by, ' under trust anchor ', fingerprint(anchor)]
}

/** @param {import('./rotree-client.js').Tree | null} tree */
export function renderPanel (tree) {
  const i = tree?.rootRecord ? tree.info : null
  const x = i ? expiry(i) : null
  // words first
  $('v-lead').replaceChildren(...(i ? lead(tree, i) : []))
  $('v-lead').hidden = !i
  $('v-valid').hidden = !i
  $('v-valid').replaceChildren(...(i ? ['Valid until ', dayText(i.expires), ' ', el('span', { className: 'rel' }, `(${x.text})`)] : []))
  $('v-valid').classList.toggle('warn', !!x?.warn)
  // the numbers, under Details. A format-2 tree's anchor is a key, or t and
  // the hash of its first trust document (FORMAT.md §12.5): not a key
  const anchor = i?.anchor ?? tree?.publicKey ?? ''
  const trustAnchor = anchor.startsWith('t')
  $('v-key-label').textContent = trustAnchor ? 'Trust anchor (document 1)' : 'Public key'
  $('v-key').textContent = anchor
  const name = i?.name ?? ''
  $('v-name-label').hidden = $('v-name').hidden = !name
  $('v-name').textContent = name
  const signers = trustAnchor ? releaseSigners(tree) : []
  $('v-signers-label').hidden = $('v-signers').hidden = signers.length === 0
  $('v-signers-label').textContent = signers.length > 1 ? 'Release signed by keys' : 'Release signed by key'
  $('v-signers').replaceChildren(...signers.flatMap((k, n) => n ? [el('br'), k] : [k]))
  $('v-seq').textContent = i ? String(i.seq) : '—'
  $('v-issued').replaceChildren(...(i ? [fmtDate(i.issued), ' ', el('span', { className: 'rel' }, `(${agoText(Date.now() - Date.parse(i.issued))})`)] : ['—']))
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
      el('span', { className: 'part' }, `published ${agoText(Date.now() - Date.parse(i.issued))}`), ' · ',
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

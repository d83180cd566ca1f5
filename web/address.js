// What the web app reads out of an address: its own URL's fragment
// (#<tree>[/path]) and what a reader pastes into the key field (a bare key, or
// a whole tree address as the CLI prints it, <url>#<key>, or the format-2
// forms <url>#<key>:<name> and <url>#t<trust hash>[:<name>], or another tab's
// app URL). The tree id (anchor and name, FORMAT.md §12.5) is the one thing
// the reader trusts (docs/TRUST.md rules 1 and 12): a malformed one is said
// so, never guessed at, and a name is never dropped (it selects the tree).
// The client parses the id again (parseAddress) before use.
// Imports nothing (served as it is).

const ANCHOR_RE = /^t?[0-9a-f]{64}$/ // a key, or t + the hash of trust document 1
const NAME_RE = /^[a-z0-9][a-z0-9._-]{0,63}$/

/** Why `s` is not a public key (or a trust anchor), in words, or null when it is one (any case). */
export function keyProblem (s) {
  if (ANCHOR_RE.test(s.toLowerCase())) return null
  const shown = s.length > 80 ? s.slice(0, 77) + '…' : s
  if (s === '') return 'No public key: a key is 64 hex digits (0-9, a-f).'
  const odd = [...new Set(s.replace(/[0-9a-fA-F]/g, ''))].slice(0, 5).join(' ')
  return `"${shown}" is not a public key: a key is 64 hex digits (0-9, a-f), ` +
    (odd ? `and this holds other characters (${odd}).` : `and this has ${s.length}.`)
}

/** Why `id` (<anchor>[:<name>]) names no tree, in words, or null. */
export function treeProblem (id) {
  const colon = id.indexOf(':')
  if (colon < 0) return keyProblem(id)
  const name = id.slice(colon + 1)
  if (!NAME_RE.test(name.toLowerCase())) return `"${name.length > 80 ? name.slice(0, 77) + '…' : name}" is not a tree name: 1-64 of a-z 0-9 . _ -, starting with a letter or digit.`
  return keyProblem(id.slice(0, colon))
}

function decodePath (rest) {
  if (!rest) return '/'
  try {
    return '/' + rest.split('/').filter(Boolean).map(decodeURIComponent).join('/')
  } catch { return '/' + rest.split('/').filter(Boolean).join('/') }
}

/**
 * The app's own fragment.
 * @param {string} hash location.hash
 * @returns {null | { key: string, path: string } | { error: string, given: string }}
 *   null: no key given (the page asks for one)
 */
export function parseFragment (hash) {
  const s = hash.replace(/^#/, '')
  if (s === '') return null
  const slash = s.indexOf('/')
  const given = slash < 0 ? s : s.slice(0, slash)
  let key = given
  try { key = decodeURIComponent(given) } catch {}
  const problem = treeProblem(key)
  if (problem) return { error: `The address names no tree. ${problem}`, given: key }
  return { key: key.toLowerCase(), path: decodePath(slash < 0 ? '' : s.slice(slash + 1)) }
}

/**
 * What the key field holds: a tree id (a key, or a trust anchor, with its
 * name), and the mirrors and path a pasted address names. Tolerant: the
 * part after the last '#'; of that, what comes before a '/' (a path) is the
 * tree id.
 * @param {string} text
 * @returns {{ key: string, path: string, mirrors: string[] } | { error: string }}
 */
export function parseKeyInput (text) {
  const s = text.trim()
  if (s === '') return { error: 'Paste a public key (64 hex digits) or a tree address (<url>#<key>).' }
  const hash = s.lastIndexOf('#')
  let tail = hash < 0 ? s : s.slice(hash + 1)
  const mirrors = hash < 0 ? [] : mirrorsOf(s.slice(0, hash))
  let path = '/'
  const slash = tail.indexOf('/')
  if (slash >= 0) { path = decodePath(tail.slice(slash + 1)); tail = tail.slice(0, slash) }
  const problem = treeProblem(tail)
  if (problem) return { error: problem }
  return { key: tail.toLowerCase(), path, mirrors }
}

/** The mirrors a pasted address's URL names: its own base, and an app URL's ?mirror=s. */
function mirrorsOf (base) {
  let u
  try { u = new URL(base) } catch { return [] }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return []
  // a tree address's URL is a folder (as mirrorUrl reads it); an app's may end in its page
  const dir = /\.html?$/i.test(u.pathname) ? u.pathname.replace(/[^/]*$/, '') : u.pathname.replace(/\/?$/, '/')
  const out = u.searchParams.get('self') === '0' ? [] : [u.origin + dir]
  for (const m of u.searchParams.getAll('mirror')) {
    try { const v = new URL(m); if (v.protocol === 'http:' || v.protocol === 'https:') out.push(v.href) } catch {}
  }
  return out
}

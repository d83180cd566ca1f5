// The app's landing (app.js) when its own server serves a tree: which one.
import { treeProblem } from './address.js'
import { fingerprint } from './panel.js'

const $ = id => document.getElementById(id)
const ownBase = new URL('./', location.href)

// The tree this page opened by itself, because its own server serves it
// (rotree serve OUT --web, or the app copied beside a published folder): the
// key came from that server, not from the reader. Kept per tab
// (sessionStorage) so a reload still says so; a key the reader types drops it.
export const SERVED = 'rotree-served-tree'
const FSINFO_MAX = 1 << 20

/**
 * The tree id (<anchor>[:<name>]) of the fsinfo.json beside this page, or
 * null: an app hosted apart from any tree (?self=0, or nothing there) asks
 * for a key. Nothing here is verified yet, and nothing needs to be: the id
 * only chooses what to open, and opening it verifies it, against this same
 * server's word (trust on first use, which the page says).
 */
export async function servedTree () {
  const q = new URLSearchParams(location.search)
  if (q.get('self') === '0' || q.has('start')) return null
  try {
    const r = await fetch(new URL('fsinfo.json', ownBase), { cache: 'no-store', signal: AbortSignal.timeout(10_000) })
    if (!r.ok || Number(r.headers.get('content-length') ?? 0) > FSINFO_MAX) return null
    const text = await r.text()
    if (text.length > FSINFO_MAX) return null
    const j = JSON.parse(text)
    const id = j?.version === 2 ? `${j.anchor}${j.name ? ':' + j.name : ''}` : j?.key
    return typeof id === 'string' && treeProblem(id) === null ? id.toLowerCase() : null
  } catch { return null }
}

/** Say that the key of the tree shown came from this page's own server, when it did. */
export function showServed (key) {
  let served = null
  try { served = sessionStorage.getItem(SERVED) } catch {}
  $('served').hidden = served !== key
  if (served !== key) return
  const [anchor] = key.split(':')
  $('served-text').replaceChildren('This is the tree this server serves, signed ',
    anchor.startsWith('t') ? 'under trust anchor ' : 'by key ', fingerprint(anchor),
    '. The key came from this server too: check it with the publisher before you trust what it signs.')
}

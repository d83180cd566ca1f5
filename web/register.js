// Installing the verifying Service Worker (sw.js) for one key, handing it a
// private tree's identity and keeping it running while it holds one; shared
// by site-boot.js (a per-key origin) and site.js (a shared origin).
import { UsageError, mirrorUrl } from './rotree-client.js'

/**
 * Register sw.js?key=<key>&mirror=… for the scope site/<key>/ beside this
 * page, and wait until that very script is the active worker.
 * @param {string} key 64 hex digits
 * @param {string[]} mirrors mirror base URLs
 * @returns {Promise<URL>} the scope
 */
export async function installVerifier (key, mirrors) {
  if (!('serviceWorker' in navigator)) {
    throw new UsageError(`Service Workers need a secure context (https:// or localhost); ${location.origin} is not one.`)
  }
  const sw = new URL('sw.js', location.href)
  sw.searchParams.set('key', key)
  for (const m of mirrors) sw.searchParams.append('mirror', mirrorUrl(m))
  const scope = new URL(`site/${key}/`, location.href)
  const reg = await navigator.serviceWorker.register(sw.href, { type: 'module', scope: scope.pathname, updateViaCache: 'none' })
  await activated(reg, sw.href)
  return scope
}

/** Resolves when `reg` has an activated worker running `scriptURL`; rejects when that worker fails to install. */
function activated (reg, scriptURL) {
  return new Promise((resolve, reject) => {
    const check = () => {
      const w = reg.active
      if (w && w.scriptURL === scriptURL && w.state === 'activated') { resolve(); return true }
      return false
    }
    if (check()) return
    const watch = w => w?.addEventListener('statechange', () => {
      if (w.state === 'redundant' && w.scriptURL === scriptURL && w !== reg.active) reject(new UsageError('the verifying Service Worker refused to install or failed to (its console says why)'))
      else check()
    })
    for (const w of [reg.installing, reg.waiting, reg.active]) watch(w)
    reg.addEventListener('updatefound', () => watch(reg.installing))
  })
}

// an age identity file is a few lines; anything much larger is the wrong file
export const IDENTITY_MAX = 64 << 10

/**
 * The text of an identity file the reader picked (File.text()): a page keeps
 * it in memory only (docs/WEB.md "Private trees in the browser").
 * @param {File} file @returns {Promise<string>}
 */
export async function readIdentityFile (file) {
  if (file.size > IDENTITY_MAX) throw new UsageError(`${file.size} bytes: an age identity file is a few lines (AGE-SECRET-KEY-1…), at most ${IDENTITY_MAX}`)
  return file.text()
}

/**
 * Hand the verifier of `key` (sw.js, registered on this origin) the text of
 * the reader's identity file for a private tree (FORMAT.md §12.8). Only the
 * page the reader picked the file in calls this, and sw.js takes it from
 * that page only (docs/WEB.md "Private trees in the browser"). Resolves to
 * sw.js's answer: { ok: true }, or { ok: false, code, message } (an identity
 * that is not a reader: ROTREE_NO_ACCESS), never with the identity in it.
 * @param {string} key 64 hex digits @param {string} text
 * @returns {Promise<{ ok: boolean, code?: string, message?: string }>}
 */
export function sendIdentity (key, text, o) {
  return toVerifier(key, { source: 'rotree-identity', key, identity: text }, o)
}

/**
 * Hand the verifier of `key` a gated tree's grant and its holder's key file
 * (FORMAT.md §12.10–12.11, docs/WEB.md "Gated trees in the browser"), as
 * sendIdentity does an identity: from the picker's page only, kept in sw.js's
 * memory only. Resolves to { ok: true, holder, expires }, or { ok: false,
 * code, message, reason? } (web/grant.js checkGrant's reason, or the edge's
 * ROTREE_NO_ACCESS), never with the key in it.
 * @param {string} key 64 hex digits @param {string} grantText @param {string} keyText
 */
export function sendGrant (key, grantText, keyText, o) {
  return toVerifier(key, { source: 'rotree-grant', key, grant: grantText, grantKey: keyText }, o)
}

async function toVerifier (key, message, { timeoutMs = 60_000 } = {}) {
  const scope = new URL(`site/${key}/`, location.href)
  const worker = ('serviceWorker' in navigator) ? (await navigator.serviceWorker.getRegistration(scope.href))?.active : null
  if (!worker) throw new UsageError(`the verifier of this site is not installed on ${location.origin}: open the site first`)
  const { port1, port2 } = new MessageChannel()
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { port1.close(); reject(new UsageError('the verifier did not answer')) }, timeoutMs)
    port1.onmessage = ev => { clearTimeout(timer); port1.close(); resolve(ev.data) }
    worker.postMessage(message, [port2])
  })
}

// Chromium stops a Service Worker after about 30 s without an event.
const KEEPALIVE_MS = 20_000
let keeping = null

/**
 * Keep the verifier of `key` running while this page is open: a stopped
 * worker loses the identity it held in memory (sw.js), and the reader would
 * be asked for the file again after every pause in reading. Each message is
 * an event, which starts the worker's idle time again; closing the last page
 * of the site lets the browser stop it, and the identity goes with it.
 * @param {string} key 64 hex digits
 */
export function keepVerifierAlive (key) {
  if (keeping !== null || !('serviceWorker' in navigator)) return
  const scope = new URL(`site/${key}/`, location.href)
  keeping = setInterval(async () => {
    const reg = await navigator.serviceWorker.getRegistration(scope.href).catch(() => null)
    reg?.active?.postMessage({ source: 'rotree-keepalive', key })
  }, KEEPALIVE_MS)
}

// Installing the verifying Service Worker (sw.js) for one key, shared by
// site-boot.js (a per-key origin) and site.js (a shared origin).
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

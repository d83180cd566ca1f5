// One origin per verified site (docs/WEB.md "One origin per site"). The site
// of public key K is served from the origin <label(K)>.<app host>, where the
// label is the key in base32 (RFC 4648, lowercase, no padding: 52 characters;
// the 64 hex digits would not fit a DNS label's 63). A page of that site then
// shares nothing with the app's origin or with another key's site: not the
// trusted bar, not IndexedDB (the rollback state), not Service Workers.
//
// Imported by site.js, site-boot.js, sw.js and app.js in the browser and by
// the server (server/app.js), so it imports nothing and touches no DOM.

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567'
export const KEY_RE = /^[0-9a-f]{64}$/
const LABEL_RE = /^[a-z2-7]{52}$/

/** @param {string} key 64 hex digits @returns {string} its 52-character DNS label */
export function keyLabel (key) {
  if (!KEY_RE.test(key)) throw new TypeError(`not a 64-hex public key: ${JSON.stringify(key)}`)
  let out = ''
  let acc = 0
  let bits = 0
  for (let i = 0; i < 64; i += 2) {
    acc = (acc << 8) | parseInt(key.slice(i, i + 2), 16)
    bits += 8
    while (bits >= 5) { bits -= 5; out += ALPHABET[(acc >>> bits) & 31] }
    acc &= (1 << bits) - 1
  }
  return out + ALPHABET[(acc << (5 - bits)) & 31] // 256 = 51 × 5 + 1: the last character holds one bit
}

/** The key a label names, or null (one label per key: unused bits must be zero). */
export function keyFromLabel (label) {
  if (typeof label !== 'string' || !LABEL_RE.test(label)) return null
  let hex = ''
  let acc = 0
  let bits = 0
  for (const c of label) {
    acc = (acc << 5) | ALPHABET.indexOf(c)
    bits += 5
    if (bits >= 8) { bits -= 8; hex += ((acc >>> bits) & 255).toString(16).padStart(2, '0') }
    acc &= (1 << bits) - 1
  }
  return acc === 0 && hex.length === 64 ? hex : null
}

/** The key whose own origin this host name is (its first label), or null. */
export function keyOfHost (hostname) {
  return keyFromLabel(String(hostname).split('.')[0].toLowerCase())
}

/** The origin of key's site beside an app at `app` (a Location or URL): <label>.<app host>. */
export function siteOrigin (app, key) {
  return `${app.protocol}//${keyLabel(key)}.${app.host}`
}

/** The app's origin for a per-key origin (its host without the key's label), or null. */
export function appOriginOf (loc) {
  if (keyOfHost(loc.hostname) === null) return null
  return `${loc.protocol}//${loc.host.slice(loc.host.indexOf('.') + 1)}`
}

// How long until a tree expires, in words, for the app's panel and the
// site's bar. Display only: whether a root may be used at all is decided by
// the client (verify.js, docs/TRUST.md rule 2) before anything is shown; a
// root shown here has been accepted. Imports nothing (served as it is).

const MINUTE = 60e3
const HOUR = 60 * MINUTE
const DAY = 24 * HOUR

/** 'in 5 days', 'in 3 hours', 'in 12 minutes', 'in under a minute' or 'expired' for ms left. */
export function untilText (ms) {
  if (!(ms > 0)) return 'expired'
  if (ms >= 2 * DAY) return `in ${Math.round(ms / DAY)} days`
  if (ms >= 2 * HOUR) return `in ${Math.round(ms / HOUR)} hours`
  if (ms >= MINUTE) { const m = Math.round(ms / MINUTE); return `in ${m} minute${m === 1 ? '' : 's'}` }
  return 'in under a minute'
}

/**
 * @param {{ issued: string, expires: string }} info an accepted fsinfo.json
 * @param {number} [now]
 * @returns {{ text: string, warn: boolean, left: number }} warn: it expires within a day, or
 *   within a seventh of its signed lifetime (a weekly re-sign that is late by a day shows)
 */
export function expiry (info, now = Date.now()) {
  const expires = Date.parse(info.expires)
  const issued = Date.parse(info.issued)
  const left = expires - now
  const lifetime = expires - issued
  const warn = !(left > DAY) || (lifetime > 0 && left <= lifetime / 7)
  return { text: untilText(left), warn, left }
}

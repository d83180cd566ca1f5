// When a tree was published and how long until it expires, in words, for
// the app's panel and the site's bar. Display only: whether a root may be
// used at all is decided by the client (verify.js, docs/TRUST.md rule 2)
// before anything is shown; a root shown here has been accepted. Imports
// nothing (served as it is).

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

/** 'just now', '1 minute ago', '12 minutes ago', '3 hours ago', '4 days ago' for ms since. */
export function agoText (ms) {
  if (!(ms >= MINUTE)) return 'just now' // a clock a little behind the publisher's too
  if (ms >= 2 * DAY) return `${Math.round(ms / DAY)} days ago`
  if (ms >= 2 * HOUR) return `${Math.round(ms / HOUR)} hours ago`
  const m = Math.round(ms / MINUTE)
  return `${m} minute${m === 1 ? '' : 's'} ago`
}

/**
 * A date as a reader says it: 'Mon, Dec 14' in the reader's language, with
 * the year when it is not this one, and the time when it is less than two
 * days away (then the day alone says too little).
 * @param {string|number|Date} when @param {number} [now]
 */
export function dayText (when, now = Date.now()) {
  const d = new Date(when)
  if (isNaN(d)) return String(when)
  const o = { weekday: 'short', month: 'short', day: 'numeric' }
  if (d.getFullYear() !== new Date(now).getFullYear()) o.year = 'numeric'
  if (Math.abs(d - now) < 2 * DAY) { o.hour = 'numeric'; o.minute = '2-digit' }
  return d.toLocaleString(undefined, o)
}

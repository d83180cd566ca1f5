// When to tell the user a tree is about to expire. A reader refuses an
// expired fsinfo.json (docs/TRUST.md rule 2), so a tree nobody re-signs goes
// dark for every reader at once; the warning gives the publisher time to run
// `rotree resign`. This is a warning only: whether a root is accepted is
// verify.js's decision, and the comparison here is verify.js's isExpired()
// asked about a later instant.
import { isExpired } from 'rotree-client/verify'

const DAY = 24 * 3600 * 1000

/**
 * How long before expiry a tree is worth warning about: within a seventh of
 * its lifetime (issued → expires), or within a day. The day rule applies
 * only to trees that live at least two days: a tree signed for an hour and
 * re-signed by a timer would otherwise warn on every read.
 * @param {{ issuedMs: number, expiresMs: number }} t
 */
export function warningWindowMs ({ issuedMs, expiresMs }) {
  const life = expiresMs - issuedMs
  return life >= 2 * DAY ? Math.max(DAY, life / 7) : life / 7
}

/**
 * The one-line warning for a tree that expires soon (or has expired), or
 * null. `info` is an fsinfo record ({ issuedMs, expiresMs }) or the public
 * info shape ({ issued, expires } as ISO strings).
 * @param {{ issuedMs?: number, expiresMs?: number, issued?: string, expires?: string }} info
 * @param {{ now?: number }} [o]
 * @returns {string | null}
 */
export function expiryWarning (info, { now = Date.now() } = {}) {
  if (!info) return null
  const t = {
    issuedMs: info.issuedMs ?? Date.parse(info.issued),
    expiresMs: info.expiresMs ?? Date.parse(info.expires)
  }
  if (!Number.isFinite(t.issuedMs) || !Number.isFinite(t.expiresMs)) return null
  if (!isExpired(t, { now: now + warningWindowMs(t) })) return null
  const at = new Date(t.expiresMs).toISOString()
  if (isExpired(t, { now })) return `rotree: warning: tree expired ${fmtDuration(now - t.expiresMs)} ago (${at}); readers refuse it until the publisher runs rotree resign`
  return `rotree: warning: tree expires in ${fmtDuration(t.expiresMs - now)} (${at}); the publisher must run rotree resign`
}

/** 90061000 → '1d 1h'; 5h, 42m, 30s. */
export function fmtDuration (ms) {
  const s = Math.max(0, Math.floor(ms / 1000))
  const d = Math.floor(s / 86400); const h = Math.floor(s % 86400 / 3600); const m = Math.floor(s % 3600 / 60)
  if (d > 0) return h ? `${d}d ${h}h` : `${d}d`
  if (h > 0) return `${h}h`
  if (m > 0) return `${m}m`
  return `${s}s`
}

// Mirror URLs may carry credentials (https://user:pass@mirror/pub/). The
// gateway reports mirrors in its status document, its 502/504 bodies and its
// log, and a mirror's error message can quote the URL it fetched: none of
// those may show the userinfo (docs/TRUST.md rule 16). The client redacts
// the URLs in its own messages; this is the gateway's own, last pass over
// everything it prints, whatever a message holds.

// scheme://userinfo@  →  scheme://  (userinfo: anything up to '@' that is not
// a '/', '?', '#' or whitespace, so an '@' later in the path is left alone)
const USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^/?#@\s]*@/gi

/** A string with the userinfo of every URL in it removed. */
export function redactText (s) {
  return typeof s === 'string' && s.includes('@') ? s.replace(USERINFO, '$1') : s
}

/**
 * A copy of a JSON-like value (status documents) with redactText applied to
 * every string, keys included. Depth-bounded: what the gateway reports is shallow.
 */
export function redactDeep (v, depth = 0) {
  if (typeof v === 'string') return redactText(v)
  if (v === null || typeof v !== 'object' || depth > 16) return v
  if (Array.isArray(v)) return v.map(x => redactDeep(x, depth + 1))
  const out = {}
  for (const [k, x] of Object.entries(v)) out[redactText(k)] = redactDeep(x, depth + 1)
  return out
}

/** A log ({ info, error }) whose every line is redacted; null stays null. */
export function redactingLog (log) {
  if (log === null || log === undefined) return null
  const wrap = fn => typeof fn === 'function' ? (msg, ...rest) => fn.call(log, redactText(String(msg)), ...rest) : undefined
  return { info: wrap(log.info), error: wrap(log.error) }
}

// "7d", "12h", "90m", "3600s", "2w" → milliseconds.
const UNITS = { s: 1e3, m: 60e3, h: 3600e3, d: 86400e3, w: 7 * 86400e3 }

export function parseDuration (s) {
  const m = /^(\d+)([smhdw])$/.exec(String(s))
  if (!m || Number(m[1]) === 0) return null
  return Number(m[1]) * UNITS[m[2]]
}

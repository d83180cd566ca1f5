// Sizes and text as the app shows them.

/** A byte count for people: 512 B, 3.2 KiB, 41 MiB. */
export function fmtSize (n) {
  if (n === undefined || n === null) return ''
  if (n < 1024) return `${n} B`
  const units = ['KiB', 'MiB', 'GiB', 'TiB']
  let v = n / 1024; let i = 0
  while (v >= 1024 && i < units.length - 1) { v /= 1024; i++ }
  return `${v < 10 ? v.toFixed(1) : Math.round(v)} ${units[i]}`
}

/** The bytes as UTF-8 text, or null for what is not text (a NUL, or invalid UTF-8). */
export function asText (bytes) {
  if (bytes.includes(0)) return null
  try { return new TextDecoder('utf-8', { fatal: true }).decode(bytes) } catch { return null }
}

// A one-line progress bar on stderr, drawn only when stderr is a TTY and at
// most ten times a second. Without a TTY, `lineEveryMs` prints a plain line
// that often instead (a long upload in a CI log), else nothing.
export function progressBar ({ label, stream = process.stderr, enabled = stream.isTTY, lineEveryMs = 0 }) {
  let last = 0
  const t0 = Date.now()
  const draw = (done, total, extra = '') => {
    const now = Date.now()
    if (!enabled && lineEveryMs > 0) {
      if (now - (last || t0) < lineEveryMs) return
      last = now
      const rate = done / Math.max(0.001, (now - t0) / 1000)
      stream.write(`${label}: ${fmtBytes(done)}${total > 0 ? ` of ${fmtBytes(total)} (${Math.min(100, done / total * 100).toFixed(0)}%)` : ''}, ${fmtBytes(rate)}/s ${extra}\n`)
      return
    }
    // at most ten times a second, however often it is told (an unknown total is never "reached")
    if (!enabled || (now - last < 100 && !(total > 0 && done >= total))) return
    last = now
    const rate = done / Math.max(0.001, (now - t0) / 1000)
    if (!(total > 0)) {
      // no total known (a first build): what is done and how fast, not a bar at 0%
      stream.write(`\r${label} ${fmtBytes(done)} ${fmtBytes(rate)}/s ${extra}\x1b[K`)
      return
    }
    const width = Math.max(10, Math.min(40, (stream.columns || 80) - 60))
    const frac = Math.min(1, done / total)
    const bar = '#'.repeat(Math.round(frac * width)).padEnd(width, '.')
    stream.write(`\r${label} [${bar}] ${(frac * 100).toFixed(0).padStart(3)}% ${fmtBytes(done)}/${fmtBytes(total)} ${fmtBytes(rate)}/s ${extra}\x1b[K`)
  }
  return { update: draw, done () { if (enabled) stream.write('\n') } }
}

export function fmtBytes (n) {
  const u = ['B', 'KiB', 'MiB', 'GiB', 'TiB']
  let i = 0
  while (n >= 1024 && i < u.length - 1) { n /= 1024; i++ }
  return (i === 0 ? String(Math.round(n)) : n.toFixed(1)) + ' ' + u[i]
}

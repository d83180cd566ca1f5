// A one-line progress bar on stderr, drawn only when stderr is a TTY and at
// most ten times a second.
export function progressBar ({ label, stream = process.stderr, enabled = stream.isTTY }) {
  let last = 0
  const t0 = Date.now()
  const draw = (done, total, extra = '') => {
    const now = Date.now()
    if (!enabled || (now - last < 100 && done < total)) return
    last = now
    const width = Math.max(10, Math.min(40, (stream.columns || 80) - 60))
    const frac = total > 0 ? Math.min(1, done / total) : 0
    const bar = '#'.repeat(Math.round(frac * width)).padEnd(width, '.')
    const rate = done / Math.max(0.001, (now - t0) / 1000)
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

// Server-side cost of a load run: CPU seconds and RSS of a process, read from
// /proc (docs/BENCHMARKS.md reports CPU time per request beside req/s, because the load
// generator is often the limit on 2 cores).
import fs from 'node:fs'
import { procStat } from '../../lib/proc-stat.js'

const CLK_TCK = 100 // sysconf(_SC_CLK_TCK) on Linux x86_64

/** CPU seconds (user + system) used so far by pid and, optionally, its children that exited. */
export function cpuSeconds (pid) {
  const f = procStat(pid) // utime is field 14, stime field 15
  return (Number(f[14 - 3]) + Number(f[15 - 3])) / CLK_TCK
}

/** Resident set size in bytes. */
export function rssBytes (pid) {
  const s = fs.readFileSync(`/proc/${pid}/status`, 'utf8')
  return Number(/VmRSS:\s+(\d+) kB/.exec(s)[1]) * 1024
}

/** CPU seconds of several pids (nginx master + workers). */
export function cpuOf (pids) { return pids.reduce((n, p) => n + cpuSeconds(p), 0) }

export function median (xs) {
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2
}

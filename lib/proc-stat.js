// /proc/<pid>/stat (Linux), split into its fields after the command name:
// index 0 is field 3 (state), so field N of proc(5) is index N - 3. The name
// (field 2) may hold spaces and parentheses, so the split starts after the
// last ')'. Throws where there is no such process or no /proc.
import { readFileSync } from 'node:fs'

/** @param {number} pid @returns {string[]} */
export function procStat (pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')
}

/**
 * What the folder lock needs of a process: its state (field 3: R, S, D, Z, X,
 * …) and its start time in clock ticks since boot (field 22). null where there
 * is no such process or no /proc.
 * @param {number} pid @returns {{ state: string, start: string | null } | null}
 */
export function procInfo (pid) {
  let f
  try { f = procStat(pid) } catch { return null }
  return { state: f[0], start: f[22 - 3] ?? null }
}

/**
 * A process that has exited but not yet been reaped by its parent (Z, zombie)
 * or is being torn down (X) still has its pid and its /proc entry, and
 * kill(pid, 0) still succeeds: it holds nothing any more.
 * @param {string} state
 */
export function isDeadState (state) { return state === 'Z' || state === 'X' || state === 'x' }

/**
 * A process's peak resident set size in bytes so far (VmHWM in
 * /proc/<pid>/status: the kernel's high-water mark, so a late look still
 * sees the peak); null where there is no such process or no /proc.
 * @param {number | 'self'} [pid='self']
 */
export function peakRss (pid = 'self') {
  let s
  try { s = readFileSync(`/proc/${pid}/status`, 'utf8') } catch { return null }
  const m = /^VmHWM:\s+(\d+) kB/m.exec(s)
  return m ? Number(m[1]) * 1024 : null
}

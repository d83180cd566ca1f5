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

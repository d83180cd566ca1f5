// The load for a figure's "loaded" run: one busy process per core, each a
// tight loop of SHA-256 over a 4 KiB buffer (CPU and a little memory
// bandwidth, no I/O, no syscalls in the loop), at the same priority as
// everything else (nice 0), so the figure's reader, nginx, the relay and the
// baseline compete for the cores as they would on a machine that is doing
// other work. Bounded twice: each process stops itself after `maxS` seconds
// and as soon as the bench process is gone, and stop() (or the bench's exit)
// kills it. bench/run.js starts it after a figure's idle run and stops it when
// the loaded run ends; the figure sees no difference but the machine's.
//   node bench/lib/cpu-load.js --spin SECONDS   one busy process (what startLoad spawns)
import { spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import os from 'node:os'
import { pathToFileURL } from 'node:url'
import { cpuSeconds } from './proc.js'

const SELF = new URL(import.meta.url).pathname

/** The busy loop: returns after `seconds`, or when the parent that started it is gone. */
function spin (seconds) {
  const buf = Buffer.alloc(4096, 7)
  const parent = process.ppid
  const end = Date.now() + seconds * 1000
  for (;;) {
    for (let i = 0; i < 2000; i++) createHash('sha256').update(buf).digest()
    if (Date.now() > end || process.ppid !== parent) return
  }
}

/**
 * Start `procs` busy processes (default: one per core).
 * @returns {{ procs: number, stop: () => { procs: number, cpuS: number, wallS: number, cores: number } }}
 *   stop(): the CPU the load got while it ran (cores: its average share, 2 = two cores busy)
 */
export function startLoad ({ procs = os.cpus().length, maxS = 1800 } = {}) {
  const children = Array.from({ length: procs }, () => spawn(process.execPath, [SELF, '--spin', String(maxS)], { stdio: 'ignore' }))
  const kill = () => { for (const c of children) if (c.exitCode === null) { try { c.kill('SIGKILL') } catch {} } }
  process.once('exit', kill)
  const t0 = performance.now()
  let stopped = null
  return {
    procs,
    stop () {
      if (stopped) return stopped
      const wallS = (performance.now() - t0) / 1000
      let cpuS = 0
      for (const c of children) { try { cpuS += cpuSeconds(c.pid) } catch {} } // gone: it stopped at maxS
      kill()
      process.removeListener('exit', kill)
      stopped = { procs, maxS, cpuS, wallS, cores: cpuS / wallS }
      return stopped
    }
  }
}

/** Run `fn` with the load on; resolve { result, load } (load: what stop() measured). */
export async function underLoad (fn, opts) {
  const load = startLoad(opts)
  // a moment for the processes to start spinning before the figure's first timed run
  await new Promise(resolve => setTimeout(resolve, 300))
  try {
    const result = await fn()
    return { result, load: load.stop() }
  } finally { load.stop() }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href && process.argv[2] === '--spin') {
  spin(Math.min(Number(process.argv[3]) || 60, 3600))
}

// Load with autocannon's programmatic API, measuring the server's CPU over
// the same window. autocannon is single-threaded JavaScript and tops out
// around 12-15k req/s on 2 cores; `generatorBound` says when that, not the
// server, was the limit (the server had idle CPU left).
import autocannon from 'autocannon'
import { cpuOf } from './proc.js'

/**
 * @param {{ url: string, connections: number, durationS: number, pids: number[], pipelining?: number }} o
 * @returns {Promise<{ rps: number, mbps: number, cpuPerReqUs: number, serverCpuShare: number, generatorBound: boolean, errors: number, non2xx: number }>}
 */
export async function load ({ url, connections, durationS, pids, pipelining = 1 }) {
  const c0 = cpuOf(pids); const t0 = performance.now()
  const r = await autocannon({ url, connections, duration: durationS, pipelining })
  const cpu = cpuOf(pids) - c0; const wall = (performance.now() - t0) / 1000
  const reqs = r.requests.total
  const share = cpu / wall // 1.0 = one core busy
  return {
    rps: reqs / wall,
    mbps: r.throughput.total / wall / 1e6,
    cpuPerReqUs: reqs ? cpu / reqs * 1e6 : NaN,
    serverCpuShare: share,
    // a single-process server is saturated near one core; below ~0.85 the generator was the limit
    generatorBound: share < 0.85,
    errors: r.errors + r.timeouts,
    non2xx: r.non2xx
  }
}

// SFSRO Fig. 9: aggregate throughput as 1 → 300 concurrent clients replay a
// trace of reading a source tree. Each rotree client is its own Tree (own
// cache and connections, like SFSRO's separate client machines) reading every
// file of the trace in turn until the time is up; the baseline replays the
// same trace with plain GETs against nginx serving the same files.
import fs from 'node:fs/promises'
import path from 'node:path'
import { startNginx } from './lib/servers.js'
import { makeTree } from './lib/trees.js'
import { getBytes } from './lib/http.js'

export const id = 'Fig9'

// a source tree: 40 directories of 30 files, sizes spread like source code (0.5-40 KiB)
function sourceTree () {
  const files = {}
  let s = 7
  const rnd = () => { s = (s * 48271) % 2147483647; return s / 2147483647 }
  for (let d = 0; d < 40; d++) for (let f = 0; f < 30; f++) files[`src/mod${d}/file${f}.c`] = Math.floor(512 * Math.exp(rnd() * Math.log(80)))
  return files
}

async function replay (clients, durationMs, readOne) {
  const deadline = performance.now() + durationMs
  let bytes = 0; let files = 0
  const t0 = performance.now()
  await Promise.all(Array.from({ length: clients }, async (_, c) => {
    const ctx = await readOne.open?.()
    for (let i = c * 37; performance.now() < deadline; i++) {
      const n = await readOne(i, ctx) // not `bytes += await …`: that reads `bytes` before the await and loses other clients' bytes
      bytes += n; files++
    }
    readOne.close?.(ctx)
  }))
  return { mbps: bytes / 1e6 / ((performance.now() - t0) / 1000), files }
}

export async function run ({ quick = false } = {}) {
  const files = sourceTree()
  const names = Object.keys(files)
  const t = await makeTree(files, { label: 'fig9' })
  await fs.cp(t.src, path.join(t.out, 'plain'), { recursive: true })
  const nginx = await startNginx(t.out, { plain: true })
  const counts = process.env.COUNTS ? JSON.parse(process.env.COUNTS) : quick ? [1, 30] : [1, 10, 50, 100, 300]
  const durationMs = quick ? 2000 : 4000
  const rows = []
  try {
    for (const n of counts) {
      const ours = Object.assign(async (i, tree) => (await tree.readFile('/' + names[i % names.length])).length, {
        open: () => t.open(nginx.url, { concurrency: 2 }), close: tree => tree.close()
      })
      const plain = i => getBytes(nginx.url + 'plain/' + names[i % names.length])
      const r = await replay(n, durationMs, ours)
      const p = await replay(n, durationMs, plain)
      rows.push({ label: `${n} client${n > 1 ? 's' : ''}`, value: r.mbps, baseline: p.mbps, baselineLabel: 'plain GETs from nginx', unit: 'MB/s' })
    }
  } finally { await nginx.stop(); await t.cleanup() }
  return {
    id, title: 'SFSRO Fig. 9: aggregate throughput, 1 → 300 clients replaying a source-tree trace',
    command: `npm run bench${quick ? ':quick' : ''} -- Fig9`,
    rows,
    notes: ['All clients and the load run in one Node process on the same 2 cores as nginx, so aggregate throughput is bounded by client CPU on both sides. rotree clients keep verified directory pages cached, so after the first pass most small files cost no request at all (they are inline in cached pages).']
  }
}

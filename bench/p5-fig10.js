// P5 / SFSRO Fig. 10: cold lookups of a small file at depth 1 and depth 4:
// requests after fsinfo.json and lookups per second, against one plain GET from nginx.
import { median } from './lib/proc.js'
import { startNginx } from './lib/servers.js'
import { makeTree, timed } from './lib/trees.js'
import { getBytes } from './lib/http.js'
import fs from 'node:fs/promises'
import path from 'node:path'

export const id = 'P5'

export async function run ({ quick = false } = {}) {
  const files = { 'top.txt': 100, 'a/b/c/deep.txt': 100 }
  for (let i = 0; i < 300; i++) files[`a/b/c/n${i}`] = 200 // realistic neighbours
  for (let i = 0; i < 300; i++) files[`f${i}`] = 300
  const t = await makeTree(files, { label: 'p5' })
  await fs.cp(t.src, path.join(t.out, 'plain'), { recursive: true })
  const nginx = await startNginx(t.out, { plain: true })
  const n = quick ? 20 : 100
  const rows = []; let met = true
  try {
    for (const [p, limit, sfsro] of [['/top.txt', 2, 5], ['/a/b/c/deep.txt', 5, 11]]) {
      const times = []; const plain = []; let reqs = 0
      for (let i = 0; i < n; i++) {
        const tree = await t.open(nginx.url) // cold: new client, empty caches; fsinfo.json fetched here
        const base = tree.stats.requests
        times.push((await timed(() => tree.readFile(p))).ms)
        reqs = tree.stats.requests - base
        tree.close()
        plain.push((await timed(() => getBytes(nginx.url + 'plain' + p))).ms)
      }
      met &&= reqs <= limit
      const depth = p.split('/').length - 1
      rows.push({ label: `depth ${depth}: requests after fsinfo.json`, value: reqs, baseline: sfsro, baselineLabel: 'SFSRO RPCs', unit: 'requests', higherIsBetter: false })
      rows.push({ label: `depth ${depth}: cold lookups/s`, value: 1000 / median(times), baseline: 1000 / median(plain), baselineLabel: 'plain GET from nginx', unit: 'lookups/s' })
    }
  } finally { await nginx.stop(); await t.cleanup() }
  return {
    id, title: 'SFSRO Fig. 10: cold lookup of a small file',
    command: `npm run bench${quick ? ':quick' : ''} -- P5`,
    target: '≤ 2 requests at depth 1, ≤ 5 at depth 4, after fsinfo.json',
    met, rows,
    notes: ['A cold lookup fetches each directory page on the path once (small files ride inside their page), verifying each. The plain GET baseline has no verification and no directory walk; a new keep-alive connection is reused by both.']
  }
}

// P4 / SFSRO Fig. 6: read 1,000 files of 1 KiB in 10 directories. rotree reads
// them with `get` (they are inlined in their directory pages); the baseline is
// 1,000 plain GETs from nginx of the same files; SFSRO needed 2,101 RPCs.
import path from 'node:path'
import fs from 'node:fs/promises'
import { median } from './lib/proc.js'
import { startNginx } from './lib/servers.js'
import { makeTree, timed } from './lib/trees.js'
import { getBytes, pool } from './lib/http.js'
import { getPath } from '../cli/download.js'

export const id = 'P4'

export async function run ({ quick = false } = {}) {
  const files = {}
  for (let d = 0; d < 10; d++) for (let f = 0; f < 100; f++) files[`d${d}/f${f}`] = 1024
  const t = await makeTree(files, { label: 'p4' })
  await fs.cp(t.src, path.join(t.out, 'plain'), { recursive: true })
  const nginx = await startNginx(t.out, { plain: true })
  const reps = quick ? 2 : 5
  const ours = []; const plain = []; const toDisk = []; let requests = 0
  const names = Object.keys(files)
  try {
    for (let i = 0; i < reps; i++) {
      plain.push((await timed(() => pool(names, 8, n => getBytes(nginx.url + 'plain/' + n)))).ms)
      // a cold client reads every file: list the directories, read each file, verified
      let tree = await t.open(nginx.url)
      ours.push((await timed(async () => {
        for (const d of await tree.readdir('/')) await pool(await tree.readdir('/' + d), 8, f => tree.readFile(`/${d}/${f}`))
      })).ms)
      requests = tree.stats.requests
      tree.close()
      tree = await t.open(nginx.url)
      toDisk.push((await timed(() => getPath(tree, '/', path.join(t.dir, 'copy' + i)))).ms)
      tree.close()
    }
  } finally { await nginx.stop(); await t.cleanup() }
  return {
    id, title: 'SFSRO Fig. 6: read 1,000 × 1 KiB files in 10 directories',
    command: `npm run bench${quick ? ':quick' : ''} -- P4`,
    target: '≤ 25 HTTP requests (SFSRO: 2,101 RPCs) and faster than 1,000 plain GETs from nginx',
    met: requests <= 25 && median(ours) < median(plain),
    rows: [
      { label: 'wall time, read all 1,000 files', value: median(ours), baseline: median(plain), baselineLabel: '1,000 GETs from nginx, 8 in flight', unit: 'ms', higherIsBetter: false },
      { label: '`rotree get` to disk (modes, mtimes)', value: median(toDisk), baseline: median(plain), baselineLabel: '1,000 GETs, not written', unit: 'ms', higherIsBetter: false },
      { label: 'HTTP requests', value: requests, baseline: 1000, baselineLabel: 'plain GETs', unit: 'requests', higherIsBetter: false },
      { label: 'requests vs SFSRO RPCs', value: requests, baseline: 2101, baselineLabel: 'SFSRO 2,101 RPCs', unit: 'requests', higherIsBetter: false }
    ],
    notes: ['The judged row reads every file with a cold client (directory pages fetched once; each 1 KiB file is inline in its page) against GETs that discard the body. The `rotree get` row also writes 1,000 files with modes and mtimes, which the baseline does not. Requests include fsinfo.json.']
  }
}

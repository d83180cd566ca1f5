// SFSRO Fig. 7: a 40 MB file read sequentially, and by random 8 KiB reads,
// against plain (ranged) GETs of the same bytes from nginx.
import fs from 'node:fs/promises'
import path from 'node:path'
import { median } from './lib/proc.js'
import { startNginx } from './lib/servers.js'
import { makeTree, timed } from './lib/trees.js'
import { getBytes, pool } from './lib/http.js'

export const id = 'Fig7'

export async function run ({ quick = false } = {}) {
  const size = 40 * 1024 * 1024
  const t = await makeTree({ 'f40.bin': size }, { label: 'fig7' })
  await fs.copyFile(path.join(t.src, 'f40.bin'), path.join(t.out, 'plain.bin'))
  const nginx = await startNginx(t.out, { plain: true })
  const reps = quick ? 1 : 3
  const reads = quick ? 200 : 1000
  // one fixed sequence of random offsets, used by both sides
  let seed = 12345
  const rnd = () => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648 }
  const offsets = Array.from({ length: reads }, () => Math.floor(rnd() * (size / 8192)) * 8192)
  const seq = []; const seqPlain = []; const rand = []; const randPlain = []
  try {
    for (let i = 0; i < reps; i++) {
      seqPlain.push((await timed(() => getBytes(nginx.url + 'plain.bin'))).ms)
      let tree = await t.open(nginx.url)
      seq.push((await timed(async () => { for await (const b of tree.createReadStream('/f40.bin')) b.length })).ms) // eslint-disable-line no-unused-expressions
      tree.close()
      randPlain.push((await timed(() => pool(offsets, 1, o => getBytes(nginx.url + 'plain.bin', { range: `bytes=${o}-${o + 8191}` })))).ms)
      tree = await t.open(nginx.url) // cold caches: every chunk is fetched and verified once, then served from the cache
      rand.push((await timed(() => pool(offsets, 1, async o => { for await (const b of tree.readRange('/f40.bin', { start: o, end: o + 8191 })) b.length }))).ms) // eslint-disable-line no-unused-expressions
      tree.close()
    }
  } finally { await nginx.stop(); await t.cleanup() }
  const mb = size / 1e6
  return {
    id, title: 'SFSRO Fig. 7: 40 MB file, sequential and random 8 KiB reads',
    command: `npm run bench${quick ? ':quick' : ''} -- Fig7`,
    rows: [
      { label: 'sequential read', value: mb / (median(seq) / 1000), baseline: mb / (median(seqPlain) / 1000), baselineLabel: 'plain GET from nginx', unit: 'MB/s' },
      { label: `random 8 KiB reads (${reads}, one at a time)`, value: reads / (median(rand) / 1000), baseline: reads / (median(randPlain) / 1000), baselineLabel: 'ranged GETs from nginx', unit: 'reads/s' }
    ],
    notes: ['Random reads: the client fetches and verifies the whole ~256 KiB chunk holding each 8 KiB range, then serves later reads in that chunk from its verified cache (SFSRO\'s block cache), so it pays more for the first touch of a chunk and nothing after.']
  }
}

#!/usr/bin/env node
// `npm run bench` (whole suite) and `npm run bench:quick` (smoke run):
// each figure writes bench/results/<id>.json; then docs/BENCHMARKS.md and the
// SVG charts are rendered from all results. `npm run bench -- P1 P4` runs some.
import { saveFigure, render } from './lib/report.js'

const INTRO = `Every figure is measured against a baseline **in the same run on the same machine**
and reported as a ratio; no absolute number stands alone. Servers run as their own
processes on loopback; load comes from autocannon (programmatic API) or from the
rotree client itself; each row is the median of several runs (one in quick mode).
Server CPU time per request is read from \`/proc/<pid>/stat\`. Regenerate with
\`npm run bench\` (full, < 10 min) or \`npm run bench:quick\` (smoke, < 2 min).`

const FIGURES = {
  P1: './p1-server.js',
  P2: './gateway.js',
  P3: './p3-client.js',
  P4: './p4-fig6.js',
  P5: './p5-fig10.js',
  P6: './build.js',
  P7: './p7-pull.js',
  P8: './browser.js',
  Fig7: './fig7.js',
  Fig9: './fig9.js',
  peers: './peers.js',
  P9: ['./gateway.js', 'runP9']
}

const args = process.argv.slice(2)
const quick = args.includes('--quick')
const only = args.filter(a => !a.startsWith('--'))
const ids = only.length ? only : Object.keys(FIGURES)
const t0 = Date.now()
for (const id of ids) {
  if (!FIGURES[id]) { console.error(`unknown figure ${id}; known: ${Object.keys(FIGURES).join(', ')}`); process.exit(2) }
  const t = Date.now()
  process.stderr.write(`${id} … `)
  const [file, fn = 'run'] = [FIGURES[id]].flat()
  const fig = await (await import(file))[fn]({ quick })
  await saveFigure(fig)
  process.stderr.write(`${((Date.now() - t) / 1000).toFixed(0)} s${fig.target ? (fig.met ? ' (target met)' : ' (target NOT met)') : ''}\n`)
}
await render({ intro: INTRO + (quick ? '\n\n**This file was produced by `npm run bench:quick`**: one run per row, short loads, small sizes (P8 uses 16 MB, not 50 MB). Its ratios are indicative; the full `npm run bench` is the measurement of record.' : '') })
console.error(`done in ${((Date.now() - t0) / 1000).toFixed(0)} s; see docs/BENCHMARKS.md`)

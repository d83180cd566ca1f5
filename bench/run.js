#!/usr/bin/env node
// `npm run bench` (whole suite) and `npm run bench:quick` (smoke run):
// each figure prints its table and writes bench/results/<id>.json; then
// docs/BENCHMARKS.md and the SVG charts are rendered from all results.
//   npm run bench -- P1 P4            some figures
//   npm run bench -- net              the network figures (P3w P3t P10 P11) and P1h
//   npm run bench -- private          the private-tree figures (P15 P16 P17)
//   node bench/run.js --no-render P3w results only; docs/BENCHMARKS.md untouched
//   node bench/run.js --results DIR … results into DIR instead (implies --no-render)
//   node bench/run.js --render-only   docs/BENCHMARKS.md and the charts from bench/results, nothing run
//   node bench/run.js --render-only --results DIR   the same from the results in DIR
//   node bench/run.js --no-load P3w   only the idle run (every figure runs idle, then under load)
//   node bench/run.js --loaded P6     the default, kept for older scripts
// ROTREE_BENCH_CLIENT=DIR measures the client of another checkout (bench/lib/clients.js).
import './lib/env.js' // first: the environment every figure's commands inherit
import path from 'node:path'
import { readFileSync } from 'node:fs'
import { saveFigure, render, figureMarkdown, withLoaded, RESULTS } from './lib/report.js'
import { underLoad } from './lib/cpu-load.js'

const INTRO = `Every figure is measured against a baseline **in the same run on the same machine**
and reported as a ratio; no absolute number stands alone. Servers run as their own
processes on loopback; load comes from autocannon (programmatic API), h2load (P1h) or
from the rotree client itself; each row is the median of several runs (one in quick
mode, and one for P11's long transfers). Server CPU time per
request is read from \`/proc/<pid>/stat\`. The network figures (P3w, P3t, P10, P11, and
the link rows of P15 and P17) put an emulated link between reader and server: a relay
on loopback with a fixed delay each way, one bandwidth cap for all its connections,
and TCP's handshake, slow start and receive window (bench/README.md). Regenerate with \`npm run bench\` (every figure idle and under load:
~80 min here, P13, P18, P3w and P10 the longest; \`npm run bench -- net\` for the network figures alone) or
\`npm run bench:quick\` (smoke); \`node bench/run.js --render-only\` renders this file
from bench/results without running anything. Timed commands run without this
machine's NODE_EXTRA_CA_CERTS, which adds ~50 ms to every Node start-up here
(bench/lib/env.js). Every figure runs twice: idle, then again under load, each
target judged on both (met only when both meet it; a result from before this rule, with no loaded run, says so): the load is one busy process per core,
SHA-256 of a 4 KiB buffer in a loop at the same priority as everything else
(bench/lib/cpu-load.js), started after the idle run and stopped when the loaded run ends; a
section with a loaded run has its columns beside the idle ones. Beside their tables is each reader's CPU (user + system, from the kernel through GNU time: the whole
process, start-up included) per file, per request and per MiB, and the baseline's.`

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
  P12: './peers.js',
  P9: ['./gateway.js', 'runP9'],
  // at a distance: an emulated link between reader and mirror (bench/lib/link.js)
  P3w: './p3w-distance.js',
  P3t: './p3t-first-byte.js',
  P10: './p10-get.js',
  P11: './p11-mirrors.js',
  // P1 with h2load on its own core
  P1h: './p1h-h2load.js',
  // build memory at a million files (several minutes: `npm run bench -- P13`)
  P13: './p13-memory.js',
  // compressed blobs (format version 2) against format 1
  P14: './p14-compression.js',
  // private trees (FORMAT.md §12.8) against the same public trees: read, build, keyring
  P15: './p15-private-read.js',
  P16: './p16-private-build.js',
  P17: './p17-keyring.js',
  P18: './p18-gated.js', // gated trees (FORMAT.md §12.10-12.11): a gated read, the edge's CPU, token requests
  // witnesses (FORMAT.md §13.1): a publish's and a reader's cost, and the proof bundle's log part (§13.2)
  P19: './p19-witness.js'
}
const GROUPS = { net: ['P3w', 'P3t', 'P10', 'P11', 'P1h'], private: ['P15', 'P16', 'P17'] }
// the figures whose readers run from ROTREE_BENCH_CLIENT when it is set (bench/lib/clients.js)
const CLIENT_ENV = new Set(['P3w', 'P3t', 'P10', 'P11', 'P15'])

/** How to run a figure again with the same client: the export of its git ref, then the env. */
function clientPrefix () {
  const dir = process.env.ROTREE_BENCH_CLIENT
  if (!dir) return ''
  let ref = ''
  try { ref = readFileSync(path.join(dir, '.bench-ref'), 'utf8').trim() } catch {}
  return `${ref ? `node bench/lib/clients.js export ${ref} ${dir} && ` : ''}ROTREE_BENCH_CLIENT=${dir} `
}

const args = process.argv.slice(2)
const FLAGS = ['--quick', '--results', '--no-render', '--render-only', '--no-load', '--loaded']
if (args.includes('--help') || args.includes('-h')) {
  process.stdout.write(readFileSync(new URL(import.meta.url), 'utf8').split('\n').slice(1).filter((l, i, all) => all.slice(0, i + 1).every(x => x.startsWith('//'))).map(l => l.replace(/^\/\/ ?/, '')).join('\n') + '\n')
  process.exit(0)
}
const bad = args.find(a => a.startsWith('-') && !FLAGS.includes(a))
if (bad) { console.error(`bench/run.js: unknown option ${bad}; known: ${FLAGS.join(', ')} (--help)`); process.exit(2) }
const quick = args.includes('--quick')
const at = args.indexOf('--results')
const resultsDir = at >= 0 ? path.resolve(args[at + 1]) : RESULTS
// --render-only with --results renders from that folder (e.g. only the committed results and one new run)
const renderAfter = !args.includes('--no-render') && (at < 0 || args.includes('--render-only'))
const only = args.filter((a, i) => !a.startsWith('--') && (at < 0 || i !== at + 1)).flatMap(a => GROUPS[a] ?? [a])
const ids = args.includes('--render-only') ? [] : only.length ? only : Object.keys(FIGURES)
const t0 = Date.now()
for (const id of ids) {
  if (!FIGURES[id]) { console.error(`unknown figure ${id}; known: ${Object.keys(FIGURES).join(', ')}, or ${Object.keys(GROUPS).join(', ')}`); process.exit(2) }
  const t = Date.now()
  process.stderr.write(`${id} … `)
  const [file, fn = 'run'] = [FIGURES[id]].flat()
  // every figure runs twice, idle and then under bench/lib/cpu-load.js: a target holds only when both meet it
  const twice = !args.includes('--no-load')
  let fig
  try {
    fig = await (await import(file))[fn]({ quick })
    if (twice && !fig.skipped) {
      process.stderr.write(`${fig.met === true ? 'met' : fig.met === false ? 'not met' : 'done'} idle; under load … `)
      try {
        const { result, load } = await underLoad(async () => (await import(file))[fn]({ quick, loaded: true }))
        fig = withLoaded(fig, result, load)
      } catch (err) {
        // the idle run stands, but a target met only idle is not met: unjudged
        process.stderr.write(`the loaded run FAILED: ${err.stack ?? err}\n`)
        process.exitCode = 1
        fig.notes = [...fig.notes ?? [], `The run under load (bench/lib/cpu-load.js) failed: ${String(err.message ?? err).slice(0, 300)}`]
        if (fig.met === true) fig.met = null
      }
    }
  } catch (err) {
    // one broken figure does not cost the others their run
    process.stderr.write(`FAILED: ${err.stack ?? err}\n`)
    process.exitCode = 1
    continue
  }
  if (fig.skipped) { process.stderr.write(`skipped: ${fig.skipped}\n`); continue }
  if (CLIENT_ENV.has(id)) fig.command = clientPrefix() + fig.command
  await saveFigure(fig, resultsDir)
  process.stderr.write(`${((Date.now() - t) / 1000).toFixed(0)} s${fig.target ? (fig.met ? ' (target met)' : ' (target NOT met)') : ''}\n`)
  console.log(figureMarkdown(fig).replace(/\n!\[[^\n]*\n/, '') + '\n')
}
await (await import('./lib/netfix.js')).releaseAll() // the network figures share one nginx and tree
if (!renderAfter) {
  if (ids.length) console.error(`done in ${((Date.now() - t0) / 1000).toFixed(0)} s; results in ${path.relative(process.cwd(), resultsDir) || '.'}, docs/BENCHMARKS.md not rendered`)
  process.exit(process.exitCode ?? 0)
}
await render({ dir: resultsDir, intro: INTRO + (quick ? '\n\n**This file was produced by `npm run bench:quick`**: one run per row, short loads, small sizes (P8 uses 16 MB, not 50 MB). Its ratios are indicative; the full `npm run bench` is the measurement of record.' : '') })
console.error(`done in ${((Date.now() - t0) / 1000).toFixed(0)} s; see docs/BENCHMARKS.md`)

// Results: bench/results/<id>.json per figure, rendered into
// docs/BENCHMARKS.md (a table per figure, with the command that made it and
// the baseline from the same run) and docs/bench/<id>.svg (a bar chart).
import fs from 'node:fs/promises'
import path from 'node:path'
import { STANDING_NOTES } from './standing-notes.js'

const ROOT = new URL('../../', import.meta.url).pathname
export const RESULTS = path.join(ROOT, 'bench/results')

/**
 * @typedef {{ label: string, value: number, baseline: number, baselineLabel: string, unit: string,
 *   higherIsBetter?: boolean, note?: string }} Row   ratio = value / baseline
 * @typedef {{ label: string, cpuS: number, files: number, requests: number|null, mib: number }} CpuRow
 *   a reader's user + system CPU seconds for `files` files, `requests` requests and `mib` MiB
 * @typedef {{ id: string, title: string, command: string, target?: string, met?: boolean|null,
 *   rows: Row[], cpu?: { rows: CpuRow[], note: string }, short?: string, notes?: string[], gap?: string,
 *   loaded?: Loaded, idleMet?: boolean|null, machine?: string, date?: string }} Figure
 *   gap: where the target is missed, what the profile says causes it, and what would close it;
 *   short: the judged rows short of the target in this run, in a few words
 * @typedef {{ rows: Row[], raw?: any, met?: boolean|null, cpu?: Figure['cpu'], short?: string,
 *   load: { procs: number, cpuS: number, wallS: number, cores: number }, date: string }} Loaded
 *   the same figure run again under bench/lib/cpu-load.js
 */

/** One figure of an idle run and of a loaded one (bench/lib/cpu-load.js): met only when both are. */
export function withLoaded (idle, loaded, load) {
  const both = [idle.met, loaded.met]
  return {
    ...idle,
    met: both.includes(false) ? false : both.every(m => m === true) ? true : idle.met ?? null,
    idleMet: idle.met,
    loaded: { rows: loaded.rows, raw: loaded.raw, met: loaded.met, cpu: loaded.cpu, short: loaded.short, load, date: new Date().toISOString() }
  }
}

const judged = m => m === true ? 'met' : m === false ? 'not met' : 'not judged'
/** A missed figure's analysis: the idle run's gap, and what missed under load. */
function whyMissed (f) {
  const loaded = f.loaded && f.loaded.met === false && f.loaded.short ? `Under load, short of it: ${f.loaded.short}.` : ''
  const idle = f.gap ?? (f.idleMet !== false && loaded ? '' : 'no analysis recorded for this run.')
  return [idle, loaded].filter(Boolean).join(' ')
}
/** The summary's status: met only when the idle and the loaded run both meet the target. */
function statusOf (f) {
  if (f.loaded) return `${f.met === true ? 'met' : f.met === false ? '**not met**' : 'not judged'} (idle: ${judged(f.idleMet)}; loaded: ${judged(f.loaded.met)})`
  if (f.met === true) return 'met idle; not run under load'
  return f.met === false ? '**not met** (idle; not run under load)' : 'not judged'
}

/** "Idle: met; loaded: not met" for a figure with a loaded run, '' otherwise. */
const runsMet = fig => fig.loaded ? `Idle: ${judged(fig.idleMet)}; under load: ${judged(fig.loaded.met)}. ` : ''

export async function saveFigure (fig, dir = RESULTS) {
  await fs.mkdir(dir, { recursive: true })
  fig.date ??= new Date().toISOString()
  fig.machine ??= await machine()
  await fs.writeFile(path.join(dir, fig.id + '.json'), JSON.stringify(fig, null, 2) + '\n')
}

async function machine () {
  const os = await import('node:os')
  return `${os.cpus().length} × ${os.cpus()[0]?.model?.trim()}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}`
}

const fmt = v => !Number.isFinite(v) ? '—' : Math.abs(v) >= 100 ? Math.round(v).toLocaleString('en-US') : Math.abs(v) >= 10 ? v.toFixed(1) : v.toFixed(2)

export function ratioOf (r) { return r.baseline ? r.value / r.baseline : NaN }
// three significant digits below 1, so a ratio just under a target (0.495 against 0.5) never prints as the target
const fmtRatio = v => Number.isFinite(v) && Math.abs(v) < 1 ? v.toPrecision(3) : fmt(v)

export function figureMarkdown (fig) {
  const lines = [`## ${fig.id}: ${fig.title}`, '']
  if (fig.target) lines.push(`Target: ${fig.target}. ${runsMet(fig)}**${fig.met === true ? 'Met' : fig.met === false ? 'Not met' : 'Not judged'}.**`, '')
  const L = fig.loaded
  const cell = r => r ? `${fmt(r.value)} ${r.unit}` : '—'
  if (L) {
    lines.push('| case | rotree | baseline | ratio | rotree, loaded | baseline, loaded | ratio, loaded |', '|---|---:|---:|---:|---:|---:|---:|')
    for (const r of fig.rows) {
      const l = L.rows.find(x => x.label === r.label)
      lines.push(`| ${r.label} | ${cell(r)} | ${fmt(r.baseline)} ${r.unit} (${r.baselineLabel}) | ${fmtRatio(ratioOf(r))}×${r.note ? ' ' + r.note : ''} | ${cell(l)} | ${l ? `${fmt(l.baseline)} ${l.unit}` : '—'} | ${l ? `${fmtRatio(ratioOf(l))}×${l.note ? ' ' + l.note : ''}` : '—'} |`)
    }
  } else {
    lines.push('| case | rotree | baseline | ratio |', '|---|---:|---:|---:|')
    for (const r of fig.rows) {
      lines.push(`| ${r.label} | ${cell(r)} | ${fmt(r.baseline)} ${r.unit} (${r.baselineLabel}) | ${fmtRatio(ratioOf(r))}×${r.note ? ' ' + r.note : ''} |`)
    }
  }
  lines.push(...cpuMarkdown(fig))
  lines.push('', `![${fig.id}](bench/${fig.id}.svg)`, '', `Command: \`${fig.command}\` (${fig.date?.slice(0, 10)}, ${fig.machine})`)
  if (L) lines.push('', `The loaded columns: the same figure run again right after, with ${L.load.procs} busy processes beside it (bench/lib/cpu-load.js: one per core, SHA-256 in a loop, nice 0), which got ${L.load.cores.toFixed(2)} cores on average over its ${Math.round(L.load.wallS)} s${L.short ? `; short of the target under load: ${L.short}` : ''}. "Idle" is the run without that load, not an idle machine: the load average in the notes below says what else ran (fewer than ${L.load.procs} cores for the load means other work had the rest).${fig.rows.some(r => !L.rows.some(l => l.label === r.label)) ? ' A row with — in the loaded columns is not run under load.' : ''} The chart shows the idle run.`)
  for (const n of [...fig.notes ?? [], ...STANDING_NOTES[fig.id] ?? []]) lines.push('', n)
  return lines.join('\n')
}

const ms = v => Number.isFinite(v) ? `${fmt(v * 1000)} ms` : '—'
/** The reader's CPU beside the figure's table: seconds, per file, per request, per MiB (idle · loaded). */
function cpuMarkdown (fig) {
  if (!fig.cpu?.rows?.length) return []
  const L = fig.loaded?.cpu?.rows
  const both = (r, f) => {
    const l = L?.find(x => x.label === r.label)
    return L ? `${f(r)} · ${l ? f(l) : '—'}` : f(r)
  }
  const per = (k, r) => r[k] ? r.cpuS / r[k] : NaN
  const out = ['', `Reader CPU, user + system${L ? ' (idle · loaded)' : ''}: ${fig.cpu.note}`, '',
    '| reader | files | requests | MiB | CPU | per file | per request | per MiB |', '|---|---:|---:|---:|---:|---:|---:|---:|']
  for (const r of fig.cpu.rows) {
    out.push(`| ${r.label} | ${r.files.toLocaleString('en-US')} | ${r.requests === null ? '—' : Math.round(r.requests).toLocaleString('en-US')} | ${fmt(r.mib)} | ${both(r, x => Number.isFinite(x.cpuS) ? `${fmt(x.cpuS)} s` : '—')} | ${both(r, x => ms(per('files', x)))} | ${both(r, x => ms(per('requests', x)))} | ${both(r, x => ms(per('mib', x)))} |`)
  }
  return out
}

/** A horizontal bar chart: each row's value beside its baseline. */
export function figureSvg (fig) {
  const rowH = 34; const left = 260; const width = 760; const barW = width - left - 90
  const h = 50 + fig.rows.length * rowH + 30
  const max = Math.max(...fig.rows.flatMap(r => [r.value, r.baseline]).filter(Number.isFinite), 1e-9)
  const esc = s => String(s).replace(/[&<>"]/g, c => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c])
  const out = [`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${h}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="10" y="22" font-size="15" font-weight="bold">${esc(fig.id + ': ' + fig.title)}</text>`,
    `<rect x="${left}" y="30" width="12" height="10" fill="#2b6cb0"/><text x="${left + 16}" y="39">rotree</text>`,
    `<rect x="${left + 80}" y="30" width="12" height="10" fill="#a0aec0"/><text x="${left + 96}" y="39">baseline</text>`]
  fig.rows.forEach((r, i) => {
    const y = 50 + i * rowH
    const w = v => Number.isFinite(v) ? Math.max(1, v / max * barW) : 0
    out.push(`<text x="${left - 8}" y="${y + 14}" text-anchor="end">${esc(r.label.slice(0, 40))}</text>`,
      `<rect x="${left}" y="${y}" width="${w(r.value)}" height="12" fill="#2b6cb0"/>`,
      `<text x="${left + w(r.value) + 4}" y="${y + 10}">${esc(fmt(r.value) + ' ' + r.unit)}</text>`,
      `<rect x="${left}" y="${y + 14}" width="${w(r.baseline)}" height="12" fill="#a0aec0"/>`,
      `<text x="${left + w(r.baseline) + 4}" y="${y + 24}">${esc(fmt(r.baseline) + ' (' + fmtRatio(ratioOf(r)) + '×)')}</text>`)
  })
  out.push('</svg>')
  return out.join('\n')
}

/** Rebuild docs/BENCHMARKS.md and the charts from every result file (of bench/results, or of `dir`). */
export async function render ({ intro = '', dir = RESULTS } = {}) {
  const files = (await fs.readdir(dir).catch(() => [])).filter(f => f.endsWith('.json')).sort(byFigure)
  const figs = await Promise.all(files.map(async f => JSON.parse(await fs.readFile(path.join(dir, f), 'utf8'))))
  await fs.mkdir(path.join(ROOT, 'docs/bench'), { recursive: true })
  for (const fig of figs) await fs.writeFile(path.join(ROOT, 'docs/bench', fig.id + '.svg'), figureSvg(fig) + '\n')
  const summary = ['| figure | target | status |', '|---|---|---|',
    ...figs.filter(f => f.target).map(f => `| ${f.id} | ${f.target} | ${statusOf(f)} |`)]
  const missed = figs.filter(f => f.target && f.met === false)
  const gaps = missed.length
    ? ['## Where a target is missed, and why', '',
        ...missed.map(f => `- **${f.id}** (${f.target}): ${runsMet(f)}${whyMissed(f)}`), '']
    : []
  const md = ['# Benchmarks', '', intro, '', ...summary, '', ...gaps, ...figs.map(figureMarkdown).flatMap(s => [s, ''])].join('\n')
  await fs.writeFile(path.join(ROOT, 'docs/BENCHMARKS.md'), md)
  return figs
}

function byFigure (a, b) {
  const k = s => { const m = /^P(\d+)/.exec(s); return m ? Number(m[1]) : 100 }
  return k(a) - k(b) || a.localeCompare(b)
}

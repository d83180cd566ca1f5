#!/usr/bin/env node
// P16: what building a private tree (FORMAT.md §12.8) costs the publisher,
// against a public build of the same folder in the same run:
//   - the build's speed: `rotree build SRC OUT --key K --private --reader age1…`
//     against `rotree build SRC OUT --key K` (target ≥ 0.8× its speed), each a
//     new Node process into a new OUT, --no-fsync as in P6 (flushing measures
//     the disk, not the builder), GNU time giving each run's CPU;
//   - the published size, the bytes under OUT/h/ (target ≤ 1.15× the public
//     tree's): a private blob is padded to a padmé size and carries a 16-byte
//     tag; the keyring and the manifest are blobs of their own.
// Trees: P6's (bench/p6-trees.js): 10,000 small files and one large file of
// pseudo-random bytes; and /usr/share/doc as it is, with --skip-bad (a real
// tree: text that compresses, small files inlined in their pages).
// No OUT is deleted until the end (bench/build.js says why: ext4 and
// recently freed inodes).
//
//   node bench/p16-private-build.js [--quick]    prints the figure (or: npm run bench -- P16)
import './lib/env.js' // first: the environment the timed builds inherit
import fs from 'node:fs/promises'
import path from 'node:path'
import os from 'node:os'
import { existsSync } from 'node:fs'
import { execFileSync } from 'node:child_process'
import { pathToFileURL } from 'node:url'
import { generateX25519Identity, identityToRecipient } from 'age-encryption'
import { median } from './lib/proc.js'
import { smallTree, bigFile } from './p6-trees.js'
import { timedRun } from './build.js'
import { folderBytes, KNOWN_KEYLESS, KEYLESS_WHY } from './p15-private-read.js'
import { runContext } from './lib/netfix.js'

export const id = 'P16'
const BIN = new URL('../bin/rotree.js', import.meta.url).pathname
const SPEED_TARGET = 0.8
const SIZE_TARGET = 1.15

/** Where a private build's extra time goes (the profiles of 2026-12-07), with this run's CPU per case. */
const WHY_SLOWER = raw => `A private build does more CPU work than the public one, and on these 2 shared cores the wall clock follows the CPU (this run, CPU of each build, median: ${Object.values(raw).filter(r => !r.failed).map(r => `${r.label} ${(r.cpuMs.priv / 1000).toFixed(2)} s against ${(r.cpuMs.pub / 1000).toFixed(2)} s, ${(r.cpuMs.pub / r.cpuMs.priv).toFixed(2)}×`).join('; ')}). Where it goes (perf record at 999 Hz of one build of ${'/usr/share/doc'} each, --jobs 0, 2026-12-07, load average ~11 from other jobs: 2,894 against 2,223 samples, +0.67 s of CPU): V8 compiling and parsing the private path's modules +0.15 s (age-encryption, @noble's ciphers and curves: a fixed cost per build, which weighs most on small trees), SHA-256 and AES-GCM +0.12 s (AES-GCM itself 0.02 s; each blob's key needs a SHA-256 of its inner bytes besides the hash of what is stored), the kernel +0.18 s (0.06 s of it ext4's recently_deleted, from the folders removed before each profiled build) and other native code +0.15 s (reading h/ back, allocation), the interpreter +0.09 s and zlib +0.03 s. One step of it is gone since: before it signed, a private build listed the blobs of its manifest by walking the new root back from OUT/h (reading, hashing, decrypting, inflating and decoding every directory page and chunk index it had just written: 0.16-0.25 s of CPU for the 10,000-file tree of 20 per directory, 30 MB of pages, and 0.22-0.40 s for ${'/usr/share/doc'}); the build's walk now collects them as it stores or finds them (builder/encode-dir.js), and in alternated runs (2026-12-07) a private build of P6's 10,000 files took 0.80-0.88 s against 0.92-1.13 s before, /usr/share/doc 1.24-1.36 s against 1.57-1.97 s. What is left is the private path's own work: compiling its modules, AES-GCM, and a second SHA-256 per blob for its key.`

function rotreeBuild (src, out, key, { reader = null, skipBad = false, cpuFile }) {
  const args = [BIN, 'build', src, out, '--key', key, '--json', '--no-fsync']
  if (reader) args.push('--private', '--reader', reader)
  if (skipBad) args.push('--skip-bad')
  const r = timedRun(process.execPath, args, cpuFile)
  return { ms: r.ms, cpuMs: r.cpuMs, result: JSON.parse(r.stdout) }
}

export async function run ({ quick = false } = {}) {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'rotree-bench-p16-'))
  const cpuFile = path.join(dir, 'cpu')
  const reps = quick ? 1 : 3
  const bigBytes = (quick ? 64 : 256) * 2 ** 20
  const doc = '/usr/share/doc'
  try {
    const key = path.join(dir, 'k')
    execFileSync(process.execPath, [BIN, 'keygen', key], { stdio: 'ignore' })
    const reader = await identityToRecipient(await generateX25519Identity())
    const cases = [
      { name: 'small10k', label: '10,000 small files (P6\'s, 100 per directory)', make: src => smallTree(src, 10_000, { salt: 12 }) },
      // the same generator with directories small enough for one page each (< PAGE_MIN, 128 KiB)
      { name: 'small10k20', label: '10,000 small files, 20 per directory', make: src => smallTree(src, 10_000, { salt: 14, perDir: 20 }) },
      { name: 'big', label: `one ${bigBytes >> 20} MiB file`, make: src => bigFile(src, bigBytes) },
      ...(existsSync(doc) ? [{ name: 'doc', label: `${doc} (--skip-bad)`, src: doc, skipBad: true }] : [])
    ]
    const rows = []; const raw = {}; const judged = []
    for (const c of cases) {
      let src = c.src
      if (!src) { src = path.join(dir, c.name); await fs.mkdir(src, { recursive: true }); c.make(src) }
      // warm the page cache for both: read every file once
      execFileSync('sh', ['-c', `find '${src}' -type f -print0 | xargs -0 cat > /dev/null 2>&1 || true`])
      const runs = { pub: [], priv: [] }
      let failed = null
      for (let i = 0; i < reps && !failed; i++) {
        // alternate which goes first
        for (const which of i % 2 ? ['priv', 'pub'] : ['pub', 'priv']) {
          const out = path.join(dir, `${c.name}-${which}-${i}`)
          let b
          try {
            b = rotreeBuild(src, out, key, { reader: which === 'priv' ? reader : null, skipBad: c.skipBad, cpuFile })
          } catch (err) {
            // a build this checkout cannot do: the row says so, and the figure is not met
            const line = String(err.message).split('\n').filter(l => /ROTREE_/.test(l)).pop()
            failed = { which, error: line ? line.slice(line.indexOf('ROTREE_')).trim() : String(err.message).slice(0, 300) }
            break
          }
          runs[which].push({ ms: b.ms, cpuMs: b.cpuMs, out, files: b.result.files, bytes: b.result.bytes, written: b.result.blobs?.written ?? null })
        }
      }
      if (failed) {
        const note = `(the ${failed.which === 'priv' ? 'private' : 'public'} build failed: ${failed.error})`
        rows.push({ label: `${c.label}: build, MB/s of input`, value: NaN, baseline: NaN, baselineLabel: 'the same public build', unit: 'MB/s', note })
        judged.push({ label: `${c.label}: build`, ok: false, ratio: NaN, target: 'a build', failed: note })
        raw[c.name] = { label: c.label, failed }
        process.stderr.write(`P16: ${c.label}: ${note}\n`)
        continue
      }
      const last = w => runs[w].at(-1).out
      const size = { pub: await folderBytes(path.join(last('pub'), 'h')), priv: await folderBytes(path.join(last('priv'), 'h')) }
      const ms = w => median(runs[w].map(r => r.ms)); const cpu = w => median(runs[w].map(r => r.cpuMs))
      const bytes = runs.pub[0].bytes
      const mbps = w => bytes / 1e6 / (ms(w) / 1000)
      rows.push({ label: `${c.label}: build, MB/s of input`, value: mbps('priv'), baseline: mbps('pub'), baselineLabel: 'the same public build', unit: 'MB/s' })
      rows.push({ label: `${c.label}: published h/`, value: size.priv.bytes / 1e6, baseline: size.pub.bytes / 1e6, baselineLabel: 'the public tree\'s h/', unit: 'MB', higherIsBetter: false, note: `(${size.priv.files.toLocaleString('en-US')} blobs against ${size.pub.files.toLocaleString('en-US')})` })
      judged.push({ label: `${c.label}: build speed`, ok: mbps('priv') / mbps('pub') >= SPEED_TARGET, ratio: mbps('priv') / mbps('pub'), target: `≥ ${SPEED_TARGET}×` })
      judged.push({ label: `${c.label}: published size`, ok: size.priv.bytes / size.pub.bytes <= SIZE_TARGET, ratio: size.priv.bytes / size.pub.bytes, target: `≤ ${SIZE_TARGET}×` })
      raw[c.name] = { label: c.label, files: runs.pub[0].files, bytes, runs: Object.fromEntries(Object.entries(runs).map(([w, rs]) => [w, rs.map(({ out, ...r }) => r)])), size, cpuMs: { pub: cpu('pub'), priv: cpu('priv') } }
      process.stderr.write(`P16: ${c.label}: ${runs.pub[0].files} files, ${(bytes / 1e6).toFixed(0)} MB; public ${ms('pub').toFixed(0)} ms (${(cpu('pub') / 1000).toFixed(1)} s CPU), private ${ms('priv').toFixed(0)} ms (${(cpu('priv') / 1000).toFixed(1)} s CPU); h/ ${(size.pub.bytes / 1e6).toFixed(1)} → ${(size.priv.bytes / 1e6).toFixed(1)} MB\n`)
    }
    const short = judged.filter(j => !j.ok)
    const cpuLine = Object.values(raw).filter(r => !r.failed).map(r => `${r.label} ${(r.cpuMs.priv / 1000).toFixed(2)} s against ${(r.cpuMs.pub / 1000).toFixed(2)} s`).join('; ')
    return {
      id,
      title: 'private build against a public build of the same tree',
      command: `npm run bench${quick ? ':quick' : ''} -- P16`,
      target: `a private build runs at ≥ ${SPEED_TARGET}× a public build of the same tree; its published size (h/) ≤ ${SIZE_TARGET}× the public tree's`,
      met: short.length === 0,
      rows,
      raw,
      notes: [
        `Each build is \`rotree build SRC OUT --key K --json --no-fsync\` as a user runs it (a new Node process, start-up included), the private one with \`--private --reader age1…\` (one reader), into a new OUT, the median of ${reps} of each, alternated, the page cache warm for both. Format 2 (the default) for both: blobs deflated where that pays, files up to 16 KiB inside their directory page (FORMAT.md §12.6); the private tree also seals every blob (AES-256-GCM under a key derived from the tree's secret and the blob's hash, padded to a padmé size, FORMAT.md §12.8) and publishes a keyring and a manifest. CPU of each build (GNU time, user + system, median): ${cpuLine}.`,
        'Published size: the bytes of every file under OUT/h/ (what a mirror serves besides fsinfo.json and the history), the ratio private over public; lower is better.',
        runContext()
      ],
      gap: short.length ? `Short of the target in this run: ${short.map(j => j.failed ? `${j.label} ${j.failed}` : `${j.label} (${j.ratio.toFixed(3)}×, target ${j.target})`).join('; ')}.${short.some(j => j.failed && KNOWN_KEYLESS.test(j.failed)) ? ' Why the private builds fail: ' + KEYLESS_WHY : ''}${short.some(j => !j.failed) ? ' ' + WHY_SLOWER(raw) : ''}` : undefined
    }
  } finally {
    await fs.rm(dir, { recursive: true, force: true })
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const fig = await run({ quick: process.argv.includes('--quick') })
  const { figureMarkdown } = await import('./lib/report.js')
  console.log(figureMarkdown(fig))
  console.log(JSON.stringify(fig.raw))
}

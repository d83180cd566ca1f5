// P10: a whole tree at a distance. `rotree get` of /usr/share/doc (thousands
// of small files: directory pages, inline files and chunk blobs) through an
// emulated link at 1 Gbit/s and RTT 50 ms, against curl fetching one tar of
// the same files from the same nginx over the same link, in the same run; and
// against curl piped into `tar -x`, which also writes the files. Over the
// HTTP/1.1 link also `wget -r` through `rotree gateway` (its directory
// read-ahead on, and off), the way a plain HTTP client mirrors the tree, and
// `cp -r` out of a davfs2 mount of it (when this machine can mount one).
// P10_FORMAT=1 builds the tree in format 1 instead of the default (format 2),
// for a same-session comparison of the two formats' request counts.
import fs from 'node:fs/promises'
import path from 'node:path'
import { execFileSync } from 'node:child_process'
import { missing, skipped } from './lib/need.js'
import { startNginxTree, makeCert } from './lib/nginx.js'
import { linkTo, PROTOCOLS, FORCED_H2, runContext, wireSummary, relayNote, tmpdir } from './lib/netfix.js'
import { rotreeGet, curl, wgetThroughGateway, davfsCopyThroughGateway, countFiles, cpuSecondsOf, cpuNote } from './lib/clients.js'
import { davfsMissing } from '../test/helpers/davfs.js'
import { fmtRate } from './lib/link.js'
import { median } from './lib/proc.js'

export const id = 'P10'
const TARGET = 1.3
const CPU_PER_FILE_MS = 0.3 // rotree get's user CPU per file of the tree, median of the runs
const LINK = { rttMs: 50, mbit: 1000 }
const ROOT = new URL('../', import.meta.url).pathname
const BIN = path.join(ROOT, 'bin/rotree.js')
const DOC = '/usr/share/doc'

/** A part of /usr/share/doc of about `bytes` (whole package folders, in name order), copied under dest. */
async function docSubset (dest, bytes) {
  await fs.mkdir(dest, { recursive: true })
  let n = 0
  for (const name of (await fs.readdir(DOC)).sort()) {
    if (n >= bytes) break
    const sz = Number(execFileSync('du', ['-sb', path.join(DOC, name)]).toString().split('\t')[0])
    execFileSync('cp', ['-a', path.join(DOC, name), dest])
    n += sz
  }
}

async function treeStats (dir) {
  let files = 0; let bytes = 0; let dirs = 1
  for (const e of await fs.readdir(dir, { withFileTypes: true, recursive: true })) {
    if (e.isDirectory()) dirs++
    if (!e.isFile()) continue
    files++; bytes += (await fs.lstat(path.join(e.parentPath ?? e.path, e.name))).size
  }
  return { files, bytes, dirs }
}

/** rotree get's user CPU per file of the tree, in ms: the median of a protocol's runs. */
const userMsPerFile = (r, src0) => median(r.cpu.runs.get.map(x => x.userS)) * 1000 / src0.files

/** The median of runs' user + system CPU seconds (GNU time, bench/lib/clients.js). */
function cpuMedian (runs) {
  const v = runs.map(r => cpuSecondsOf(r.cpu)).filter(Number.isFinite)
  return v.length ? median(v) : NaN
}

/**
 * The HTTPS mirror offers h2: curl takes it, rotree's reader HTTP/1.1 over
 * TLS (its default); the informative row has the reader take h2 (--http2).
 */
function h2Note (raw, src0) {
  const h1 = raw.find(r => r.protocol === PROTOCOLS[1].name); const h2 = raw.find(r => r.informative)
  if (!h1 || !h2) return []
  return [`The HTTPS rows: nginx offers h2 and http/1.1 by ALPN; curl takes h2 (\`--http2\`), \`rotree get\` its default, HTTP/1.1 over TLS, pipelined as over plain HTTP (client-js/src/net/transport-node.js says why). The informative row tells it to take h2 (\`--http2\`): ${(h2.getMs / 1000).toFixed(2)} s and ${userMsPerFile(h2, src0).toFixed(2)} ms of user CPU per file, against ${(h1.getMs / 1000).toFixed(2)} s and ${userMsPerFile(h1, src0).toFixed(2)} ms over HTTP/1.1 on the same mirror in this run.`]
}

/** The figure's CPU table: per protocol, rotree get, curl and curl | tar -x over the same files and bytes (report.js renders it). */
function cpuTable (raw, src0) {
  const mib = src0.bytes / 2 ** 20
  return {
    rows: raw.flatMap(r => [
      { label: `${r.protocol}: \`rotree get\``, cpuS: r.cpu.getS, files: src0.files, requests: r.wire?.requests ?? null, mib },
      { label: `${r.protocol}: curl of one tar, to /dev/null`, cpuS: r.cpu.curlS, files: src0.files, requests: 1, mib },
      { label: `${r.protocol}: curl \\| tar -x`, cpuS: r.cpu.curlTarS, files: src0.files, requests: 1, mib }
    ]),
    note: 'of the whole process, from the kernel (GNU time: every thread, start-up included; for `curl | tar -x` the shell, curl and tar), the median over the runs of each row (every run\'s in the raw results, raw.protocols[].cpu). Files and MiB are the tree\'s (its regular files and their bytes) for every reader, curl to /dev/null included, which writes none; requests: nginx\'s log of the first get of each protocol, one GET for curl.'
  }
}

// loaded: the run under bench/lib/cpu-load.js (bench/run.js), which skips the
// wget and davfs2 rows: informative, not judged, and under load each runs to
// its time limit (the loaded run of 2026-12-07 spent ~10 of its 18 minutes there)
export async function run ({ quick = false, loaded = false } = {}) {
  const miss = missing('nginx', 'curl', 'tar', 'openssl')
  if (miss) return skipped(id, miss)
  if (!(await fs.stat(DOC).catch(() => null))) return skipped(id, `${DOC} not found`)
  const limitS = quick ? 30 : 100
  const reps = quick ? 1 : 5 // runs of each row, alternated; the median is shown
  // HTTP/1.1, HTTPS (nginx offers h2: curl takes it, rotree takes HTTP/1.1
  // over TLS), and informative, the same with rotree told to take h2
  const protocols = quick ? PROTOCOLS.slice(0, 1) : [...PROTOCOLS, FORCED_H2]
  const dir = await tmpdir('rotree-bench-p10-')
  const rotree = args => execFileSync(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 << 20 }).toString()
  let src = DOC
  if (quick) { src = path.join(dir, 'src', 'doc'); await docSubset(src, 8e6) }
  const out = path.join(dir, 'out'); const plainDir = path.join(dir, 'plain'); const key = path.join(dir, 'publisher.key')
  await fs.mkdir(plainDir)
  rotree(['keygen', key])
  rotree(['build', src, out, '--key', key, '--no-fsync', '--skip-bad', ...(process.env.P10_FORMAT ? ['--format', process.env.P10_FORMAT] : [])])
  execFileSync('tar', ['-cf', path.join(plainDir, 'doc.tar'), '-C', path.dirname(src), path.basename(src)])
  const tarBytes = (await fs.stat(path.join(plainDir, 'doc.tar'))).size
  const names = (await fs.readdir(path.join(out, 'h'))).filter(n => /^[0-9a-f]{64}$/.test(n))
  const blobs = names.length
  let blobBytes = 0
  for (const n of names) blobBytes += (await fs.stat(path.join(out, 'h', n))).size
  const format = JSON.parse(await fs.readFile(path.join(out, 'fsinfo.json'), 'utf8')).version ?? 1
  const src0 = await treeStats(src)
  const cert = await makeCert(path.join(dir, 'tls'))
  const nginx = await startNginxTree(out, { tls: cert, plain: { '/plain/': plainDir } })
  const pubkey = JSON.parse(await fs.readFile(key, 'utf8')).publicKey
  const rows = []; const raw = []; const relay = []; let wget = null
  try {
    for (const p of protocols) {
      const link = await linkTo({ nginx, tls: p.tls, ...LINK })
      const ca = p.tls ? cert.cert : null
      try {
        const cs = []; const cts = []; const gs = []; const files = []; let wire = null
        for (let i = 0; i < reps; i++) {
          // the files written so far (the build, the tar, earlier runs) reach the disk before a run, not during it
          execFileSync('sync')
          cs.push(await curl({ url: link.origin + 'plain/doc.tar', http2: p.http2, cacert: ca, limitS }))
          // new folders for each run, nothing deleted until the end (see the note on recently deleted inodes)
          const run = `${p.name.replace(/\W+/g, '')}-${i}`
          const dest = path.join(dir, `get-${run}`); const untar = path.join(dir, `untar-${run}`)
          await fs.mkdir(untar)
          execFileSync('sync')
          cts.push(await curl({ url: link.origin + 'plain/doc.tar', http2: p.http2, cacert: ca, limitS, pipe: `tar -x -C '${untar}'` }))
          execFileSync('sync')
          const mark = await nginx.logMark()
          const g = await rotreeGet({ addr: `${link.origin}#${pubkey}`, dest, ca, limitS, stateDir: path.join(dir, 'state'), flags: p.readerFlags })
          wire ??= await nginx.logSince(mark)
          gs.push(g)
          files.push(g.truncated ? null : countFiles(dest)) // every file there?
        }
        const truncated = gs.some(g => g.truncated)
        const got = files.includes(null) ? null : Math.min(...files)
        const short = got !== null && got !== src0.files ? `(wrote ${got} of ${src0.files} files)` : ''
        const cut = [truncated ? `(stopped at the ${limitS} s limit)` : short, p.informative ? '(informative: not judged)' : ''].filter(Boolean).join(' ')
        const getMs = median(gs.map(g => g.ms)); const curlMs = median(cs.map(c => c.ms)); const curlTarMs = median(cts.map(c => c.wallMs))
        rows.push({ label: `${p.name}: \`rotree get\` vs curl of one tar`, value: getMs / 1000, baseline: curlMs / 1000, baselineLabel: `curl, one tar, HTTP/${cs[0].httpVersion}, to /dev/null`, unit: 's', higherIsBetter: false, note: cut })
        rows.push({ label: `${p.name}: \`rotree get\` vs curl \\| tar -x`, value: getMs / 1000, baseline: curlTarMs / 1000, baselineLabel: 'curl piped into tar -x (writes the files)', unit: 's', higherIsBetter: false, note: cut })
        const cpu = { getS: cpuMedian(gs), curlS: cpuMedian(cs), curlTarS: cpuMedian(cts), runs: { get: gs.map(g => g.cpu), curl: cs.map(c => c.cpu), curlTar: cts.map(c => c.cpu) } }
        raw.push({ protocol: p.name, informative: !!p.informative, getMs, truncated, files: got, curlMs, curlTarMs, runs: { getMs: gs.map(g => g.ms), curlMs: cs.map(c => c.ms), curlTarMs: cts.map(c => c.wallMs) }, cpu, wire })
        relay.push(await link.stats())
      } finally { await link.stop() }
    }
    // a plain client through the gateway, after every get row (its thousands
    // of files must not share the disk with them): one listing or file at a
    // time, over the HTTP/1.1 link (informative, not judged)
    const h1 = raw.find(r => r.protocol === PROTOCOLS[0].name)
    if (h1 && !missing('wget') && !loaded) {
      const link = await linkTo({ nginx, tls: false, ...LINK })
      try {
        const addr = `${link.origin}#${pubkey}`
        const w = { on: [], off: [], local: [] }
        for (let i = 0; i < (quick ? 1 : 2); i++) {
          execFileSync('sync')
          w.on.push(await wgetThroughGateway({ addr, dir, dest: path.join(dir, `wget-on-${i}`), limitS: 120 }))
        }
        if (!quick) {
          execFileSync('sync')
          w.off.push(await wgetThroughGateway({ addr, dir, dest: path.join(dir, 'wget-off'), extra: ['--no-prefetch'], limitS: 200 }))
          // wget's own pace: the same, with the mirror on loopback (no link)
          execFileSync('sync')
          w.local.push(await wgetThroughGateway({ addr: `http://127.0.0.1:${nginx.port}/#${pubkey}`, dir, dest: path.join(dir, 'wget-local'), limitS: 120 }))
        }
        const wcut = ws => ws.some(r => r.truncated) ? '(stopped at the time limit)' : ''
        for (const [k, label] of [['on', 'directory read-ahead on (the default)'], ['off', '--no-prefetch']]) {
          if (w[k].length === 0) continue
          rows.push({ label: `${h1.protocol}: wget -r through \`rotree gateway\`, ${label}`, value: median(w[k].map(r => r.ms)) / 1000, baseline: h1.curlMs / 1000, baselineLabel: 'curl, one tar, HTTP/1.1, to /dev/null', unit: 's', higherIsBetter: false, note: wcut(w[k]) })
        }
        wget = { curlMs: h1.curlMs, ...w }
        // a file manager's copy over WebDAV: cp -r out of a davfs2 mount, depth-first in davfs2's order
        const whyNotDav = quick ? 'not in the quick run' : davfsMissing()
        if (!whyNotDav) {
          const d = { on: [], off: [], local: [] }
          for (const [k, a, extra] of [['on', addr, []], ['off', addr, ['--no-prefetch']], ['local', `http://127.0.0.1:${nginx.port}/#${pubkey}`, []]]) {
            execFileSync('sync')
            d[k].push(await davfsCopyThroughGateway({ addr: a, dest: path.join(dir, `dav-${k}`), extra, limitS: 200 }))
          }
          for (const [k, label] of [['on', 'directory read-ahead on (the default)'], ['off', '--no-prefetch']]) {
            rows.push({ label: `${h1.protocol}: cp -r out of a davfs2 mount of \`rotree gateway\`, ${label}`, value: d[k][0].ms / 1000, baseline: h1.curlMs / 1000, baselineLabel: 'curl, one tar, HTTP/1.1, to /dev/null', unit: 's', higherIsBetter: false, note: wcut(d[k]) })
          }
          wget.davfs = d
        } else wget.davfs = { skipped: whyNotDav }
      } finally { await link.stop() }
    }
  } finally {
    await nginx.stop()
    await fs.rm(dir, { recursive: true, force: true })
  }
  const judged = raw.filter(r => !r.informative) // rotree's own choice of protocol on each mirror
  const worst = Math.max(...judged.map(r => r.getMs / r.curlMs)) // the target is rotree get's rows
  const cpuOk = judged.every(r => r.cpu?.runs?.get?.length && userMsPerFile(r, src0) <= CPU_PER_FILE_MS)
  const r0 = raw[0]
  const rttsOf = ms => ms / LINK.rttMs
  return {
    id,
    title: `\`rotree get\` of ${quick ? 'part of ' : ''}${DOC} at ${fmtRate(LINK.mbit)}, RTT ${LINK.rttMs} ms`,
    command: `npm run bench${quick ? ':quick' : ''} -- P10`,
    target: `≤ ${TARGET}× the time of curl fetching one tar of the same files; rotree get's user CPU ≤ ${CPU_PER_FILE_MS} ms per file`,
    met: judged.every(r => !r.truncated && r.files === src0.files) && worst <= TARGET && cpuOk,
    short: judged.filter(r => r.truncated || r.files !== src0.files || r.getMs / r.curlMs > TARGET || !(userMsPerFile(r, src0) <= CPU_PER_FILE_MS)).map(r => `${r.protocol} (${(r.getMs / r.curlMs).toFixed(2)}× of curl, ${userMsPerFile(r, src0).toFixed(2)} ms of user CPU per file${r.truncated ? ', stopped at the limit' : r.files !== src0.files ? `, ${r.files} of ${src0.files} files` : ''})`).join('; '),
    rows,
    cpu: cpuTable(raw, src0),
    raw: { protocols: raw, wget },
    notes: [
      `${quick ? 'One run per row' : 'The median of 5 runs per row, alternated (each run\'s times in the raw results)'}. The tree: ${src0.files.toLocaleString('en-US')} files in ${src0.dirs.toLocaleString('en-US')} directories, ${(src0.bytes / 1e6).toFixed(0)} MB (\`rotree build --skip-bad\` of ${quick ? `a ~8 MB part of ${DOC}` : DOC}, format ${format}), ${blobs.toLocaleString('en-US')} blobs of ${(blobBytes / 1e6).toFixed(0)} MB${format === 2 ? ' (compressed where it pays)' : ''}; the tar of the same folder is ${(tarBytes / 1e6).toFixed(0)} MB. Both are served by one nginx from \`rotree nginx-config\` (the tar from a location the bench adds) through bench/lib/link.js at ${fmtRate(LINK.mbit)}, RTT ${LINK.rttMs} ms, TCP windows as in P3w. \`rotree get\` (default --jobs) writes every file, symlink, mode and mtime, and includes Node's start-up; curl's time is its own time_total.`,
      'Each run writes into new folders, after a sync (so no run shares the disk with the writeback of the files written before it), and nothing is deleted until the figure ends: ext4 without a journal (this machine\'s root file system) skips, at every file it creates, each inode deleted in the last minute or more (recently_deleted() in fs/ext4/ialloc.c), so files created right after thousands were deleted cost several times more kernel time, for `tar -x` and `rotree get` alike (2026-11-27: `tar -x` of /usr/share/doc took 0.18 s of system time on a quiet file system, 0.76 s two seconds after a `rm -rf` of two copies of it, and 0.46 s in the next run).',
      ...(wget ? [`The wget rows (HTTP/1.1 only; informative, not judged): \`wget -r -np\` of the tree through a \`rotree gateway\` started for each run on loopback beside wget, with a disk cache in a new folder (the default setup) and this figure's nginx behind the link as its mirror. wget asks for one listing or file at a time, and saves every listing as index.html besides the files (${wget.on.map(r => r.files.toLocaleString('en-US')).join(', ')} files written). With the gateway's directory read-ahead (docs/GATEWAY.md: after a listing, the directory's small files and the next directories are fetched before the client asks) it took ${wget.on.map(r => (r.ms / 1000).toFixed(1) + ' s').join(', ')}${wget.off.length ? `; without it (\`--no-prefetch\`), where every directory page and file blob wget reaches costs a round trip to the mirror in sequence, ${wget.off.map(r => (r.ms / 1000).toFixed(1) + ' s').join(', ')}` : ''}${wget.local.length ? `. What is left is mostly wget's own pace, one request at a time: through a gateway whose mirror is on loopback (no link) the same \`wget -r\` took ${wget.local.map(r => (r.ms / 1000).toFixed(1) + ' s').join(', ')}` : ''}.`] : []),
      ...(wget?.davfs?.on ? [`The davfs2 rows: \`mount -t davfs\` of such a gateway (read-only, davfs2's own cache new each run), then \`cp -r\` of the whole mount: a file manager's copy over WebDAV, depth-first, one PROPFIND or GET at a time, in davfs2's order of the entries rather than the listing's (${wget.davfs.on[0].files.toLocaleString('en-US')} files written). It took ${(wget.davfs.on[0].ms / 1000).toFixed(1)} s with the read-ahead, ${(wget.davfs.off[0].ms / 1000).toFixed(1)} s without it, and ${(wget.davfs.local[0].ms / 1000).toFixed(1)} s through a gateway whose mirror is on loopback (davfs2's own pace). One run each.`] : wget?.davfs?.skipped ? [`No davfs2 rows: ${wget.davfs.skipped}.`] : []),
      'What `rotree get` put on the wire: ' + raw.map(r => `${r.protocol}: ${wireSummary(r.wire)}`).join('; ') + '.',
      ...h2Note(raw, src0),
      relayNote(relay),
      ...[cpuNote()].filter(Boolean),
      runContext()
    ],
    gap: `\`rotree get\` made ${r0.wire.requests.toLocaleString('en-US')} requests (${blobs.toLocaleString('en-US')} blobs in the tree) in ${Math.round(rttsOf(r0.getMs)).toLocaleString('en-US')} RTTs, ${(r0.wire.requests / rttsOf(r0.getMs)).toFixed(1)} requests per RTT, where curl's tar is one request on one connection. ` +
      'Format 2 carries files of up to 16 KiB inside their directory pages (FORMAT.md §11.2): for this tree 1,555 blobs against format 1\'s 2,379, and in one session (2026-11-27, `P10_FORMAT=1`) the HTTP/1.1 get took 4.22 s in format 2 against 4.99 s in format 1. ' +
      'Three runs of this figure within the hour (2026-11-27, the same client but for the threshold of its writing thread) gave 2.19×, 2.44× and 2.68× of curl over HTTP/1.1 and 2.48×, 2.36× and 2.58× over HTTPS + HTTP/2, with curl | tar -x itself between 1.50 and 1.80 s: the machine moves this figure by ±10%, more than the client\'s last changes did; so did four runs on 2026-11-28 within an hour with the same client: 1.95×, 1.63×, 1.86× and 1.72× over HTTP/1.1, 2.41×, 2.04×, 2.50× and 2.04× over HTTPS + HTTP/2 (the first right after P3w, with 22,000 files of its wget rows written between its two protocols; the third a minute after 12,000 files were deleted; the last is the one shown). ' +
      `\`rotree get\` asks for up to 128 requests at once per mirror (since 2026-11-28; 64, the library's default, before), pipelined over HTTP/1.1 on 8 connections with up to 16 answers outstanding on each, and lists up to 128 directories ahead of its walk (48 before); ${r0.wire.requests.toLocaleString('en-US')} requests at 128 per round trip need at least ${(r0.wire.requests / 128 * LINK.rttMs / 1000).toFixed(1)} s whatever the bytes. Both together, alternated with the client before them (2026-11-28, a loopback nginx behind this figure's link): HTTP/1.1 2.40-2.51 s against 2.65-2.80 s (5 runs each), and 2.35-2.54 s against 2.60-2.84 s in a second set; HTTPS + HTTP/2 2.69-2.96 s against 3.03-3.16 s. In this figure's own harness, the client before them (4356db5) and this one five minutes apart (2026-11-28): HTTP/1.1 2.69-2.83 s (median 2.79) against 2.42-2.69 s (median 2.60), HTTPS + HTTP/2 3.31-4.13 s (median 3.71) against 2.93-3.36 s (median 3.12). Either alone did nothing (128 requests with 48 listings: 2.65-2.80 s against 2.66-2.72 s), and 256 of each was within the noise of 128 (2.35-2.45 s). A timeline in 100 ms rows shows why: with 48 listings out, the 827 directory pages came back ~55 per 100 ms and were not all in until 1.9 s of the 2.7 s; with 128 they are in by ~1.0 s, and file data is the rest. Pipelining itself (2026-11-27) did not change this figure beyond the noise. ` +
      `The rest is CPU, on 2 cores shared with nginx and the relay: writing ${src0.files.toLocaleString('en-US')} files, which curl to /dev/null never does (\`curl | tar -x\` of the same tree took ${(r0.curlTarMs / 1000).toFixed(2)} s against curl's ${(r0.curlMs / 1000).toFixed(2)} s, the second row), and verifying, decoding and writing what ${r0.wire.requests.toLocaleString('en-US')} responses carry. Until 2026-11-27 the get's main thread, which receives, hashes and decodes every blob and so paces the download, was busy 92-98% of a loopback get's wall time, and half of that in the kernel writing the small files (1.14-1.41 s of its 2.6-3.0 s of CPU, from /proc/self/task). In a download of 1,024 entries or more, files are now written and renamed on a thread of their own (cli/get-writer.js; the same confinement steps, every placement in a directory on one thread) and blobs of 32 KiB or more inflate on libuv's pool: the main thread's system time fell to 0.5-0.6 s, and in runs of this figure alternated with the client before (same session), HTTP/1.1 took 3.68-4.20 s (median 3.97) against 3.63-4.80 s (median 4.49), HTTPS + HTTP/2 3.93-5.38 s (median 4.40) against 4.02-5.30 s (median 5.07). A timeline of the get at this RTT (2026-11-27, after that) has its requests in flight at the cap of 64 and its main thread's event-loop utilisation at 0.95-1.0 for most of the read, both cores busy: 128 requests in flight (16 answers per connection) took 3.01-3.54 s against 2.96-3.14 s with 64 (in-process, three runs alternated): with 48 listings ahead, more requests found no more to ask for (above: the two together help). ` +
      'With those, the get\'s main thread (event-loop utilisation 0.9-1.0 from the first pages to the end) spends its busy time on many things, none of them most (inclusive, one CPU profile, 2026-11-28): SHA-256 ~200 ms, inflating ~160 ms, the scheduler and writing requests ~250 ms (mostly the send system call, which on loopback also runs the relay\'s side of TCP), garbage collection ~210 ms, listing and decoding directory pages ~180 ms, the walk and its small files ~270 ms. Taking work off it did not shorten the get: each directory\'s mkdir made on the writing thread instead (~170 ms of the main thread) gave 2.28-2.65 s against 2.30-2.61 s (8 runs each, alternated), and the requests of one turn of the event loop written together (writev: 463 send calls instead of 1,067) gave 2.71-2.97 s against 2.71-2.92 s; neither was kept. Nor did taking SHA-256 out altogether (an experiment, not a reader: no data chunk or whole file hashed) shorten it, 2.31-2.77 s against 2.43-2.77 s (6 runs each, alternated), nor reading small files\' chunks into reused buffers rather than new ones (2.44-2.78 s), nor a larger budget of files in flight (64 MiB or 4,096 files, not 32 MiB and 1,024: 2.69-3.06 s against 2.58-2.82 s), though the walk waits on that budget for ~0.86 s of a get: its files are waiting on everything else. The process used 3.5-3.7 s of CPU in a 2.8 s get (main thread 1.7-1.8 s; libuv\'s pool 0.8 s, inflating blobs of 32 KiB or more and writing large files; V8\'s helper threads 0.3 s; the writing thread ~0.7 s), on 2 cores shared with nginx and the relay (~0.4 s): what is left is CPU on this machine as a whole, more than any one thread of it. For comparison, `rotree pull` of the same tree, which fetches and verifies the same 1,555 blobs and writes each as one file, took 2.12-2.25 s (64 or 128 requests at once made no difference). ' +
      'Part of the kernel\'s share is this machine\'s: a write into the page cache touches memory the guest may never have touched, a fault in its host (a paravirtualised VM): copying file bytes into the page cache was 12.8% of a get\'s samples (perf) while the page cache grew into such memory, 3.1% once 4 GB of it had been freed; `tar -x` pays it too. ' +
      'On 2026-11-27 a profile of a loopback get (3.9 s) found ~0.3 s of CPU in joining buffers: node:zlib\'s 16 KiB output pieces of each inflated blob, and each small file\'s pieces before its write. Both are gone (one output buffer of the recorded size; writev): user CPU 2.38 → 2.20 s (medians of 6), and in four runs of this figure alternated with the client before the change, 5.34 and 4.93 s before against 4.68 and 4.68 s after, the file system slower than in the run shown. ' +
      'Tried earlier (2026-11-24): 128 connections with a larger window, 2.8 s against 3.2 s (not adopted: twice the connections to every mirror for a many-file case; the 128 requests above share the 8 pipelined ones); HTTP/2 over TLS (the third row: TLS and framing cost more CPU than the cap saves on these 2 cores); directory pages ahead of data (kept). What would close the rest: more cores than these 2 (the reader, nginx and the relay share them), fewer requests per byte (small files packed into shared blobs, a format change), less CPU per request and per file in the reader, and cheaper file creation than this file system gives.'
  }
}

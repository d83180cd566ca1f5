// P3w: P3 at a distance. The same verified read (createReadStream through the
// library, `rotree cat`, and curl through `rotree gateway` in front of the
// link) of one large file, through an emulated link
// (bench/lib/link.js: 1 Gbit/s shared by every connection, RTT 10, 50 and
// 100 ms, and an uncapped row), against curl downloading the same bytes as one
// file over one connection through the same link, in the same run. Over
// HTTP/1.1 and over HTTPS (nginx from `rotree nginx-config`, with a TLS
// listener added by the bench that offers h2: curl --http2, rotree's reader
// its default, HTTP/1.1 over TLS); at RTT 50 ms also informative rows with
// the reader told to take h2 (--http2). Every transfer has a time limit; a
// row that hit it is marked and its rate is over the bytes read.
import { missing, skipped } from './lib/need.js'
import { bigFileTree, linkTo, PROTOCOLS, FORCED_H2, runContext, wireSummary, relayNote } from './lib/netfix.js'
import { libraryRead, rotreeCat, gatewayRead, curl, cpuSecondsOf, cpuNote, envOpts } from './lib/clients.js'
import { cpuSeconds, median } from './lib/proc.js'
import { fmtRate, DEFAULT_WINDOW } from './lib/link.js'

export const id = 'P3w'
const TARGET = 0.9 // P3w: ≥ 0.9× of curl over the same link at each RTT

export const LINKS = {
  full: [{ rttMs: 0, mbit: null }, { rttMs: 10, mbit: 1000 }, { rttMs: 50, mbit: 1000 }, { rttMs: 100, mbit: 1000 }],
  quick: [{ rttMs: 0, mbit: null }, { rttMs: 50, mbit: 1000 }]
}

export const linkName = l => l.mbit ? `RTT ${l.rttMs} ms, ${fmtRate(l.mbit)}` : `uncapped, RTT ${l.rttMs} ms`
const mbps = (bytes, ms) => bytes / 1e6 / (ms / 1000)
/** The run whose rate is the median (of an odd count; the lower middle of an even one). */
const medianRun = (runs, rate) => [...runs].sort((a, b) => rate(a) - rate(b))[(runs.length - 1) >> 1]

const READERS = [['library', 'createReadStream'], ['cat', 'rotree cat'], ['gateway', 'rotree gateway + curl'], ['curl', 'curl (the baseline)']]

/**
 * Each reader's CPU for one row (link and protocol): the median over its runs
 * of user + system seconds (GNU time for the processes; the gateway's from
 * /proc over curl's download, plus that curl's), and its requests (the
 * library's own count; nginx's log for the first cat and gateway run).
 */
function readerCpu ({ cs, libRuns, catRuns, gwRuns, size }) {
  const med = xs => { const v = xs.filter(Number.isFinite); return v.length ? median(v) : NaN }
  const mib = runs => med(runs.map(r => r.bytes)) / 2 ** 20
  return {
    library: { cpuS: med(libRuns.map(r => cpuSecondsOf(r.cpu))), requests: med(libRuns.map(r => r.requests)), mib: mib(libRuns), runs: libRuns.map(r => r.cpu) },
    cat: { cpuS: med(catRuns.map(r => cpuSecondsOf(r.cpu))), requests: catRuns[0].requests ?? NaN, mib: mib(catRuns), runs: catRuns.map(r => r.cpu) },
    gateway: { cpuS: med(gwRuns.map(r => cpuSecondsOf(r.cpu) + cpuSecondsOf(r.curlCpu))), gatewayS: med(gwRuns.map(r => cpuSecondsOf(r.cpu))), requests: gwRuns[0].requests ?? NaN, mib: mib(gwRuns), runs: gwRuns.map(r => ({ gateway: r.cpu, curl: r.curlCpu })) },
    curl: { cpuS: med(cs.map(r => cpuSecondsOf(r.cpu))), requests: 1, mib: mib(cs), runs: cs.map(r => r.cpu) }
  }
}

/**
 * A sentence for the gap: at RTT 50 ms, the HTTPS rows (rotree's default,
 * HTTP/1.1 over TLS) against the same reads told to take h2 (--http2).
 */
function h2Why (raw) {
  const h1 = raw.find(r => r.rttMs === 50 && r.tls && !r.informative)
  const h2 = raw.find(r => r.rttMs === 50 && r.informative)
  if (!h1 || !h2) return ''
  const rate = r => mbps(r.library.bytes, r.library.totalMs)
  return `On HTTPS the reader speaks HTTP/1.1 over TLS, pipelined as on plain HTTP, unless told to take h2 (client-js/src/net/transport-node.js): at RTT 50 ms in this run, createReadStream read ${rate(h1).toFixed(0)} MB/s with ${h1.cpu.library.cpuS.toFixed(2)} s of CPU that way, against ${rate(h2).toFixed(0)} MB/s and ${h2.cpu.library.cpuS.toFixed(2)} s over HTTP/2 (the informative rows); rotree cat ${h1.cpu.cat.cpuS.toFixed(2)} s of CPU against ${h2.cpu.cat.cpuS.toFixed(2)} s. `
}

/** The figure's CPU table: a line per protocol and reader, the median over the links (report.js renders it). */
function cpuTable (raw, size) {
  const med = xs => { const v = xs.filter(Number.isFinite); return v.length ? median(v) : NaN }
  const rows = []
  for (const proto of [...new Set(raw.map(r => r.protocol))]) {
    const of = raw.filter(r => r.protocol === proto && r.cpu)
    for (const [k, label] of READERS) {
      const xs = of.map(r => r.cpu[k])
      rows.push({ label: `${proto}: ${label}`, cpuS: med(xs.map(x => x.cpuS)), files: 1, requests: med(xs.map(x => x.requests)), mib: med(xs.map(x => x.mib)) || size / 2 ** 20 })
    }
  }
  const links = [...new Set(raw.map(r => linkName(r)))]
  return {
    rows,
    note: `of the reader's process (GNU time: every thread, start-up included; \`rotree cat\` writes to /dev/null), the median over the runs of each row and then over the ${links.length} link${links.length > 1 ? 's' : ''} (${links.join('; ')}); the gateway row is the gateway's CPU over curl's download (/proc/<pid>/stat) plus that curl's. Requests: the library's own count, nginx's log for the first \`rotree cat\` and gateway run of each row, one GET for curl. Every run's figures are in the raw results (raw[].cpu).`
  }
}

export async function run ({ quick = false } = {}) {
  const miss = missing('nginx', 'curl', 'openssl')
  if (miss) return skipped(id, miss)
  const size = (quick ? 32 : 256) * 2 ** 20
  const limitS = quick ? 10 : 30
  const curlReps = quick ? 1 : 3
  const reps = quick ? 1 : 3 // reader runs per row, lib and cat alternated: the median is shown
  const f = await bigFileTree(size)
  const rows = []; const raw = []
  for (const l of LINKS[quick ? 'quick' : 'full']) {
    for (const p of l.rttMs === 50 && !quick ? [...PROTOCOLS, FORCED_H2] : PROTOCOLS) {
      const link = await linkTo({ nginx: f.nginx, tls: p.tls, ...l })
      const ca = p.tls ? f.cert.cert : null
      const addr = f.addr(link.origin)
      const flags = p.readerFlags ?? []
      const opts = p.readerOpts ? { ...envOpts(), ...p.readerOpts } : envOpts()
      let c, lib, cat, gw, wire, relay, relayCpu, cs
      const libRuns = []; const catRuns = []; const gwRuns = []
      try {
        // the baseline is cheap: the median of a few, so one slow start does not set the ratio
        cs = []
        for (let i = 0; i < curlReps; i++) cs.push(await curl({ url: link.origin + 'plain/big.bin', http2: p.http2, cacert: ca, limitS }))
        c = cs.sort((a, b) => a.ms - b.ms)[cs.length >> 1]
        // the reader's runs too: one slow run on this shared machine (a few
        // seconds each) must not set a row either. The first is traced
        // (nginx's log, the relay's timing and CPU).
        const mark = await f.nginx.logMark()
        await link.resetStats()
        const cpu0 = cpuSeconds(link.pid)
        libRuns.push(await libraryRead({ addr, file: '/big.bin', ca, limitS, opts }))
        relayCpu = (cpuSeconds(link.pid) - cpu0) / (libRuns[0].totalMs / 1000)
        relay = await link.stats()
        wire = await f.nginx.logSince(mark)
        for (let i = 0; i < reps; i++) {
          if (i > 0) libRuns.push(await libraryRead({ addr, file: '/big.bin', ca, limitS, opts }))
          // the first of each is counted in nginx's log too: its requests, for the CPU per request
          const catMark = i === 0 && await f.nginx.logMark()
          catRuns.push(await rotreeCat({ addr, file: '/big.bin', size, ca, limitS, stateDir: f.stateDir, flags }))
          if (i === 0) catRuns[0].requests = (await f.nginx.logSince(catMark)).requests
          const gwMark = i === 0 && await f.nginx.logMark()
          gwRuns.push(await gatewayRead({ addr, file: '/big.bin', ca, limitS, dir: f.t.dir, flags }))
          if (i === 0) gwRuns[0].requests = (await f.nginx.logSince(gwMark)).requests
        }
        lib = medianRun(libRuns, r => mbps(r.bytes, r.totalMs))
        cat = medianRun(catRuns, r => mbps(r.bytes, r.ms))
        gw = medianRun(gwRuns, r => mbps(r.bytes, r.ms))
      } finally { await link.stop() }
      const base = mbps(c.bytes, c.ms)
      const cut = r => [!r.truncated ? '' : Number.isFinite(r.bytes) ? `(limit: first ${Math.round(r.bytes / 2 ** 20)} MiB in ${limitS} s)` : `(not done in ${limitS} s)`, p.informative ? '(informative: not judged)' : ''].filter(Boolean).join(' ')
      const baselineLabel = `curl, one file, one connection, HTTP/${c.httpVersion}`
      rows.push({ label: `${p.name}, ${linkName(l)}: createReadStream`, value: mbps(lib.bytes, lib.totalMs), baseline: base, baselineLabel, unit: 'MB/s', note: cut(lib) })
      rows.push({ label: `${p.name}, ${linkName(l)}: rotree cat`, value: mbps(cat.bytes, cat.ms), baseline: base, baselineLabel, unit: 'MB/s', note: cut(cat) })
      rows.push({ label: `${p.name}, ${linkName(l)}: curl through rotree gateway`, value: mbps(gw.bytes, gw.ms), baseline: base, baselineLabel, unit: 'MB/s', note: cut(gw) })
      const cpu = readerCpu({ cs, libRuns, catRuns, gwRuns, size })
      raw.push({ protocol: p.name, informative: !!p.informative, tls: p.tls, ...l, curl: c, library: lib, cat, gateway: gw, runs: { library: libRuns.map(r => mbps(r.bytes, r.totalMs)), cat: catRuns.map(r => mbps(r.bytes, r.ms)), gateway: gwRuns.map(r => mbps(r.bytes, r.ms)) }, cpu, wire, relay: { ...relay, cpuShare: relayCpu } })
    }
  }
  // the target is about the link: the uncapped rows are the reader's own ceiling (P3 judges loopback)
  // judged: the library's own read and the gateway in front of the link (a reader's two ways to a distant mirror)
  const judged = raw.filter(r => r.mbit && !r.informative).flatMap(r => [
    { link: `${r.protocol}, ${linkName(r)}, createReadStream`, ratio: mbps(r.library.bytes, r.library.totalMs) / mbps(r.curl.bytes, r.curl.ms) },
    { link: `${r.protocol}, ${linkName(r)}, gateway`, ratio: mbps(r.gateway.bytes, r.gateway.ms) / mbps(r.curl.bytes, r.curl.ms) }
  ])
  const worst = Math.min(...judged.map(j => j.ratio))
  const short = judged.filter(j => j.ratio < TARGET).map(j => `${j.link} (${j.ratio.toFixed(2)}×)`)
  const far = raw.filter(r => r.rttMs > 0)
  const inflight = r => mbps(r.library.bytes, r.library.totalMs) * 1e6 * r.rttMs / 1000 // bytes, by Little's law
  const bdp = r => r.mbit * 1e6 / 8 * r.rttMs / 1000
  const curlUse = r => mbps(r.curl.bytes, r.curl.ms) * 8 / r.mbit
  const wires = raw.map(r => `${r.protocol}, ${linkName(r)}: ${wireSummary(r.wire)}`)
  return {
    id,
    title: `Node client at a distance: verified read of ${size >> 20} MiB through an emulated link`,
    command: `npm run bench${quick ? ':quick' : ''} -- P3w`,
    target: '≥ 90% of curl downloading the same bytes over the same link, at each RTT, HTTP/1.1 and HTTPS + HTTP/2',
    met: worst >= TARGET,
    short: short.join('; '),
    rows,
    cpu: cpuTable(raw, size),
    raw,
    notes: [
      'The target is judged on the createReadStream rows and the gateway rows over the capped link (RTT 10, 50 and 100 ms); the uncapped rows, nginx through the relay with no delay and no cap, show the reader\'s own ceiling, which P3 judges on loopback.',
      `The gateway rows: \`rotree gateway ADDR --cache-size 0\` (its defaults otherwise), started for each run on loopback beside curl, with the mirror behind the link; curl downloads the file from it over HTTP/1.1. Its time is curl's, from connecting to the gateway to the last byte: the gateway had opened the tree (fsinfo.json) when it started, as a running gateway has, and every chunk comes from the mirror, verified, as it is sent (no disk cache). Until 2026-11-28 the gateway asked a tree's mirrors for at most 16 blobs at once (its --concurrency default), ~4 MiB of chunks per round trip whatever the window said: through this link, alternated with curl direct in one session, it ran at 0.77-0.83× of curl over HTTP/1.1 and 0.73-0.77× over HTTPS + HTTP/2 at RTT 50 ms, and 0.79-0.84× and 0.78-0.80× at RTT 100 ms (3 runs each), against 0.98-1.08× and 0.94-1.01× at RTT 50 ms and 1.58-1.84× and 1.01-1.03× at RTT 100 ms with 64, the library's default, which it now uses; on loopback the change moved neither P2 nor P9 (the window, not the count, bounds what is in flight there).`,
      `${reps > 1 ? `The median of ${reps} runs per row, each with a time limit of ${limitS} s (every run's rate is in the raw results)` : `One run per row, with a time limit of ${limitS} s`}, against the median of ${curlReps} curl run${curlReps > 1 ? 's' : ''}; nginx's log and the relay's figures below are of each row's first library run. The link (bench/lib/link.js) is a relay process on loopback: a fixed delay each way, one token bucket shared by all its connections, and TCP's sender behaviour (a handshake RTT, slow start from 10 segments, a receive window of at most ${DEFAULT_WINDOW / 2 ** 20} MiB per connection: Linux's default tcp_rmem maximum). nginx from \`rotree nginx-config\` serves the tree and the plain file on one port, and again with TLS 1.3 and HTTP/2 on a second port (added by the bench). Rates include connecting and, for the library, openTree(); \`rotree cat\` includes Node's start-up and writes to /dev/null.`,
      `The baseline's use of the link: ${far.map(r => `${r.protocol}, RTT ${r.rttMs} ms: ${(100 * curlUse(r)).toFixed(0)}%`).join('; ')} of the cap (a single TCP connection slow-starts and is capped by its window at ${DEFAULT_WINDOW / 2 ** 20} MiB per RTT).`,
      `The library's use of the link: ${far.map(r => `${r.protocol}, RTT ${r.rttMs} ms: ${(100 * mbps(r.library.bytes, r.library.totalMs) * 8 / r.mbit).toFixed(0)}%`).join('; ')} of the cap.`,
      `What the library put on the wire (nginx's log): ${wires.join('; ')}.`,
      relayNote(raw.map(r => r.relay)),
      ...[cpuNote()].filter(Boolean),
      runContext()
    ],
    gap: `The reader keeps its requests in flight to a window sized like BBR's (client-js/src/fetch/window.js): it averaged ${far.map(r => `${(inflight(r) / 2 ** 20).toFixed(1)} MiB in flight at RTT ${r.rttMs} ms over ${r.protocol}`).join(', ')} (throughput × RTT, Little's law), where the link holds ${[...new Map(far.map(r => [r.rttMs, r])).values()].map(r => `${(bdp(r) / 2 ** 20).toFixed(1)} MiB at ${r.rttMs} ms`).join(', ')} and curl's one connection keeps up to its ${DEFAULT_WINDOW / 2 ** 20} MiB window. Over HTTP/1.1 its requests are pipelined, up to 8 answers outstanding on each of 8 connections (client-js/src/net/transport-h1.js; the wire note below). Before that (until 2026-11-27) each doubling of the window opened new connections, each starting in TCP slow start (10 segments), and a connection idled a round trip between answers: a per-request timeline at RTT 50 ms had the link full from 1.5-2.1 s into the read, against ~1.0 s with pipelining, and in runs alternated on one link (same machine, one process per read, two sessions) createReadStream went from 68.2-77.3 MB/s (median 70.9) to 70.1-86.4 MB/s (median 77.1), curl 100.9-102.1; in the timeline's own harness, 76.6 and 78.6 against 90.8 and 92.3 MB/s (4 answers per connection: 72.9-86.1; 16: 89.7 and 91.9). The render before pipelining had HTTP/1.1 at RTT 100 ms at 1.10× of curl; a window on 8 connections that never idle passes curl's one connection, which its 6 MiB window caps at 41% of the link. ${short.length ? `Short of the target in this run: ${short.join('; ')}.` : 'Every judged row meets the target in this run.'} Where a row falls short it is start-up and the reader's own CPU. Start-up: at RTT 50 ms the per-request timeline has the first data chunk asked for at ~344 ms: after openTree() (~120 ms) come the root page, the file's index root and its two leaf index pages, one round trip each (the lead chunk, FORMAT.md §5.1, rides beside the index root), and the first chunks then travel on connections in slow start, where curl's single GET has its first byte at ~100 ms. CPU: the reader's ceiling in this run, the uncapped rows (nginx through the relay with no delay), was ${raw.filter(r => r.rttMs === 0).map(r => `${mbps(r.library.bytes, r.library.totalMs).toFixed(0)} MB/s over ${r.protocol}`).join(' and ')} for createReadStream, about the link's 125 MB/s: a reader that falls behind in start-up cannot catch up, and at RTT 10 ms, where start-up is short, the rows are bound by it. createReadStream in a new process hands out a new buffer per chunk: from nginx with no link, 2.4-2.7 s of CPU and ~43,000 page faults for 256 MiB (2026-11-27; see P9; rotree cat lends its buffers). The CPU-bound rows move with the machine, not the client: createReadStream uncapped was 434 MB/s in the render of 2026-11-24, and the client of that render read a format-1 copy of this file at 158-164 MB/s against 183-196 MB/s for this one, alternated on 2026-11-27. Tried: six start-up rounds without growth instead of three before leaving start-up, 85-91 MB/s against 84-87 MB/s at RTT 50 ms (within the noise, and it overshoots the window to 4× bandwidth × delay; not adopted). ${h2Why(raw)}Until 2026-12-07 the reader took h2 where an HTTPS mirror offered it. Over HTTPS + HTTP/2 one connection carries every request and grows once, as curl's does; on loopback that reader is CPU-bound in node:http2 (2026-11-27, 256 MiB lent, one process each, same nginx): its main thread used 2.55 s of CPU in 2.43 s of wall time, against 1.28 s in 1.05 s over HTTP/1.1; a profile puts a third of its samples outside JavaScript (TLS decryption and HTTP/2 framing in native code) and spreads the rest over node:http2's streams, one buffer and one callback per piece read. Larger DATA frames changed nothing (nginx's http2_chunk_size 256k with the client's SETTINGS_MAX_FRAME_SIZE at 1 MiB: 94-104 against 92-136 MB/s createReadStream, 115-119 against 114-124 lent, alternated): a TLS record carries at most 16 KiB, and node:http2 hands each to JavaScript as it is decrypted. curl does the same work in C (516-555 MB/s in those runs). Nor was it HTTP/2's framing alone: over HTTPS with HTTP/1.1 through node:https (what http2: false did then, with keep-alive; same nginx, no link, 256 MiB, three runs alternated with HTTP/2 on 2026-11-27) the reader used 2.2-2.5 s of CPU against 2.4-2.5 s for createReadStream, 2.1-2.2 s against 2.0-2.4 s lent, at 127-159 against 128-161 MB/s. The same reads over plain HTTP/1.1 used 1.6-2.2 s (createReadStream) and 0.87-1.16 s (lent) in that session. Nor is it TLS itself, measured step by step on 2026-11-28 (same nginx, no link, 256 MiB, each in its own process, three rounds alternated; CPU of the whole process): one download of the plain file through node:https took 0.61-0.69 s (441-483 MB/s), less than through node:http over plain HTTP (0.71-0.73 s); its 900 chunk blobs through node:http2, 16 streams at a time with the reader's flow-control windows, bytes counted and dropped, 0.95-1.10 s (303-331 MB/s); copying each decrypted piece into a buffer per blob, as a reader must before it hashes, 1.17-1.34 s; and hashing each blob, 1.36-1.49 s (207-224 MB/s); the transport alone (transport-node.js, pooled buffers, blobs hashed) 1.49-1.63 s; the lent read 1.82-1.90 s (174-181 MB/s), against 0.83-0.85 s (386-398 MB/s) over plain HTTP/1.1. So of the lent read's extra ~1 s over HTTPS, ~0.3 s is node:http2's cost per stream and per piece, ~0.25 s the copy, which the lean HTTP/1.1 client does not make (the kernel, and on TLS the decryption, writes each body straight into the blob's buffer through the socket's \`onread\`, transport-h1.js: what made it the default on HTTPS), and the rest, ~0.4 s, is spread over the transport and the reader's layers, no one function of theirs standing out in a profile. A whole read also hashes every byte twice, once per chunk (its handle) and once for the file (its signed SHA-256, FORMAT.md §12.7): in a CPU profile of createReadStream over HTTPS + HTTP/2 with no link (2026-11-28), SHA-256 took 376 ms of the main thread's ~1.8 s, the rest led by the copy of each piece (142 ms) and garbage collection (101 ms); the main thread was busy for the whole read (its own CPU time equal to the wall time). What would close it: hashing each piece as it arrives and handing the pieces out without joining them (a lent read only; a compressed blob would need its inflate streamed too), and fewer, larger requests per byte.`
  }
}

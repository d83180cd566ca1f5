#!/usr/bin/env node
// P19: what witnesses cost (FORMAT.md §13.1) and how small the log part of a
// proof bundle is (§13.2).
//   - publishing: `rotree build` of a one-file change into a tree whose trust
//     document names 3 witnesses (2 of 3 required; real `rotree witness`
//     servers, lib/witness/witness.js, on loopback in their own process),
//     against the same build into a tree without witnesses (target: ≤ 1 s added);
//   - a reader's open (openTree over a local transport answering from the
//     published folder: requests counted, CPU by process.cpuUsage around each
//     open, many opens) of the witnessed tree against the tree without
//     (targets: ≤ 1 request and ≤ 5 ms CPU added), the same open from a
//     mirror without log/fsinfo.proof (an older publisher's folder: the
//     reader's fallback to log/checkpoint and tiles), and requireWitnessed
//     (client-js/src/trust/witnessed.js) called directly on the same bytes;
//   - the proof bundle's log part, a C2SP tlog-proof (target ≤ 2 KiB), and the
//     whole bundle of `rotree get --proof` of one file, and of /usr/share/doc.
//
//   node bench/p19-witness.js [--quick]                    prints the figure (or: npm run bench -- P19)
//   node bench/p19-witness.js --witnesses ORIGIN=HEX DIR   (the witnesses, in their own process: one JSON line, then serve until stdin ends)
import './lib/env.js' // first: the environment the timed commands inherit
import fs from 'node:fs/promises'
import { existsSync } from 'node:fs'
import path from 'node:path'
import os from 'node:os'
import { spawn } from 'node:child_process'
import { pathToFileURL } from 'node:url'
import { median } from './lib/proc.js'
import { timedRun } from './build.js'
import { Tree } from 'rotree-client'
import { proveLogged, logSignersOf } from 'rotree-client/log'
import { decodeTrustDoc } from 'rotree-client/format'
import { requireWitnessed } from '../client-js/src/trust/witnessed.js'
import { localTransport } from '../cli/offline.js'

export const id = 'P19'
const BIN = new URL('../bin/rotree.js', import.meta.url).pathname
const SELF = new URL(import.meta.url).pathname
const PUBLISH_MAX_MS = 1000
const EXTRA_REQUESTS_MAX = 1
const EXTRA_CPU_MAX_MS = 5
const LOG_PART_MAX = 2048
const DOCS = '/usr/share/doc'

async function witnessesMain ([logSpec, dir]) {
  const { createWitness, parseLogList } = await import('../lib/witness/witness.js')
  const out = []
  for (let i = 1; i <= 3; i++) {
    const kf = path.join(dir, `W${i}.key`)
    const key = JSON.parse(await fs.readFile(kf, 'utf8'))
    const srv = await createWitness({ name: `w${i}.bench/witness`, key, stateDir: path.join(dir, `w${i}`), logs: parseLogList([logSpec]), fsync: false })
    const l = await srv.listen({ port: 0 })
    out.push({ name: `w${i}.bench/witness`, url: l.url, vkey: srv.verifierKey })
  }
  process.stdout.write(JSON.stringify(out) + '\n')
  process.stdin.resume()
  process.stdin.on('end', () => process.exit(0))
}

/** A child that prints one line matching `re` (resolves to the match), killed by stop(). */
function child (args, re) {
  const p = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'pipe'] })
  let out = ''; let err = ''
  const ready = new Promise((resolve, reject) => {
    p.stdout.on('data', b => { out += b; const m = re.exec(out); if (m) resolve(m) })
    p.stderr.on('data', b => { err += b })
    p.on('exit', code => reject(new Error(`${args.slice(0, 2).join(' ')} exited ${code}: ${err}`)))
  })
  return { ready, stop: () => { p.stdin.end(); p.kill('SIGTERM') } }
}

/** A published folder's files, in memory: the reader's one mirror (bench: no disk, no network in the timing). */
async function folderFiles (dir) {
  const m = new Map()
  for (const e of await fs.readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!e.isFile()) continue
    const p = path.join(e.parentPath ?? e.path, e.name)
    m.set(path.relative(dir, p).split(path.sep).join('/'), new Uint8Array(await fs.readFile(p)))
  }
  return m
}

/** Open the tree `reps` times: requests of one open, paths asked, and CPU ms of each open. */
async function opens (files, fragment, reps) {
  const cpu = []; let requests = 0; let paths = []
  for (let i = 0; i < reps; i++) {
    const asked = []
    const transport = localTransport(async rel => { asked.push(rel); return files.get(rel) ?? null })
    const c = process.cpuUsage()
    const tree = new Tree(`http://offline.invalid/#${fragment}`, { transport, stateDir: null, fsinfoSettleMs: 0, prefetchRoot: false })
    await tree.refresh()
    const d = process.cpuUsage(c)
    tree.close()
    cpu.push((d.user + d.system) / 1000)
    requests = transport.stats.requests; paths = asked
  }
  return { cpu, requests, paths }
}

async function ok (args, cpuFile) { return timedRun(process.execPath, [BIN, ...args], cpuFile) }

async function family (dir, name, cpuFile) {
  const key = path.join(dir, `${name}.key`)
  const hex = (await ok(['keygen', key], cpuFile)).stdout.trim().split('\n').pop().trim()
  const out = path.join(dir, `${name}-out`)
  const init = (await ok(['trust', 'init', out, '--root', key, '--release', key, '--timestamp', key, '--name', 'site'], cpuFile)).stdout
  await ok(['trust', 'sign', out, '--key', key], cpuFile)
  const fragment = init.trimEnd().split('\n').at(-1).split('#')[1]
  return { key, hex, out, fragment }
}

export async function run ({ quick = false } = {}) {
  const reps = quick ? 3 : 9
  const openReps = quick ? 30 : 300
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'rotree-bench-p19-'))
  const cpuFile = path.join(dir, 'cpu')
  const stops = []
  try {
    const W = await family(dir, 'witnessed', cpuFile)
    const P = await family(dir, 'plain', cpuFile)
    for (let i = 1; i <= 3; i++) await ok(['keygen', path.join(dir, `W${i}.key`)], cpuFile)
    const ws = child([SELF, '--witnesses', `rotree/${W.fragment}=${W.hex}`, dir], /^(\[.*\])\n/m)
    stops.push(ws.stop)
    const list = JSON.parse((await ws.ready)[1])
    await ok(['trust', 'update', W.out, ...list.flatMap(w => ['--add-witness', `${w.name}=${w.url}=${w.vkey}`]), '--witness-threshold', '2'], cpuFile)
    await ok(['trust', 'sign', W.out, '--key', W.key], cpuFile)

    // publishing: the same one-file change into each tree, alternated
    const src = path.join(dir, 'src')
    await fs.mkdir(path.join(src, 'docs'), { recursive: true })
    for (let i = 0; i < 50; i++) await fs.writeFile(path.join(src, 'docs', `f${i}.txt`), `file ${i}\n`.repeat(40 + i))
    const pub = { w: [], p: [], wCpu: [], pCpu: [] }
    for (let i = 0; i <= reps; i++) {
      await fs.writeFile(path.join(src, 'stamp.txt'), `publish ${i}\n`)
      const a = await ok(['build', src, W.out, '--key', W.key, '--no-fsync'], cpuFile)
      const b = await ok(['build', src, P.out, '--key', P.key, '--no-fsync'], cpuFile)
      if (i === 0) continue // the first publish of each writes the whole tree
      pub.w.push(a.ms); pub.p.push(b.ms); pub.wCpu.push(a.cpuMs); pub.pCpu.push(b.cpuMs)
    }
    const added = median(pub.w) - median(pub.p)

    // the reader's open, and requireWitnessed alone, on the bytes of each folder
    const wFiles = await folderFiles(W.out); const pFiles = await folderFiles(P.out)
    await opens(wFiles, W.fragment, 5); await opens(pFiles, P.fragment, 5) // warm: the code compiled
    const ow = await opens(wFiles, W.fragment, openReps)
    const op = await opens(pFiles, P.fragment, openReps)
    // a mirror without log/fsinfo.proof (FORMAT.md §13: an older publisher's folder): log/checkpoint and the tiles
    const oldFiles = new Map(wFiles); oldFiles.delete('log/fsinfo.proof')
    await opens(oldFiles, W.fragment, 5)
    const oo = await opens(oldFiles, W.fragment, openReps)
    const oldLogPaths = oo.paths.filter(p => p.startsWith('log/'))
    const wired = ow.paths.some(p => p.startsWith('log/'))
    const fsinfoBytes = wFiles.get('fsinfo.json')
    const fsinfo = JSON.parse(Buffer.from(fsinfoBytes).toString('utf8'))
    const trust = decodeTrustDoc(wFiles.get(`trust/${fsinfo.trust.seq}.json`))
    const signers = logSignersOf({ version: 2, anchor: fsinfo.anchor, name: fsinfo.name, roles: trust.roles })
    const rw = { cpu: [], requests: 0 }
    for (let i = 0; i < openReps + 5; i++) {
      let n = 0
      const fetch = async (p, cap, check) => { n++; return check(wFiles.get(p)) }
      const c = process.cpuUsage()
      await requireWitnessed(fetch, { fsinfoBytes, origin: signers.origin, logKeys: signers.keys, witnesses: trust.witnesses, nowMs: Date.now() })
      const d = process.cpuUsage(c)
      if (i >= 5) rw.cpu.push((d.user + d.system) / 1000)
      rw.requests = n
    }
    // the log's requests (the open of the witnessed tree also probes one more trust document: it has two)
    const logPaths = ow.paths.filter(p => p.startsWith('log/'))
    const extraRequests = wired ? logPaths.length : rw.requests
    const extraCpu = wired ? median(ow.cpu) - median(op.cpu) : median(rw.cpu)

    // the proof bundle: its log part, and whole bundles of rotree get --proof
    const localFetch = async (p, cap, check) => check(wFiles.get(p))
    const proof = await proveLogged(localFetch, { fsinfoBytes, ...signers })
    const logPart = Buffer.byteLength(proof.text)
    const checkpointBytes = wFiles.get('log/checkpoint').length
    const serve = child([BIN, 'serve', W.out, '--port', '0'], /at (http:\/\/\S+)/)
    stops.push(serve.stop)
    const url = (await serve.ready)[1]
    const env = { ...process.env, ROTREE_STATE: path.join(dir, 'state') }
    const one = path.join(dir, 'one.txt')
    await timedRun(process.execPath, [BIN, 'get', `${url}#${W.fragment}`, '/docs/f7.txt', '-o', one, '--proof', one + '.rotree-proof'], cpuFile, { env })
    const oneBundle = (await fs.stat(one + '.rotree-proof')).size
    let docs = null
    if (!quick && existsSync(DOCS)) {
      const D = await family(dir, 'docs', cpuFile)
      await ok(['build', DOCS, D.out, '--key', D.key, '--no-fsync', '--skip-bad'], cpuFile)
      const s = child([BIN, 'serve', D.out, '--port', '0'], /at (http:\/\/\S+)/)
      stops.push(s.stop)
      const u = (await s.ready)[1]
      const dest = path.join(dir, 'doc')
      const g = await timedRun(process.execPath, [BIN, 'get', `${u}#${D.fragment}`, '/', '-o', dest, '--proof', dest + '.rotree-proof'], cpuFile, { env })
      const b = JSON.parse(await fs.readFile(dest + '.rotree-proof', 'utf8'))
      const pageBytes = b.pages.reduce((n, p) => n + Buffer.from(p, 'base64').length, 0)
      const got = /(\d+) files, (\d+) dirs.*?, ([\d.]+ \w+) verified/.exec(g.stdout + (g.stderr ?? '')) ?? null
      docs = { bytes: (await fs.stat(dest + '.rotree-proof')).size, pages: b.pages.length, pageBytes, log: Buffer.byteLength(b.log ?? ''), downloaded: await duBytes(dest), got }
    }

    const met = added <= PUBLISH_MAX_MS && extraRequests <= EXTRA_REQUESTS_MAX && extraCpu <= EXTRA_CPU_MAX_MS && logPart <= LOG_PART_MAX
    const rows = [
      { label: 'rotree build of a one-file change, 3 witnesses asked (2 of 3 required), median', value: median(pub.w), baseline: median(pub.p), baselineLabel: 'the same build into a tree without witnesses', unit: 'ms', higherIsBetter: false, note: `(${added.toFixed(0)} ms added; CPU of the build process ${median(pub.wCpu).toFixed(0)} ms against ${median(pub.pCpu).toFixed(0)} ms)` },
      wired
        ? { label: 'a reader\'s open, 2-of-3 policy: requests to log/', value: logPaths.length, baseline: op.requests, baselineLabel: 'all requests of the open of the tree without witnesses', unit: 'requests', higherIsBetter: false, note: `(${logPaths.join(', ')})` }
        : { label: 'requireWitnessed called directly: requests (the open does not call it yet)', value: rw.requests, baseline: op.requests, baselineLabel: 'the requests of an open without witnesses', unit: 'requests', higherIsBetter: false },
      wired
        ? { label: `a reader's open, 2-of-3 policy: CPU per open, median of ${openReps}`, value: median(ow.cpu), baseline: median(op.cpu), baselineLabel: 'the open of the tree without witnesses', unit: 'ms', higherIsBetter: false, note: `(${extraCpu.toFixed(2)} ms added)` }
        : { label: `requireWitnessed called directly: CPU per call, median of ${openReps}`, value: median(rw.cpu), baseline: median(op.cpu), baselineLabel: 'the CPU of an open without witnesses', unit: 'ms', higherIsBetter: false },
      { label: 'the same open from a mirror without log/fsinfo.proof (an older publisher\'s folder): requests to log/', value: oldLogPaths.length, baseline: wired ? logPaths.length : rw.requests, baselineLabel: 'with it', unit: 'requests', higherIsBetter: false, note: `(${oldLogPaths.join(', ')}; CPU per open ${median(oo.cpu).toFixed(2)} ms, median of ${openReps})` },
      { label: 'proof bundle, log part: the C2SP tlog-proof (checkpoint, 3 cosignatures, index, inclusion proof)', value: logPart, baseline: checkpointBytes, baselineLabel: 'log/checkpoint alone (with its cosignatures)', unit: 'bytes', higherIsBetter: false, note: `(a log of ${proof.size} leaves: ${proof.text.split('\n').filter(l => /^[A-Za-z0-9+/]{43}=$/.test(l)).length} proof hashes)` },
      { label: 'whole proof bundle of rotree get --proof of one file', value: oneBundle, baseline: logPart, baselineLabel: 'its log part', unit: 'bytes', higherIsBetter: false }
    ]
    if (docs) rows.push({ label: `whole proof bundle of rotree get --proof of ${DOCS} (${docs.pages} directory pages)`, value: docs.bytes, baseline: docs.downloaded, baselineLabel: 'the bytes downloaded', unit: 'bytes', higherIsBetter: false, note: `(pages ${docs.pageBytes.toLocaleString('en-US')} bytes before base64; log part ${docs.log} bytes)` })
    return {
      id,
      title: 'witnesses: what a publish and a reader\'s open pay, and the proof bundle\'s log part',
      command: `npm run bench${quick ? ':quick' : ''} -- P19`,
      target: `3 witnesses add ≤ ${PUBLISH_MAX_MS / 1000} s to a publish; a reader with a 2-of-3 policy makes ≤ ${EXTRA_REQUESTS_MAX} more request and spends ≤ ${EXTRA_CPU_MAX_MS} ms more CPU per open; the proof bundle's log part is ≤ ${LOG_PART_MAX / 1024} KiB`,
      met,
      rows,
      gap: met ? undefined : [
        added > PUBLISH_MAX_MS ? `The publish adds ${added.toFixed(0)} ms, over ${PUBLISH_MAX_MS} ms.` : '',
        extraRequests > EXTRA_REQUESTS_MAX ? `The open asks the log ${extraRequests} times, not ${EXTRA_REQUESTS_MAX}: ${(wired ? logPaths : ['log/checkpoint', 'its tiles']).join(', ')}. A fresh reader asks for log/fsinfo.proof alone when the folder has it (FORMAT.md §13); here it ${wired && logPaths.includes('log/fsinfo.proof') ? 'did not decide' : 'was not asked for or not there'}.` : '',
        extraCpu > EXTRA_CPU_MAX_MS ? `The open spends ${extraCpu.toFixed(2)} ms more CPU, over ${EXTRA_CPU_MAX_MS} ms.` : '',
        logPart > LOG_PART_MAX ? `The log part is ${logPart} bytes, over ${LOG_PART_MAX}.` : ''
      ].filter(Boolean).join(' '),
      raw: { publish: pub, open: { witnessed: ow.cpu, plain: op.cpu, withoutProof: oo.cpu, wiredIntoOpen: wired, witnessedPaths: ow.paths, plainPaths: op.paths, withoutProofPaths: oo.paths }, requireWitnessed: rw, logPart, checkpointBytes, oneBundle, docs },
      notes: [
        `Publishes: \`rotree build SRC OUT --key K --no-fsync\` of a 51-file tree after one file changed, in a new process each (Node's start-up included), alternated between the two trees, median of ${reps} after a first publish of each; the witnesses are three \`rotree witness\` servers (lib/witness/witness.js, state not fsynced) in one other process on loopback, so the time added is the publisher's add-checkpoint round trips (all three asked at once) and the witnesses' checks and cosignatures, without a network's latency: add one round trip to the slowest of the K fastest witnesses on a real link.`,
        wired
          ? `Opens: new Tree(…).refresh() with no reader state (so no consistency proof from a kept checkpoint), over a transport that answers from the published folder's bytes in memory (cli/offline.js localTransport), ${openReps} opens after 5 to warm up, CPU by process.cpuUsage around each open (the event loop's other work included). The witnessed open asks ${logPaths.join(' and ')} besides what the plain one asks (and trust/<n+1>.json one number higher: that family has two trust documents, the plain one one); the same folder without log/fsinfo.proof (what a publisher before it wrote, or a mirror that does not serve it) asks ${oldLogPaths.join(' and ')}: the reader checks as it did before the proof existed (FORMAT.md §13.1). requireWitnessed called directly on the same bytes: ${rw.requests} fetches, CPU median ${median(rw.cpu).toFixed(2)} ms per call.`
          : `The reader's open does not check witnesses yet at this commit (requireWitnessed, client-js/src/trust/witnessed.js, is not called by openTree): the rows measure requireWitnessed called directly on the published folder's bytes in memory (log/checkpoint and the tiles it asks for: ${rw.requests} fetches), ${openReps} calls after 5 to warm up, CPU by process.cpuUsage around each call; the baseline is a whole open of the tree without witnesses, for scale.`,
        `The log part of a proof bundle is the C2SP tlog-proof of FORMAT.md §13.2: \`c2sp.org/tlog-proof@v1\`, the index, one base64 line per inclusion proof hash (⌈log2 size⌉ at most), an empty line, and log/checkpoint verbatim with its cosignature lines (~${Math.round((checkpointBytes - 150) / 3)} bytes each, its witness name included). It grows by 45 bytes per doubling of the log.`,
        docs ? `${DOCS}: ${docs.bytes.toLocaleString('en-US')} bytes of bundle for ${docs.downloaded.toLocaleString('en-US')} bytes downloaded. The bundle is mostly directory pages (${docs.pages}, ${docs.pageBytes.toLocaleString('en-US')} bytes before base64): files of at most 16 KiB are stored inside their directory's pages (FORMAT.md §4.3, §12.6), so the pages of a folder of small files carry most of its bytes; they are kept whole because a page is checked by its hash.` : `No ${DOCS} row${quick ? ' in a quick run' : `: ${DOCS} not found`}.`
      ]
    }
  } finally {
    for (const s of stops) s()
    await fs.rm(dir, { recursive: true, force: true })
  }
}

async function duBytes (dir) {
  let n = 0
  for (const e of await fs.readdir(dir, { withFileTypes: true, recursive: true })) if (e.isFile()) n += (await fs.stat(path.join(e.parentPath ?? e.path, e.name))).size
  return n
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  if (process.argv[2] === '--witnesses') await witnessesMain(process.argv.slice(3))
  else {
    const fig = await run({ quick: process.argv.includes('--quick') })
    console.log(JSON.stringify(fig, null, 2))
  }
}

#!/usr/bin/env node
// P15: what a private tree (FORMAT.md §12.8: every blob AES-256-GCM under a
// key of its own, padded, behind a keyring) costs a reader. One source folder,
// 256 MiB of incompressible bytes in one file, built twice with the same key:
// a public tree and a private tree with one reader. The same reads of each,
// alternated, each in its own process (bench/lib/clients.js):
//   - createReadStream() and readRange({ lend: true }) through the library
//     (bench/lib/reader.js; openTree(addr, { identity }) for the private tree),
//     and `rotree cat` (--identity FILE), to /dev/null;
//   - on loopback from nginx (target: private ≥ 0.9× public), and through an
//     emulated link at 1 Gbit/s, RTT 50 ms, over HTTP/1.1 and HTTPS (nginx offers h2; the reader
//     takes HTTP/1.1 over TLS, its default)
//     (bench/lib/link.js; target ≥ 0.93×);
//   - in headless Chromium through the library bundle in a page (bench/browser.js
//     pageRead: openTree(address, { identity })), from `rotree serve` on loopback
//     (target ≥ 0.9×).
// First one private read of the big file is tried: a client that cannot read
// a private file under a chunk index (more than 32 chunks, FORMAT.md §4.3)
// fails it, and the figure then says so and measures the same 256 MiB as 64
// files of 4 MiB (each with its chunks listed in its entry), read one after
// another by the library and by `rotree get` into a tmpfs (for `rotree cat`).
//
//   node bench/p15-private-read.js [--quick]    prints the figure (or: npm run bench -- P15)
import './lib/env.js' // first: the environment the timed readers inherit
import fs from 'node:fs/promises'
import path from 'node:path'
import { existsSync } from 'node:fs'
import { pathToFileURL } from 'node:url'
import { generateX25519Identity, identityToRecipient } from 'age-encryption'
import { build } from '../builder/build.js'
import { missing, skipped } from './lib/need.js'
import { makeCert, startNginxTree } from './lib/nginx.js'
import { linkTo, runContext, relayNote, PROTOCOLS } from './lib/netfix.js'
import { libraryRead, rotreeCat, rotreeGet, envOpts } from './lib/clients.js'
import { median } from './lib/proc.js'
import { tmpdir, makeKey, prng } from '../test/helpers/fixtures.js'

export const id = 'P15'
const LOOP_TARGET = 0.9
const LINK_TARGET = 0.93
const BROWSER_TARGET = 0.9
const LINK = { rttMs: 50, mbit: 1000 }
const mbps = (bytes, ms) => bytes / 1e6 / (ms / 1000)
// what a reader or build says when an index child's key was dropped (KEYLESS_WHY)
export const KNOWN_KEYLESS = /first chunk is not the first chunk|does not decode as deflate-raw|an uncompressed blob of \d+ bytes, its parent records/
export const KEYLESS_WHY = 'decodeChunkIndex (client-js/src/format/chunkindex.js) and decodeDirPage\'s index children (client-js/src/format/dirpage.js) keep a version-2 child\'s hash, sizes and codec but not its key, which readRef (client-js/src/format/ref.js) returns for a sealed blob: a reader then meets a sealed chunk without its key (the lead check, verify.js checkLeadRef, fails first), and a private build whose chunk index has two levels, or whose directory spans several pages, fails in its own walk for the manifest (builder/release.js privateRelease → walkLocal) decoding a sealed page as if it were plain (the checkouts from a24cefb up to f95239a, which keeps the keys).'

/** Bytes of the regular files under dir (a published folder's h/). */
export async function folderBytes (dir) {
  let n = 0; let files = 0
  for (const e of await fs.readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!e.isFile()) continue
    n += (await fs.stat(path.join(e.parentPath ?? e.path, e.name))).size; files++
  }
  return { bytes: n, files }
}

const libOpts = identity => ({ ...envOpts(), ...(identity ? { identity: identity.text } : {}) })
const libRun = lend => ({ addr, layout, ca, identity, limitS }) => libraryRead({ addr, file: layout.paths, ca, limitS, lend, opts: libOpts(identity) })
  .then(r => ({ rate: mbps(r.bytes, r.totalMs), cpuMs: r.cpuMs, truncated: r.truncated, bytes: r.bytes }))

/** The three readers of a layout, each one run: MB/s and, for the library, CPU ms. */
function readersOf (layout) {
  return [
    { name: 'createReadStream', run: libRun(false) },
    { name: 'readRange, lent', run: libRun(true) },
    layout.cat
      ? { name: 'rotree cat', run: ({ addr, ca, identity, limitS, stateDir }) => rotreeCat({ addr, file: layout.paths[0], size: layout.size, ca, limitS, stateDir, identity: identity?.file }).then(r => ({ rate: mbps(r.bytes, r.ms), cpuMs: NaN, truncated: r.truncated })) }
      : {
          name: 'rotree get into a tmpfs',
          run: async ({ addr, ca, identity, limitS, stateDir, scratch }) => {
            const dest = await fs.mkdtemp(path.join(scratch, 'get-'))
            try {
              const r = await rotreeGet({ addr, from: '/parts', dest: path.join(dest, 'parts'), ca, limitS, stateDir, identity: identity?.file })
              return { rate: r.truncated ? NaN : mbps(layout.size, r.ms), cpuMs: NaN, truncated: r.truncated }
            } finally { await fs.rm(dest, { recursive: true, force: true }) }
          }
        }
  ]
}

/** The two ways the 256 MiB are laid out: one file, or 64 files of 4 MiB (below the chunk-index threshold). */
function layouts (size) {
  const part = 4 * 2 ** 20
  const n = Math.max(1, Math.round(size / part))
  const parts = Object.fromEntries(Array.from({ length: n }, (_, i) => [`parts/p${String(i).padStart(3, '0')}.bin`, part]))
  return {
    one: { name: 'one', files: { 'big.bin': size }, paths: ['/big.bin'], size, cat: true, what: `one file of ${size >> 20} MiB` },
    parts: { name: 'parts', files: parts, paths: Object.keys(parts).map(p => '/' + p), size: n * part, cat: false, what: `${n} files of ${part >> 20} MiB, read one after another` }
  }
}

/**
 * reps rounds of every reader on both trees, the trees' order swapped each
 * round so drift and a warm page cache favour neither.
 * @returns {Record<string, { pub: object[], priv: object[] }>}
 */
async function alternate ({ reps, readers, ...o }) {
  const out = Object.fromEntries(readers.map(r => [r.name, { pub: [], priv: [] }]))
  for (let i = 0; i < reps; i++) {
    for (const r of readers) {
      for (const which of i % 2 ? ['priv', 'pub'] : ['pub', 'priv']) {
        // one reader state per tree: both are signed by one key, and their sequence numbers differ
        out[r.name][which].push(await r.run({ ...o, addr: o.addrs[which], identity: which === 'priv' ? o.identity : null, stateDir: path.join(o.stateDir, which) }))
      }
    }
  }
  return out
}

/** Where the time goes, for each kind of row that missed (the profiles of 2026-12-07; this run's own figures). */
function whyShort (short, raw) {
  const out = []
  const spread = (runs, w) => { const xs = runs[w].map(r => r.rate ?? r).filter(Number.isFinite); return `${Math.min(...xs).toFixed(0)}-${Math.max(...xs).toFixed(0)}` }
  const cpuOf = (runs, w) => median(runs[w].map(r => r.cpuMs)) / 1000
  if (short.some(j => j.label.startsWith('loopback'))) {
    const l = raw.loopback
    out.push(`On loopback the reader is CPU-bound, and the private read costs it more CPU in this run: createReadStream ${cpuOf(l.createReadStream, 'priv').toFixed(2)} s against ${cpuOf(l.createReadStream, 'pub').toFixed(2)} s, the lent read ${cpuOf(l['readRange, lent'], 'priv').toFixed(2)} s against ${cpuOf(l['readRange, lent'], 'pub').toFixed(2)} s (medians; the rates of single runs moved over ${spread(l.createReadStream, 'pub')} MB/s public and ${spread(l.createReadStream, 'priv')} MB/s private for createReadStream). Where it goes (2026-12-07, 256 MiB, each read its own process, load average 8-12 from other jobs on these 2 cores): opening every chunk through node:crypto (client-js/src/crypto/aead-node.js gcmOpenSync: a Decipheriv per blob, and a new Buffer for its plaintext) took 100-150 ms of CPU per 256 MiB in a loop of its own, unpad 20-50 ms more, where OpenSSL's AES-256-GCM alone runs at ~4.5 GB/s here (\`openssl speed\`: ~60 ms); SHA-256, which both reads run twice (each chunk, and the whole file: FORMAT.md §12.7), took ~165 ms per 256 MiB pass. The lent read loses most of what lending gains: its pooled receive buffer holds the ciphertext, but the plaintext is a new allocation per blob, so the read faults in new pages as createReadStream does (25,000-30,000 minor page faults per read against ~16,000 for the public lent read, and 1.08-1.10 s of user CPU against 0.74-0.79 s, 3 reads each, /usr/bin/time). \`rotree cat\` reads lent (P9) and so pays as the lent read does: under perf (2026-12-07, load average ~3, 256 MiB from nginx on loopback, 3 runs each alternated) it used 1.04-1.11 s of CPU (task-clock, all threads) public against 1.43-1.55 s private, with 17,500-18,000 minor page faults against 26,500-29,800; in a perf record of one of each (999 Hz), 1,657 samples against 1,205: AES-GCM itself 76 (_aesni_ctr32_ghash_6x), V8's garbage collector ~90 more (mostly major, concurrent marking: each plaintext is a new ArrayBuffer, external memory, whose growth schedules mark-compacts as P9 describes), clearing and copying new pages ~60, SHA-256 23 (the stored bytes are 1.3% more), and the rest spread thin. So on a reader that is CPU-bound the floor is the public read's CPU plus one AES-GCM pass, ~0.08 s per 256 MiB on 0.7-1.0 s (a ratio of ~0.9-0.92); what this checkout adds beyond that is memory, a new buffer per blob for its plaintext (garbage collection, page faults), and that is what puts the loopback rows below the target. Tried: crypto.subtle.decrypt, which Node runs on libuv's pool (in a loop of its own, 8 in flight): 331-356 ms of CPU over all threads per 256 MiB against 140-145 ms for gcmOpenSync, more CPU than 2 shared cores can give. What would close it: plaintext into a pooled buffer for lent reads (node:crypto's Decipheriv always returns a new Buffer; OpenSSL itself can decrypt in place), or a worker thread doing hash and decrypt, which pays a copy per piece (P14's gap).`)
  }
  if (short.some(j => j.label.includes('RTT'))) {
    const rates = (runs, w) => runs[w].map(r => r.rate ?? r).filter(Number.isFinite)
    const parts = []; const apart = []
    for (const [p, rows] of Object.entries(raw.link ?? {})) {
      for (const [name, runs] of Object.entries(rows)) {
        parts.push(`${p} ${name}: public ${spread(runs, 'pub')}, private ${spread(runs, 'priv')} MB/s`)
        const missed = short.some(j => j.label === `${p}, RTT 50 ms, 1 Gbit/s: ${name}`)
        if (missed && Math.max(...rates(runs, 'priv')) < Math.min(...rates(runs, 'pub'))) apart.push(`${p} ${name}`)
      }
    }
    out.push(`Through the link the reader is less CPU-bound, and single runs of one row moved by up to a third on this shared machine (${parts.join('; ')}). ${apart.length ? `Every private run was slower than every public run in: ${apart.join(', ')}; there the private read's CPU (above) is not fully hidden behind the link.` : 'In every missed row the private and public runs overlap: the misses there are within the run-to-run spread.'} \`rotree cat\` also pays a fixed cost: a private tree's reader loads the private path's modules and opens the keyring before its first request for the root page (a 1 kB file on loopback: 395 ms public against 442 ms private, medians of 9 alternated, 2026-12-07).`)
  }
  if (short.some(j => j.label.startsWith('Chromium'))) {
    out.push(`In the browser the page's main thread is the limit for both reads (2026-12-07, 64 MiB, Chromium's Performance.getMetrics per read: main-thread tasks 2.7-4.1 s of 3.3-4.8 s), most of it in @noble/hashes' SHA-256 hashing the whole file in JavaScript for its signed SHA-256 (FORMAT.md §12.7; WebCrypto has no incremental digest): 1.35-1.8 s of a read's main-thread samples for 64 MiB, ~40 MB/s on this loaded machine, for public and private alike. The private read adds crypto.subtle.importKey and decrypt per chunk (100 ms of the main thread's samples for 64 MiB, the AES work itself on WebCrypto's threads: 206-432 MB/s in a page of its own with 8 in flight, against 967-1,341 MB/s for SHA-256 digest). In that check, alternated, 64 MiB: public 14.8-18.0 MB/s, private 14.0-20.3 MB/s. Runs of this row: public ${spread(raw.browser, 'pub')}, private ${spread(raw.browser, 'priv')} MB/s.`)
  }
  return out
}

/** Both trees in headless Chromium, alternated; null (with why) when it cannot run here. */
async function browserRows ({ t, layout, reps }) {
  const miss = missing('chromium')
  if (miss) return { skipped: miss }
  const { ensureBundle, launchChromium, WEB_BUNDLE } = await import('../test/browser/helpers.js')
  const { createRotreeServer } = await import('../server/index.js')
  const { pageRead } = await import('./browser.js')
  await ensureBundle()
  const webRoot = path.join(t.dir, 'web')
  await fs.mkdir(webRoot, { recursive: true })
  await fs.copyFile(WEB_BUNDLE, path.join(webRoot, 'rotree-client.js'))
  await fs.writeFile(path.join(webRoot, 'index.html'), '<!doctype html><meta charset="utf-8"><title>P15</title><p>P15 bench page</p>\n')
  // the page and the public tree from one `rotree serve`, the private tree from a second (CORS: *)
  const pubSrv = await createRotreeServer({ dir: t.outs.pub, webRoot })
  const privSrv = await createRotreeServer({ dir: t.outs.priv })
  const pubUrl = (await pubSrv.listen({ port: 0, host: '127.0.0.1' })).url
  const privUrl = (await privSrv.listen({ port: 0, host: '127.0.0.1' })).url
  const browser = await launchChromium()
  const runs = { pub: [], priv: [] }
  try {
    const context = await browser.newContext()
    const page = await context.newPage()
    await page.goto(pubUrl)
    const addrs = { pub: `${pubUrl}#${t.key.publicKey}`, priv: `${privUrl}#${t.key.publicKey}` }
    for (let i = 0; i < reps; i++) {
      for (const which of i % 2 ? ['priv', 'pub'] : ['pub', 'priv']) {
        const r = await pageRead(page, { address: addrs[which], files: layout.paths, identity: which === 'priv' ? t.identity.text : null })
        if (r.bytes !== layout.size) throw new Error(`browser, ${which}: read ${r.bytes} of ${layout.size} bytes`)
        runs[which].push(mbps(r.bytes, r.ms))
      }
    }
    await context.close()
    return { runs, version: 'Chromium ' + browser.version() }
  } finally {
    await browser.close()
    await pubSrv.close()
    await privSrv.close()
  }
}

/** Build the two trees: the same folder, the same key, one public and one private with one reader. */
export async function privatePair (files, { label, readers = [] } = {}) {
  const dir = await tmpdir(`rotree-bench-${label}-`)
  const src = path.join(dir, 'src')
  for (const [rel, spec] of Object.entries(files)) {
    const p = path.join(src, rel)
    await fs.mkdir(path.dirname(p), { recursive: true })
    await fs.writeFile(p, typeof spec === 'number' ? prng(spec, rel) : spec)
  }
  const key = makeKey()
  const ident = await generateX25519Identity()
  const identity = { text: `# a bench reader\n${ident}\n`, file: path.join(dir, 'reader.key'), recipient: await identityToRecipient(ident) }
  await fs.writeFile(identity.file, identity.text, { mode: 0o600 })
  const outs = { pub: path.join(dir, 'pub'), priv: path.join(dir, 'priv') }
  const o = { src, key, ttlMs: 86400e3, fsync: false }
  try {
    await build({ ...o, out: outs.pub })
    await build({ ...o, out: outs.priv, private: true, readers: [identity.recipient, ...readers] })
  } catch (err) { await fs.rm(dir, { recursive: true, force: true }); throw err }
  return { dir, src, key, identity, outs, cleanup: () => fs.rm(dir, { recursive: true, force: true }) }
}

export async function run ({ quick = false } = {}) {
  const miss = missing('nginx', 'openssl')
  if (miss) return skipped(id, miss)
  const size = (quick ? 32 : 256) * 2 ** 20
  const servers = {}
  const rows = []; const raw = { size }; const relay = []
  const loopReps = quick ? 1 : 5
  const linkReps = quick ? 1 : 3
  const browserReps = quick ? 1 : 5
  const limitS = 60
  const L = layouts(size)
  let layout = L.one
  // a checkout that cannot build or read the private one-file tree: the parts layout, and the figure says why
  const cut = err => String(err.message).split('\n').find(l => /ROTREE_|Error:/.test(l))?.trim() ?? String(err.message).slice(0, 300)
  let t = await privatePair(layout.files, { label: 'p15' }).catch(err => { raw.probe = { layout: layout.what, step: 'build', error: cut(err) }; return null })
  const judged = []
  const add = (label, runs, target, extra = {}) => {
    const value = median(runs.priv.map(r => r.rate ?? r)); const baseline = median(runs.pub.map(r => r.rate ?? r))
    rows.push({ label, value, baseline, baselineLabel: 'the same read of the public tree', unit: 'MB/s', ...extra })
    judged.push({ label, ratio: value / baseline, target })
  }
  const serveBoth = async () => {
    const cert = await makeCert(path.join(t.dir, 'tls'))
    for (const w of ['pub', 'priv']) servers[w] = await startNginxTree(t.outs[w], { tls: cert })
    return cert
  }
  const stopBoth = async () => { for (const w of Object.keys(servers)) { await servers[w].stop(); delete servers[w] } }
  let cert
  try {
    if (t) {
      cert = await serveBoth()
      // can this client read a private file under a chunk index? (one read; else the parts layout)
      try {
        await libraryRead({ addr: `${servers.priv.url}#${t.key.publicKey}`, file: layout.paths, limitS, opts: libOpts(t.identity) })
      } catch (err) {
        raw.probe = { layout: layout.what, step: 'read', error: cut(err) }
        await stopBoth(); await t.cleanup(); t = null
      }
    }
    if (!t) {
      layout = L.parts
      t = await privatePair(layout.files, { label: 'p15-parts' })
      cert = await serveBoth()
    }
    raw.layout = layout.what
    const readers = readersOf(layout)
    const stateDir = path.join(t.dir, 'state')
    const scratch = await fs.mkdtemp(path.join(existsSync('/dev/shm') ? '/dev/shm' : t.dir, 'rotree-bench-p15-'))
    const common = { readers, layout, identity: t.identity, limitS, stateDir, scratch }
    try {
      raw.published = { pub: await folderBytes(path.join(t.outs.pub, 'h')), priv: await folderBytes(path.join(t.outs.priv, 'h')) }
      // loopback: nginx, no link
      const loop = await alternate({ ...common, reps: loopReps, addrs: { pub: `${servers.pub.url}#${t.key.publicKey}`, priv: `${servers.priv.url}#${t.key.publicKey}` }, ca: null })
      for (const r of readers) add(`loopback, HTTP/1.1: ${r.name}`, loop[r.name], LOOP_TARGET)
      raw.loopback = loop
      // through the link
      raw.link = {}
      for (const p of PROTOCOLS) {
        const links = {}
        try {
          for (const w of ['pub', 'priv']) links[w] = await linkTo({ nginx: servers[w], tls: p.tls, ...LINK })
          const far = await alternate({ ...common, reps: linkReps, addrs: { pub: `${links.pub.origin}#${t.key.publicKey}`, priv: `${links.priv.origin}#${t.key.publicKey}` }, ca: p.tls ? cert.cert : null })
          for (const r of readers) add(`${p.name}, RTT ${LINK.rttMs} ms, 1 Gbit/s: ${r.name}`, far[r.name], LINK_TARGET)
          raw.link[p.name] = far
          for (const w of ['pub', 'priv']) relay.push(await links[w].stats())
        } finally { for (const l of Object.values(links)) await l.stop() }
      }
    } finally { await fs.rm(scratch, { recursive: true, force: true }) }
  } catch (err) {
    await stopBoth(); await t?.cleanup() // the trees go with a figure that fails
    throw err
  }
  await stopBoth()
  let browserNote
  try {
    const b = await browserRows({ t, layout, reps: browserReps })
    if (b.skipped) browserNote = `No browser row: ${b.skipped}.`
    else {
      add(`Chromium, library bundle in a page, rotree serve: readRange`, b.runs, BROWSER_TARGET)
      raw.browser = b.runs
      browserNote = `The browser row: ${b.version}, headless, a page served with the public tree by \`rotree serve\` on loopback (a secure origin, so WebCrypto: AES-GCM and SHA-256 through crypto.subtle), the private tree from a second \`rotree serve\`; each read a new openTree(address, { identity }) (the identity's text) or openTree(address) through the library bundle (bench/browser.js pageRead), readRange() over the whole file (each file in turn), each piece counted and dropped (not joined into a Blob, as P8's read is); median of ${browserReps} reads of each tree, alternated.`
    }
  } finally { await t.cleanup() }
  const cpu = w => median(raw.loopback.createReadStream[w].map(r => r.cpuMs))
  const cpuLent = w => median(raw.loopback['readRange, lent'][w].map(r => r.cpuMs))
  const short = judged.filter(j => !(j.ratio >= j.target))
  const sz = raw.published
  const probeNote = raw.probe
    ? `**Not the intended layout.** This checkout could not ${raw.probe.step} the private tree of ${raw.probe.layout} (${raw.probe.error}): the file's chunks sit under a chunk index (more than 32 chunks, FORMAT.md §4.3), and a private index's children must carry each chunk's key (FORMAT.md §12.8: every ref of a sealed blob holds its key), which the index decoders of this checkout drop (client-js/src/format/chunkindex.js decodeChunkIndex; the gap below). So the rows read the same ${layout.size >> 20} MiB as ${layout.what}, each file's chunks listed in its directory entry; \`rotree get\` of the folder into a tmpfs stands in for \`rotree cat\` (one file per process). `
    : ''
  return {
    id,
    title: `private tree against the same public tree: verified read of ${layout.size >> 20} MiB`,
    command: `npm run bench${quick ? ':quick' : ''} -- P15`,
    target: `a private tree reads at ≥ ${LOOP_TARGET}× the same public tree on loopback, ≥ ${LINK_TARGET}× at RTT 50 ms, ≥ ${BROWSER_TARGET}× in the browser`,
    met: short.length === 0,
    rows,
    raw,
    notes: [
      `${probeNote}The data: ${layout.what}, pseudo-random bytes, built twice from the same folder with the same key (builder/build.js, format 2): a public tree and a private tree with one reader (FORMAT.md §12.8: each blob AES-256-GCM under a key of its own, padded to padmé sizes). Published h/: ${(sz.pub.bytes / 2 ** 20).toFixed(1)} MiB in ${sz.pub.files} blobs public, ${(sz.priv.bytes / 2 ** 20).toFixed(1)} MiB in ${sz.priv.files} blobs private (the keyring and the manifest included). Each read is its own process: the library reads through bench/lib/reader.js (openTree() with { identity } for the private tree, then createReadStream(), or readRange({ lend: true }) with each piece given back), ${layout.cat ? '`rotree cat ADDR /big.bin --identity FILE > /dev/null`' : '`rotree get ADDR /parts -o DEST --identity FILE` into a new folder of /dev/shm'}; times include openTree() (fsinfo.json, the keyring, unwrapping the root) and, for the CLI, Node's start-up.`,
      `Loopback: one nginx (1 worker, \`rotree nginx-config\`) per tree, median of ${loopReps} rounds, each round reading both trees with each reader, the order swapped from round to round. CPU of the library reader's process (median): createReadStream ${(cpu('priv') / 1000).toFixed(2)} s private against ${(cpu('pub') / 1000).toFixed(2)} s public, lent ${(cpuLent('priv') / 1000).toFixed(2)} s against ${(cpuLent('pub') / 1000).toFixed(2)} s. Every run's rate is in the raw results.`,
      `The link rows: bench/lib/link.js in front of each nginx (${LINK.mbit} Mbit/s, RTT ${LINK.rttMs} ms, TCP windows as in P3w), median of ${linkReps} rounds as above; over HTTPS with TLS 1.3 and a certificate made at bench time (nginx offers h2; the reader takes HTTP/1.1 over TLS, its default since 2026-12-07).`,
      browserNote,
      relayNote(relay),
      runContext()
    ],
    gap: short.length || raw.probe ? [raw.probe ? `The intended layout, ${raw.probe.layout}, is not measured: its private tree could not be ${raw.probe.step === 'build' ? 'built' : 'read'} (${raw.probe.error}).${KNOWN_KEYLESS.test(raw.probe.error) ? ' ' + KEYLESS_WHY : ''}` : '', short.length ? `Short of the target in this run: ${short.map(j => `${j.label} (${j.ratio.toFixed(3)}×, target ${j.target}×)`).join('; ')}.` : '', ...whyShort(short, raw)].filter(Boolean).join(' ') : undefined
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const fig = await run({ quick: process.argv.includes('--quick') })
  if (fig.skipped) { console.log(`${fig.id} skipped: ${fig.skipped}`); process.exit(0) }
  const { figureMarkdown } = await import('./lib/report.js')
  console.log(figureMarkdown(fig))
  console.log(JSON.stringify(fig.raw))
  process.exit(0)
}

#!/usr/bin/env node
// P17: a private tree's keyring at 10,000 readers (FORMAT.md §12.8).
//   - `rotree access remove OUT age1…` of 1 reader of 10,000, then `rotree
//     resign OUT --key K`: what is new in OUT/h/ afterwards (target: the
//     keyring only, ≤ 1 MB; 0 blobs re-encrypted; the release's manifest and
//     root unchanged), every file of h/ compared by name, size, inode and mtime;
//   - opening that keyring as reader 10,000 (the last of the input list) with
//     openKeyring(bytes, identity) (client-js/src/access/keyring.js): the
//     median of several opens in a new process (target ≤ 50 ms), against the
//     same open of a keyring of one reader, and the `age` tool's `age -d`;
//   - what a reader pays for it end to end: `rotree cat` of a small file of
//     that tree against the same tree with one reader, on loopback and through
//     an emulated link (1 Gbit/s, RTT 50 ms; not judged).
//
//   node bench/p17-keyring.js [--quick]                  prints the figure (or: npm run bench -- P17)
//   node bench/p17-keyring.js --open KEYRING IDFILE N    (the timed opens, in their own process: one JSON line)
import './lib/env.js' // first: the environment the timed commands inherit
import fs from 'node:fs/promises'
import path from 'node:path'
import os from 'node:os'
import { execFileSync, spawnSync } from 'node:child_process'
import { randomBytes, createPrivateKey, createPublicKey } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { pathToFileURL } from 'node:url'
import { bech32 } from '@scure/base'
import { median } from './lib/proc.js'
import { smallTree } from './p6-trees.js'
import { timedRun } from './build.js'
import { missing } from './lib/need.js'
import { startNginxTree } from './lib/nginx.js'
import { linkTo, runContext, relayNote } from './lib/netfix.js'
import { rotreeCat } from './lib/clients.js'
import { prng } from '../test/helpers/fixtures.js'
import { padme } from '../client-js/src/format/seal.js'

export const id = 'P17'
const BIN = new URL('../bin/rotree.js', import.meta.url).pathname
const SELF = new URL(import.meta.url).pathname
const KEYRING_MAX = 1e6 // bytes
const OPEN_MAX_MS = 50
const LINK = { rttMs: 50, mbit: 1000 }
const STANZA = '-> X25519 '.length + 43 + 1 + 43 + 1 // age's X25519 stanza, bytes

/** The most readers whose padded stanzas fit in `bytes`. */
function maxReadersUnder (bytes) {
  let lo = 1; let hi = 1 << 20
  while (lo < hi) { const m = (lo + hi + 1) >> 1; if (STANZA * padme(m) <= bytes) lo = m; else hi = m - 1 }
  return lo
}

// PKCS#8 of an X25519 private key: this prefix, then the 32 bytes
const X25519_PKCS8 = Buffer.from('302e020100300506032b656e04220420', 'hex')

/**
 * n X25519 readers, fast: random 32-byte scalars, each one's public key from
 * node:crypto (a PKCS#8 key in, its SPKI out: the last 32 bytes), encoded as
 * age does (bech32 "age" / "AGE-SECRET-KEY-"). Not generateKeyPairSync with a
 * JWK export: 10,000 of those deadlocked Node v20.20.2 here once (2026-12-07:
 * a KeyGenJob's destructor, run by a GC inside ExportJWKEdKey, waiting on a
 * mutex that call held).
 */
export function makeReaders (n) {
  const out = new Array(n)
  for (let i = 0; i < n; i++) {
    const d = randomBytes(32)
    const x = createPublicKey(createPrivateKey({ key: Buffer.concat([X25519_PKCS8, d]), format: 'der', type: 'pkcs8' })).export({ format: 'der', type: 'spki' }).subarray(-32)
    out[i] = { recipient: bech32.encodeFromBytes('age', x), identity: bech32.encodeFromBytes('AGE-SECRET-KEY-', d).toUpperCase() }
  }
  return out
}

/** name → { size, ino, mtimeMs } of every file under dir. */
async function snapshot (dir) {
  const m = new Map()
  for (const e of await fs.readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!e.isFile()) continue
    const p = path.join(e.parentPath ?? e.path, e.name)
    const st = await fs.stat(p)
    m.set(path.relative(dir, p), { size: st.size, ino: st.ino, mtimeMs: st.mtimeMs })
  }
  return m
}

/** The timed opens, in a new process: { firstMs, runs: [ms], epoch } or { error }. */
function timedOpens (keyring, idFile, n) {
  const r = spawnSync(process.execPath, [SELF, '--open', keyring, idFile, String(n)], { encoding: 'utf8', timeout: 120_000 })
  if (r.status !== 0) throw new Error(`p17 --open failed: ${r.stderr}`)
  return JSON.parse(r.stdout.trim().split('\n').pop())
}

async function openMain ([keyringFile, idFile, n]) {
  const { openKeyring } = await import('../client-js/src/access/keyring.js')
  const bytes = new Uint8Array(readFileSync(keyringFile))
  const identity = readFileSync(idFile, 'utf8').split('\n').find(l => l.startsWith('AGE-SECRET-KEY-'))
  const runs = []; const cpu = []; let epoch = null; let error = null
  for (let i = 0; i < Number(n); i++) {
    const c = process.cpuUsage()
    const t = performance.now()
    try { epoch = (await openKeyring(bytes, identity)).epoch } catch (err) { error = err.code ?? err.message }
    runs.push(performance.now() - t)
    const d = process.cpuUsage(c); cpu.push((d.user + d.system) / 1000)
  }
  // cpu: the process's CPU time per open (on a loaded machine the wall time also holds others' time slices)
  process.stdout.write(JSON.stringify({ firstMs: runs[0], runs, cpu, epoch, error }) + '\n')
}

function rotree (args, cpuFile) { return timedRun(process.execPath, [BIN, ...args], cpuFile) }

export async function run ({ quick = false } = {}) {
  const n = quick ? 2000 : 10_000
  const opens = quick ? 5 : 21
  const catReps = quick ? 1 : 5
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'rotree-bench-p17-'))
  const cpuFile = path.join(dir, 'cpu')
  const servers = []
  try {
    const key = path.join(dir, 'k')
    execFileSync(process.execPath, [BIN, 'keygen', key], { stdio: 'ignore' })
    // the tree: P6's small files, 20 per directory, and four files of 4 MiB
    const src = path.join(dir, 'src')
    smallTree(src, 1000, { salt: 17, perDir: 20 })
    await fs.mkdir(path.join(src, 'data'))
    for (let i = 0; i < 4; i++) await fs.writeFile(path.join(src, 'data', `b${i}.bin`), prng(4 * 2 ** 20, `p17-${i}`))
    await fs.writeFile(path.join(src, 'small.txt'), 'a small file read by rotree cat\n'.repeat(32))
    const t0 = performance.now()
    const readers = makeReaders(n)
    const genMs = performance.now() - t0
    const last = readers[n - 1]; const first = readers[0]; const gone = readers[n >> 1]
    const readersFile = path.join(dir, 'readers.txt')
    await fs.writeFile(readersFile, '# bench readers\n' + readers.map(r => r.recipient).join('\n') + '\n')
    const idFile = who => { const f = path.join(dir, `${who}.key`); return fs.writeFile(f, `# ${who}\n${({ last, first, gone })[who].identity}\n`, { mode: 0o600 }).then(() => f) }
    const ids = { last: await idFile('last'), first: await idFile('first'), gone: await idFile('gone') }

    // the tree with n readers, and the same tree with one (reader n), for the baselines
    const out = path.join(dir, 'out'); const out1 = path.join(dir, 'out1')
    const buildN = rotree(['build', src, out, '--key', key, '--private', '--readers', readersFile, '--json', '--no-fsync'], cpuFile)
    const build1 = rotree(['build', src, out1, '--key', key, '--private', '--reader', last.recipient, '--json', '--no-fsync'], cpuFile)
    const fsinfo = async o => JSON.parse(await fs.readFile(path.join(o, 'fsinfo.json'), 'utf8'))
    const before = await fsinfo(out)
    const h0 = await snapshot(path.join(out, 'h'))

    // remove one reader, publish
    const remove = rotree(['access', 'remove', out, gone.recipient, '--no-fsync'], cpuFile)
    const resign = rotree(['resign', out, '--key', key, '--no-fsync', '--json'], cpuFile)
    const after = await fsinfo(out)
    const h1 = await snapshot(path.join(out, 'h'))
    const added = [...h1.keys()].filter(k => !h0.has(k))
    const changed = [...h1.keys()].filter(k => h0.has(k) && (h0.get(k).ino !== h1.get(k).ino || h0.get(k).mtimeMs !== h1.get(k).mtimeMs || h0.get(k).size !== h1.get(k).size))
    const removed = [...h0.keys()].filter(k => !h1.has(k))
    const keyringName = k => path.basename(k) === after.access.keyring.hash
    const newKeyring = added.filter(keyringName)
    const otherNew = added.filter(k => !keyringName(k))
    const newBytes = added.reduce((s, k) => s + h1.get(k).size, 0)
    const hBytes = [...h1.values()].reduce((s, v) => s + v.size, 0)
    const keyringPath = k => path.join(out, 'h', [...h1.keys()].find(x => path.basename(x) === k.hash) ?? k.hash)
    const keyringAfter = keyringPath(after.access.keyring)
    const keyringBefore = path.join(out, 'h', [...h0.keys()].find(x => path.basename(x) === before.access.keyring.hash))
    const before1 = await fsinfo(out1)
    const keyring1 = path.join(out1, 'h', [...(await snapshot(path.join(out1, 'h'))).keys()].find(x => path.basename(x) === before1.access.keyring.hash))
    const sameManifest = JSON.stringify(before.release.manifest) === JSON.stringify(after.release.manifest)
    const sameRoot = JSON.stringify(before.release.root) === JSON.stringify(after.release.root)

    // opening the keyring: each series in a new process
    const openLast = timedOpens(keyringAfter, ids.last, opens)
    const openFirst = timedOpens(keyringAfter, ids.first, opens)
    const openGone = timedOpens(keyringAfter, ids.gone, Math.min(opens, 5))
    const openOne = timedOpens(keyring1, ids.last, opens)
    const openBefore = timedOpens(keyringBefore, ids.last, opens)
    if (openLast.error || openFirst.error || openOne.error) throw new Error(`a reader could not open its keyring: ${openLast.error ?? openFirst.error ?? openOne.error}`)
    if (openGone.error !== 'ROTREE_NO_ACCESS') throw new Error(`the removed reader: ${openGone.error ?? 'opened the new keyring'}`)
    // the age tool on the same keyring, as a process
    const ageMs = []
    if (!spawnSync('age', ['--version']).error) {
      for (let i = 0; i < (quick ? 3 : 7); i++) {
        const t = performance.now()
        const r = spawnSync('age', ['-d', '-i', ids.last, keyringAfter], { stdio: ['ignore', 'ignore', 'pipe'] })
        if (r.status !== 0) throw new Error(`age -d: ${r.stderr}`)
        ageMs.push(performance.now() - t)
      }
    }

    // rotree cat of a small file: n readers against one, loopback and through a link
    const cat = { loopback: { n: [], one: [] }, link: { n: [], one: [] } }
    let relay = null
    if (!missing('nginx')) {
      const ngN = await startNginxTree(out, {}); servers.push(ngN)
      const ng1 = await startNginxTree(out1, {}); servers.push(ng1)
      const pk = after.anchor
      const catOnce = async (origin, which) => {
        const r = await rotreeCat({ addr: `${origin}#${pk}`, file: '/small.txt', size: 1024, limitS: 30, stateDir: path.join(dir, `state-${which}`), identity: ids.last })
        return r.ms
      }
      for (let i = 0; i < catReps; i++) for (const w of i % 2 ? ['one', 'n'] : ['n', 'one']) cat.loopback[w].push(await catOnce(w === 'n' ? ngN.url : ng1.url, w))
      const links = { n: await linkTo({ nginx: ngN, tls: false, ...LINK }), one: await linkTo({ nginx: ng1, tls: false, ...LINK }) }
      try {
        for (let i = 0; i < catReps; i++) for (const w of i % 2 ? ['one', 'n'] : ['n', 'one']) cat.link[w].push(await catOnce(links[w].origin, w))
        relay = [await links.n.stats(), await links.one.stats()]
      } finally { await links.n.stop(); await links.one.stop() }
    }

    const kb = b => `${(b / 1000).toLocaleString('en-US', { maximumFractionDigits: 1 })} kB`
    const met = newKeyring.length === 1 && otherNew.length === 0 && changed.length === 0 && newBytes <= KEYRING_MAX && median(openLast.runs) <= OPEN_MAX_MS && sameManifest && sameRoot
    const rows = [
      { label: `removing 1 of ${n.toLocaleString('en-US')} readers, then rotree resign: new bytes in h/`, value: newBytes / 1e6, baseline: hBytes / 1e6, baselineLabel: 'all of h/ (what re-encrypting the tree would publish)', unit: 'MB', higherIsBetter: false, note: `(${added.length} new file${added.length === 1 ? '' : 's'}: ${newKeyring.length ? `the keyring, ${newBytes.toLocaleString('en-US')} bytes` : 'no keyring'}${otherNew.length ? `, ${otherNew.length} other` : ''})` },
      { label: 'blobs written again by the resign (new other than the keyring, or changed)', value: otherNew.length + changed.length, baseline: h0.size, baselineLabel: 'blobs in h/ before', unit: 'blobs', higherIsBetter: false },
      { label: `openKeyring as reader ${n.toLocaleString('en-US')} (last in the list), median of ${opens}`, value: median(openLast.runs), baseline: median(openOne.runs), baselineLabel: 'the same open of a one-reader keyring', unit: 'ms', higherIsBetter: false },
      { label: `the same, the first open in a new process`, value: openLast.firstMs, baseline: openOne.firstMs, baselineLabel: 'the same, one-reader keyring', unit: 'ms', higherIsBetter: false },
      { label: 'openKeyring as reader 1 (first in the list), median', value: median(openFirst.runs), baseline: median(openOne.runs), baselineLabel: 'the same open of a one-reader keyring', unit: 'ms', higherIsBetter: false },
      { label: 'the removed reader: ROTREE_NO_ACCESS after, median', value: median(openGone.runs), baseline: median(openOne.runs), baselineLabel: 'the same open of a one-reader keyring', unit: 'ms', higherIsBetter: false },
      ...(ageMs.length ? [{ label: `openKeyring as reader ${n.toLocaleString('en-US')}, first open in a new process, against the age tool`, value: openLast.firstMs, baseline: median(ageMs), baselineLabel: '`age -d -i ID KEYRING` (a process, start-up included)', unit: 'ms', higherIsBetter: false }] : []),
      ...(cat.loopback.n.length
        ? [{ label: `rotree cat of a small file, loopback: ${n.toLocaleString('en-US')} readers`, value: median(cat.loopback.n), baseline: median(cat.loopback.one), baselineLabel: 'the same tree with one reader', unit: 'ms', higherIsBetter: false },
            { label: `rotree cat of a small file, HTTP/1.1, RTT ${LINK.rttMs} ms, 1 Gbit/s: ${n.toLocaleString('en-US')} readers`, value: median(cat.link.n), baseline: median(cat.link.one), baselineLabel: 'the same tree with one reader', unit: 'ms', higherIsBetter: false }]
        : [])
    ]
    const ok = {
      size: newBytes <= KEYRING_MAX,
      only: newKeyring.length === 1 && otherNew.length === 0 && changed.length === 0,
      open: median(openLast.runs) <= OPEN_MAX_MS
    }
    return {
      id,
      title: `a private tree's keyring at ${n.toLocaleString('en-US')} readers: removing one, and opening it`,
      command: `npm run bench${quick ? ':quick' : ''} -- P17`,
      target: `removing 1 reader of ${n.toLocaleString('en-US')} publishes ≤ 1 MB of new keyring and re-encrypts 0 unchanged blobs; opening the keyring as reader ${n.toLocaleString('en-US')} takes ≤ ${OPEN_MAX_MS} ms`,
      met,
      rows,
      raw: {
        readers: n, generateMs: genMs, blobs: h0.size, hBytes, added: added.map(k => ({ name: k, size: h1.get(k).size })), changed, removed,
        keyring: { before: before.access.keyring, after: after.access.keyring, epoch: [before.access.epoch, after.access.epoch], one: before1.access.keyring },
        sameManifest, sameRoot,
        opens: { last: openLast, first: openFirst, gone: openGone, oneReader: openOne, lastBeforeRemoval: openBefore }, ageMs,
        commands: { buildN: { ms: buildN.ms, cpuMs: buildN.cpuMs }, build1: { ms: build1.ms, cpuMs: build1.cpuMs }, remove: { ms: remove.ms, cpuMs: remove.cpuMs }, resign: { ms: resign.ms, cpuMs: resign.cpuMs } },
        cat
      },
      notes: [
        `The tree: 1,000 small files (bench/p6-trees.js, 20 per directory), four files of 4 MiB and one small file, built private (\`rotree build SRC OUT --key K --private --readers FILE\`) with ${n.toLocaleString('en-US')} X25519 readers (random scalars, their public keys from node:crypto, encoded as age encodes them, ${(genMs / 1000).toFixed(1)} s for all); ${h0.size.toLocaleString('en-US')} files in h/, ${kb(hBytes)}. That build took ${(buildN.ms / 1000).toFixed(1)} s (${(buildN.cpuMs / 1000).toFixed(1)} s of CPU) against ${(build1.ms / 1000).toFixed(1)} s (${(build1.cpuMs / 1000).toFixed(1)} s) with one reader. Then \`rotree access remove OUT age1…\` of reader ${((n >> 1) + 1).toLocaleString('en-US')} (${(remove.ms / 1000).toFixed(2)} s) and \`rotree resign OUT --key K\` (${(resign.ms / 1000).toFixed(2)} s, ${(resign.cpuMs / 1000).toFixed(2)} s of CPU): epoch ${before.access.epoch} → ${after.access.epoch}; the keyring ${before.access.keyring.size.toLocaleString('en-US')} → ${after.access.keyring.size.toLocaleString('en-US')} bytes (${(after.access.keyring.size / 2 ** 20).toFixed(3)} MiB; one X25519 stanza of ~98 bytes per reader, padded to padmé(readers) stanzas, FORMAT.md §12.8); the one-reader keyring is ${before1.access.keyring.size.toLocaleString('en-US')} bytes. h/ compared file by file (name, size, inode, mtime): ${added.length} new, ${changed.length} changed, ${removed.length} removed; the release's manifest ${sameManifest ? 'unchanged' : 'CHANGED'} and its root ${sameRoot ? 'unchanged' : 'CHANGED'}.`,
        `Opens: openKeyring(bytes, identity) (client-js/src/access/keyring.js) in a new Node process per series, ${opens} opens each, the keyring read from h/ once; the first open of a process includes compiling the code it runs. Reader ${n.toLocaleString('en-US')}: ${openLast.runs.map(x => x.toFixed(1)).join(', ')} ms (CPU time of the process per open: median ${median(openLast.cpu).toFixed(1)} ms, against ${median(openOne.cpu).toFixed(1)} ms for the one-reader keyring). The same reader on the keyring before the removal: median ${median(openBefore.runs).toFixed(1)} ms. The removed reader tries every stanza before ROTREE_NO_ACCESS. The one-reader open is mostly two X25519 scalar multiplications in @noble/curves' BigInt ladder (client-js/src/crypto/x25519.js: the identity's public key, then the shared secret); at ${n.toLocaleString('en-US')} readers the open also splits the ~1 MB header into its ~${(2 * padme(n - 1)).toLocaleString('en-US')} lines (a view each), tries stanzas outwards from the position the reader's order value predicts (~√N of them), and checks the age header's HMAC over the whole header.${ageMs.length ? ` \`age -d\` (${execFileSync('age', ['--version']).toString().trim()}): ${ageMs.map(x => x.toFixed(0)).join(', ')} ms; it tries the stanzas in their order with one X25519 each, so its time depends on where this reader's stanza falls in the keyring's order (a new order at every seal).` : ''}`,
        cat.loopback.n.length ? `rotree cat rows: \`rotree cat ADDR /small.txt --identity FILE\` (a new process each, Node's start-up included, a new reader state per tree), from nginx on loopback and through bench/lib/link.js (${LINK.mbit} Mbit/s, RTT ${LINK.rttMs} ms, TCP windows as in P3w); median of ${catReps}, alternated. A reader fetches fsinfo.json, then the keyring, then the root: at ${n.toLocaleString('en-US')} readers the keyring is ${kb(after.access.keyring.size)}, fetched in TCP slow start after fsinfo.json (10 segments, ~14 kB, in the first round trip, doubling each round trip). ${relay ? relayNote(relay) : ''}` : 'No rotree cat rows: nginx not found (Debian package: nginx).',
        cat.link.n.length ? `At RTT ${LINK.rttMs} ms the reader of the ${n.toLocaleString('en-US')}-reader tree took ${(median(cat.link.n) - median(cat.link.one)).toFixed(0)} ms (${((median(cat.link.n) - median(cat.link.one)) / LINK.rttMs).toFixed(1)} RTT) longer than the reader of the one-reader tree: the keyring's ${kb(after.access.keyring.size)} come on a connection in slow start, which needs ~log2(${kb(after.access.keyring.size)} / 14.5 kB) ≈ ${Math.log2(after.access.keyring.size / 14480).toFixed(1)} round trips whatever the reader does, and the root page cannot be asked for before the keyring is open (its ref is wrapped under the epoch key). On loopback the difference is the open itself.` : '',
        runContext()
      ].filter(Boolean),
      gap: met
        ? undefined
        : [
            ok.size ? '' : `The new keyring is ${newBytes.toLocaleString('en-US')} bytes, ${(newBytes - KEYRING_MAX).toLocaleString('en-US')} over 1 MB (10^6 bytes)${newBytes <= 2 ** 20 ? `, ${(newBytes / 2 ** 20).toFixed(3)} MiB` : ''}. It is what the format makes it, not an implementation's overhead: age's X25519 stanza is \`-> X25519 <share: 43 base64 characters>\\n<body: 43>\\n\`, ${STANZA} bytes, and FORMAT.md §12.8 pads the count to padmé(readers): ${(n - 1).toLocaleString('en-US')} readers → ${padme(n - 1).toLocaleString('en-US')} stanzas, ${(STANZA * padme(n - 1)).toLocaleString('en-US')} bytes, and the rest (${(after.access.keyring.size - STANZA * padme(n - 1)).toLocaleString('en-US')} bytes) is the age header line, its MAC and the one STREAM chunk of the payload. Without the padding ${(n - 1).toLocaleString('en-US')} stanzas would be ${(STANZA * (n - 1)).toLocaleString('en-US')} bytes; the same bound at 1 MB holds ${Math.floor((KEYRING_MAX - (after.access.keyring.size - STANZA * padme(n - 1))) / STANZA).toLocaleString('en-US')} stanzas, so after padding at most ~${maxReadersUnder(KEYRING_MAX - (after.access.keyring.size - STANZA * padme(n - 1))).toLocaleString('en-US')} readers. The ephemeral share repeats in every stanza (43 of the 98 bytes) because the age format names it per stanza. What would bring 10,000 readers under 10^6 bytes: a keyring format without the repeated share (no longer an age file the \`age\` tool opens), or coarser padding; or reading the target as 1 MiB (1,048,576 bytes), which it meets.`,
            ok.only ? '' : `The resign wrote more than the keyring: ${otherNew.length} other new file(s) and ${changed.length} changed (raw results list them).`,
            sameManifest && sameRoot ? '' : 'The resign changed the release\'s manifest or root.',
            ok.open ? '' : `Opening as reader ${n.toLocaleString('en-US')} took ${median(openLast.runs).toFixed(1)} ms (median).`
          ].filter(Boolean).join(' ')
    }
  } finally {
    for (const s of servers) await s.stop()
    await fs.rm(dir, { recursive: true, force: true })
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const args = process.argv.slice(2)
  if (args[0] === '--open') await openMain(args.slice(1))
  else {
    const fig = await run({ quick: args.includes('--quick') })
    const { figureMarkdown } = await import('./lib/report.js')
    console.log(figureMarkdown(fig))
    console.log(JSON.stringify(fig.raw))
  }
}

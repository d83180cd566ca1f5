// P7: `rotree pull` after a small change moves only what changed. A real tree
// (/usr/share/doc and a large binary) is built, served by nginx from
// `rotree nginx-config`, and pulled into a mirror folder; then, one at a time:
//   - one line inserted in the middle of a text file,
//   - one line inserted in the middle of the large binary,
//   - nothing changed, the root re-signed (`rotree resign`),
// each followed by a rebuild and a `rotree pull --json`. The bytes the pull
// received are set against the target's bound (the blobs the rebuild added —
// the changed chunks, the chunk index and directory pages on the path — plus
// the signed files the publish changed: fsinfo.json, and the transparency
// log's new tiles and checkpoint, FORMAT.md §13, which a mirror copies for its
// readers) and against the changed file's size (what a plain file copy would move).
import fs from 'node:fs/promises'
import path from 'node:path'
import { execFileSync } from 'node:child_process'
import { startNginx } from './lib/servers.js'
import { tmpdir } from '../test/helpers/fixtures.js'

export const id = 'P7'
const ROOT = new URL('../', import.meta.url).pathname
const BIN = path.join(ROOT, 'bin/rotree.js')
const rotree = args => execFileSync(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 << 20 }).toString()

async function blobSizes (out) {
  const m = new Map()
  for (const n of await fs.readdir(path.join(out, 'h'))) if (/^[0-9a-f]{64}$/.test(n)) m.set(n, (await fs.stat(path.join(out, 'h', n))).size)
  return m
}

/**
 * The signed files outside h/ a mirror copies, path → bytes: fsinfo.json, the
 * trust documents, the log's tiles and checkpoint. Not log/fsinfo.proof (a
 * puller makes its own from the log) nor history/ (the fsinfo.json it pulled).
 */
async function signedFiles (out) {
  const m = new Map([['fsinfo.json', await fs.readFile(path.join(out, 'fsinfo.json'))]])
  for (const top of ['trust', 'log']) {
    for (const e of await fs.readdir(path.join(out, top), { withFileTypes: true, recursive: true }).catch(() => [])) {
      if (!e.isFile() || e.name.startsWith('.') || (top === 'log' && e.name === 'fsinfo.proof' && (e.parentPath ?? e.path) === path.join(out, 'log'))) continue
      const p = path.join(e.parentPath ?? e.path, e.name)
      m.set(path.relative(out, p), await fs.readFile(p))
    }
  }
  return m
}

/** The largest uncompressed text file under dir, at least 8 KiB (so it is chunked, not inlined). */
async function pickText (dir) {
  let best = null
  for (const e of await fs.readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!e.isFile() || e.name.endsWith('.gz')) continue
    const p = path.join(e.parentPath ?? e.path, e.name)
    const st = await fs.stat(p)
    if (st.size < 8192 || st.size > 4 << 20) continue
    const head = (await fs.readFile(p)).subarray(0, 4096)
    if (head.includes(0)) continue
    if (!best || st.size > best.size) best = { p, size: st.size }
  }
  return best
}

async function insertLine (file, line) {
  const b = await fs.readFile(file)
  let at = b.indexOf(0x0a, b.length >> 1) + 1
  if (at <= 0) at = b.length >> 1
  await fs.writeFile(file, Buffer.concat([b.subarray(0, at), Buffer.from(line + '\n'), b.subarray(at)]))
  return b.length + line.length + 1
}

export async function run ({ quick = false } = {}) {
  const dir = await tmpdir('rotree-bench-p7-')
  const src = path.join(dir, 'src'); const out = path.join(dir, 'out'); const mirror = path.join(dir, 'mirror')
  await fs.mkdir(src)
  execFileSync('cp', ['-a', '/usr/share/doc', path.join(src, 'doc')])
  const bigSource = (await fs.stat('/usr/lib/chromium/chromium').catch(() => null)) ? '/usr/lib/chromium/chromium' : process.execPath
  const bigBytes = quick ? 20e6 : 100e6
  execFileSync('sh', ['-c', `head -c ${bigBytes} ${bigSource} > ${path.join(src, 'big.bin')}`])
  const key = path.join(dir, 'publisher.key')
  rotree(['keygen', key])
  rotree(['build', src, out, '--key', key, '--no-fsync'])
  const nginx = await startNginx(out)
  const addr = `${nginx.url}#${JSON.parse(await fs.readFile(key, 'utf8')).publicKey}`
  const pull = () => JSON.parse(rotree(['pull', addr, mirror, '--json', '--no-fsync', '--state-dir', path.join(dir, 'state')]))
  const rows = []; let met = true; const notes = []
  try {
    const first = pull()
    const text = await pickText(path.join(src, 'doc'))
    const cases = [
      { label: `one line in ${path.relative(src, text.p)}`, change: () => insertLine(text.p, 'rotree bench: one line more') },
      { label: `one line in big.bin (${Math.round(bigBytes / 1e6)} MB)`, change: () => insertLine(path.join(src, 'big.bin'), 'rotree bench: one line more') },
      { label: 'nothing changed, re-signed', change: null }
    ]
    for (const c of cases) {
      const before = await blobSizes(out)
      const signedBefore = await signedFiles(out)
      let changedSize = 0
      if (c.change) { changedSize = await c.change(); rotree(['build', src, out, '--key', key, '--no-fsync']) } else rotree(['resign', out, '--key', key, '--ttl', '7d'])
      execFileSync('chmod', ['-R', 'a+rX', out])
      const added = [...(await blobSizes(out))].filter(([h]) => !before.has(h))
      // the signed files the publish wrote anew: fsinfo.json, and the log's new tiles and checkpoint
      const changed = [...await signedFiles(out)].filter(([p, b]) => !signedBefore.get(p)?.equals(b))
      const signedBytes = changed.reduce((n, [, b]) => n + b.length, 0)
      const logBytes = changed.filter(([p]) => p.startsWith('log')).reduce((n, [, b]) => n + b.length, 0)
      const bound = added.reduce((n, [, s]) => n + s, 0) + signedBytes
      const r = pull()
      const ok = r.bytesMoved <= bound && r.fetched.blobs === added.length
      met &&= ok
      rows.push({ label: `${c.label}: bytes moved vs bound (new blobs + changed signed files)`, value: r.bytesMoved, baseline: bound, baselineLabel: 'changed chunks + pages + fsinfo.json + new log tiles', unit: 'B', higherIsBetter: false, note: `(${added.length} blobs, ${changed.length} signed files, ${logBytes.toLocaleString('en-US')} B of them the log's)` })
      if (changedSize) rows.push({ label: `${c.label}: bytes moved vs the changed file`, value: r.bytesMoved, baseline: changedSize, baselineLabel: 'changed file size', unit: 'B', higherIsBetter: false })
      notes.push(`${c.label}: ${r.requests} requests, ${r.fetched.blobs} blobs fetched (${r.fetched.bytes.toLocaleString('en-US')} B), ${r.present.blobs.toLocaleString('en-US')} already present; the signed files the publish changed: ${changed.map(([p, b]) => `${p} (${b.length.toLocaleString('en-US')} B)`).join(', ')}.`)
    }
    notes.unshift(`The tree: /usr/share/doc and a ${Math.round(bigBytes / 1e6)} MB binary, ${first.fetched.blobs.toLocaleString('en-US')} blobs, ${(first.fetched.bytes / 1e6).toFixed(0)} MB; the first pull moved ${(first.bytesMoved / 1e6).toFixed(1)} MB in ${first.requests.toLocaleString('en-US')} requests. nginx from \`rotree nginx-config\` serves the publisher's folder; each pull is \`rotree pull --json\` into the same mirror folder. Bytes moved counts every body byte received, fsinfo.json included.`)
  } finally {
    await nginx.stop()
    await fs.rm(dir, { recursive: true, force: true })
  }
  return {
    id, title: '`rotree pull` after a small change: bytes moved',
    command: `npm run bench${quick ? ':quick' : ''} -- P7`,
    target: 'bytes moved ≤ changed chunks + directory path + fsinfo.json (and its entry in the log: new tiles, checkpoint)',
    met, rows, notes
  }
}

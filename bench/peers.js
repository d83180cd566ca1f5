// Peers (P12): build and fetch the same real tree with rotree, OSTree and
// casync (Debian packages), all served by one nginx. rotree builds with
// `build` (format 1, and format 2: compressed blobs) and fetches the format-2
// tree with `pull` (a verified mirror copy); OSTree with `ostree commit` /
// `ostree pull`; casync with `casync make` / `casync extract` over HTTP. Rows
// are rotree's time or size over the peer's. The published size is what a
// mirror serves: h/ and fsinfo.json (not the build index, which stays with
// the publisher).
import fs from 'node:fs/promises'
import path from 'node:path'
import { execFileSync } from 'node:child_process'
import { median } from './lib/proc.js'
import { startNginx } from './lib/servers.js'
import { tmpdir } from '../test/helpers/fixtures.js'

export const id = 'P12'
const ROOT = new URL('../', import.meta.url).pathname
const BIN = path.join(ROOT, 'bin/rotree.js')

function time (cmd, args, opts = {}) {
  const t = performance.now()
  execFileSync(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'], ...opts })
  return performance.now() - t
}

async function du (dir) { return Number(execFileSync('du', ['-sb', dir]).toString().split('\t')[0]) }

export async function run ({ quick = false } = {}) {
  for (const tool of ['ostree', 'casync']) {
    try { execFileSync('which', [tool], { stdio: 'ignore' }) } catch {
      return { id, title: 'peers: OSTree and casync', command: 'npm run bench -- P12', rows: [], notes: [`${tool} is not installed (apt-get install -y ostree casync); figure skipped.`] }
    }
  }
  const dir = await tmpdir('rotree-bench-peers-')
  const src = path.join(dir, 'src')
  await fs.mkdir(src)
  execFileSync('cp', ['-a', '/usr/share/doc', path.join(src, 'doc')])
  const big = (await fs.readdir('/usr/lib/chromium').catch(() => [])).includes('chromium') ? '/usr/lib/chromium/chromium' : process.execPath
  execFileSync('sh', ['-c', `head -c ${quick ? 20 : 100}000000 ${big} > ${path.join(src, 'big.bin')}`])
  const srcBytes = await du(src)
  const pub = path.join(dir, 'www'); await fs.mkdir(pub)
  const key = path.join(dir, 'k')
  execFileSync(process.execPath, [BIN, 'keygen', key], { stdio: 'ignore' })
  const pubKey = JSON.parse(await fs.readFile(key, 'utf8')).publicKey
  const reps = quick ? 1 : 3
  const t = { rotreeBuild: [], rotree1Build: [], ostreeBuild: [], casyncBuild: [], rotreeFetch: [], ostreeFetch: [], casyncFetch: [] }
  let pullCmd = 'get'
  try { execFileSync(process.execPath, [BIN, 'pull', '--help'], { stdio: 'ignore' }); pullCmd = 'pull' } catch {}

  let nginx
  try {
    for (let i = 0; i < reps; i++) {
      for (const d of ['rotree', 'rotree1', 'ostree-repo', 'store', 'index.caidx']) await fs.rm(path.join(pub, d), { recursive: true, force: true })
      // builds (no fsync on any side: ostree's core.fsync=false, rotree --no-fsync, casync does not fsync)
      t.rotreeBuild.push(time(process.execPath, [BIN, 'build', src, path.join(pub, 'rotree'), '--key', key, '--format', '2', '--no-fsync']))
      t.rotree1Build.push(time(process.execPath, [BIN, 'build', src, path.join(pub, 'rotree1'), '--key', key, '--format', '1', '--no-fsync']))
      execFileSync('ostree', ['init', '--repo=' + path.join(pub, 'ostree-repo'), '--mode=archive'])
      execFileSync('ostree', ['config', '--repo=' + path.join(pub, 'ostree-repo'), 'set', 'core.fsync', 'false'])
      t.ostreeBuild.push(time('ostree', ['commit', '--repo=' + path.join(pub, 'ostree-repo'), '--branch=main', '--tree=dir=' + src]))
      t.casyncBuild.push(time('casync', ['make', '--store=' + path.join(pub, 'store'), path.join(pub, 'index.caidx'), src]))
      if (!nginx) nginx = await startNginx(pub, { plain: true })
      else execFileSync('chmod', ['-R', 'a+rX', pub])
      // fetches over HTTP from the same nginx, into empty folders
      const f = path.join(dir, 'fetch'); await fs.rm(f, { recursive: true, force: true }); await fs.mkdir(f)
      const state = path.join(dir, 'state' + i)
      const rArgs = pullCmd === 'pull' ? ['pull', `${nginx.url}rotree/#${pubKey}`, path.join(f, 'r')] : ['get', `${nginx.url}rotree/#${pubKey}`, '/', '-o', path.join(f, 'r')]
      t.rotreeFetch.push(time(process.execPath, [BIN, ...rArgs], { env: { ...process.env, ROTREE_STATE: state } }))
      execFileSync('ostree', ['init', '--repo=' + path.join(f, 'o'), '--mode=archive'])
      execFileSync('ostree', ['remote', 'add', '--repo=' + path.join(f, 'o'), '--no-gpg-verify', 'origin', nginx.url + 'ostree-repo/'])
      t.ostreeFetch.push(time('ostree', ['pull', '--repo=' + path.join(f, 'o'), 'origin', 'main']))
      t.casyncFetch.push(time('casync', ['extract', '--store=' + nginx.url + 'store/', nginx.url + 'index.caidx', path.join(f, 'c')]))
    }
  } finally {
    await nginx?.stop()
  }
  const served = async d => await du(path.join(d, 'h')) + (await fs.stat(path.join(d, 'fsinfo.json'))).size
  const sizes = { rotree: await served(path.join(pub, 'rotree')), rotree1: await served(path.join(pub, 'rotree1')), ostree: await du(path.join(pub, 'ostree-repo')), casync: await du(path.join(pub, 'store')) + await du(path.join(pub, 'index.caidx')) }
  await fs.rm(dir, { recursive: true, force: true })
  const m = k => median(t[k])
  const mb = srcBytes / 1e6
  return {
    id, title: `peers: build and fetch of /usr/share/doc + a ${quick ? 20 : 100} MB binary (${mb.toFixed(0)} MB) against OSTree and casync`,
    command: `npm run bench${quick ? ':quick' : ''} -- P12`,
    target: 'published size (format 2) ≤ 1.1× the OSTree archive repo of the same tree',
    met: sizes.rotree <= 1.1 * sizes.ostree,
    rows: [
      { label: 'published size (format 2) vs OSTree repo', value: sizes.rotree / 1e6, baseline: sizes.ostree / 1e6, baselineLabel: 'ostree archive repo', unit: 'MB', higherIsBetter: false },
      { label: 'published size (format 2) vs casync store', value: sizes.rotree / 1e6, baseline: sizes.casync / 1e6, baselineLabel: 'casync store + index', unit: 'MB', higherIsBetter: false },
      { label: 'published size (format 1) vs OSTree repo', value: sizes.rotree1 / 1e6, baseline: sizes.ostree / 1e6, baselineLabel: 'ostree archive repo', unit: 'MB', higherIsBetter: false },
      { label: 'build (format 2) vs build (format 1)', value: m('rotreeBuild'), baseline: m('rotree1Build'), baselineLabel: 'rotree build --format 1', unit: 'ms', higherIsBetter: false },
      { label: 'build vs ostree commit', value: m('rotreeBuild'), baseline: m('ostreeBuild'), baselineLabel: 'ostree commit', unit: 'ms', higherIsBetter: false },
      { label: 'build vs casync make', value: m('rotreeBuild'), baseline: m('casyncBuild'), baselineLabel: 'casync make', unit: 'ms', higherIsBetter: false },
      { label: `${pullCmd} vs ostree pull`, value: m('rotreeFetch'), baseline: m('ostreeFetch'), baselineLabel: 'ostree pull', unit: 'ms', higherIsBetter: false },
      { label: `${pullCmd} vs casync extract`, value: m('rotreeFetch'), baseline: m('casyncFetch'), baselineLabel: 'casync extract', unit: 'ms', higherIsBetter: false }
    ],
    notes: [`Times are medians of ${reps} runs; lower is better, so a ratio below 1 means rotree was faster. rotree ${pullCmd === 'pull' ? 'pull verifies and mirrors every blob' : 'get verifies and recreates the tree'}; ostree pull checks object checksums (no GPG, as configured); casync extract checks chunk hashes and writes the tree. Build and fetch rows are of the format-2 tree. OSTree and casync compress their objects (zlib / zstd); rotree's format 2 stores a blob deflated when that saves at least 1/32 (FORMAT.md §12.6), and a blob's name stays the SHA-256 of the served bytes; format 1 stores every blob as it is. Sizes are of what a mirror serves: rotree's h/ and fsinfo.json, OSTree's archive repo, casync's store and index.`]
  }
}

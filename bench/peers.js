// Peers: build and fetch the same real tree with rotree, OSTree and casync
// (Debian packages), all served by one nginx. rotree builds with `build` and
// fetches with `pull` (a verified mirror copy) when it exists, else `get`;
// OSTree with `ostree commit` / `ostree pull`; casync with `casync make` /
// `casync extract` over HTTP. Rows are rotree's time over the peer's.
import fs from 'node:fs/promises'
import path from 'node:path'
import { execFileSync } from 'node:child_process'
import { median } from './lib/proc.js'
import { startNginx } from './lib/servers.js'
import { tmpdir } from '../test/helpers/fixtures.js'

export const id = 'peers'
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
      return { id, title: 'peers: OSTree and casync', command: 'npm run bench -- peers', rows: [], notes: [`${tool} is not installed (apt-get install -y ostree casync); figure skipped.`] }
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
  const t = { rotreeBuild: [], ostreeBuild: [], casyncBuild: [], rotreeFetch: [], ostreeFetch: [], casyncFetch: [] }
  let pullCmd = 'get'
  try { execFileSync(process.execPath, [BIN, 'pull', '--help'], { stdio: 'ignore' }); pullCmd = 'pull' } catch {}

  let nginx
  try {
    for (let i = 0; i < reps; i++) {
      for (const d of ['rotree', 'ostree-repo', 'store', 'index.caidx']) await fs.rm(path.join(pub, d), { recursive: true, force: true })
      // builds (no fsync on any side: ostree's core.fsync=false, rotree --no-fsync, casync does not fsync)
      t.rotreeBuild.push(time(process.execPath, [BIN, 'build', src, path.join(pub, 'rotree'), '--key', key, '--no-fsync']))
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
  const sizes = { rotree: await du(path.join(pub, 'rotree')), ostree: await du(path.join(pub, 'ostree-repo')), casync: await du(path.join(pub, 'store')) + await du(path.join(pub, 'index.caidx')) }
  await fs.rm(dir, { recursive: true, force: true })
  const m = k => median(t[k])
  const mb = srcBytes / 1e6
  return {
    id, title: `build and fetch of /usr/share/doc + a ${quick ? 20 : 100} MB binary (${mb.toFixed(0)} MB)`,
    command: `npm run bench${quick ? ':quick' : ''} -- peers`,
    rows: [
      { label: 'build vs ostree commit', value: m('rotreeBuild'), baseline: m('ostreeBuild'), baselineLabel: 'ostree commit', unit: 'ms', higherIsBetter: false },
      { label: 'build vs casync make', value: m('rotreeBuild'), baseline: m('casyncBuild'), baselineLabel: 'casync make', unit: 'ms', higherIsBetter: false },
      { label: `${pullCmd} vs ostree pull`, value: m('rotreeFetch'), baseline: m('ostreeFetch'), baselineLabel: 'ostree pull', unit: 'ms', higherIsBetter: false },
      { label: `${pullCmd} vs casync extract`, value: m('rotreeFetch'), baseline: m('casyncFetch'), baselineLabel: 'casync extract', unit: 'ms', higherIsBetter: false },
      { label: 'published size vs OSTree repo', value: sizes.rotree / 1e6, baseline: sizes.ostree / 1e6, baselineLabel: 'ostree archive repo', unit: 'MB', higherIsBetter: false },
      { label: 'published size vs casync store', value: sizes.rotree / 1e6, baseline: sizes.casync / 1e6, baselineLabel: 'casync store + index', unit: 'MB', higherIsBetter: false }
    ],
    notes: [`Times are medians of ${reps} runs; lower is better, so a ratio below 1 means rotree was faster. rotree ${pullCmd === 'pull' ? 'pull verifies and mirrors every blob' : 'get verifies and recreates the tree'}; ostree pull checks object checksums (no GPG, as configured); casync extract checks chunk hashes and writes the tree. OSTree and casync compress their objects (zlib / zstd); rotree stores blobs uncompressed so that a blob's name is the SHA-256 of the served bytes.`]
  }
}

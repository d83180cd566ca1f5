// docs/DEPLOY.md "Load-testing a mirror or a gateway", run as written there
// (the ports changed, each h2load run cut from 10 s to 3 s): h2load against
// nginx from the generated config and against `rotree gateway`'s server, with
// the URL lists the recipes make, while `rotree get` reads the whole tree back
// verified from the loaded mirror.
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { spawn } from 'node:child_process'
import { needing } from '../helpers/tools.js'
import { tmpdir, writeTree, makeKey, buildTree, prng } from '../helpers/fixtures.js'
import { startNginx } from './helpers.js'
import { startGateway, docRecipe } from '../gateway/helpers.js'

const { test, before, after } = needing('nginx', 'h2load')
const BIN = new URL('../../bin/rotree.js', import.meta.url).pathname

const FILES = {
  'README.md': Buffer.from('# a tree to load\n'),
  'big.bin': prng(3_000_000, 'big'), // several chunks
  'docs/a b.txt': Buffer.from('a name with a space\n'),
  'docs/deep/er/c.txt': prng(20_000, 'c'),
  'site/index.html': Buffer.from('<!doctype html><p>hi</p>\n')
}

const fx = {}
before(async () => {
  fx.dir = await tmpdir('rotree-load-')
  await writeTree(path.join(fx.dir, 'src'), FILES)
  fx.key = makeKey()
  // OUT inside this test's folder: nginx started as root opens up OUT's parent to its workers
  fx.out = (await buildTree(path.join(fx.dir, 'src'), { key: fx.key, out: path.join(fx.dir, 'out') })).out
  fx.nginx = await startNginx(fx.out)
  fx.address = `${fx.nginx.url}#${fx.key.publicKey}`
  fx.gw = await startGateway(null, { tree: fx.address })
  // `rotree` as the doc runs it: a command on PATH
  fx.bin = path.join(fx.dir, 'bin')
  await fs.mkdir(fx.bin)
  await fs.writeFile(path.join(fx.bin, 'rotree'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`, { mode: 0o755 })
})
after(async () => {
  await fx.gw?.close(); await fx.nginx?.stop()
  if (fx.dir) await fs.rm(fx.dir, { recursive: true, force: true })
})

/** A recipe with this run's folder, ports and key in place of the doc's. */
async function recipe (name) {
  return (await docRecipe('DEPLOY.md', name))
    .replaceAll('OUT/', fx.out + '/')
    .replaceAll('http://127.0.0.1:8080/', fx.nginx.url)
    .replaceAll('http://127.0.0.1:8081/', fx.gw.url)
    .replaceAll('#KEY', '#' + fx.key.publicKey)
    .replace('-D 10', '-D 3')
}

function sh (line, { timeoutMs = 60_000 } = {}) {
  return new Promise((resolve, reject) => {
    const p = spawn('sh', ['-c', line], { cwd: fx.dir, env: { ...process.env, PATH: `${fx.bin}:${process.env.PATH}` }, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''; let stderr = ''
    p.stdout.on('data', b => { stdout += b }); p.stderr.on('data', b => { stderr += b })
    const timer = setTimeout(() => p.kill('SIGKILL'), timeoutMs)
    p.on('error', reject)
    p.on('close', code => { clearTimeout(timer); resolve({ code, stdout, stderr }) })
  })
}

/** h2load's summary: every request done, succeeded, and answered 2xx. */
function assertAllGood (r) {
  assert.equal(r.code, 0, `h2load exit ${r.code}: ${r.stderr}${r.stdout.slice(-1000)}`)
  const req = /requests: (\d+) total, \d+ started, (\d+) done, (\d+) succeeded, (\d+) failed, (\d+) errored/.exec(r.stdout)
  const codes = /status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx/.exec(r.stdout)
  assert.ok(req && codes, `h2load's summary: ${r.stdout}`)
  const [, total, done, ok, failed, errored] = req.map(Number)
  assert.ok(total > 0 && done > 0 && ok === done, `every request done succeeded: ${req[0]}`)
  assert.equal(failed + errored, 0, req[0])
  assert.deepEqual(codes.slice(2).map(Number), [0, 0, 0], `only 2xx: ${codes[0]}`)
  // a request whose status came in as -D ended counts as 2xx, not as done
  assert.ok(Number(codes[1]) >= ok, `${codes[0]}; ${req[0]}`)
}

test('a mirror: the blob list from OUT/h, h2load over it, and a verified get while it runs', { timeout: 90_000 }, async () => {
  assert.equal((await sh(await recipe('load-urls'))).code, 0)
  const urls = (await fs.readFile(path.join(fx.dir, 'urls.txt'), 'utf8')).trim().split('\n')
  assert.deepEqual(urls.map(u => u.slice(fx.nginx.url.length)).sort(), (await fs.readdir(path.join(fx.out, 'h'))).map(n => 'h/' + n).sort())

  const load = sh(await recipe('load-run'))
  await new Promise(resolve => setTimeout(resolve, 500)) // the load is on
  const check = await sh(await recipe('load-check'))
  assert.equal(check.code, 0, check.stderr)
  for (const [name, bytes] of Object.entries(FILES)) assert.ok((await fs.readFile(path.join(fx.dir, 'under-load', name))).equals(bytes), name)
  assertAllGood(await load)
})

test('a gateway: its paths from a verified ls -R, percent-encoded, and the same h2load line', { timeout: 90_000 }, async () => {
  const r = await sh(await recipe('load-gateway-urls'))
  assert.equal(r.code, 0, r.stderr)
  const urls = (await fs.readFile(path.join(fx.dir, 'gw-urls.txt'), 'utf8')).trim().split('\n')
  assert.ok(urls.includes(fx.gw.url + 'docs/a%20b.txt'), urls.join('\n'))
  assert.ok(urls.includes(fx.gw.url + 'docs/deep/er/'), 'directories too: their listings')
  assert.equal(urls.length, 9) // 5 files and 4 directories below /
  assertAllGood(await sh((await recipe('load-run')).replace('urls.txt', 'gw-urls.txt')))
})

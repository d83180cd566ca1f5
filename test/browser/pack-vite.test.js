// How users integrate the library: `npm pack` the client package, install the
// tarball into a fresh Vite project, `vite build` it, serve the build and load
// it in Chromium, where it reads and verifies a tree from a mirror on another
// origin. Needs the npm registry once (vite and the package's dependencies;
// `--prefer-offline` reuses npm's cache after that). Bounded: < 3 minutes.
import { needing } from '../helpers/tools.js'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import http from 'node:http'
import path from 'node:path'
import { spawn } from 'node:child_process'
import { tmpdir, writeTree, buildTree, makeKey, prng, serve } from '../helpers/fixtures.js'
import { ROOT, ensureBundle, launchChromium, newPage, readStatic, pageLogs } from './helpers.js'

const { test, before, after } = needing('chromium')

const NETWORK_ERRORS = /ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ETIMEDOUT|ENETUNREACH|network/i

/** Run a command; resolves { code, out } (stdout + stderr), killed after timeoutMs. */
function run (cmd, args, { cwd, timeoutMs = 120_000 } = {}) {
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, args, { cwd, env: { ...process.env, npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false' } })
    let out = ''
    p.stdout.on('data', d => { out += d })
    p.stderr.on('data', d => { out += d })
    const timer = setTimeout(() => { p.kill('SIGKILL'); reject(new Error(`${cmd} ${args.join(' ')} took over ${timeoutMs} ms:\n${out}`)) }, timeoutMs)
    p.on('error', err => { clearTimeout(timer); reject(err) })
    p.on('exit', code => { clearTimeout(timer); resolve({ code, out }) })
  })
}

const MAIN_JS = `// A user's app: import the package by name, as its README says.
import { openTree, RotreeError } from 'rotree-client'

const out = document.getElementById('out')
async function main () {
  // address in the fragment: <mirror-url>#<public key>
  const tree = await openTree(location.hash.slice(1), { stateDir: 'vite-app' })
  const names = await tree.readdir('/')
  const text = new TextDecoder().decode(await tree.readFile('/hello.txt'))
  let streamed = 0
  const reader = tree.createReadStream('/big.bin').getReader()
  for (;;) { const { done, value } = await reader.read(); if (done) break; streamed += value.length }
  let missing = null
  try { await tree.stat('/nope') } catch (err) { missing = err instanceof RotreeError ? err.code : String(err) }
  return { names, text, streamed, missing, seq: tree.info.seq, root: tree.info.root, isReadableStream: tree.createReadStream('/hello.txt') instanceof ReadableStream }
}
main().then(r => { out.textContent = JSON.stringify(r); document.body.dataset.done = 'ok' },
  err => { out.textContent = (err.code || '') + ' ' + err.message; document.body.dataset.done = 'error' })
`

const INDEX_HTML = `<!doctype html><html><head><meta charset="utf-8"><title>vite + rotree-client</title></head>
<body><pre id="out">loading</pre><script type="module" src="/main.js"></script></body></html>
`

let work, tree, browser, appServer

before(async () => {
  await ensureBundle()
  work = await tmpdir('rotree-vite-')
  const key = makeKey()
  const src = await tmpdir()
  await writeTree(src, { 'hello.txt': 'hello from a verified tree\n', 'big.bin': prng(2 << 20, 'vite') })
  const { out } = await buildTree(src, { key })
  tree = { ...(await serve(out)), key }
})

after(async () => {
  await browser?.close()
  await tree?.close()
  if (appServer) await new Promise(resolve => { appServer.closeAllConnections(); appServer.close(resolve) })
  if (work) await fs.rm(work, { recursive: true, force: true })
})

test('npm pack → install into a Vite project → vite build → verified read in Chromium', { timeout: 180_000 }, async t => {
  // 1. the tarball a user would get from the registry
  const pack = await run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', work], { cwd: path.join(ROOT, 'client-js') })
  assert.equal(pack.code, 0, pack.out)
  const [info] = JSON.parse(pack.out.slice(pack.out.indexOf('[')))
  const packed = info.files.map(f => f.path)
  for (const f of ['package.json', 'README.md', 'dist/rotree-client.browser.js', 'types/index.d.ts', 'types/node.d.ts', 'src/index.js', 'src/platform/platform-web.js']) {
    assert.ok(packed.includes(f), `${f} is in the tarball`)
  }
  assert.ok(!packed.some(f => f.startsWith('dist/') && f !== 'dist/rotree-client.browser.js'), 'only the bundle from dist/')

  // 2. a fresh Vite project that depends on it
  const app = path.join(work, 'app')
  await fs.mkdir(app)
  await fs.writeFile(path.join(app, 'package.json'), JSON.stringify({
    name: 'rotree-vite-check', private: true, type: 'module',
    dependencies: { 'rotree-client': `file:../${info.filename}` },
    devDependencies: { vite: '^7.3.0' }
  }, null, 2))
  await fs.writeFile(path.join(app, 'index.html'), INDEX_HTML)
  await fs.writeFile(path.join(app, 'main.js'), MAIN_JS)
  const install = await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', '--loglevel=error'], { cwd: app, timeoutMs: 150_000 })
  if (install.code !== 0 && NETWORK_ERRORS.test(install.out)) {
    t.skip(`npm registry unreachable, cannot install vite: ${install.out.split('\n').find(l => NETWORK_ERRORS.test(l))}`)
    return
  }
  assert.equal(install.code, 0, install.out)

  // 3. build it
  const build = await run(process.execPath, [path.join(app, 'node_modules', 'vite', 'bin', 'vite.js'), 'build', '--logLevel', 'warn'], { cwd: app, timeoutMs: 60_000 })
  assert.equal(build.code, 0, build.out)
  assert.doesNotMatch(build.out, /externalized for browser compatibility/, 'no Node built-in reached the browser build')
  const assets = await fs.readdir(path.join(app, 'dist', 'assets'))
  const js = (await Promise.all(assets.filter(f => f.endsWith('.js')).map(f => fs.readFile(path.join(app, 'dist', 'assets', f), 'utf8')))).join('\n')
  assert.doesNotMatch(js, /node:(http|crypto|stream|os|path)/, 'the browser build has no Node variant')

  // 4. serve the build on its own origin, load it, let it verify
  const dist = path.join(app, 'dist')
  appServer = http.createServer(async (req, res) => {
    const f = await readStatic(dist, req.url)
    if (!f) { res.writeHead(404).end(); return }
    res.writeHead(200, { 'content-type': f.type }).end(f.body)
  })
  await new Promise(resolve => appServer.listen(0, '127.0.0.1', resolve))
  browser = await launchChromium()
  const page = await newPage(browser)
  await page.goto(`http://127.0.0.1:${appServer.address().port}/#${tree.url}#${tree.key.publicKey}`)
  await page.waitForSelector('body[data-done]', { timeout: 30_000 })
  const text = await page.textContent('#out')
  assert.equal(await page.evaluate(() => document.body.dataset.done), 'ok', text + pageLogs(page))
  const r = JSON.parse(text)
  assert.deepEqual(r.names, ['big.bin', 'hello.txt'])
  assert.equal(r.text, 'hello from a verified tree\n')
  assert.equal(r.streamed, 2 << 20)
  assert.equal(r.missing, 'ROTREE_NOT_FOUND')
  assert.equal(r.isReadableStream, true)
})

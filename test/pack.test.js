// The two packages as a user installs them: `npm pack` of rotree and of
// rotree-client, both tarballs installed into a fresh project, then the CLI
// (keygen, build, serve) and the library (openTree through rotree-client, and
// rotree/gateway) used from there. The tarballs must not ship the tests, the
// benchmarks or anything a published folder keeps to itself. Skipped in one
// line when npm cannot reach its registry (the packages' own dependencies
// come from there).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { tmpdir } from './helpers/fixtures.js'

const ROOT = fileURLToPath(new URL('../', import.meta.url))
const NET_ERRORS = /E(NOTFOUND|AI_AGAIN|CONNREFUSED|CONNRESET|TIMEDOUT|NETUNREACH)|network|offline/i

function run (cmd, args, { cwd, timeoutMs = 180_000, env = {} } = {}) {
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, args, { cwd, env: { ...process.env, npm_config_update_notifier: 'false', ...env } })
    const out = []; const err = []
    const killer = setTimeout(() => p.kill('SIGKILL'), timeoutMs)
    p.stdout.on('data', b => out.push(b)); p.stderr.on('data', b => err.push(b))
    p.on('error', reject)
    p.on('close', code => { clearTimeout(killer); resolve({ code, out: Buffer.concat(out).toString(), err: Buffer.concat(err).toString() }) })
  })
}

/** `npm pack` of the package in `dir` into `dest`: the tarball's path and its file list. */
async function pack (dir, dest) {
  const r = await run('npm', ['pack', '--json', '--pack-destination', dest], { cwd: dir })
  assert.equal(r.code, 0, r.err)
  const [info] = JSON.parse(r.out.slice(r.out.indexOf('[')))
  return { file: path.join(dest, info.filename), files: info.files.map(f => f.path) }
}

test('npm pack of both packages installs into a fresh project, and the CLI and the library run from it', { timeout: 300_000 }, async t => {
  const dir = await tmpdir('rotree-pack-'); t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const client = await pack(path.join(ROOT, 'client-js'), dir)
  const cli = await pack(ROOT, dir)
  for (const { files } of [client, cli]) {
    const junk = files.filter(f => /^(test|bench|scripts|demo|node_modules)\/|(^|\/)\.rotree|\.log$/.test(f))
    assert.deepEqual(junk, [], 'nothing but the package itself')
  }
  assert.ok(cli.files.includes('bin/rotree.js') && cli.files.includes('gateway/index.js') && cli.files.includes('web/rotree-client.js'), 'the CLI, the gateway and the web app')
  assert.ok(client.files.includes('src/index.js') && client.files.includes('dist/rotree-client.browser.js'), 'the library and its browser bundle')

  const app = path.join(dir, 'app')
  await fs.mkdir(app)
  await fs.writeFile(path.join(app, 'package.json'), JSON.stringify({ name: 'app', version: '1.0.0', private: true, type: 'module' }))
  const inst = await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', client.file, cli.file], { cwd: app })
  if (inst.code !== 0 && NET_ERRORS.test(inst.err)) { t.skip('needs the npm registry for the packages\' dependencies'); return }
  assert.equal(inst.code, 0, inst.err)

  const bin = path.join(app, 'node_modules', '.bin', 'rotree')
  const help = await run(bin, ['--help'], { cwd: app })
  assert.equal(help.code, 0, help.err)
  assert.match(help.out, /keygen/)

  // the README's quick start, from the installed package
  await fs.mkdir(path.join(app, 'site'))
  await fs.writeFile(path.join(app, 'site', 'a.txt'), 'hello from a tarball\n')
  assert.equal((await run(bin, ['keygen', 'k.key'], { cwd: app })).code, 0)
  const b = await run(bin, ['build', 'site', 'out', '--key', 'k.key'], { cwd: app })
  assert.equal(b.code, 0, b.err)
  const serve = spawn(bin, ['serve', 'out', '--port', '0'], { cwd: app })
  t.after(() => serve.kill())
  let said = ''
  const address = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve said: ${said}`)), 30_000)
    serve.stdout.on('data', d => {
      said += d
      const m = /^address: (\S+)$/m.exec(said)
      if (m) { clearTimeout(timer); resolve(m[1]) }
    })
  })
  await fs.writeFile(path.join(app, 'read.js'), `
import { openTree } from 'rotree-client'
import { gateway } from 'rotree/gateway'
if (typeof gateway !== 'function') throw new Error('rotree/gateway exports no gateway()')
const tree = await openTree(process.argv[2], { stateDir: null })
process.stdout.write(await tree.readFile('/a.txt', 'utf8'))
tree.close()
`)
  const read = await run(process.execPath, ['read.js', address], { cwd: app })
  assert.equal(read.code, 0, read.err)
  assert.equal(read.out, 'hello from a tarball\n')
})

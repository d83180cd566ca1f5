// `rotree gateway` as a user runs it: a real process on port 0, its disk
// cache under the state folder, several trees, usage errors (exit 2), a second
// gateway on a busy cache folder (exit 1 with the reason), SIGTERM (exit 0).
import { needing } from '../helpers/tools.js'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { spawn } from 'node:child_process'
import { serve } from '../helpers/fixtures.js'
import { makeFixture, curl, run, tmpdir, address, writeTree, buildTree, makeKey } from './helpers.js'

const { test, before, after } = needing('curl')

const BIN = new URL('../../bin/rotree.js', import.meta.url).pathname
const fx = {}
before(async () => {
  Object.assign(fx, await makeFixture({ 'a.txt': 'tree a\n', 'site/index.html': '<p>site</p>\n' }))
  fx.mirror = await serve(fx.out)
  fx.addr = address(fx.mirror.url, fx.pk)
  fx.dir = await tmpdir('rotree-gw-cli-')
  fx.env = { ROTREE_STATE: path.join(fx.dir, 'state') }
})
after(async () => { await fx.mirror?.close(); await fx.cleanup?.(); await fs.rm(fx.dir, { recursive: true, force: true }) })

/** Start `rotree gateway …`; resolves once it prints its URL (or rejects with its output when it exits). */
function startCli (t, args) {
  const p = spawn(process.execPath, [BIN, 'gateway', ...args], { env: { ...process.env, ...fx.env } })
  const killer = setTimeout(() => p.kill('SIGKILL'), 60_000)
  const exited = new Promise(resolve => p.on('exit', (code, signal) => { clearTimeout(killer); resolve({ code, signal }) }))
  t.after(async () => { if (p.exitCode === null) { p.kill('SIGTERM'); await exited } })
  let out = ''; let err = ''
  p.stderr.on('data', b => { err += b })
  return new Promise((resolve, reject) => {
    p.stdout.on('data', b => {
      out += b
      const m = /listening at (http:\/\/\S+)/.exec(out)
      if (m) resolve({ url: m[1], proc: p, exited, output: () => ({ out, err }) })
    })
    exited.then(({ code }) => reject(Object.assign(new Error(`gateway exited ${code}: ${err}`), { code, out, err })))
  })
}

test('serves a tree, keeps its disk cache under the state folder, stops cleanly on SIGTERM', { timeout: 60_000 }, async t => {
  const g = await startCli(t, [fx.addr, '--port', '0'])
  const r = await curl(g.url + 'a.txt')
  assert.equal(r.status, 200); assert.equal(r.body.toString(), 'tree a\n')
  const s = JSON.parse((await curl(g.url + '.well-known/rotree/status')).body)
  assert.equal(s.diskCache.dir, path.join(fx.env.ROTREE_STATE, 'gateway-cache-0'))
  assert.match(g.output().out, new RegExp(`sequence \\d+, root ${s.trees[0].root}`))
  assert.equal((await curl(g.url + 'site/')).body.toString(), '<p>site</p>\n')
  g.proc.kill('SIGTERM')
  assert.deepEqual(await g.exited, { code: 0, signal: null })
})

test('--tree NAME=ADDR, --no-index, --cache-dir; a second gateway on the same cache is refused with the reason', { timeout: 60_000 }, async t => {
  const cacheDir = path.join(fx.dir, 'shared-cache')
  const g = await startCli(t, ['--tree', `one=${fx.addr}`, '--tree', `two=${fx.addr}`, '--port', '0', '--cache-dir', cacheDir, '--no-index', '--refresh', '5'])
  assert.equal((await curl(g.url + 'one/a.txt')).body.toString(), 'tree a\n')
  assert.match((await curl(g.url + 'two/site/')).body.toString(), /Index of \/two\/site\//)
  assert.match((await curl(g.url)).body.toString(), /href="\.\/one\/"/)
  const second = await startCli(t, [fx.addr, '--port', '0', '--cache-dir', cacheDir]).catch(e => e)
  assert.equal(second.code, 1)
  assert.match(second.err, /^rotree: ROTREE_STATE: the blob cache .* is in use by another process/m)
})

test('usage errors exit 2 with the usage text; a mirror that is down still starts, answering 502', { timeout: 60_000 }, async t => {
  for (const args of [[], ['--port', 'x', fx.addr], ['--tree', 'noequals'], ['--refresh', '0', fx.addr], ['--cache-size', 'lots', fx.addr], ['--mirror', 'http://x/', '--tree', `a=${fx.addr}`], ['--bogus', fx.addr]]) {
    const r = await run(process.execPath, [BIN, 'gateway', ...args], { env: fx.env, timeoutMs: 20_000 })
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`)
    assert.match(r.stderr, /usage: rotree gateway/)
  }
  const help = await run(process.execPath, [BIN, 'gateway', '--help'], { env: fx.env })
  assert.equal(help.code, 0)
  for (const flag of ['--tree', '--port', '--host', '--refresh', '--cache-dir', '--cache-size', '--no-index', '--mirror']) assert.ok(help.stdout.includes(flag), flag)

  const bad = await run(process.execPath, [BIN, 'gateway', 'http://127.0.0.1:1/#nothex'], { env: fx.env })
  assert.equal(bad.code, 1); assert.match(bad.stderr, /ROTREE_BAD_ADDRESS/)

  const down = address('http://127.0.0.1:9/', fx.pk) // discard port: nothing listens
  const g = await startCli(t, [down, '--port', '0', '--cache-size', '0', '--timeout', '2'])
  assert.match(g.output().out, /not available yet: ROTREE_ALL_MIRRORS_FAILED .*ROTREE_MIRROR_NETWORK/)
  const r = await curl(g.url + 'a.txt')
  assert.equal(r.status, 502)
  assert.match(r.body.toString(), /ROTREE_MIRROR_NETWORK/)
})

/** The URLs a started gateway printed: one per tree (with its mount, from the line's order) and the one it listens at. */
function printedUrls (g) {
  const out = g.output().out
  const trees = [...out.matchAll(/^(http:\/\/\S+)  (?:sequence|not available)/gm)].map(m => m[1])
  return { trees, listening: /listening at (http:\/\/\S+)/.exec(out)[1] }
}

/** Each printed tree URL lists that tree, and its a.txt holds `want[i]`; the listening URL answers. */
async function fetchEach (g, want) {
  const { trees, listening } = printedUrls(g)
  assert.equal(trees.length, want.length, g.output().out)
  for (const [i, u] of trees.entries()) {
    const list = await curl(u)
    assert.equal(list.status, 200, `${u}: ${list.body}`)
    assert.match(list.body.toString(), /href="\.\/a\.txt"/, `${u} lists a tree`)
    const a = await curl(u + 'a.txt')
    assert.equal(a.status, 200, `${u}a.txt: ${a.body}`)
    assert.equal(a.body.toString(), want[i], `${u}a.txt is the tree printed there`)
  }
  assert.equal((await curl(listening)).status, 200, listening)
}

test('each URL it prints serves its tree: a remote of a named tree at /, and under --tree NAME=', { timeout: 60_000 }, async t => {
  // a version-2 tree signed as "stable" (read at #<key>:stable), kept as the remote "stable"
  const src = await tmpdir('rotree-gw-cli-named-')
  t.after(() => fs.rm(src, { recursive: true, force: true }))
  await writeTree(path.join(src, 'in'), { 'a.txt': 'named tree\n' })
  const key = makeKey()
  const { out } = await buildTree(path.join(src, 'in'), { key, name: 'stable', out: path.join(src, 'out') })
  const mirror = await serve(out)
  t.after(() => mirror.close())
  const env = { ROTREE_STATE: path.join(src, 'state') }
  const add = await run(process.execPath, [BIN, 'remote', 'add', 'stable', address(mirror.url, key.publicKey) + ':stable'], { env })
  assert.equal(add.code, 0, add.stderr)

  const g = await startCli(t, ['stable:', '--tree', 'docs=stable:', '--tree', `plain=${fx.addr}`, '--port', '0', '--cache-size', '0', '--state-dir', env.ROTREE_STATE])
  // before: http://…/stable/ for the tree at / and for /docs/ alike (a 404), the tree's signed name
  assert.deepEqual(printedUrls(g).trees, [g.url, g.url + 'docs/', g.url + 'plain/'])
  await fetchEach(g, ['named tree\n', 'named tree\n', 'tree a\n'])
  const s = JSON.parse((await curl(g.url + '.well-known/rotree/status')).body)
  assert.deepEqual(s.trees.map(x => [x.name, x.mount, x.treeName]), [['', '/', 'stable'], ['docs', '/docs/', 'stable'], ['plain', '/plain/', '']])
})

test('each URL it prints answers: bound to every address, or to one with --allow-host', { timeout: 60_000 }, async t => {
  // before: http://0.0.0.0:PORT/, whose Host is no loopback name on a loopback socket (421)
  const any = await startCli(t, [fx.addr, '--port', '0', '--cache-size', '0', '--host', '0.0.0.0'])
  assert.match(printedUrls(any).listening, /^http:\/\/127\.0\.0\.1:\d+\/$/)
  await fetchEach(any, ['tree a\n'])
  any.proc.kill('SIGTERM'); await any.exited

  const addrs = Object.values(os.networkInterfaces()).flat()
  if (addrs.some(a => a.family === 'IPv6' && a.address === '::1')) {
    const any6 = await startCli(t, [fx.addr, '--port', '0', '--cache-size', '0', '--host', '::'])
    await fetchEach(any6, ['tree a\n'])
    any6.proc.kill('SIGTERM'); await any6.exited
  } else t.diagnostic('no ::1 here: the bind to :: is not tried')

  // before: with --allow-host, the Host check applies on any address, and http://ADDR:PORT/ was a 421
  const own = addrs.find(a => a.family === 'IPv4' && !a.internal)
  if (own === undefined) return t.diagnostic('no non-loopback IPv4 address here: --host ADDR --allow-host is not tried')
  const named = await startCli(t, [fx.addr, '--port', '0', '--cache-size', '0', '--host', own.address, '--allow-host', 'files.example.org'])
  assert.equal(printedUrls(named).listening, `http://${own.address}:${new URL(named.url).port}/`)
  await fetchEach(named, ['tree a\n'])
  // an address is never a rebinding name, but a name still has to be listed
  assert.equal((await curl(named.url + 'a.txt', ['-H', 'Host: evil.example'])).status, 421)
})

test('--tree with a NAME that cannot be a path segment is a usage error (exit 2), not an internal one', async () => {
  for (const name of ['a b', '.well-known', '.x', 'a/b', '']) {
    const r = await run(process.execPath, [BIN, 'gateway', '--tree', `${name}=${fx.addr}`], { env: fx.env, timeoutMs: 20_000 })
    assert.equal(r.code, 2, `${JSON.stringify(name)}: ${r.stderr}`)
    assert.match(r.stderr, /usage: rotree gateway/)
  }
})

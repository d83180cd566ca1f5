// A gated gateway (`rotree gateway --grants`; docs/GATEWAY.md "A gated
// gateway") reading a tree through nginx from `rotree nginx-config`, real
// processes on loopback: the revocation list the publisher wrote into OUT
// (`rotree grant revoke`, docs/FORMAT.md §12.12) reaches the gateway through
// nginx, so a revoked grant gets no token there, while another grant does and
// its token gets the file. The gateway starts after the revoke (it re-reads
// the list at most a minute after it changes).
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { execFileSync } from 'node:child_process'
import { tmpdir, writeTree } from '../helpers/fixtures.js'
import { needs, startProcess, NGINX } from '../edge/helpers.js'
import { rotree, start } from '../cli/helpers.js'

const skip = needs('nginx')
const fx = {}
const ctx = { after: fn => fx.stops.push(fn) } // start()'s t.after, run in after()

async function ok (...args) {
  const r = await rotree(args)
  assert.equal(r.code, 0, `rotree ${args.join(' ')}\n${r.err}`)
  return r.out
}

before(async () => {
  if (skip) return
  fx.stops = []
  fx.d = await tmpdir('rotree-gw-nginx-')
  const p = fx.p = n => path.join(fx.d, n)
  await writeTree(p('src'), { 'a.txt': 'gated through nginx\n' })
  fx.pub = {}
  for (const n of ['tree', 'holder', 'revoked']) fx.pub[n] = (await ok('keygen', p(`${n}.key`))).trim()
  await ok('build', p('src'), p('out'), '--key', p('tree.key'))
  await ok('grant', 'secret', p('gw.secret'))
  await ok('grant', 'issue', p('out'), '--to', fx.pub.holder, '--ttl', '1d', '--key', p('tree.key'), '-o', p('g.json'))
  await ok('grant', 'issue', p('out'), '--to', fx.pub.revoked, '--ttl', '1d', '--key', p('tree.key'), '-o', p('gr.json'))
  await ok('grant', 'revoke', p('out'), p('gr.json'), '--key', p('tree.key'))
  if (process.getuid?.() === 0) execFileSync('chmod', ['-R', 'a+rX', fx.d]) // nginx's workers read OUT as another user
  // the origin: nginx exactly as `rotree nginx-config --full` writes it
  fx.nginx = await startProcess('nginx', NGINX, {
    setup: async (port, dir) => fs.writeFile(path.join(dir, 'nginx.conf'), await ok('nginx-config', p('out'), '--listen', `127.0.0.1:${port}`, '--full', '--prefix', dir, '--workers', '1')),
    args: (port, dir) => ['-p', dir, '-c', path.join(dir, 'nginx.conf'), '-e', path.join(dir, 'startup.log'), '-g', 'daemon off;']
  })
  fx.stops.push(() => fx.nginx.stop())
  fx.gw = await start(ctx, ['gateway', `${fx.nginx.url}#${fx.pub.tree}`, '--grants', p('gw.secret'), '--access-log', 'off',
    '--port', '0', '--cache-size', '0', '--state-dir', p('state'), '--refresh', '3600'], { ready: /listening at (http:\/\/\S+)/ })
  fx.url = fx.gw.match[1]
})

after(async () => {
  if (skip) return
  for (const s of fx.stops.reverse()) await s()
  await fs.rm(fx.d, { recursive: true, force: true })
})

test('a grant revoked in OUT gets no token from a gated gateway reading OUT through nginx; another grant does', { skip, timeout: 60_000 }, async () => {
  const r = await rotree(['grant', 'token', fx.p('gr.json'), '--grant-key', fx.p('revoked.key'), fx.url])
  assert.equal(r.code, 1, r.out)
  assert.equal(r.out, '')
  assert.match(r.err, /ROTREE_NO_ACCESS: .*refuses this grant: the grant .* is revoked/)

  const tok = (await ok('grant', 'token', fx.p('g.json'), '--grant-key', fx.p('holder.key'), fx.url)).trim()
  const a = await fetch(fx.url + 'a.txt', { headers: { 'X-Rotree-Token': tok } })
  assert.equal(a.status, 200)
  assert.equal(await a.text(), 'gated through nginx\n')

  // the list came through nginx, as fsinfo.json does
  const log = await fs.readFile(path.join(fx.nginx.dir, 'access.log'), 'utf8')
  assert.match(log, /"GET \/trust\/revoked\.json HTTP\/1\.1" 200 /)
})

// The gateway as a client of a gated mirror (docs/FORMAT.md §12.11): `rotree
// gateway ADDR --grant FILE --grant-key KEYFILE` trades the grant for edge
// tokens at `rotree serve --grants` and serves the tree; another tree it
// serves is read without the grant (its mirror is never shown it); without
// the grant the gated mirror's blobs are refused and the gateway serves none
// of them.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import http from 'node:http'
import { createRotreeServer } from '../../server/index.js'
import { tmpdir, writeTree } from '../helpers/fixtures.js'
import { rotree, start } from '../cli/helpers.js'

async function ok (...args) {
  const r = await rotree(args)
  assert.equal(r.code, 0, `rotree ${args.join(' ')}\n${r.err}`)
  return r.out
}

test('rotree gateway --grant --grant-key reads a gated mirror; without them it cannot', async t => {
  const d = await tmpdir('rotree-gateway-gated-')
  t.after(() => fs.rm(d, { recursive: true, force: true }))
  const p = n => path.join(d, n)
  await writeTree(p('src'), { 'a.txt': 'gated hello\n' })
  const pub = {}
  for (const n of ['tree', 'holder', 'other']) pub[n] = (await ok('keygen', p(`${n}.key`))).trim()
  await ok('build', p('src'), p('out'), '--key', p('tree.key'))
  await ok('build', p('src'), p('out2'), '--key', p('other.key'))
  // the other tree's mirror, public, recording what it is asked
  const asked = []
  const plain = await createRotreeServer({ dir: p('out2') })
  const mirror2 = http.createServer((req, res) => { asked.push(`${req.method} ${req.url}`); plain.handler(req, res) })
  await new Promise(resolve => mirror2.listen(0, '127.0.0.1', resolve))
  t.after(() => new Promise(resolve => { mirror2.closeAllConnections(); mirror2.close(resolve) }))
  await ok('grant', 'secret', p('edge.secret'))
  await ok('grant', 'issue', p('out'), '--to', pub.holder, '--ttl', '1d', '--key', p('tree.key'), '-o', p('g.json'))
  const serve = await start(t, ['serve', p('out'), '--port', '0', '--grants', p('edge.secret')])
  const addr = `${serve.match[1]}#${pub.tree}`
  const common = ['--port', '0', '--cache-size', '0', '--state-dir', p('state'), '--refresh', '3600']
  const other = `--tree=other=http://127.0.0.1:${mirror2.address().port}/#${pub.other}`
  const gw = await start(t, ['gateway', addr, other, ...common, '--grant', p('g.json'), '--grant-key', p('holder.key')], { ready: /listening at (http:\/\/\S+)/ })
  const r = await fetch(`${gw.match[1]}a.txt`)
  assert.equal(r.status, 200)
  assert.equal(await r.text(), 'gated hello\n')
  const r2 = await fetch(`${gw.match[1]}other/a.txt`)
  assert.equal(r2.status, 200)
  assert.equal(await r2.text(), 'gated hello\n')
  assert.ok(asked.some(a => a.startsWith('GET /h/')), asked.join('\n'))
  assert.ok(!asked.some(a => a.includes('.rotree/token') || a.includes('rotree_token')), `the other tree's mirror was shown the grant: ${asked.join('\n')}`)
  // the edge's access log names the gateway's grant holder
  assert.match(serve.output().err, new RegExp(`GET /h/[0-9a-f]{64} 200 holder=${pub.holder} token=ok`))

  const bare = await start(t, ['gateway', addr, '--port', '0', '--cache-size', '0', '--state-dir', p('state2')], { ready: /listening at (http:\/\/\S+)/ })
  const refused = await fetch(`${bare.match[1]}a.txt`)
  assert.notEqual(refused.status, 200)
  await refused.arrayBuffer()
})

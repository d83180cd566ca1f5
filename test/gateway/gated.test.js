// The gateway as a client of a gated mirror (docs/FORMAT.md §12.11): `rotree
// gateway ADDR --grant FILE --grant-key KEYFILE` trades the grant for edge
// tokens at `rotree serve --grants` and serves the tree; without the grant
// the same mirror's blobs are refused and the gateway serves none of them.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
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
  for (const n of ['tree', 'holder']) pub[n] = (await ok('keygen', p(`${n}.key`))).trim()
  await ok('build', p('src'), p('out'), '--key', p('tree.key'))
  await ok('grant', 'secret', p('edge.secret'))
  await ok('grant', 'issue', p('out'), '--to', pub.holder, '--ttl', '1d', '--key', p('tree.key'), '-o', p('g.json'))
  const serve = await start(t, ['serve', p('out'), '--port', '0', '--grants', p('edge.secret')])
  const addr = `${serve.match[1]}#${pub.tree}`
  const common = ['--port', '0', '--cache-size', '0', '--state-dir', p('state'), '--refresh', '3600']
  const gw = await start(t, ['gateway', addr, ...common, '--grant', p('g.json'), '--grant-key', p('holder.key')], { ready: /listening at (http:\/\/\S+)/ })
  const r = await fetch(`${gw.match[1]}a.txt`)
  assert.equal(r.status, 200)
  assert.equal(await r.text(), 'gated hello\n')
  // the edge's access log names the gateway's grant holder
  assert.match(serve.output().err, new RegExp(`GET /h/[0-9a-f]{64} 200 holder=${pub.holder} token=ok`))

  const bare = await start(t, ['gateway', addr, '--port', '0', '--cache-size', '0', '--state-dir', p('state2')], { ready: /listening at (http:\/\/\S+)/ })
  const refused = await fetch(`${bare.match[1]}a.txt`)
  assert.notEqual(refused.status, 200)
  await refused.arrayBuffer()
})

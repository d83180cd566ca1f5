// rotree token-server (docs/DEPLOY.md): the token exchange alone, for the
// trees of the folders given; a grant for one of them gets a token, a grant
// for another tree is refused, and the server serves no file.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { decodeGrant, tokenRequest } from 'rotree-client/grant'
import { tmpdir, writeTree } from '../helpers/fixtures.js'
import { readKeyFile } from '../../builder/keys.js'
import { checkToken } from '../../server/edge-token.js'
import { rotree, start } from './helpers.js'

async function ok (...args) {
  const r = await rotree(args)
  assert.equal(r.code, 0, `rotree ${args.join(' ')}\n${r.err}`)
  return r.out
}

test('token-server: tokens for the trees given, refusals for others, usage errors', async t => {
  const d = await tmpdir('rotree-token-server-')
  t.after(() => fs.rm(d, { recursive: true, force: true }))
  const p = n => path.join(d, n)
  await writeTree(p('src'), { 'a.txt': 'hello\n' })
  const pub = {}
  for (const n of ['a', 'b', 'c', 'holder']) pub[n] = (await ok('keygen', p(`${n}.key`))).trim()
  for (const n of ['a', 'b', 'c']) await ok('build', p('src'), p(`out-${n}`), '--key', p(`${n}.key`))
  await ok('grant', 'secret', p('edge.secret'))
  for (const n of ['a', 'b', 'c']) await ok('grant', 'issue', p(`out-${n}`), '--to', pub.holder, '--ttl', '1d', '--key', p(`${n}.key`), '-o', p(`${n}.grant`))

  let r = await rotree(['token-server', '--tree', p('out-a')])
  assert.equal(r.code, 2); assert.match(r.err, /--grants SECRETFILE is required/)
  r = await rotree(['token-server', '--grants', p('edge.secret')])
  assert.equal(r.code, 2); assert.match(r.err, /--tree OUT/)

  const srv = await start(t, ['token-server', '--grants', p('edge.secret'), '--tree', p('out-a'), '--tree', p('out-b'), '--port', '0'])
  const base = srv.match[1].replace(/\.rotree\/token$/, '')
  assert.match(srv.output().out, new RegExp(`tree ${pub.a}:\\n`))
  const sk = (await readKeyFile(p('holder.key'))).secretKey
  const secret = (await fs.readFile(p('edge.secret'), 'utf8')).trim()
  const post = async n => {
    const res = await fetch(`${base}.rotree/token`, { method: 'POST', body: tokenRequest(decodeGrant(await fs.readFile(p(`${n}.grant`))), sk) })
    return { status: res.status, json: await res.json() }
  }
  for (const n of ['a', 'b']) {
    const x = await post(n)
    assert.equal(x.status, 200, JSON.stringify(x.json))
    assert.equal(x.json.holder, pub.holder)
    assert.equal(checkToken(x.json.token, { secret, tree: `${pub[n]}:` }), 'ok')
  }
  const c = await post('c')
  assert.equal(c.status, 403); assert.equal(c.json.code, 'ROTREE_NO_ACCESS')
  assert.equal((await fetch(`${base}fsinfo.json`)).status, 404)
})

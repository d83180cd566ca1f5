// rotree grant issue|delegate|show|secret (docs/FORMAT.md §12.10–12.11): the
// grants it writes are the ones the verifier admits, a delegation never
// outlives its parent, and keys outside the access role are refused.
import { test, after } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { decodeGrant, verifyGrant } from 'rotree-client/grant'
import { tmpdir, writeTree } from '../helpers/fixtures.js'
import { rotree } from './helpers.js'

const cleanups = []
after(async () => { for (const c of cleanups.reverse()) await c() })

async function ok (...args) {
  const r = await rotree(args)
  assert.equal(r.code, 0, `rotree ${args.join(' ')}\n${r.err}`)
  return r.out
}

test('grant issue, delegate, show and secret', async () => {
  const d = await tmpdir('rotree-grant-')
  cleanups.push(() => fs.rm(d, { recursive: true, force: true }))
  const p = n => path.join(d, n)
  await writeTree(p('src'), { 'a.txt': 'hello\n' })
  const pub = {}
  for (const n of ['tree', 'holder', 'delegate']) pub[n] = (await ok('keygen', p(`${n}.key`))).trim()
  await ok('build', p('src'), p('out'), '--key', p('tree.key'))
  await ok('grant', 'issue', p('out'), '--to', pub.holder, '--ttl', '30d', '--key', p('tree.key'), '-o', p('g.json'))
  const g = decodeGrant(await fs.readFile(p('g.json')))
  const access = { threshold: 1, keys: [pub.tree] }
  assert.equal(verifyGrant(g, { anchor: pub.tree, name: '', access, now: Date.now() }).holder, pub.holder)

  const r = await rotree(['grant', 'delegate', p('g.json'), '--grant-key', p('holder.key'), '--to', pub.delegate, '--ttl', '60d', '-o', p('g2.json')])
  assert.equal(r.code, 0, r.err)
  assert.match(r.err, /capped/)
  const v = verifyGrant(decodeGrant(await fs.readFile(p('g2.json'))), { anchor: pub.tree, name: '', access, now: Date.now() })
  assert.equal(v.holder, pub.delegate); assert.equal(v.expires, g.expires); assert.equal(v.depth, 1)

  const text = await ok('grant', 'show', p('g2.json'))
  assert.match(text, new RegExp(`holder  ${pub.delegate}`))
  assert.match(text, /delegation 1 /)
  const j = JSON.parse(await ok('grant', 'show', p('g2.json'), '--json'))
  assert.equal(j.holder, pub.delegate); assert.equal(j.delegations, 1); assert.equal(j.chain[1].signedBy[0], pub.holder)

  // a key outside the access role, the wrong holder key, an existing file
  let bad = await rotree(['grant', 'issue', p('out'), '--to', pub.holder, '--key', p('holder.key'), '-o', p('g3.json')])
  assert.match(bad.err, /ROTREE_BAD_KEY: .*not in the access role/)
  bad = await rotree(['grant', 'delegate', p('g.json'), '--grant-key', p('delegate.key'), '--to', pub.delegate, '-o', p('g4.json')])
  assert.match(bad.err, /ROTREE_BAD_KEY: .*is not the holder/)
  bad = await rotree(['grant', 'issue', p('out'), '--to', pub.holder, '--key', p('tree.key'), '-o', p('g.json')])
  assert.match(bad.err, /exists and is kept/)

  await ok('grant', 'secret', p('edge.secret'))
  assert.match(await fs.readFile(p('edge.secret'), 'utf8'), /^[0-9a-f]{64}\n$/)
  assert.equal((await fs.stat(p('edge.secret'))).mode & 0o777, 0o600)
  // nginx-config --gated: the tree OUT publishes and the secret, in secure_link_md5's expression
  const secret = (await fs.readFile(p('edge.secret'), 'utf8')).trim()
  const conf = await ok('nginx-config', p('out'), '--listen', '127.0.0.1:9', '--gated', p('edge.secret'), '--token-upstream', '127.0.0.1:8')
  assert.ok(conf.includes(`secure_link_md5 "$secure_link_expires rotree-edge-v2 ${pub.tree}: ${secret}";`), conf)
  assert.match(conf, /proxy_pass http:\/\/127\.0\.0\.1:8\/\.rotree\/token;/)
})

test('a family names its access role with trust init --access; only those keys grant, and update --add-access rotates it', async () => {
  const d = await tmpdir('rotree-grant-roles-')
  cleanups.push(() => fs.rm(d, { recursive: true, force: true }))
  const p = n => path.join(d, n)
  await writeTree(p('src'), { 'a.txt': 'hello\n' })
  const pub = {}
  for (const n of ['tree', 'acc', 'acc2', 'holder']) pub[n] = (await ok('keygen', p(`${n}.key`))).trim()
  await ok('build', p('src'), p('out'), '--key', p('tree.key'), '--format', '2')
  // the single key adopts roles and names an access key
  await ok('trust', 'init', p('out'), '--root', pub.tree, '--release', pub.tree, '--timestamp', pub.tree, '--access', pub.acc)
  await ok('trust', 'sign', p('out'), '--key', p('tree.key'))
  let bad = await rotree(['grant', 'issue', p('out'), '--to', pub.holder, '--key', p('tree.key'), '-o', p('g0.json')])
  assert.match(bad.err, /not in the access role/)
  await ok('grant', 'issue', p('out'), '--to', pub.holder, '--key', p('acc.key'), '-o', p('g1.json'))
  await ok('trust', 'update', p('out'), '--add-access', pub.acc2, '--remove-access', pub.acc)
  await ok('trust', 'sign', p('out'), '--key', p('tree.key'))
  bad = await rotree(['grant', 'issue', p('out'), '--to', pub.holder, '--key', p('acc.key'), '-o', p('g2.json')])
  assert.match(bad.err, /not in the access role/)
  await ok('grant', 'issue', p('out'), '--to', pub.holder, '--key', p('acc2.key'), '-o', p('g3.json'))
})

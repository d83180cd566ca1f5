// `rotree pull` of a gated tree copies its revocation list, trust/revoked.json
// (docs/FORMAT.md §12.12, docs/MIRRORING.md), only once it verifies under the
// tree's access role, and never over a newer one: a forged list is not
// copied (the pull says so and goes on), an older one does not replace DIR's;
// fsck warns of a list that does not verify.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { tmpdir, writeTree, serve } from '../helpers/fixtures.js'
import { pull } from '../../mirror/pull.js'
import { fsck } from '../../mirror/fsck.js'
import { rotree } from './helpers.js'

async function gated (t) {
  const dir = await tmpdir('rotree-pull-revoked-')
  t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const p = n => path.join(dir, n)
  const ok = async (...args) => { const r = await rotree(args); assert.equal(r.code, 0, `rotree ${args.join(' ')}\n${r.stderr}`); return r.stdout }
  await writeTree(p('src'), { 'a.txt': 'gated\n' })
  const pub = {}
  for (const n of ['tree', 'a', 'b']) pub[n] = (await ok('keygen', p(`${n}.key`))).trim()
  await ok('build', p('src'), p('out'), '--key', p('tree.key'))
  for (const n of ['a', 'b']) await ok('grant', 'issue', p('out'), '--to', pub[n], '--ttl', '1d', '--key', p('tree.key'), '-o', p(`${n}.grant`))
  return { dir, p, ok, pub }
}

const listOf = dir => fs.readFile(path.join(dir, 'trust', 'revoked.json'))

test('pull copies a revocation list that verifies, and a newer one over it; an older one never replaces it', { timeout: 60_000 }, async t => {
  const { p, ok, pub } = await gated(t)
  await ok('grant', 'revoke', p('out'), p('a.grant'), '--key', p('tree.key'))
  const first = await listOf(p('out'))
  const srv = await serve(p('out')); t.after(srv.close)
  const addr = `${srv.url}#${pub.tree}`
  const warnings = []
  const o = { address: addr, dir: p('mirror'), reader: { stateDir: p('state') }, fsync: false, warn: m => warnings.push(m) }
  const r1 = await pull(o)
  assert.deepEqual(await listOf(p('mirror')), first)
  assert.equal(r1.revoked.copied, true)
  assert.equal(r1.revoked.issued, JSON.parse(first).issued)
  assert.deepEqual(warnings, [])
  const again = await pull(o)
  assert.deepEqual(again.revoked, { issued: r1.revoked.issued, copied: false }, 'the same list: nothing to copy')

  // a second revocation: the newer list replaces DIR's
  await new Promise(resolve => setTimeout(resolve, 1100)) // a later issued second
  await ok('grant', 'revoke', p('out'), p('b.grant'), '--key', p('tree.key'))
  const second = await listOf(p('out'))
  const r2 = await pull(o)
  assert.equal(r2.revoked.copied, true)
  assert.deepEqual(await listOf(p('mirror')), second)

  // a source serving the older list (a mirror behind): DIR keeps the newer, and the pull says why
  await fs.writeFile(path.join(p('out'), 'trust', 'revoked.json'), first)
  const r3 = await pull(o)
  assert.equal(r3.revoked.copied, false)
  assert.deepEqual(await listOf(p('mirror')), second)
  assert.ok(warnings.some(m => /older than DIR's/.test(m)), warnings.join('\n'))
  // a source serving none: DIR's list stays
  await fs.rm(path.join(p('out'), 'trust', 'revoked.json'))
  await pull(o)
  assert.deepEqual(await listOf(p('mirror')), second)
  assert.deepEqual((await fs.readdir(path.join(p('mirror'), 'trust'))).filter(n => n.startsWith('.')), [], 'no temporary file left')
})

test('a forged revocation list is not copied: the pull says so on stderr and succeeds', { timeout: 60_000 }, async t => {
  const { p, ok, pub } = await gated(t)
  await ok('grant', 'revoke', p('out'), p('a.grant'), '--key', p('tree.key'))
  const valid = await listOf(p('out'))
  const srv = await serve(p('out')); t.after(srv.close)
  const addr = `${srv.url}#${pub.tree}`
  // DIR holds the valid list
  assert.equal((await rotree(['pull', addr, p('mirror'), '--state-dir', p('state'), '--no-fsync'])).code, 0)
  assert.deepEqual(await listOf(p('mirror')), valid)

  // a later list with no valid signature of the access role (its issued time moved on, the signatures kept)
  const forged = Buffer.from(valid.toString().replace(/"issued": "(\d{4})/, (m, y) => `"issued": "${Number(y) + 1}`))
  assert.ok(!forged.equals(valid))
  await fs.writeFile(path.join(p('out'), 'trust', 'revoked.json'), forged)
  for (const [mirror, had] of [[p('mirror'), valid], [p('fresh'), null]]) {
    const r = await rotree(['pull', addr, mirror, '--state-dir', p('state'), '--no-fsync'])
    assert.equal(r.code, 0, r.stderr)
    assert.match(r.stderr, /rotree: warning: not copying trust\/revoked\.json from \S+: ROTREE_THRESHOLD /)
    if (had === null) await assert.rejects(listOf(mirror), { code: 'ENOENT' })
    else assert.deepEqual(await listOf(mirror), had)
  }

  // fsck of a folder: a list that does not verify is a warning, not a problem of any blob
  const bad = await fsck(p('out'), { publicKey: pub.tree, fsync: false })
  assert.equal(bad.problems, 0)
  assert.ok(bad.ok)
  assert.ok(bad.warnings.some(w => /^trust\/revoked\.json does not verify \(ROTREE_THRESHOLD: /.test(w)), bad.warnings.join('\n'))
  const good = await fsck(p('mirror'), { publicKey: pub.tree, fsync: false })
  assert.ok(good.ok)
  assert.ok(!good.warnings.some(w => /revoked/.test(w)), good.warnings.join('\n'))

  // a list another tree's access role signed, for that tree: not this tree's
  await ok('keygen', p('other.key'))
  await ok('build', p('src'), p('out2'), '--key', p('other.key'))
  await ok('grant', 'issue', p('out2'), '--to', pub.a, '--ttl', '1d', '--key', p('other.key'), '-o', p('a2.grant'))
  await ok('grant', 'revoke', p('out2'), p('a2.grant'), '--key', p('other.key'))
  await fs.copyFile(path.join(p('out2'), 'trust', 'revoked.json'), path.join(p('out'), 'trust', 'revoked.json'))
  const r = await rotree(['pull', addr, p('fresh2'), '--state-dir', p('state'), '--no-fsync', '--json'])
  assert.equal(r.code, 0, r.stderr)
  assert.match(r.stderr, /not copying trust\/revoked\.json from \S+: ROTREE_WRONG_NAME /)
  assert.equal(JSON.parse(r.stdout).revoked, null)
  await assert.rejects(listOf(p('fresh2')), { code: 'ENOENT' })
})

// `rotree log ADDR`: the roots a folder published (history/<seq>.json, listed
// by history/index.json), newest first, each verified against the address key
// and its own sequence number (docs/TRUST.md rule 17); a mirror can leave
// entries out or break them, and a broken one is listed as refused, never shown.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { tmpdir, serve } from '../helpers/fixtures.js'
import { rotree } from './helpers.js'

test('rotree log lists every root published, newest first, and refuses a tampered or misfiled entry', { timeout: 60_000 }, async t => {
  const dir = await tmpdir(); t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const src = path.join(dir, 'src'); const out = path.join(dir, 'out'); const key = path.join(dir, 'k'); const state = path.join(dir, 'state')
  await fs.mkdir(src); await fs.writeFile(path.join(src, 'a.txt'), 'one\n')
  const pub = (await rotree(['keygen', key])).out.trim()
  const roots = []
  const fsinfo = async () => JSON.parse(await fs.readFile(path.join(out, 'fsinfo.json'), 'utf8'))
  assert.equal((await rotree(['build', src, out, '--key', key, '--no-fsync'])).code, 0); roots.push(await fsinfo())
  await fs.writeFile(path.join(src, 'a.txt'), 'two\n')
  assert.equal((await rotree(['build', src, out, '--key', key, '--no-fsync'])).code, 0); roots.push(await fsinfo())
  assert.equal((await rotree(['resign', out, '--key', key, '--no-fsync'])).code, 0); roots.push(await fsinfo())
  assert.notEqual(roots[0].root, roots[1].root)
  assert.equal(roots[1].root, roots[2].root)
  const seqs = roots.map(r => r.seq).reverse()
  assert.deepEqual(JSON.parse(await fs.readFile(path.join(out, 'history', 'index.json'), 'utf8')).seqs, seqs)

  const srv = await serve(out); t.after(() => srv.close())
  const addr = `${srv.url}#${pub}`
  const log = await rotree(['log', addr, '--state-dir', state])
  assert.equal(log.code, 0, log.err)
  const lines = log.out.trim().split('\n')
  assert.equal(lines.length, 3)
  assert.match(lines[0], new RegExp(`^seq ${seqs[0]} \\(current\\)  issued \\S+  expires \\S+  root ${roots[2].root}$`))
  assert.match(lines[2], new RegExp(`^seq ${seqs[2]}  issued .* root ${roots[0].root}$`))
  const j = JSON.parse((await rotree(['log', addr, '--state-dir', state, '--json', '--limit', '2'])).out)
  assert.equal(j.total, 3)
  assert.deepEqual(j.entries.map(e => [e.seq, e.ok, e.current]), [[seqs[0], true, true], [seqs[1], true, false]])

  // a mirror's word is checked: a byte of the oldest signature flipped, and the middle entry filed as another seq
  const oldest = path.join(out, 'history', `${seqs[2]}.json`)
  const text = await fs.readFile(oldest, 'utf8')
  const sig = JSON.parse(text).sig
  await fs.writeFile(oldest, text.replace(sig, (sig[0] === '0' ? '1' : '0') + sig.slice(1)))
  await fs.copyFile(path.join(out, 'history', `${seqs[0]}.json`), path.join(out, 'history', `${seqs[1]}.json`))
  const bad = JSON.parse((await rotree(['log', addr, '--state-dir', state, '--json'])).out).entries
  assert.deepEqual(bad.map(e => [e.seq, e.ok, e.code]), [[seqs[0], true, undefined], [seqs[1], false, 'ROTREE_BAD_FORMAT'], [seqs[2], false, 'ROTREE_BAD_SIGNATURE']])
  const text2 = (await rotree(['log', addr, '--state-dir', state])).out
  assert.match(text2, new RegExp(`^seq ${seqs[2]}  REFUSED ROTREE_BAD_SIGNATURE: `, 'm'))

  // listing history adopts nothing: the reader still opens the current root, and refuses an old one
  assert.equal((await rotree(['cat', addr, '/a.txt', '--state-dir', state])).out, 'two\n')

  // a folder without an index (published before there was one): one coded line
  await fs.rm(path.join(out, 'history', 'index.json'))
  const none = await rotree(['log', addr, '--state-dir', state])
  assert.equal(none.code, 1)
  assert.match(none.err, /^rotree: ROTREE_ALL_MIRRORS_FAILED: .*history\/index\.json/)
})

// `rotree remote`: a named ADDR (with its mirrors) kept in the reader's state
// folder, then `NAME:/path` wherever a reading command takes ADDR [PATH].
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { rotree, servedTree, start, snapshot } from './helpers.js'

test('remote add, list, remove; NAME:/path for ls, stat, cat, get and gateway', { timeout: 120_000 }, async t => {
  const tr = await servedTree(t, { 'docs/a.txt': 'alpha\n', 'b.txt': 'bravo\n' })
  const { env } = tr
  // the mirror given to `remote add` is the one that answers: the ADDR's own URL is down
  const down = `http://127.0.0.1:9/#${tr.pub}`
  const add = await rotree(['remote', 'add', 'origin', down, '--mirror', tr.url], { env })
  assert.equal(add.code, 0, add.err)
  const file = path.join(env.ROTREE_STATE, 'remotes.json')
  assert.deepEqual(JSON.parse(await fs.readFile(file, 'utf8')), { version: 1, remotes: { origin: { address: down, mirrors: [tr.url] } } })
  assert.deepEqual((await fs.readdir(env.ROTREE_STATE)).filter(n => n.includes('remotes')), ['remotes.json'], 'no temporary file left')

  const list = await rotree(['remote', 'list', '--json'], { env })
  assert.deepEqual(JSON.parse(list.out), { remotes: [{ remote: 'origin', address: down, mirrors: [tr.url], identity: null }] })
  assert.match((await rotree(['remote', 'list'], { env })).out, /^origin\thttp:\/\/127\.0\.0\.1:9\/#[0-9a-f]{64}\n.*mirror http:\/\/127\.0\.0\.1:\d+\/\n$/)

  const ls = await rotree(['ls', 'origin:/docs', '--timeout', '2'], { env })
  assert.equal(ls.code, 0, ls.err)
  assert.equal(ls.out, 'a.txt\n')
  assert.equal((await rotree(['ls', 'origin:', '--timeout', '2'], { env })).out, 'b.txt\ndocs/\n')
  const st = await rotree(['stat', 'origin:/docs/a.txt', '--json', '--timeout', '2'], { env })
  assert.equal(st.code, 0, st.err)
  assert.equal(JSON.parse(st.out).key, tr.pub)
  assert.equal((await rotree(['cat', 'origin:docs/a.txt', '--timeout', '2'], { env })).out, 'alpha\n')
  const copy = path.join(tr.dir, 'copy')
  const get = await rotree(['get', 'origin:/', '-o', copy, '--timeout', '2'], { env })
  assert.equal(get.code, 0, get.err)
  assert.deepEqual(await snapshot(copy), { 'b.txt': 'file:bravo\n', docs: 'dir', 'docs/a.txt': 'file:alpha\n' })

  // the gateway takes NAME: for its tree, with the remote's mirrors
  const gw = await start(t, ['gateway', 'origin:', '--port', '0', '--cache-size', '0', '--timeout', '2'], { env, ready: /listening at (http:\/\/\S+)/ })
  const body = await (await fetch(gw.match[1] + 'b.txt')).text()
  assert.equal(body, 'bravo\n')

  // ADDR PATH keeps working beside remotes
  assert.equal((await rotree(['cat', tr.addr, '/b.txt'], { env })).out, 'bravo\n')

  const rm = await rotree(['remote', 'remove', 'origin'], { env })
  assert.equal(rm.code, 0, rm.err)
  assert.deepEqual(JSON.parse(await fs.readFile(file, 'utf8')).remotes, {})
  const gone = await rotree(['ls', 'origin:/'], { env })
  assert.equal(gone.code, 2)
  assert.match(gone.err, /^rotree ls: no remote named origin; add it with rotree remote add origin ADDR\n/)
})

test('remote names: URL schemes and bad characters are refused; NAME:PATH and PATH not both', async t => {
  const tr = await servedTree(t, { 'a.txt': 'a\n' })
  const { env } = tr
  for (const name of ['http', 'https', 'Origin', '-x', '.x', 'a/b', 'a:b', '']) {
    const r = await rotree(['remote', 'add', name, tr.addr], { env })
    assert.equal(r.code, 2, `${name}: ${r.err}`)
    assert.equal(r.err.split('\n').length, 3, r.err) // one line, the hint, the final newline
  }
  assert.equal((await rotree(['remote', 'add', 'x', 'http://127.0.0.1:1/#nothex'], { env })).code, 1)
  assert.equal((await rotree(['remote', 'add', 'my.tree_2-b', tr.addr], { env })).code, 0)
  const dup = await rotree(['remote', 'add', 'my.tree_2-b', tr.addr], { env })
  assert.equal(dup.code, 2)
  assert.match(dup.err, /remote my\.tree_2-b exists/)
  const both = await rotree(['cat', 'my.tree_2-b:/a.txt', '/a.txt'], { env })
  assert.equal(both.code, 2)
  assert.match(both.err, /not both/)
  const bare = await rotree(['cat', 'my.tree_2-b', '/a.txt'], { env })
  assert.equal(bare.code, 2)
  assert.match(bare.err, /my\.tree_2-b is a remote: write my\.tree_2-b:\/a\.txt/)
  // an address is never read as a remote, whatever remotes exist
  assert.equal((await rotree(['remote', 'add', 'h', tr.addr], { env })).code, 0)
  const http = await rotree(['ls', 'http:/a.txt'], { env })
  assert.equal(http.code, 1)
  assert.match(http.err, /ROTREE_BAD_ADDRESS/)
  // a whole-tree command refuses a path
  const gw = await rotree(['gateway', 'h:/sub', '--port', '0'], { env })
  assert.equal(gw.code, 2)
  assert.match(gw.err, /takes a whole tree/)
})

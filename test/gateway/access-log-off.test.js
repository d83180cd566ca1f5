// `--access-log off` means no access log for rotree gateway as for rotree
// serve: no file named "off" in the working folder (one was written there).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { tmpdir } from '../helpers/fixtures.js'
import { servedTree, start } from '../cli/helpers.js'

test('rotree gateway --access-log off writes no log file, and FILE one line per request', async t => {
  const tree = await servedTree(t, { 'a.txt': 'hello\n' })
  const cwd = await tmpdir('rotree-gw-log-')
  t.after(() => Promise.all(['', '-s1', '-s2'].map(x => fs.rm(cwd + x, { recursive: true, force: true }))))
  const off = await start(t, ['gateway', tree.addr, '--port', '0', '--access-log', 'off'], { cwd, env: { ROTREE_STATE: path.join(cwd, '..', path.basename(cwd) + '-s1') }, ready: /listening at (http:\/\/\S+)/ })
  assert.equal(await (await fetch(off.match[1] + 'a.txt')).text(), 'hello\n')
  const log = path.join(cwd, 'access.log')
  const on = await start(t, ['gateway', tree.addr, '--port', '0', '--access-log', log], { cwd, env: { ROTREE_STATE: path.join(cwd, '..', path.basename(cwd) + '-s2') }, ready: /listening at (http:\/\/\S+)/ })
  assert.equal(await (await fetch(on.match[1] + 'a.txt')).text(), 'hello\n')
  let lines = ''
  for (let i = 0; i < 50 && !/a\.txt/.test(lines); i++) { await new Promise(resolve => setTimeout(resolve, 100)); lines = await fs.readFile(log, 'utf8').catch(() => '') }
  assert.match(lines, /GET \/a\.txt/)
  assert.deepEqual((await fs.readdir(cwd)).sort(), ['access.log'])
})

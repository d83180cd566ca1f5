// A reader without --grant at a gated mirror (docs/FORMAT.md §12.10–12.11):
// every blob is a 403, and the CLI, having asked that mirror's token exchange
// once (cli/gated-edge.js), says ROTREE_NO_ACCESS naming the edge and asks for
// a grant, instead of blaming the mirror. A mirror that answers 403 without
// being gated is still the mirror's fault.
import { test, after } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import http from 'node:http'
import path from 'node:path'
import { tmpdir, writeTree, makeKey, buildTree } from '../helpers/fixtures.js'
import { rotree, start } from './helpers.js'

for (const k of Object.keys(process.env)) if (k.startsWith('ROTREE_')) delete process.env[k]
const cleanups = []
after(async () => { for (const c of cleanups.reverse()) await c() })

test('no grant at a gated mirror: ROTREE_NO_ACCESS naming the edge; a plain 403 stays a mirror fault', async t => {
  const d = await tmpdir('rotree-no-grant-')
  cleanups.push(() => fs.rm(d, { recursive: true, force: true }))
  await writeTree(path.join(d, 'src'), { 'a.txt': 'gated hello, and long enough to be a blob of its own '.repeat(200) })
  const key = makeKey()
  const { out } = await buildTree(path.join(d, 'src'), { key, out: path.join(d, 'out') })
  assert.equal((await rotree(['grant', 'secret', path.join(d, 'edge.secret')])).code, 0)
  const srv = await start(t, ['serve', out, '--port', '0', '--grants', path.join(d, 'edge.secret'), '--access-log', 'off'])
  const url = srv.match[1].replace(/\/?$/, '/')
  for (const args of [['cat', `${url}#${key.publicKey}`, '/a.txt'], ['get', `${url}#${key.publicKey}`, '/', '-o', path.join(d, 'copy'), '--json']]) {
    const r = await rotree(args, { env: { ROTREE_STATE: path.join(d, 'state') } })
    assert.equal(r.code, 1, r.err)
    assert.match(r.err, new RegExp(`^rotree: ROTREE_NO_ACCESS: ${url.replaceAll('.', '\\.')} is a gated edge: [^\\n]*\\n  Give a grant[^\\n]*--grant FILE --grant-key KEYFILE`), args[0])
    if (args.includes('--json')) assert.equal(JSON.parse(r.out.trim().split('\n').at(-1)).error.code, 'ROTREE_NO_ACCESS')
  }
  // a mirror that refuses blobs but has no token exchange: the mirror's fault, as before
  const refusing = http.createServer(async (req, res) => {
    if (req.url === '/fsinfo.json') { res.writeHead(200, { 'content-type': 'application/json' }); res.end(await fs.readFile(path.join(out, 'fsinfo.json'))); return }
    res.writeHead(req.url.startsWith('/h/') ? 403 : 404); res.end()
  })
  await new Promise(resolve => refusing.listen(0, '127.0.0.1', resolve))
  cleanups.push(() => new Promise(resolve => refusing.close(resolve)))
  const r = await rotree(['cat', `http://127.0.0.1:${refusing.address().port}/#${key.publicKey}`, '/a.txt'], { env: { ROTREE_STATE: path.join(d, 'state2') } })
  assert.equal(r.code, 1)
  assert.match(r.err, /ROTREE_MIRROR_HTTP|ROTREE_ALL_MIRRORS_FAILED/)
  assert.doesNotMatch(r.err, /NO_ACCESS|gated edge/)
})

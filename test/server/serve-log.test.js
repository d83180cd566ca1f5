// `rotree serve` serves the tree's log (docs/FORMAT.md §13): log/checkpoint
// and partial tiles briefly cached, full tiles and entry bundles for a day, the exact C2SP paths
// and nothing else under log/, regular files only: a symlink at a tile or
// at a folder on its way is a 404, never its target.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import http from 'node:http'
import path from 'node:path'
import { tmpdir } from '../helpers/fixtures.js'
import { createRotreeServer } from '../../server/index.js'

function get (url, method = 'GET') {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, agent: false }, res => {
      const parts = []
      res.on('data', c => parts.push(c))
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(parts).toString() }))
    })
    req.on('error', reject)
    req.end()
  })
}

test('rotree serve: log/checkpoint, log/fsinfo.proof and C2SP tile paths, with their cache lifetimes; nothing else, no symlinks', async t => {
  const dir = await tmpdir('rotree-serve-log-')
  t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const out = path.join(dir, 'out')
  const w = async (p, text) => { await fs.mkdir(path.dirname(path.join(out, p)), { recursive: true }); await fs.writeFile(path.join(out, p), text) }
  await w('fsinfo.json', '{}\n')
  await w('log/checkpoint', 'rotree/x\n1\nAAAA\n')
  await w('log/fsinfo.proof', 'c2sp.org/tlog-proof@v1\nindex 0\n\nrotree/x\n1\nAAAA\n')
  await w('log/tile/0/000', 'full')
  await w('log/tile/0/001.p/7', 'partial')
  await w('log/tile/entries/x001/234', 'bundle')
  await w('log/other', 'no')
  await w('log/tile/0/0000', 'no')
  await w('secret/000', 'SECRET')
  await fs.mkdir(path.join(out, 'log', 'tile', '1'), { recursive: true })
  await fs.symlink(path.join(out, 'secret', '000'), path.join(out, 'log', 'tile', '1', '000'))
  await fs.symlink(path.join(out, 'secret'), path.join(out, 'log', 'tile', '2'))
  const srv = await createRotreeServer({ dir: out, fsinfoMaxAge: 30 })
  const { url } = await srv.listen({ port: 0, host: '127.0.0.1' })
  t.after(() => srv.close({ timeoutMs: 1000 }))

  const cp = await get(url + 'log/checkpoint')
  assert.equal(cp.status, 200)
  assert.equal(cp.body, 'rotree/x\n1\nAAAA\n')
  assert.match(cp.headers['content-type'], /^text\/plain/)
  assert.match(cp.headers['cache-control'], /max-age=30\b/)
  // the tlog-proof of the current fsinfo.json (FORMAT.md §13): renamed in at every publish, cached as the checkpoint
  const proof = await get(url + 'log/fsinfo.proof')
  assert.equal(proof.status, 200)
  assert.equal(proof.body, 'c2sp.org/tlog-proof@v1\nindex 0\n\nrotree/x\n1\nAAAA\n')
  assert.match(proof.headers['content-type'], /^text\/plain/)
  assert.match(proof.headers['cache-control'], /max-age=30\b/)
  await fs.rename(path.join(out, 'log', 'fsinfo.proof'), path.join(out, 'log', 'fsinfo.proof.away'))
  assert.equal((await get(url + 'log/fsinfo.proof')).status, 404, 'a folder without one (an older publisher)')
  await fs.rename(path.join(out, 'log', 'fsinfo.proof.away'), path.join(out, 'log', 'fsinfo.proof'))
  assert.equal((await get(url + 'log/fsinfo.proof')).status, 200, 're-read once renamed back')
  for (const [p, body, age] of [['log/tile/0/000', 'full', 86400], ['log/tile/0/001.p/7', 'partial', 30], ['log/tile/entries/x001/234', 'bundle', 86400]]) {
    const r = await get(url + p)
    assert.equal(r.status, 200, p)
    assert.equal(r.body, body, p)
    assert.equal(r.headers['content-type'], 'application/octet-stream', p)
    assert.match(r.headers['cache-control'], new RegExp(`max-age=${age}\\b`), p)
  }
  assert.equal((await get(url + 'log/tile/0/000', 'HEAD')).status, 200)
  for (const p of ['log/other', 'log/fsinfo.proof.away', 'log/fsinfo-proof', 'log/tile/0/0000', 'log/tile/0/001.p/256', 'log/tile/0/001.p/0', 'log/tile/64/000', 'log/tile/1/000', 'log/tile/2/000', 'log/', 'log/tile/0/x000']) {
    const r = await get(url + p)
    assert.equal(r.status, 404, p)
    assert.ok(!r.body.includes('SECRET'), p)
  }
})

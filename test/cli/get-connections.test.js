// `rotree get` asks for 128 requests at once (cli/common.js MANY_REQUESTS),
// which a mirror that pipelines takes on 8 connections. A mirror that closes
// every connection after one answer cannot be pipelined to: it gets a
// connection per request in flight, and at most 64 of them at once, as
// before get asked for more. A real server (node:http, Connection: close on
// every answer, each answer held back a little so requests pile up) counts
// the requests it is answering at once: one connection each.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import http from 'node:http'
import path from 'node:path'
import { rotree } from './helpers.js'
import { tmpdir, writeTree, buildTree, makeKey, address } from '../helpers/fixtures.js'

test('get from a mirror that closes every connection: at most 64 connections at once', { timeout: 120_000 }, async t => {
  const dir = await tmpdir('rotree-conns-'); t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const files = {}
  // 40 directories of 8 files over the inline limit (16 KiB): a blob each, 360 requests
  for (let d = 0; d < 40; d++) for (let f = 0; f < 8; f++) files[`d${d}/f${f}`] = `${d}.${f} `.repeat(5000)
  await writeTree(path.join(dir, 'site'), files)
  const key = makeKey()
  const { out } = await buildTree(path.join(dir, 'site'), { key, out: path.join(dir, 'out') })
  let open = 0; let most = 0; let requests = 0
  const server = http.createServer(async (req, res) => {
    requests++
    most = Math.max(most, ++open)
    res.on('close', () => { open-- })
    const rel = decodeURIComponent(new URL(req.url, 'http://x').pathname).slice(1)
    const body = rel.includes('..') ? null : await fs.readFile(path.join(out, rel)).catch(() => null)
    await new Promise(resolve => setTimeout(resolve, 30)) // answers take a while: requests pile up
    if (!body) { res.writeHead(404, { Connection: 'close' }); return res.end() }
    res.writeHead(200, { 'Content-Length': body.length, Connection: 'close' })
    res.end(body)
  })
  await new Promise(resolve => server.listen(0, '127.0.0.1', resolve))
  t.after(() => new Promise(resolve => { server.closeAllConnections(); server.close(resolve) }))
  const url = `http://127.0.0.1:${server.address().port}/`
  const r = await rotree(['get', address(url, key.publicKey), '/', '-o', path.join(dir, 'copy'), '--state-dir', path.join(dir, 'state')])
  assert.equal(r.code, 0, r.err)
  assert.equal(await fs.readFile(path.join(dir, 'copy', 'd39', 'f7'), 'utf8'), files['d39/f7'])
  assert.ok(requests > 300, `${requests} requests`)
  assert.ok(most <= 64, `${most} requests answered at once, each on its own connection`)
})

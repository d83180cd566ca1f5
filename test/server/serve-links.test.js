// A real `rotree serve` on port 0 whose OUT others could write (a copy made
// with `rsync -a`, a shared upload folder): a symlink at any name it serves
// is a 404, never the file it points to outside OUT, and a FIFO is a 404 that
// holds up nothing (lib/open-regular.js).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import fs from 'node:fs/promises'
import http from 'node:http'
import path from 'node:path'
import { tmpdir } from '../helpers/fixtures.js'
import { start } from '../cli/helpers.js'

const sha = buf => createHash('sha256').update(buf).digest('hex')

// One GET with its own connection, given up after `ms`: { status, body } or 'timeout'.
function get (url, ms = 5000) {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent: false }, res => {
      const parts = []
      res.on('data', c => parts.push(c))
      res.on('end', () => { clearTimeout(timer); resolve({ status: res.statusCode, body: Buffer.concat(parts) }) })
      res.on('error', reject)
    })
    const timer = setTimeout(() => { req.destroy(); resolve('timeout') }, ms)
    req.on('error', err => { clearTimeout(timer); reject(err) }) // after a timeout: already resolved
  })
}

const X = sha(Buffer.from('x')); const Y = sha(Buffer.from('y'))

/**
 * OUT with a blob, trust/1.json and history/index.json as the builder writes
 * them; symlinks to a secret outside OUT at fsinfo.json, trust/2.json,
 * history/5.json and h/<X>; FIFOs at trust/3.json, history/6.json and h/<Y>;
 * served by `rotree serve OUT --port 0`.
 */
async function hostileOut (t) {
  const dir = await tmpdir('rotree-serve-links-')
  t.after(() => fs.rm(dir, { recursive: true, force: true }))
  // the secret is JSON, so nothing about its content makes it unservable
  const secret = path.join(dir, 'secret.json')
  const marker = randomBytes(16).toString('hex')
  await fs.writeFile(secret, JSON.stringify({ secret: marker }) + '\n')
  const out = path.join(dir, 'out')
  for (const d of ['h', 'trust', 'history']) await fs.mkdir(path.join(out, d), { recursive: true })
  const blob = randomBytes(1000)
  const hex = sha(blob)
  await fs.writeFile(path.join(out, 'h', hex), blob)
  await fs.writeFile(path.join(out, 'trust', '1.json'), '{"trust":1}\n')
  await fs.writeFile(path.join(out, 'history', 'index.json'), '{"seqs":[]}\n')
  for (const p of ['fsinfo.json', 'trust/2.json', 'history/5.json', `h/${X}`]) await fs.symlink(secret, path.join(out, p))
  execFileSync('mkfifo', [path.join(out, 'trust', '3.json'), path.join(out, 'history', '6.json'), path.join(out, 'h', Y)])
  const srv = await start(t, ['serve', out, '--port', '0'])
  return { out, secret, marker, blob, hex, url: srv.match[1] }
}

const opts = { timeout: 60_000, skip: process.platform === 'win32' && 'no FIFOs or O_NOFOLLOW on Windows' }

test('rotree serve: a symlink at fsinfo.json, trust/<n>.json, history/<n>.json or h/<hex> is a 404, never its target', opts, async t => {
  const { out, secret, marker, url } = await hostileOut(t)
  for (const p of ['fsinfo.json', 'trust/2.json', 'history/5.json', `h/${X}`]) {
    for (let i = 0; i < 2; i++) {
      const r = await get(url + p)
      assert.notEqual(r, 'timeout', p)
      assert.equal(r.status, 404, p)
      assert.ok(!r.body.toString().includes(marker), `${p}: none of the secret's bytes`)
    }
  }

  // a link replaced by a regular file is served at once: the 404 was not kept
  await fs.rm(path.join(out, 'trust', '2.json'))
  await fs.writeFile(path.join(out, 'trust', '2.json'), '{"trust":2}\n')
  const tr2 = await get(url + 'trust/2.json')
  assert.equal(tr2.status, 200)
  assert.equal(tr2.body.toString(), '{"trust":2}\n')
  // a regular file already served, then replaced by a link: not served from what was read before
  assert.equal((await get(url + 'trust/1.json')).status, 200)
  await fs.rm(path.join(out, 'trust', '1.json'))
  await fs.symlink(secret, path.join(out, 'trust', '1.json'))
  const tr1 = await get(url + 'trust/1.json')
  assert.equal(tr1.status, 404)
  assert.ok(!tr1.body.toString().includes(marker))
})

test('rotree serve: a FIFO at trust/<n>.json, history/<n>.json or h/<hex> is a 404 and holds nothing up', opts, async t => {
  const { blob, hex, url } = await hostileOut(t)
  // More FIFO requests than libuv has threads (4 by default): an open that
  // blocked would take a thread each, and the requests after them would wait.
  const fifos = ['trust/3.json', 'history/6.json', `h/${Y}`]
  const asked = await Promise.all(Array.from({ length: 8 }, (_, i) => get(url + fifos[i % fifos.length])))
  for (const [i, r] of asked.entries()) {
    assert.notEqual(r, 'timeout', `${fifos[i % fifos.length]} answered`)
    assert.equal(r.status, 404, fifos[i % fifos.length])
  }
  // and the rest is still answered
  const b = await get(`${url}h/${hex}`)
  assert.notEqual(b, 'timeout', 'a blob is still answered')
  assert.equal(b.status, 200)
  assert.deepEqual(b.body, blob)
  for (const p of ['trust/1.json', 'history/index.json']) {
    const r = await get(url + p)
    assert.notEqual(r, 'timeout', `${p} is still answered`)
    assert.equal(r.status, 200, p)
  }
})

test('rotree serve: a FIFO at fsinfo.json when it starts is a warning, not a server that hangs', opts, async t => {
  const dir = await tmpdir('rotree-serve-fifo-')
  t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const out = path.join(dir, 'out')
  await fs.mkdir(path.join(out, 'h'), { recursive: true })
  const blob = randomBytes(1000)
  await fs.writeFile(path.join(out, 'h', sha(blob)), blob)
  // the expiry warning reads fsinfo.json at start and every minute: as the server reads it
  execFileSync('mkfifo', [path.join(out, 'fsinfo.json')])
  const srv = await start(t, ['serve', out, '--port', '0'])
  const r = await get(`${srv.match[1]}h/${sha(blob)}`)
  assert.notEqual(r, 'timeout', 'the server answers')
  assert.equal(r.status, 200)
  assert.deepEqual(r.body, blob)
  assert.equal((await get(srv.match[1] + 'fsinfo.json')).status, 404)
})

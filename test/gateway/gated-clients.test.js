// A gated gateway (`rotree gateway --grants SECRETFILE`; docs/GATEWAY.md, "A
// gated gateway"; docs/FORMAT.md §12.11), with real processes on loopback:
// one tree served by plain `rotree serve` (its revocation list beside it),
// another by a gated `rotree serve --grants` that the gateway reads with
// its own grant. curl gets no byte of either without an edge token, and the
// exact bytes with the token `rotree grant token` prints, in the header or
// the query; a token of the other tree, an expired one and one that is no
// token at all are refused with 403 and what to do; a revoked grant gets no
// token; wget -r with --header brings every file; the access log names the
// holder of each admitted request and never a token.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { tmpdir, writeTree, prng } from '../helpers/fixtures.js'
import { needs } from '../helpers/tools.js'
import { rotree, start } from '../cli/helpers.js'
import { mintToken } from '../../server/edge-token.js'

const exec = promisify(execFile)
const BIG = prng(300 * 1024, 'gated-big') // several chunks: blobs of its own
const FILES = { 'a.txt': 'gated hello\n', 'dir/big.bin': BIG, 'dir/sub/c.txt': 'deeper\n' }

const fx = {}
const ctx = { after: fn => fx.stops.push(fn) } // start()'s t.after, run in after()

async function ok (...args) {
  const r = await rotree(args)
  assert.equal(r.code, 0, `rotree ${args.join(' ')}\n${r.err}`)
  return r.out
}

/** curl with its exit status, headers and body (never throws on an HTTP error). */
async function curl (url, ...args) {
  const { stdout } = await exec('curl', ['-s', '-D', '-', '-o', '-', ...args, url], { encoding: 'buffer', maxBuffer: 4 << 20 })
  const cut = stdout.indexOf('\r\n\r\n')
  const head = stdout.subarray(0, cut).toString()
  return { status: Number(/^HTTP\/[\d.]+ (\d+)/.exec(head)[1]), head, body: stdout.subarray(cut + 4) }
}

before(async () => {
  fx.stops = []
  fx.d = await tmpdir('rotree-gw-gated-')
  const p = fx.p = n => path.join(fx.d, n)
  await writeTree(p('src'), FILES)
  fx.pub = {}
  for (const n of ['tree', 'other', 'holder', 'revoked']) fx.pub[n] = (await ok('keygen', p(`${n}.key`))).trim()
  await ok('build', p('src'), p('out'), '--key', p('tree.key'))
  await ok('build', p('src'), p('out2'), '--key', p('other.key'))
  await ok('grant', 'secret', p('gw.secret'))
  await ok('grant', 'secret', p('edge.secret'))
  await ok('grant', 'issue', p('out'), '--to', fx.pub.holder, '--ttl', '1d', '--key', p('tree.key'), '-o', p('g.json'))
  await ok('grant', 'issue', p('out'), '--to', fx.pub.revoked, '--ttl', '1d', '--key', p('tree.key'), '-o', p('gr.json'))
  await ok('grant', 'issue', p('out2'), '--to', fx.pub.holder, '--ttl', '1d', '--key', p('other.key'), '-o', p('g2.json'))
  await ok('grant', 'revoke', p('out'), p('gr.json'), '--key', p('tree.key'))
  // the first tree from a plain mirror (which serves trust/revoked.json), the second from a gated one
  const plain = await start(ctx, ['serve', p('out'), '--port', '0'])
  const gated = await start(ctx, ['serve', p('out2'), '--port', '0', '--grants', p('edge.secret'), '--access-log', 'off'])
  fx.gw = await start(ctx, ['gateway', `${plain.match[1]}#${fx.pub.tree}`, `--tree=other=${gated.match[1]}#${fx.pub.other}`,
    '--grant', p('g2.json'), '--grant-key', p('holder.key'), // the gateway reads the gated mirror as a holder
    '--grants', p('gw.secret'), '--access-log', p('access.log'),
    '--port', '0', '--cache-size', '0', '--state-dir', p('state'), '--refresh', '3600'], { ready: /listening at (http:\/\/\S+)/ })
  fx.url = fx.gw.match[1]
  fx.secret = (await fs.readFile(p('gw.secret'), 'utf8')).trim()
})

after(async () => {
  for (const s of fx.stops.reverse()) await s()
  await fs.rm(fx.d, { recursive: true, force: true })
})

test('without a token: 403, no-store, what to do, and no byte of any file, for GET, HEAD, ranges, listings and PROPFIND', async () => {
  const r = await curl(fx.url + 'a.txt')
  assert.equal(r.status, 403)
  assert.match(r.head, /cache-control: no-store/i)
  assert.match(r.head, /x-rotree-error: ROTREE_NO_ACCESS/i)
  const text = r.body.toString()
  assert.match(text, /ROTREE_NO_ACCESS: this tree is gated and no edge token was sent/)
  assert.match(text, /What to do: .*rotree grant token GRANT --grant-key KEYFILE .*X-Rotree-Token/)
  assert.ok(!text.includes('gated hello'))
  for (const [u, args] of [['dir/big.bin', ['-r', '0-99']], ['dir/', []], ['dir/?listing', []], ['other/a.txt', []], ['other/dir/', []], ['dir/', ['-X', 'PROPFIND', '-H', 'Depth: 1']]]) {
    const x = await curl(fx.url + u, ...args)
    assert.equal(x.status, 403, `${u} ${args.join(' ')}`)
    assert.ok(!x.body.includes(BIG.subarray(0, 64)) && !x.body.includes('gated hello') && !x.body.includes('big.bin'), `${u}: nothing of the tree`)
  }
  const h = await fetch(fx.url + 'a.txt', { method: 'HEAD' })
  assert.equal(h.status, 403)
  assert.equal(h.headers.get('x-rotree-error'), 'ROTREE_NO_ACCESS')
  // the gateway's own endpoints stay open (docs/GATEWAY.md, "Operating it")
  assert.equal((await curl(fx.url + '.well-known/rotree/status')).status, 200)
  assert.equal((await curl(fx.url + '.well-known/rotree/metrics')).status, 200)
})

test('rotree grant token\'s token gets the exact bytes, in the header or the query; only for its own tree', async () => {
  const tok = (await ok('grant', 'token', fx.p('g.json'), '--grant-key', fx.p('holder.key'), fx.url)).trim()
  assert.match(tok, /^[A-Za-z0-9_-]{22},\d+$/)
  const a = await curl(fx.url + 'a.txt', '-H', `X-Rotree-Token: ${tok}`)
  assert.equal(a.status, 200)
  assert.equal(a.body.toString(), FILES['a.txt'])
  assert.match(a.head, /cache-control: private, max-age=/i, 'no shared cache keeps what a token admitted')
  const big = await curl(`${fx.url}dir/big.bin?rotree_token=${encodeURIComponent(tok)}`)
  assert.equal(big.status, 200)
  assert.ok(big.body.equals(BIG))
  const range = await curl(fx.url + 'dir/big.bin', '-H', `X-Rotree-Token: ${tok}`, '-r', '1000-1999')
  assert.equal(range.status, 206)
  assert.ok(range.body.equals(BIG.subarray(1000, 2000)))
  const dav = await curl(fx.url + 'dir/', '-X', 'PROPFIND', '-H', 'Depth: 1', '-H', `X-Rotree-Token: ${tok}`)
  assert.equal(dav.status, 207)
  assert.match(dav.body.toString(), /big\.bin/)

  // --json: the exchange's whole answer; the other tree's exchange is at /other/.rotree/token
  const j = JSON.parse(await ok('grant', 'token', fx.p('g2.json'), '--grant-key', fx.p('holder.key'), fx.url + 'other/', '--json'))
  assert.equal(j.holder, fx.pub.holder)
  assert.equal(j.header, 'X-Rotree-Token')
  assert.equal(j.query, 'rotree_token')
  assert.ok(Date.parse(j.expires) > Date.now())
  const o = await curl(fx.url + 'other/a.txt', '-H', `X-Rotree-Token: ${j.token}`)
  assert.equal(o.status, 200)
  assert.equal(o.body.toString(), FILES['a.txt'])
  // a token is good for its tree only
  const cross = await curl(fx.url + 'a.txt', '-H', `X-Rotree-Token: ${j.token}`)
  assert.equal(cross.status, 403)
  assert.match(cross.body.toString(), /not one for this tree/)
  assert.equal((await curl(fx.url + 'other/a.txt', '-H', `X-Rotree-Token: ${tok}`)).status, 403)
  // a grant for the other tree is refused at this tree's exchange
  const wrong = await rotree(['grant', 'token', fx.p('g2.json'), '--grant-key', fx.p('holder.key'), fx.url])
  assert.equal(wrong.code, 1)
  assert.match(wrong.err, /ROTREE_NO_ACCESS: .*refuses this grant: .*is for tree/)

  // an expired token (minted with the gateway's secret, a second past), and a forged one
  const expired = mintToken({ secret: fx.secret, tree: `${fx.pub.tree}:`, expires: Math.floor(Date.now() / 1000) - 1 })
  const e = await curl(fx.url + 'a.txt', '-H', `X-Rotree-Token: ${expired}`)
  assert.equal(e.status, 403)
  assert.match(e.body.toString(), /has expired/)
  const forged = mintToken({ secret: 'f'.repeat(64), tree: `${fx.pub.tree}:`, expires: Math.floor(Date.now() / 1000) + 600 })
  assert.equal((await curl(fx.url + 'a.txt', '-H', `X-Rotree-Token: ${forged}`)).status, 403)
})

test('a grant the tree\'s revocation list names gets no token; the refusal says why and what to do', async () => {
  const r = await rotree(['grant', 'token', fx.p('gr.json'), '--grant-key', fx.p('revoked.key'), fx.url])
  assert.equal(r.code, 1)
  assert.equal(r.out, '')
  assert.match(r.err, /ROTREE_NO_ACCESS: .*refuses this grant: the grant .* is revoked/)
  assert.match(r.err, /\n {2}The edge refuses this grant: /)
  // the wrong key for the grant is refused before anything is sent
  const k = await rotree(['grant', 'token', fx.p('g.json'), '--grant-key', fx.p('revoked.key'), fx.url])
  assert.match(k.err, /ROTREE_BAD_KEY: .*is not the holder/)
})

test('wget -r with --header brings every file of the tree', { skip: needs('wget') }, async () => {
  const tok = (await ok('grant', 'token', fx.p('g.json'), '--grant-key', fx.p('holder.key'), fx.url)).trim()
  const dest = fx.p('wget')
  await fs.mkdir(dest)
  await exec('wget', ['-q', '-r', '-l', 'inf', '-np', '-nH', `--header=X-Rotree-Token: ${tok}`, `${fx.url}dir/?listing`], { cwd: dest })
  assert.ok((await fs.readFile(path.join(dest, 'dir/big.bin'))).equals(BIG))
  assert.equal(await fs.readFile(path.join(dest, 'dir/sub/c.txt'), 'utf8'), FILES['dir/sub/c.txt'])
})

test('the access log names the holder of each admitted request, and never a token', async () => {
  await new Promise(resolve => setTimeout(resolve, 200)) // lines are written as each response closes
  const log = await fs.readFile(fx.p('access.log'), 'utf8')
  const lines = log.split('\n').filter(Boolean)
  const admitted = lines.filter(l => / 20[067] \d+ /.test(l) && !l.includes('/.well-known/') && !l.includes('"POST '))
  assert.ok(admitted.length >= 4, log)
  for (const l of admitted) assert.ok(l.endsWith(` ${fx.pub.holder}`), `names the holder: ${l}`)
  for (const l of lines.filter(l => / 403 \d+ /.test(l))) assert.ok(l.endsWith(' -'), `a refused request names none: ${l}`)
  assert.ok(lines.some(l => l.includes('"GET /dir/big.bin?rotree_token=- HTTP/1.1" 200')), 'a token in the query is written as -')
  assert.ok(!/[A-Za-z0-9_-]{22},\d{10}/.test(log), 'no token in the log')
})

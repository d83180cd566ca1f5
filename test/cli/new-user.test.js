// What a new user meets first: a typo'd command or option, an address typed
// without its scheme, a mirror that lied while another one answered, and a
// remote wherever an address goes (NAME@SEQ:PATH, --mirror NAME:,
// fsck --repair-from NAME:, trust show NAME:).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { rotree, servedTree, start } from './helpers.js'

test('a typo\'d command or option names the one meant', async () => {
  const cmd = await rotree(['lst'])
  assert.equal(cmd.code, 2)
  assert.match(cmd.err, /^rotree: unknown command "lst": did you mean rotree ls\?\n/)
  const opt = await rotree(['build', 'a', 'b', '--privte'])
  assert.equal(opt.code, 2)
  assert.match(opt.err, /^rotree build: unknown option --privte: did you mean --private\?\n/)
  const none = await rotree(['qqqqqq'])
  assert.doesNotMatch(none.err, /did you mean/)
})

test('-o where the destination is an argument, and a destination where -o is wanted, each say which', async () => {
  const build = await rotree(['build', 'src', '-o', 'out', '--unsigned'])
  assert.equal(build.code, 2)
  assert.match(build.err, /^rotree build: unknown option -o: OUT is an argument here \(rotree build SRC OUT\)\n/)
  const keygen = await rotree(['keygen', '-o', 'a.key'])
  assert.match(keygen.err, /^rotree keygen: unknown option -o: KEYFILE is an argument here \(rotree keygen KEYFILE\)\n/)
  const pull = await rotree(['pull', 'http://127.0.0.1:1/#' + 'a'.repeat(64), '--output', 'dir'])
  assert.match(pull.err, /^rotree pull: unknown option --output: DIR is an argument here \(rotree pull ADDR DIR\)\n/)
  const get = await rotree(['get', 'http://127.0.0.1:1/#' + 'a'.repeat(64), '/', 'dest'])
  assert.equal(get.code, 2)
  assert.match(get.err, /^rotree get: expected 1 to 2 arguments, got 3 \("dest" too many\): did you mean -o "dest"\?\n/)
  const ls = await rotree(['ls', 'http://127.0.0.1:1/#' + 'a'.repeat(64), '-o'])
  assert.match(ls.err, /^rotree ls: unknown option -o\n/, 'no hint where there is no destination')
})

test('a port already taken says to pick another', async t => {
  const net = await import('node:net')
  const srv = net.createServer().listen(0, '127.0.0.1')
  await new Promise(resolve => srv.once('listening', resolve))
  t.after(() => srv.close())
  const tr = await servedTree(t, { 'a.txt': 'alpha\n' })
  const r = await rotree(['serve', tr.out, '--port', String(srv.address().port)], { env: tr.env })
  assert.equal(r.code, 1)
  assert.match(r.err, /^rotree: ROTREE_SYSTEM_EADDRINUSE: .*\n {2}Another program listens on that port: pick another with --port \(--port 0 takes a free one\)\.\n$/)
})

test('an address without its scheme is not taken for a remote', async t => {
  const tr = await servedTree(t, { 'a.txt': 'a\n' })
  const bare = tr.addr.replace(/^http:\/\//, '')
  const r = await rotree(['ls', bare, '/'], { env: tr.env })
  assert.equal(r.code, 2, r.err)
  assert.ok(r.err.startsWith(`rotree ls: ${bare} has no scheme: did you mean http://${bare} (or https://…)?\n`), r.err)
})

test('a mirror that served bad bytes is named on stderr when the command still succeeds', { timeout: 120_000 }, async t => {
  const tr = await servedTree(t, { 'big.bin': Buffer.alloc(600_000, 1).map((_, i) => (i * 7919) & 255), 'b.txt': 'bravo\n' })
  // a copy of OUT whose every blob has a byte flipped, served as the address's own URL
  const bad = path.join(tr.dir, 'bad')
  await fs.cp(tr.out, bad, { recursive: true })
  for (const n of await fs.readdir(path.join(bad, 'h'))) {
    const p = path.join(bad, 'h', n)
    const b = await fs.readFile(p)
    b[b.length >> 1] ^= 1
    await fs.writeFile(p, b)
  }
  const liar = await start(t, ['serve', bad, '--port', '0'])
  // the reader spreads blobs over both mirrors by how fast each answers: on a
  // loaded machine one run may ask the liar for nothing, and then rightly
  // warns of nothing; a few runs, each with its one line at most
  let lines = []
  for (let i = 0; i < 6 && lines.length === 0; i++) {
    const r = await rotree(['cat', `${liar.match[1]}#${tr.pub}`, '/big.bin', '--mirror', tr.url], { env: tr.env })
    assert.equal(r.code, 0, r.err)
    assert.ok(r.out.length > 0)
    lines = r.err.split('\n').filter(l => l.includes('warning: mirror'))
    assert.ok(lines.length <= 1, r.err)
  }
  assert.equal(lines.length, 1, 'the liar was named in one of the runs')
  assert.match(lines[0], new RegExp(`^rotree: warning: mirror ${liar.match[1].replace(/[.]/g, '\\.')} failed \\d+ times? \\(last: ROTREE_HASH_MISMATCH: `))
  // an honest pair: no warning
  const ok = await rotree(['cat', tr.addr, '/b.txt'], { env: tr.env })
  assert.equal(ok.err, '')
})

test('a remote wherever an address goes: NAME@SEQ:PATH, --mirror NAME:, fsck --repair-from NAME:, trust show NAME:', { timeout: 120_000 }, async t => {
  const tr = await servedTree(t, { 'docs/a.txt': 'alpha\n' })
  const { env } = tr
  assert.equal((await rotree(['remote', 'add', 'origin', tr.addr], { env })).code, 0)
  const seq = JSON.parse(await fs.readFile(path.join(tr.out, 'fsinfo.json'), 'utf8')).seq
  const old = await rotree(['cat', `origin@${seq}:/docs/a.txt`], { env })
  assert.equal(old.code, 0, old.err)
  assert.equal(old.out, 'alpha\n')
  // a remote as another mirror: the address's own URL is down
  const viaMirror = await rotree(['cat', `http://127.0.0.1:9/#${tr.pub}`, '/docs/a.txt', '--mirror', 'origin:', '--timeout', '2'], { env })
  assert.equal(viaMirror.code, 0, viaMirror.err)
  assert.equal(viaMirror.out, 'alpha\n')
  // repair a pulled copy from the remote
  const mir = path.join(tr.dir, 'mirror')
  assert.equal((await rotree(['pull', 'origin:', mir], { env })).code, 0)
  const blob = (await fs.readdir(path.join(mir, 'h')))[0]
  await fs.rm(path.join(mir, 'h', blob))
  const fsck = await rotree(['fsck', mir, '--repair-from', 'origin:', '--json'], { env })
  assert.equal(fsck.code, 0, fsck.err)
  const report = JSON.parse(fsck.out)
  assert.equal(report.ok, true)
  assert.equal(report.before.missing, 1)
  const show = await rotree(['trust', 'show', 'origin:', '--json'], { env })
  assert.equal(show.code, 0, show.err)
  assert.equal(JSON.parse(show.out).address, tr.addr)
})

test('resign says when --ttl is capped by the release; stat prints one value once', { timeout: 120_000 }, async t => {
  const tr = await servedTree(t, { 'a.txt': 'a\n' })
  const { env } = tr
  const st = await rotree(['stat', tr.addr, '/a.txt'], { env })
  assert.equal(st.code, 0, st.err)
  assert.match(st.out, /^sha256 {3}[0-9a-f]{64}$/m)
  assert.doesNotMatch(st.out, /^hash /m, 'the same value is not printed twice')
  // a tree with roles: the release key is offline, the timestamp key re-signs, within the release's expiry
  const base = path.join(tr.dir, 'roles')
  await fs.mkdir(base)
  const key = async n => { const f = path.join(base, n + '.key'); const r = await rotree(['keygen', f]); return { file: f, hex: r.out.trim() } }
  const A = await key('A'); const R = await key('R'); const T = await key('T')
  const out = path.join(base, 'out')
  for (const [n, k] of [['A', A], ['R', R], ['T', T]]) await fs.writeFile(path.join(base, n + '.pub'), k.hex + '\n')
  assert.equal((await rotree(['trust', 'init', out, '--root', path.join(base, 'A.pub'), '--release', path.join(base, 'R.pub'), '--timestamp', path.join(base, 'T.pub')])).code, 0)
  assert.equal((await rotree(['trust', 'sign', out, '--key', A.file])).code, 0)
  const b = await rotree(['build', tr.site, out, '--key', R.file, '--timestamp-key', T.file, '--release-ttl', '2d', '--ttl', '1d', '--no-fsync'])
  assert.equal(b.code, 0, b.err)
  const r = await rotree(['resign', out, '--key', T.file, '--ttl', '10d', '--no-fsync'])
  assert.equal(r.code, 0, r.err)
  assert.match(r.err, /^rotree: warning: --ttl 10d asked for .*, but fsinfo\.json cannot outlive release \d+ \(until .*\): it expires .*; publish a new release/m)
  const quiet = await rotree(['resign', out, '--key', T.file, '--ttl', '1d', '--no-fsync'])
  assert.equal(quiet.err, '')
})

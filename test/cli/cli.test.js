// The command line as a user runs it: real processes, real server, exit codes.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { spawn } from 'node:child_process'
import { tmpdir, writeTree } from '../helpers/fixtures.js'

const BIN = new URL('../../bin/rotree.js', import.meta.url).pathname

function rotree (args, { env = {}, input } = {}) {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, ...env } })
    const out = []; const err = []
    p.stdout.on('data', b => out.push(b)); p.stderr.on('data', b => err.push(b))
    p.on('error', reject)
    p.on('close', code => resolve({ code, stdout: Buffer.concat(out), stderr: Buffer.concat(err).toString() }))
    if (input) p.stdin.end(input); else p.stdin.end()
  })
}

/** Start `rotree serve` on a free port; resolves with its URL. */
function startServe (out) {
  const p = spawn(process.execPath, [BIN, 'serve', out, '--port', '0'])
  return new Promise((resolve, reject) => {
    let buf = ''
    p.stdout.on('data', b => {
      buf += b
      const m = /at (http:\/\/\S+)/.exec(buf)
      if (m) resolve({ url: m[1], proc: p })
    })
    p.on('exit', code => reject(new Error('serve exited ' + code)))
  })
}

test('keygen, build, serve, ls, stat, cat, get, as in the README', { timeout: 60_000 }, async t => {
  const dir = await tmpdir(); t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const env = { ROTREE_STATE: path.join(dir, 'state') }
  const site = path.join(dir, 'site')
  await writeTree(site, { 'docs/README.md': '# Hello\n', 'index.html': '<h1>hi</h1>', 'bin/run': { data: '#!/bin/sh\n', mode: 0o755 } })
  const key = path.join(dir, 'publisher.key')

  const kg = await rotree(['keygen', key])
  assert.equal(kg.code, 0)
  const pub = kg.stdout.toString().trim().split('\n').at(-1)
  assert.match(pub, /^[0-9a-f]{64}$/)
  assert.equal((await fs.stat(key)).mode & 0o777, 0o600)
  // never overwrites a key, and says so in one coded line, not a usage text
  const again = await rotree(['keygen', key])
  assert.equal(again.code, 1)
  assert.match(again.stderr.toString(), /^rotree: ROTREE_BAD_PATH: .* exists and is kept .*--force\)\n(  .*\n)?$/)
  assert.equal((await fs.readFile(key, 'utf8')).includes(pub), true)

  const out = path.join(dir, 'out')
  const b = await rotree(['build', site, out, '--key', key, '--ttl', '7d'])
  assert.equal(b.code, 0, b.stderr)
  assert.match(b.stdout.toString(), /root [0-9a-f]{64}/)

  const { url, proc } = await startServe(out)
  t.after(() => proc.kill('SIGTERM'))
  const addr = `${url}#${pub}`

  const ls = await rotree(['ls', '-l', addr, '/docs'], { env })
  assert.equal(ls.code, 0, ls.stderr)
  assert.match(ls.stdout.toString(), /-rw-r--r-- +8 .* README\.md/)
  const lsj = await rotree(['ls', addr, '/', '--json'], { env })
  const lines = lsj.stdout.toString().trim().split('\n').map(l => JSON.parse(l))
  assert.deepEqual(lines.slice(0, -1).map(j => j.path), ['bin', 'docs', 'index.html'])
  assert.equal(lines.at(-1).summary.count, 3, 'a summary line last (docs/JSON.md)')

  const st = await rotree(['stat', addr, '/docs/README.md', '--json'], { env })
  const sj = JSON.parse(st.stdout)
  assert.equal(sj.size, 8); assert.equal(sj.type, 'file'); assert.equal(sj.key, pub); assert.equal(sj.address, addr)

  const cat = await rotree(['cat', addr, '/docs/README.md'], { env })
  assert.equal(cat.stdout.toString(), '# Hello\n')

  const copy = path.join(dir, 'copy')
  const get = await rotree(['get', addr, '/', '-o', copy], { env })
  assert.equal(get.code, 0, get.stderr)
  assert.equal(await fs.readFile(path.join(copy, 'index.html'), 'utf8'), '<h1>hi</h1>')
  assert.equal((await fs.stat(path.join(copy, 'bin/run'))).mode & 0o777, 0o755)
  const one = await rotree(['get', addr, '/docs/README.md', '-o', path.join(dir, 'one.md')], { env })
  assert.equal(one.code, 0, one.stderr)
  assert.equal(await fs.readFile(path.join(dir, 'one.md'), 'utf8'), '# Hello\n')

  // failures: one line with a stable code, exit 1, no stack trace
  const nf = await rotree(['cat', addr, '/nope'], { env })
  assert.equal(nf.code, 1)
  assert.match(nf.stderr, /^rotree: ROTREE_NOT_FOUND: \/nope does not exist\n(  .*\n)?$/)
  const wrong = await rotree(['ls', `${url}#${'0'.repeat(63)}1`], { env })
  assert.equal(wrong.code, 1)
  assert.match(wrong.stderr, /^rotree: ROTREE_(WRONG_KEY|ALL_MIRRORS_FAILED): .*\n(  .*\n)?$/)
  const dbg = await rotree(['cat', addr, '/nope', '--debug'], { env })
  assert.match(dbg.stderr, /at .*tree\.js/)
  const down = await rotree(['ls', `http://127.0.0.1:1/#${pub}`, '--timeout', '2'], { env })
  assert.equal(down.code, 1)
  assert.match(down.stderr, /^rotree: ROTREE_(MIRROR_NETWORK|ALL_MIRRORS_FAILED): /)
})

test('usage errors: one line and a hint, exit 2; every command has --help', async () => {
  const full = await rotree([])
  assert.equal(full.code, 2)
  assert.match(full.stderr, /usage: rotree <command>/)
  for (const [args, line] of [
    [['nope'], /^rotree: unknown command "nope"$/],
    [['ls'], /^rotree ls: expected 1 to 2 arguments, got 0$/],
    [['build', 'a'], /^rotree build: expected 2 arguments, got 1$/],
    [['ls', 'x', '--bogus'], /^rotree ls: unknown option --bogus$/],
    [['ls', 'x', '--foo=1'], /^rotree ls: unknown option --foo$/],
    [['get', 'x', '/', '-o'], /^rotree get: option -o needs a value \(DEST\)$/],
    [['get', 'x', '/', '-o', '--jobs'], /^rotree get: option -o needs a value \(DEST\), got the option --jobs$/],
    [['ls', 'x', '--json=yes'], /^rotree ls: option --json takes no value$/],
    [['ls', 'x', '--timeout', 'soon'], /^rotree ls: --timeout must be a duration/],
    [['build', 'a', 'b', '--key', 'k', '--ttl', 'forever'], /^rotree build: /]
  ]) {
    const r = await rotree(args)
    assert.equal(r.code, 2, args.join(' ') + ': ' + r.stderr)
    const lines = r.stderr.split('\n')
    assert.equal(lines.length, 3, `${args.join(' ')}: two lines, got ${JSON.stringify(r.stderr)}`)
    assert.match(lines[0], line)
    assert.match(lines[1], args[0] === 'nope' ? /^run rotree help/ : new RegExp(`^usage: rotree ${args[0]} .*; run rotree ${args[0]} --help$`))
    assert.doesNotMatch(r.stderr, /To specify|'--/, 'no Node parseArgs text')
  }
  for (const c of ['keygen', 'build', 'serve', 'ls', 'stat', 'cat', 'get', 'remote']) {
    const r = await rotree([c, '--help'])
    assert.equal(r.code, 0)
    assert.match(r.stdout.toString(), new RegExp(`usage: rotree ${c}`))
  }
  // rotree help CMD is CMD --help
  const hb = await rotree(['help', 'build'])
  assert.equal(hb.code, 0)
  assert.match(hb.stdout.toString(), /^usage: rotree build SRC OUT/)
  assert.doesNotMatch(hb.stdout.toString(), /commands:/)
  assert.match((await rotree(['get', '--help'])).stdout.toString(), /^ {2}-o, --output DEST +where to write/m)
  // ls -h is human sizes, so ls has --help only
  assert.match((await rotree(['ls', '--help'])).stdout.toString(), /^ {2}-h, --human /m)
  const bad = await rotree(['ls', 'http://127.0.0.1:1/#nothex'])
  assert.equal(bad.code, 1)
  assert.match(bad.stderr, /^rotree: ROTREE_BAD_ADDRESS: /)
})

test('ls -l, -R, -h; --timeout in fractions and units; get -o -', { timeout: 60_000 }, async t => {
  const dir = await tmpdir(); t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const env = { ROTREE_STATE: path.join(dir, 'state') }
  const site = path.join(dir, 'site')
  await writeTree(site, { 'a/b/c.txt': 'c'.repeat(3000), 'a/d.txt': 'd\n', 'e.txt': 'e\n', 'l': { symlink: 'a/d.txt' } })
  const key = path.join(dir, 'k')
  const pub = (await rotree(['keygen', key])).stdout.toString().trim().split('\n').at(-1)
  assert.equal((await rotree(['build', site, path.join(dir, 'out'), '--key', key])).code, 0)
  const { url, proc } = await startServe(path.join(dir, 'out'))
  t.after(() => proc.kill('SIGTERM'))
  const addr = `${url}#${pub}`

  assert.equal((await rotree(['ls', addr], { env })).stdout.toString(), 'a/\ne.txt\nl\n')
  const rec = await rotree(['ls', '-R', addr, '/'], { env })
  assert.equal(rec.stdout.toString(), 'a/\na/b/\na/b/c.txt\na/d.txt\ne.txt\nl\n')
  const sub = await rotree(['ls', '-R', addr, '/a/'], { env })
  assert.equal(sub.stdout.toString(), 'b/\nb/c.txt\nd.txt\n')
  const lR = await rotree(['ls', '-lRh', addr], { env })
  assert.match(lR.stdout.toString(), /^-rw-r--r-- +2\.9 KiB .* a\/b\/c\.txt$/m)
  assert.match(lR.stdout.toString(), /^lrwxrwxrwx .* l -> a\/d\.txt$/m)
  const json = (await rotree(['ls', '-R', '--json', addr], { env })).stdout.toString().trim().split('\n').map(l => JSON.parse(l)).slice(0, -1)
  assert.deepEqual(json.map(j => j.path), ['a', 'a/b', 'a/b/c.txt', 'a/d.txt', 'e.txt', 'l'])
  const capped = await rotree(['ls', '-R', addr, '--max-entries', '3'], { env })
  assert.equal(capped.code, 1)
  assert.match(capped.stderr, /^rotree: ROTREE_TOO_LARGE: more than 3 entries/)
  assert.equal(capped.stdout.toString(), 'a/\na/b/\na/b/c.txt\n')

  for (const tmo of ['0.5', '500ms', '2s', '.75', '1m']) {
    const r = await rotree(['cat', addr, '/e.txt', '--timeout', tmo], { env })
    assert.equal(r.code, 0, `--timeout ${tmo}: ${r.stderr}`)
  }
  for (const tmo of ['0', '-1', '1h', 'x']) assert.equal((await rotree(['cat', addr, '/e.txt', '--timeout', tmo], { env })).code, 2, tmo)

  const one = await rotree(['get', addr, '/a/b/c.txt', '-o', '-'], { env })
  assert.equal(one.code, 0, one.stderr)
  assert.equal(one.stdout.toString(), 'c'.repeat(3000))
  assert.deepEqual(await fs.readdir(dir), ['k', 'out', 'site', 'state'], 'nothing written for -o -')
  const isDir = await rotree(['get', addr, '/a', '-o', '-'], { env })
  assert.equal(isDir.code, 1)
  assert.match(isDir.stderr, /^rotree: ROTREE_IS_A_DIRECTORY: /)
})

test('build refuses bad input by default and names the path; --skip-bad skips it', async t => {
  const dir = await tmpdir(); t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const site = path.join(dir, 'site')
  await writeTree(site, { 'ok.txt': 'ok', 'escape': { symlink: '../../etc/passwd' }, 'abs': { symlink: '/etc/passwd' } })
  const { execFileSync } = await import('node:child_process')
  execFileSync('mkfifo', [path.join(site, 'fifo')])
  await fs.writeFile(Buffer.from(path.join(site, 'bad-\xff-name.txt'), 'latin1'), 'x').catch(() => {})
  const key = path.join(dir, 'k'); await rotree(['keygen', key])
  const out = path.join(dir, 'out')
  const fail = await rotree(['build', site, out, '--key', key])
  assert.equal(fail.code, 1)
  assert.match(fail.stderr, /^rotree: ROTREE_BUILD_INPUT: \/(escape|abs|fifo|bad-.*-name\.txt): /)
  await assert.rejects(fs.stat(path.join(out, 'fsinfo.json'))) // nothing published
  const skip = await rotree(['build', site, out, '--key', key, '--skip-bad'])
  assert.equal(skip.code, 0, skip.stderr)
  for (const p of ['/escape', '/abs', '/fifo']) assert.match(skip.stderr, new RegExp(`warning: skipping ${p}: `))
  assert.match(skip.stdout.toString(), /skipped [34]/)
})

// `rotree ls` and `rotree stat` print names and symlink targets that a hostile
// publisher chose: terminal escapes, C1 controls and bidi overrides come out
// escaped (cli/escape.js), and --json keeps them exact.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { spawn } from 'node:child_process'
import { tmpdir, makeKey, serve, address } from '../helpers/fixtures.js'
import { SignedTree } from '../helpers/signed-tree.js'

const BIN = new URL('../../bin/rotree.js', import.meta.url).pathname

function rotree (args, env) {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, ...env } })
    const out = []; const err = []
    p.stdout.on('data', b => out.push(b)); p.stderr.on('data', b => err.push(b))
    p.on('error', reject)
    p.on('close', code => resolve({ code, stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString() }))
    p.stdin.end()
  })
}

// eslint-disable-next-line no-control-regex
const UNSAFE = /[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/

const NAMES = {
  title: 'x\x1b]0;pwned\x07',
  clear: 'y\x1b[2J\x1b[H',
  c1: 'csi\u009b31m',
  del: 'del\x7f',
  rtl: 'invoice\u202egpj.exe',
  isolate: 'iso\u2066late\u2069',
  nl: 'two\nlines',
  cr: 'over\rwrite',
  backslash: 'back\\x1b'
}

test('ls and stat escape control characters in names and targets; --json is exact', async t => {
  const dir = await tmpdir(); t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const st = new SignedTree(path.join(dir, 'out'))
  const key = makeKey()
  const target = '\x1b[31mred\u202e\x9b'
  await st.sign(key, [
    ...Object.values(NAMES).map(n => ({ name: n, file: 'f' })),
    { name: 'link\x1b[5m', symlink: target },
    { name: 'd\x07ir', dir: [{ name: 'in\x1b[1m', file: 'g' }] }
  ])
  const srv = await serve(path.join(dir, 'out')); t.after(srv.close)
  const addr = address(srv.url, key.publicKey)
  const env = { ROTREE_STATE: path.join(dir, 'state') }

  const ls = await rotree(['ls', '-l', addr, '/'], env)
  assert.equal(ls.code, 0, ls.stderr)
  const lines = ls.stdout.split('\n').slice(0, -1)
  assert.equal(lines.length, Object.keys(NAMES).length + 2, 'one line per entry: no name breaks a line')
  for (const l of lines) assert.doesNotMatch(l, UNSAFE, JSON.stringify(l))
  const out = ls.stdout
  assert.ok(out.includes(' x\\x1b]0;pwned\\x07\n'), out)
  assert.ok(out.includes(' y\\x1b[2J\\x1b[H\n'))
  assert.ok(out.includes(' csi\\x9b31m\n'))
  assert.ok(out.includes(' del\\x7f\n'))
  assert.ok(out.includes(' invoice\\u{202e}gpj.exe\n'))
  assert.ok(out.includes(' iso\\u{2066}late\\u{2069}\n'))
  assert.ok(out.includes(' two\\x0alines\n'))
  assert.ok(out.includes(' over\\x0dwrite\n'))
  assert.ok(out.includes(' back\\\\x1b\n'), 'a backslash is escaped, so it cannot pass for an escape')
  assert.ok(out.includes(' link\\x1b[5m -> \\x1b[31mred\\u{202e}\\x9b\n'))
  assert.ok(out.includes(' d\\x07ir/\n'))

  const sub = await rotree(['ls', '-l', addr, '/d\x07ir'], env)
  assert.equal(sub.code, 0, sub.stderr)
  assert.doesNotMatch(sub.stdout.slice(0, -1), UNSAFE)
  assert.ok(sub.stdout.includes(' in\\x1b[1m\n'))

  // the short and the recursive listings too
  const short = await rotree(['ls', addr, '/'], env)
  assert.equal(short.stdout.split('\n').length, Object.keys(NAMES).length + 3)
  assert.ok(short.stdout.includes('\nx\\x1b]0;pwned\\x07\n'), short.stdout)
  const rec = await rotree(['ls', '-R', addr, '/'], env)
  assert.equal(rec.code, 0, rec.stderr)
  assert.doesNotMatch(rec.stdout.replaceAll('\n', ''), UNSAFE)
  assert.ok(rec.stdout.includes('\nd\\x07ir/in\\x1b[1m\n'), rec.stdout)

  const json = await rotree(['ls', addr, '/', '--json'], env)
  assert.equal(json.code, 0, json.stderr)
  const rows = json.stdout.trim().split('\n').map(l => JSON.parse(l)).slice(0, -1) // then the summary line
  assert.deepEqual(rows.map(r => r.path).sort(), [...Object.values(NAMES), 'link\x1b[5m', 'd\x07ir'].sort())
  assert.equal(rows.find(r => r.type === 'symlink').target, target)

  const stat = await rotree(['stat', addr, '/link\x1b[5m'], env)
  assert.equal(stat.code, 0, stat.stderr)
  assert.doesNotMatch(stat.stdout.replaceAll('\n', ''), UNSAFE)
  assert.match(stat.stdout, /^name {5}link\\x1b\[5m$/m)
  assert.match(stat.stdout, /^target {3}\\x1b\[31mred\\u\{202e\}\\x9b$/m)
  assert.match(stat.stdout, /^path {5}\/link\\x1b\[5m$/m)
  const sj = JSON.parse((await rotree(['stat', addr, '/link\x1b[5m', '--json'], env)).stdout)
  assert.equal(sj.path, '/link\x1b[5m')
  assert.equal(sj.target, target)

  // error messages carry the names too: escaped by cli/main.js, still one line
  const missing = await rotree(['cat', addr, '/d\x07ir/nope\x1b]0;pwned\x07'], env)
  assert.equal(missing.code, 1)
  assert.doesNotMatch(missing.stderr.slice(0, -1), UNSAFE)
  assert.match(missing.stderr, /^rotree: ROTREE_NOT_FOUND: .*nope\\x1b\]0;pwned\\x07.*\n(  .*\n)?$/)
})

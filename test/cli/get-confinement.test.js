// `rotree get` of a validly signed tree whose publisher is hostile: whatever
// the tree holds, nothing is written outside DEST, nothing is written through
// a symlink, every refusal exits 1 with a typed code, and trees that describe
// far more than they store are refused before they fill memory or the disk.
// Real CLI, real server on port 0, trees crafted blob by blob and signed
// (test/helpers/signed-tree.js). The policy is in cli/download.js.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { spawn } from 'node:child_process'
import { tmpdir, makeKey, serve, address } from '../helpers/fixtures.js'
import { SignedTree } from '../helpers/signed-tree.js'
import { snapshot, exists } from './helpers.js'

const BIN = new URL('../../bin/rotree.js', import.meta.url).pathname

function rotree (args, { env = {} } = {}) {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, ...env } })
    const out = []; const err = []
    p.stdout.on('data', b => out.push(b)); p.stderr.on('data', b => err.push(b))
    p.on('error', reject)
    p.on('close', (code, signal) => resolve({ code, signal, stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString() }))
    p.stdin.end()
  })
}

/** A signed tree made by `specs(st, dir)`, served; `dir/outside/victim` is a file get must never touch. */
async function hostile (t, specs) {
  const dir = await tmpdir(); t.after(() => fs.rm(dir, { recursive: true, force: true }))
  await fs.mkdir(path.join(dir, 'outside'))
  await fs.writeFile(path.join(dir, 'outside', 'victim'), 'victim\n')
  const out = path.join(dir, 'out')
  const st = new SignedTree(out)
  const key = makeKey()
  await st.sign(key, await specs(st, dir))
  const srv = await serve(out); t.after(srv.close)
  const env = { ROTREE_STATE: path.join(dir, 'state') }
  return { dir, out, st, addr: address(srv.url, key.publicKey), get: (...args) => rotree(['get', address(srv.url, key.publicKey), ...args], { env }) }
}

const failedWith = (r, code) => {
  assert.equal(r.code, 1, `exit ${r.code} ${r.signal ?? ''}\n${r.stderr}`)
  assert.match(r.stderr, new RegExp(`^rotree: ${code}: `), r.stderr)
}
// eslint-disable-next-line no-control-regex
const CONTROL = /[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/

test('a symlink named like a temporary file is never written through', async t => {
  const h = await hostile(t, async () => [
    { name: 'x', file: 'payload\n' },
    { name: '.x.rotree-partial', symlink: 'y' } // the name the old get used for x's partial file
  ])
  const dest = path.join(h.dir, 'copy')
  const r = await h.get('/', '-o', dest)
  assert.equal(r.code, 0, r.stderr)
  assert.deepEqual(await snapshot(dest), { '.x.rotree-partial': 'link:y', x: 'file:payload\n' })
})

test('a symlink named like a temporary file and pointing out of DEST is skipped, or with --strict-links refused; nothing outside changes', async t => {
  const h = await hostile(t, async (st, dir) => [
    { name: 'x', file: 'payload\n' },
    { name: '.x.rotree-partial', symlink: path.join(dir, 'outside', 'victim') },
    { name: '.y.rotree-partial', symlink: '../outside/new' },
    { name: 'y', file: 'payload\n' }
  ])
  const dest = path.join(h.dir, 'copy')
  const r = await h.get('/', '-o', dest, '--strict-links')
  failedWith(r, 'ROTREE_BAD_PATH')
  assert.deepEqual(await snapshot(path.join(h.dir, 'outside')), { victim: 'file:victim\n' })
  assert.equal(await exists(dest), false, 'refused before DEST was made')

  const skip = await h.get('/', '-o', dest)
  assert.equal(skip.code, 0, skip.stderr)
  assert.match(skip.stderr, /skipped symlink \.x\.rotree-partial -> .*: it has an absolute target \(the tree root\), outside DEST\n/)
  assert.match(skip.stderr, /skipped symlink \.y\.rotree-partial -> \.\.\/outside\/new: it has a target that could lead out of DEST\n/)
  assert.match(skip.stderr, /skipped 2 symlinks that point outside DEST/)
  assert.deepEqual(await snapshot(dest), { x: 'file:payload\n', y: 'file:payload\n' })
  assert.deepEqual(await snapshot(path.join(h.dir, 'outside')), { victim: 'file:victim\n' })
})

test('x and .x.rotree-partial are two files, each with its own verified bytes', async t => {
  const specs = []
  for (let i = 0; i < 40; i++) {
    specs.push({ name: `x${i}`, file: `x${i} true bytes\n` }, { name: `.x${i}.rotree-partial`, file: `the other file ${i}\n` })
  }
  const h = await hostile(t, async () => specs)
  const dest = path.join(h.dir, 'copy')
  const r = await h.get('/', '-o', dest)
  assert.equal(r.code, 0, r.stderr)
  assert.match(r.stderr, /got .*: 80 files/)
  const want = {}
  for (const s of specs) want[s.name] = 'file:' + s.file
  assert.deepEqual(await snapshot(dest), Object.fromEntries(Object.entries(want).sort(([a], [b]) => a < b ? -1 : 1)))
})

test('what an earlier run left in DEST is never followed', async t => {
  const h = await hostile(t, async () => [
    { name: 'a', dir: [{ name: 'b', file: 'into a\n' }] },
    { name: 'x', file: 'x bytes\n' },
    { name: 'z', file: 'z bytes\n' }
  ])
  const outside = path.join(h.dir, 'outside')
  const victim = path.join(outside, 'victim')

  // a symlink where a file goes: not followed, not replaced
  const d1 = path.join(h.dir, 'd1')
  await fs.mkdir(d1); await fs.symlink(victim, path.join(d1, 'x'))
  failedWith(await h.get('/', '-o', d1), 'ROTREE_BAD_PATH')
  assert.equal(await fs.readlink(path.join(d1, 'x')), victim)

  // a symlink where a directory goes: nothing written under it
  const d2 = path.join(h.dir, 'd2')
  await fs.mkdir(d2); await fs.symlink(outside, path.join(d2, 'a'))
  failedWith(await h.get('/', '-o', d2), 'ROTREE_BAD_PATH')

  // the old partial name planted as a symlink: the download does not go through it
  const d3 = path.join(h.dir, 'd3')
  await fs.mkdir(d3); await fs.symlink(victim, path.join(d3, '.x.rotree-partial'))
  const r3 = await h.get('/', '-o', d3)
  assert.equal(r3.code, 0, r3.stderr)
  assert.equal(await fs.readFile(path.join(d3, 'x'), 'utf8'), 'x bytes\n')
  assert.equal(await fs.readlink(path.join(d3, '.x.rotree-partial')), victim)

  // DEST itself a symlink to elsewhere: refused
  const d4 = path.join(h.dir, 'd4')
  await fs.symlink(outside, d4)
  failedWith(await h.get('/', '-o', d4), 'ROTREE_BAD_PATH')

  // a single file onto a symlink: refused
  failedWith(await h.get('/x', '-o', path.join(d1, 'x')), 'ROTREE_BAD_PATH')

  assert.deepEqual(await snapshot(outside), { victim: 'file:victim\n' })

  // a real directory from an earlier run is used; regular files in it are replaced
  const d5 = path.join(h.dir, 'd5')
  await fs.mkdir(path.join(d5, 'a'), { recursive: true }); await fs.writeFile(path.join(d5, 'x'), 'old\n')
  const r5 = await h.get('/', '-o', d5)
  assert.equal(r5.code, 0, r5.stderr)
  assert.deepEqual(await snapshot(d5), { a: 'dir', 'a/b': 'file:into a\n', x: 'file:x bytes\n', z: 'file:z bytes\n' })
})

test('a symlink a first get made is not followed by a second get that needs a directory there', async t => {
  const one = await hostile(t, async () => [
    { name: 'a', symlink: 'sub' },
    { name: 'sub', dir: [{ name: 'keep', file: 'k\n' }] }
  ])
  const two = await hostile(t, async () => [{ name: 'a', dir: [{ name: 'b', file: 'b\n' }] }])
  const dest = path.join(one.dir, 'copy')
  const r1 = await one.get('/', '-o', dest)
  assert.equal(r1.code, 0, r1.stderr)
  assert.equal(await fs.readlink(path.join(dest, 'a')), 'sub')
  failedWith(await two.get('/', '-o', dest), 'ROTREE_BAD_PATH')
  assert.deepEqual(await snapshot(dest), { a: 'link:sub', sub: 'dir', 'sub/keep': 'file:k\n' })
})

test('absolute and escaping symlink targets are skipped, refused or rewritten as asked', async t => {
  const h = await hostile(t, async () => [
    { name: 'docs', dir: [{ name: 'readme', file: 'read me\n' }, { name: 'up', symlink: '/docs/readme' }, { name: 'sib', symlink: '../docs/readme' }] },
    { name: 'abs', symlink: '/docs/readme' },
    { name: 'ok', symlink: 'docs/readme' },
    { name: 'dot', symlink: '.' }
  ])
  const dest = path.join(h.dir, 'copy')
  const r = await h.get('/', '-o', dest, '--strict-links')
  failedWith(r, 'ROTREE_BAD_PATH')
  assert.match(r.stderr, /abs -> \/docs\/readme has an absolute target/)
  assert.equal(await exists(dest), false)

  // by default an absolute target is skipped like any other that leaves DEST
  const skip = path.join(h.dir, 'skip')
  const s = await h.get('/', '-o', skip)
  assert.equal(s.code, 0, s.stderr)
  assert.deepEqual(await snapshot(skip), { docs: 'dir', 'docs/readme': 'file:read me\n', 'docs/sib': 'link:../docs/readme', dot: 'link:.', ok: 'link:docs/readme' })
  assert.match(s.stderr, /skipped 2 symlinks that point outside DEST/)

  const rw = await h.get('/', '-o', dest, '--rewrite-links', '--strict-links')
  assert.equal(rw.code, 0, rw.stderr)
  assert.deepEqual(await snapshot(dest), {
    abs: 'link:docs/readme', docs: 'dir', 'docs/readme': 'file:read me\n', 'docs/sib': 'link:../docs/readme', 'docs/up': 'link:../docs/readme', dot: 'link:.', ok: 'link:docs/readme'
  })
  assert.equal(await fs.readFile(path.join(dest, 'abs'), 'utf8'), 'read me\n')

  // a subtree: '../docs/readme' leaves it, '/docs/readme' is inside it
  const sub = path.join(h.dir, 'sub')
  failedWith(await h.get('/docs', '-o', sub, '--rewrite-links', '--strict-links'), 'ROTREE_BAD_PATH')
  const both = await h.get('/docs', '-o', sub, '--rewrite-links')
  assert.equal(both.code, 0, both.stderr)
  assert.match(both.stderr, /skipped symlink sib -> \.\.\/docs\/readme: /)
  assert.deepEqual(await snapshot(sub), { readme: 'file:read me\n', up: 'link:readme' })
})

test('../../.. targets, and `..` after a name, are refused with --strict-links, skipped without', async t => {
  for (const [where, target] of [['l', '../../../../../../../etc/passwd'], ['l', '..'], ['d/l', '../..'], ['l', 'dot/..'], ['l', 'd/../..'], ['d/l', 'x/../../..']]) {
    const h = await hostile(t, async () => {
      const link = { name: 'l', symlink: target }
      return [{ name: 'dot', symlink: '.' }, where === 'l' ? link : { name: 'd', dir: [link] }, { name: 'f', file: 'f\n' }]
    })
    const dest = path.join(h.dir, 'copy')
    const r = await h.get('/', '-o', dest, '--strict-links')
    failedWith(r, 'ROTREE_BAD_PATH')
    // refused when its directory is counted, before that directory is made
    assert.equal(await exists(where === 'l' ? dest : path.join(dest, 'd')), false, `${where} -> ${target}`)
    const skip = await h.get('/', '-o', dest)
    assert.equal(skip.code, 0, skip.stderr)
    assert.equal(await exists(path.join(dest, where)), false, `${where} -> ${target} skipped`)
    assert.equal(await fs.readFile(path.join(dest, 'f'), 'utf8'), 'f\n')
    assert.match(skip.stderr, /skipped 1 symlink that points outside DEST/)
    assert.deepEqual(await snapshot(path.join(h.dir, 'outside')), { victim: 'file:victim\n' })
  }
  // leading `..` within the link's depth stays inside, and is kept
  const h = await hostile(t, async () => [{ name: 'd', dir: [{ name: 'e', dir: [{ name: 'l', symlink: '../../f' }] }] }, { name: 'f', file: 'f\n' }])
  const dest = path.join(h.dir, 'copy')
  assert.equal((await h.get('/', '-o', dest)).code, 0)
  assert.equal(await fs.readFile(path.join(dest, 'd/e/l'), 'utf8'), 'f\n')
})

test('names with control characters are written as they are; a refusal names them escaped', async t => {
  const names = ['bell\x07', 'esc\x1b[2J', 'c1\u009b', 'rtl\u202etxt.exe', 'back\\slash', ' lead', 'nl\nx']
  const h = await hostile(t, async () => names.map(n => ({ name: n, file: n })))
  const dest = path.join(h.dir, 'copy')
  const r = await h.get('/', '-o', dest)
  assert.equal(r.code, 0, r.stderr)
  assert.deepEqual((await fs.readdir(dest)).sort(), [...names].sort())
  for (const n of names) assert.equal(await fs.readFile(path.join(dest, n), 'utf8'), n)

  const bad = await hostile(t, async () => [{ name: 'evil\x1b]0;pwned\x07\x1b[2J', symlink: '/\x1b[31m' }])
  const refused = await bad.get('/', '-o', path.join(bad.dir, 'copy'), '--strict-links')
  failedWith(refused, 'ROTREE_BAD_PATH')
  assert.doesNotMatch(refused.stderr, CONTROL)
  assert.match(refused.stderr, /evil\\x1b\]0;pwned\\x07\\x1b\[2J -> \/\\x1b\[31m/)
  const skipped = await bad.get('/', '-o', path.join(bad.dir, 'copy'))
  assert.equal(skipped.code, 0, skipped.stderr)
  assert.doesNotMatch(skipped.stderr, CONTROL)
  assert.match(skipped.stderr, /skipped symlink evil\\x1b\]0;pwned\\x07\\x1b\[2J -> \/\\x1b\[31m: /)
})

/** root: n dirs → page B; B: n dirs → page C; C: n empty files. n³ paths from three pages. */
async function fanOut (st, n) {
  const leaf = await st.dir(Array.from({ length: n }, (_, i) => ({ name: `f${String(i).padStart(5, '0')}`, file: '' })))
  const mid = await st.dir(Array.from({ length: n }, (_, i) => ({ name: `d${String(i).padStart(5, '0')}`, dir: leaf })))
  return Array.from({ length: n }, (_, i) => ({ name: `d${String(i).padStart(5, '0')}`, dir: mid }))
}

test('4,096³ paths from a few shared pages are refused by the default entry cap, in little memory', async t => {
  const h = await hostile(t, st => fanOut(st, 4096))
  const dest = path.join(h.dir, 'copy')
  // a heap far too small to plan the walk: the old whole-tree plan ran out of memory here
  const r = await rotree(['get', h.addr, '/', '-o', dest], { env: { ROTREE_STATE: path.join(h.dir, 'state'), NODE_OPTIONS: '--max-old-space-size=64' } })
  failedWith(r, 'ROTREE_TOO_LARGE')
  assert.match(r.stderr, /more than 10000000 entries.*--max-entries/)
  assert.equal(await exists(dest), false)
})

test('--max-entries refuses a fan-out tree before writing below the first directories', async t => {
  const h = await hostile(t, st => fanOut(st, 64))
  const dest = path.join(h.dir, 'copy')
  // the root announces 64 + 64 × 64 entries, d00000 64 × 64 more: refused before d00000 is made
  const r = await h.get('/', '-o', dest, '--max-entries', '5000')
  failedWith(r, 'ROTREE_TOO_LARGE')
  assert.deepEqual(await fs.readdir(dest), [])
  failedWith(await h.get('/', '-o', path.join(h.dir, 'c1'), '--max-entries', '4000'), 'ROTREE_TOO_LARGE')
  assert.equal(await exists(path.join(h.dir, 'c1')), false)
  const small = await h.get('/d00000/d00001', '-o', dest, '--max-entries', '64')
  assert.equal(small.code, 0, small.stderr)
  assert.equal((await fs.readdir(dest)).length, 64)
  failedWith(await h.get('/d00000/d00001', '-o', path.join(h.dir, 'c2'), '--max-entries', '63'), 'ROTREE_TOO_LARGE')
})

test('a file that claims 4 PiB is refused before a byte is written', async t => {
  let chunk
  const h = await hostile(t, async st => {
    const huge = await st.hugeFile()
    chunk = huge.chunk
    return [{ name: 'a', file: 'small\n' }, { name: 'huge.bin', entry: huge.entry }]
  })
  // the chunk is not even there: a reader that starts on the file fails another way
  await fs.rm(path.join(h.out, 'h', chunk.hash))
  const dest = path.join(h.dir, 'copy')
  const r = await h.get('/', '-o', dest)
  failedWith(r, 'ROTREE_TOO_LARGE')
  assert.match(r.stderr, /huge\.bin is 4\.0 PiB|huge\.bin is \d+\.\d TiB/)
  assert.equal(await exists(dest), false)
  const one = await h.get('/huge.bin', '-o', path.join(h.dir, 'one.bin'))
  failedWith(one, 'ROTREE_TOO_LARGE')
  assert.deepEqual((await fs.readdir(h.dir)).sort(), ['out', 'outside', 'state'])
})

test('--max-bytes caps what a tree may write', async t => {
  const h = await hostile(t, async () => [{ name: 'a', file: Buffer.alloc(3000, 1) }, { name: 'b', file: Buffer.alloc(3000, 2) }])
  failedWith(await h.get('/', '-o', path.join(h.dir, 'c1'), '--max-bytes', '5K'), 'ROTREE_TOO_LARGE')
  assert.equal(await exists(path.join(h.dir, 'c1')), false)
  const ok = await h.get('/', '-o', path.join(h.dir, 'c2'), '--max-bytes', '6000')
  assert.equal(ok.code, 0, ok.stderr)
  assert.equal((await rotree(['get', h.addr, '/', '-o', 'x', '--max-bytes', 'lots'])).code, 2)
})

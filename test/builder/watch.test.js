// `rotree build --watch` (builder/watch.js): after each change to SRC it
// publishes the root a cold build of the same SRC gives, having looked only
// at the directories that changed.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { spawn, execFileSync } from 'node:child_process'
import { tmpdir, writeTree, makeKey, prng } from '../helpers/fixtures.js'
import { checkPublished } from '../helpers/check-tree.js'
import { build } from '../../builder/build.js'
import { watchBuild } from '../../builder/watch.js'
import { decodeRoot } from '../../lib/published/signed-roots.js'

const BIN = new URL('../../bin/rotree.js', import.meta.url).pathname
const opts = (src, out, key, extra = {}) => ({ src, out, key, ttlMs: 3600e3, fsync: false, ...extra })

// Builds as they are published, and a way to wait for the first one whose
// root a cold build of SRC (as it is now) gives. Waiting is bounded by the
// test's timeout, not by a clock: how soon a change is seen is not tested.
function published () {
  const seen = []; let waiter = null
  return {
    onBuild: r => { seen.push(r); waiter?.() },
    async next (pred) {
      for (let at = 0; ; ) {
        while (at < seen.length) { const r = seen[at++]; if (await pred(r)) return r }
        await new Promise(resolve => { waiter = resolve })
      }
    },
    seen
  }
}

const edits = {
  'a file two levels down changed': src => fs.appendFile(path.join(src, 'a/b/c.txt'), 'more\n'),
  'a new directory with files': src => writeTree(src, { 'new/x/y.txt': 'y', 'new/x/z.bin': prng(70_000, 'z') }),
  'a directory removed': src => fs.rm(path.join(src, 'a/b'), { recursive: true }),
  'a file renamed': src => fs.rename(path.join(src, 'd/f1'), path.join(src, 'd/f1-renamed')),
  'a file made executable': src => fs.chmod(path.join(src, 'd/big.bin'), 0o755),
  'a file replaced by a symlink': src => fs.rm(path.join(src, 'd/f2')).then(() => fs.symlink('big.bin', path.join(src, 'd/f2'))),
  'a directory replaced by another': async src => {
    await fs.rename(path.join(src, 'e'), path.join(src, '..', 'e-old'))
    await writeTree(src, { 'e/same-name.txt': 'other bytes', 'e/deeper/q.txt': 'q' })
  },
  'an empty file in the root': src => fs.writeFile(path.join(src, 'root.txt'), '')
}

for (const racyMs of [0, undefined]) {
  test(`every publish of a watch equals a cold build of SRC as it is (${racyMs === 0 ? 'files trusted at once' : 'the default racy margin'})`, { timeout: 120_000 }, async t => {
    const dir = await tmpdir(); t.after(() => fs.rm(dir, { recursive: true, force: true }))
    const src = path.join(dir, 'src'); const out = path.join(dir, 'out')
    await writeTree(src, {
      'a/b/c.txt': 'one\n', 'a/top.txt': 'top', 'd/f1': 'f1', 'd/f2': 'f2', 'd/big.bin': prng(300_000, 'big'),
      'e/same-name.txt': 'first bytes', 'e/deeper/p.txt': 'p', 'l': { symlink: 'a/top.txt' }
    })
    const key = makeKey()
    const pub = published()
    const errors = []
    const ac = new AbortController()
    const running = watchBuild(opts(src, out, key, { racyMs, threads: 2 }), { signal: ac.signal, onBuild: pub.onBuild, onError: err => errors.push(err), quietMs: 50 })
    try {
      const first = await pub.next(async () => true)
      assert.equal(first.partial, false)
      let n = 0
      for (const [name, edit] of Object.entries(edits)) {
        await edit(src)
        const cold = await build(opts(src, path.join(dir, `cold${n++}`), key))
        const r = await pub.next(async r => r.root === cold.root)
        assert.equal(r.root, cold.root, name)
        await checkPublished(out, key.publicKey)
      }
      // publishes after the first looked only at what changed (with the racy margin, the files
      // written a moment ago are read again too, until they are old enough to be trusted)
      assert.ok(pub.seen.slice(1).every(r => r.partial), 'partial runs')
      if (racyMs === 0) assert.ok(pub.seen.some(r => r.index.misses <= 2 && r.index.hits > 0), 'only what changed is read')
      assert.deepEqual(errors, [])
    } finally {
      ac.abort()
      await running
    }
    // stopped: the lock is free again for a build
    await build(opts(src, out, key))
  })
}

test('a watch run that fails publishes nothing and the watch goes on', { timeout: 60_000 }, async t => {
  const dir = await tmpdir(); t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const src = path.join(dir, 'src'); const out = path.join(dir, 'out')
  await writeTree(src, { 'a/x.txt': 'x' })
  const key = makeKey()
  const pub = published()
  const errors = []; let errWaiter = null
  const ac = new AbortController()
  const running = watchBuild(opts(src, out, key, { racyMs: 0 }), {
    signal: ac.signal, quietMs: 50, onBuild: pub.onBuild, onError: err => { errors.push(err); errWaiter?.() }
  })
  try {
    await pub.next(async () => true)
    // a fifo cannot be published (and --skip-bad is off): the run fails
    execFileSync('mkfifo', [path.join(src, 'a/fifo')])
    while (!errors.length) await new Promise(resolve => { errWaiter = resolve })
    assert.equal(errors[0].code, 'ROTREE_BUILD_INPUT')
    assert.match(errors[0].message, /^\/a\/fifo: is a fifo/)
    const before = pub.seen.length
    await fs.rm(path.join(src, 'a/fifo'))
    await fs.writeFile(path.join(src, 'a/y.txt'), 'y')
    const cold = await build(opts(src, path.join(dir, 'cold'), key))
    const r = await pub.next(async r => r.root === cold.root)
    assert.ok(pub.seen.indexOf(r) >= before)
  } finally {
    ac.abort()
    await running
  }
})

test('rotree build --watch on the command line: a line per publish, the cold root, stops on SIGTERM', { timeout: 60_000 }, async t => {
  const dir = await tmpdir(); t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const src = path.join(dir, 'src'); const out = path.join(dir, 'out'); const keyFile = path.join(dir, 'k')
  await writeTree(src, { 'a/x.txt': 'x', 'b.bin': prng(100_000, 'b') })
  execFileSync(process.execPath, [BIN, 'keygen', keyFile], { stdio: 'ignore' })
  const p = spawn(process.execPath, [BIN, 'build', src, out, '--key', keyFile, '--no-fsync', '--watch', '--json'], { stdio: ['ignore', 'pipe', 'pipe'] })
  // whatever happens to the test (a failed assertion, its timeout), the watch does not outlive it
  t.after(() => { if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL') })
  const lines = []; let waiter = null; let buf = ''; let stderr = ''; let closed = null
  p.stdout.on('data', b => { buf += b; let i; while ((i = buf.indexOf('\n')) >= 0) { lines.push(JSON.parse(buf.slice(0, i))); buf = buf.slice(i + 1); waiter?.() } })
  p.stderr.on('data', b => { stderr += b })
  const exited = new Promise(resolve => p.on('close', (code, signal) => { closed = { code, signal }; waiter?.(); resolve(closed) }))
  // a watch that stopped prints no more lines: fail at once rather than wait for the timeout
  const line = async pred => {
    for (let at = 0; ; ) {
      while (at < lines.length) { const l = lines[at++]; if (await pred(l)) return l }
      if (closed) throw new Error(`rotree build --watch exited (${JSON.stringify(closed)}) before the line awaited: ${stderr}`)
      await new Promise(resolve => { waiter = resolve })
    }
  }
  try {
    const first = await line(async () => true)
    assert.equal(first.partial, false)
    await fs.appendFile(path.join(src, 'a/x.txt'), 'changed')
    const coldOut = path.join(dir, 'cold')
    execFileSync(process.execPath, [BIN, 'build', src, coldOut, '--key', keyFile, '--no-fsync'], { stdio: 'ignore' })
    // either format's root (FORMAT.md §12.3: version 2 signs a release, whose root is the tree's)
    const coldRoot = decodeRoot(await fs.readFile(path.join(coldOut, 'fsinfo.json'))).root.hash
    assert.equal(first.version, decodeRoot(await fs.readFile(path.join(coldOut, 'fsinfo.json'))).version)
    const r = await line(async l => l.root === coldRoot)
    assert.equal(r.partial, true)
    assert.ok(r.seq > first.seq)
  } finally {
    p.kill('SIGTERM')
  }
  assert.deepEqual(await exited, { code: 0, signal: null }, stderr)
})

// One lock for every writer of a published folder (lib/published/lock.js): a
// publisher's build, gc, resign and a mirror's pull, pull --gc and
// fsck --repair-from all refuse a folder another of them is writing, so e.g.
// a gc cannot delete an old blob a pull has just found it can reuse.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { tmpdir, makeKey, writeTree, buildTree, serve, address } from '../helpers/fixtures.js'
import { lockDir, LOCK_NAME } from '../../lib/published/lock.js'
import { rotree } from './helpers.js'

async function site (t) {
  const dir = await tmpdir('rotree-lock-')
  t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const src = path.join(dir, 'src'); const out = path.join(dir, 'out'); const mirror = path.join(dir, 'mirror')
  await writeTree(src, { 'a.txt': 'one\n', 'sub/b.bin': Buffer.alloc(100_000, 7) })
  const key = makeKey()
  await buildTree(src, { key, out })
  const keyFile = path.join(dir, 'publisher.key')
  await fs.writeFile(keyFile, JSON.stringify({ type: 'rotree-ed25519-secret-key', ...key }), { mode: 0o600 })
  return { dir, src, out, mirror, key, keyFile }
}

const LOCKED = /^rotree: ROTREE_LOCKED: .*locked by pid \d+ \(test holder\)/

test('every writer of a folder refuses it while another holds the lock, and nothing changes', { timeout: 120_000 }, async t => {
  const s = await site(t)
  const srv = await serve(s.out); t.after(srv.close)
  const addr = address(srv.url, s.key.publicKey)
  assert.equal((await rotree(['pull', addr, s.mirror, '--state-dir', path.join(s.dir, 'state'), '--no-fsync'])).code, 0)

  for (const dir of [s.out, s.mirror]) {
    const before = await snapshot(dir)
    const lock = await lockDir(dir, 'test holder')
    try {
      const runs = dir === s.out
        ? [['build', s.src, s.out, '--key', s.keyFile, '--no-fsync'], ['gc', s.out, '--keep', '1'], ['resign', s.out, '--key', s.keyFile, '--ttl', '1d']]
        : [['pull', addr, s.mirror, '--gc', '--state-dir', path.join(s.dir, 'state')], ['fsck', s.mirror, '--repair-from', addr], ['gc', s.mirror, '--keep', '1']]
      for (const args of runs) {
        const r = await rotree(args)
        assert.equal(r.code, 1, `${args.join(' ')}: ${r.stderr}`)
        assert.match(r.stderr, LOCKED, args.join(' '))
      }
    } finally { await lock.release() }
    assert.deepEqual(await snapshot(dir), before, `${dir} changed under a lock`)
    await assert.rejects(fs.access(path.join(dir, LOCK_NAME)), 'released')
  }

  // with the lock free, the same commands run
  assert.equal((await rotree(['resign', s.out, '--key', s.keyFile, '--ttl', '1d'])).code, 0)
  assert.equal((await rotree(['pull', addr, s.mirror, '--gc', '--state-dir', path.join(s.dir, 'state'), '--no-fsync'])).code, 0)
})

test('a lock whose owner died, or whose pid now belongs to another process, is taken over', { timeout: 60_000 }, async t => {
  const s = await site(t)
  const file = path.join(s.out, LOCK_NAME)
  // a process that exited: its pid is free
  const child = spawn(process.execPath, ['-e', '0'])
  await new Promise(resolve => child.on('close', resolve))
  await fs.writeFile(file, `${child.pid} - rotree build\n`)
  await fs.writeFile(`${file}.${child.pid}`, 'a private file a killed owner left\n')
  assert.equal((await rotree(['resign', s.out, '--key', s.keyFile, '--ttl', '1d'])).code, 0)
  await assert.rejects(fs.access(file)); await assert.rejects(fs.access(`${file}.${child.pid}`))

  // a live pid (ours) recorded with another process's start time: the pid was recycled
  await fs.writeFile(file, `${process.pid} 1 rotree gc\n`)
  const r = await rotree(['gc', s.out, '--keep', '1'])
  assert.equal(r.code, 0, r.stderr)
  await assert.rejects(fs.access(file))

  // the same pid with its true start time is alive: refused
  const held = await lockDir(s.out, 'test holder')
  try {
    assert.match((await rotree(['gc', s.out, '--keep', '1'])).stderr, LOCKED)
    await assert.rejects(lockDir(s.out, 'another task'), { code: 'ROTREE_LOCKED' })
  } finally { await held.release() }
})

/** Every file under dir with its size and mtime, except the lock. */
async function snapshot (dir) {
  const out = {}
  for (const e of await fs.readdir(dir, { withFileTypes: true, recursive: true })) {
    const p = path.join(e.parentPath ?? e.path, e.name)
    if (e.name === LOCK_NAME || !e.isFile()) continue
    const st = await fs.stat(p)
    out[path.relative(dir, p)] = `${st.size} ${st.mtimeMs}`
  }
  return out
}

test('a holder killed with SIGKILL but not yet reaped (a zombie) holds nothing: an immediate retry takes the lock', { timeout: 60_000 }, async t => {
  const dir = await tmpdir('rotree-zombie-')
  t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const lockUrl = new URL('../../lib/published/lock.js', import.meta.url).href
  const holder = path.join(dir, 'holder.mjs')
  await fs.writeFile(holder, `
    import { lockDir } from ${JSON.stringify(lockUrl)}
    await lockDir(${JSON.stringify(dir)}, 'rotree pull')
    process.stdout.write(process.pid + '\\n')
    setInterval(() => {}, 1000)
  `)
  // sh starts the holder, then becomes sleep (exec): sleep never waits for
  // children, so once the holder is killed it stays a zombie until sleep ends
  const env = { ...process.env }; delete env.NODE_TEST_CONTEXT
  const parent = spawn('sh', ['-c', `"${process.execPath}" "${holder}" & exec sleep 50`], { stdio: ['ignore', 'pipe', 'inherit'], env })
  t.after(() => { try { parent.kill('SIGKILL') } catch {} }) // then init reaps the zombie
  const pid = await new Promise((resolve, reject) => {
    let text = ''
    parent.stdout.on('data', b => { text += b; if (text.includes('\n')) resolve(Number(text.trim())) })
    parent.on('exit', () => reject(new Error('the holder never took the lock')))
  })
  await assert.rejects(lockDir(dir, 'test'), { code: 'ROTREE_LOCKED', pid }) // alive: refused
  process.kill(pid, 'SIGKILL')
  // wait (bounded) until the kernel shows it dead but unreaped
  const state = () => { try { return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1][0] } catch { return null } }
  for (let i = 0; i < 500 && state() !== 'Z'; i++) await new Promise(resolve => setTimeout(resolve, 10))
  assert.equal(state(), 'Z', 'the holder is a zombie: its pid and /proc entry are still there')
  process.kill(pid, 0) // ...and a signal to it still "succeeds"
  const lock = await lockDir(dir, 'the retry')
  assert.match(await fs.readFile(path.join(dir, LOCK_NAME), 'utf8'), new RegExp(`^${process.pid} \\S+ the retry`))
  await lock.release()
})

// `rotree push` against remotes that run here: rclone's local backend and a
// WebDAV server (`rclone serve webdav`). The order matters more than the
// copy: while a push runs, the remote must always hold a complete tree
// (fsinfo.json never ahead of its blobs, never half written).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import net from 'node:net'
import { spawn, spawnSync } from 'node:child_process'
import { openTree } from 'rotree-client'
import { tmpdir, writeTree, buildTree, makeKey, serve, address, prng } from '../helpers/fixtures.js'
import { checkPublished } from '../helpers/check-tree.js'

const BIN = new URL('../../bin/rotree.js', import.meta.url).pathname
const haveRclone = spawnSync('rclone', ['version'], { stdio: 'ignore' }).status === 0
const skip = haveRclone ? false : 'needs rclone (Debian package rclone)'

function rotree (args, { cwd } = {}) {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [BIN, ...args], { cwd })
    const out = []; const err = []
    p.stdout.on('data', b => out.push(b)); p.stderr.on('data', b => err.push(b))
    p.on('error', reject)
    p.on('close', code => resolve({ code, stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString() }))
  })
}

async function freePort () {
  const s = net.createServer().listen(0, '127.0.0.1')
  await new Promise(resolve => s.once('listening', resolve))
  const { port } = s.address()
  await new Promise(resolve => s.close(resolve))
  return port
}

async function fixture (t) {
  const dir = await tmpdir('rotree-push-')
  t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const key = makeKey()
  const src = path.join(dir, 'src')
  await writeTree(src, { 'a.txt': 'one\n', 'dir/b.bin': prng(300_000, 'b'), 'link': { symlink: 'a.txt' } })
  const { out } = await buildTree(src, { key, out: path.join(dir, 'out') })
  return { dir, key, src, out }
}

async function readAll (url, key, stateDir) {
  const tree = await openTree(address(url, key.publicKey), { stateDir, timeoutMs: 5000 })
  try {
    return { seq: tree.info.seq, a: Buffer.from(await tree.readFile('/a.txt')).toString(), b: await tree.readFile('/dir/b.bin') }
  } finally { tree.close() }
}

test('push to a local path: the remote serves the same verified tree, and a rerun uploads nothing', { skip, timeout: 60_000 }, async t => {
  const f = await fixture(t)
  const dest = path.join(f.dir, 'mirror')
  const r = await rotree(['push', f.out, dest, '--url', 'http://mirror.example/pub', '--json'])
  assert.equal(r.code, 0, r.stderr)
  const j = JSON.parse(r.stdout)
  assert.ok(j.blobs.transferred > 0)
  assert.equal(j.address, `http://mirror.example/pub/#${f.key.publicKey}`)
  await checkPublished(dest, f.key.publicKey)
  assert.deepEqual(await fs.readFile(path.join(dest, 'fsinfo.json')), await fs.readFile(path.join(f.out, 'fsinfo.json')))
  assert.deepEqual((await fs.readdir(dest)).filter(n => n.startsWith('.')), [], 'no temporary file left on the remote')
  const srv = await serve(dest); t.after(() => srv.close())
  const got = await readAll(srv.url, f.key, null)
  assert.equal(got.a, 'one\n')
  const again = await rotree(['push', f.out, dest, '--json'])
  assert.equal(again.code, 0, again.stderr)
  assert.equal(JSON.parse(again.stdout).blobs.transferred, 0)
  const plain = await rotree(['push', f.out, dest, '--url', 'http://mirror.example/pub'])
  assert.match(plain.stdout.trim().split('\n').at(-1), /^address: http:\/\/mirror\.example\/pub\/#[0-9a-f]{64}$/)
})

test('while a push runs, the remote always holds a complete tree', { skip, timeout: 120_000 }, async t => {
  const f = await fixture(t)
  const dest = path.join(f.dir, 'mirror')
  assert.equal((await rotree(['push', f.out, dest])).code, 0)
  const first = await checkPublished(dest, f.key.publicKey)
  // a second version with ~6 MB of new blobs, pushed slowly
  await writeTree(f.src, { 'a.txt': 'two\n', 'big.bin': prng(6_000_000, 'big') })
  await buildTree(f.src, { key: f.key, out: f.out })
  const pushing = rotree(['push', f.out, dest, '--rclone-arg=--bwlimit=3M'])
  let done = false
  pushing.then(() => { done = true })
  let checks = 0
  const seen = new Set()
  while (!done) {
    // what a reader would get right now: fsinfo.json and every blob it reaches
    let r
    try { r = await checkPublished(dest, f.key.publicKey) } catch (err) {
      // the only acceptable gap: fsinfo.json itself between an unlink and a rename
      // on a backend without atomic replace; a missing blob is never acceptable
      if (err.code === 'ENOENT' && err.path?.endsWith('fsinfo.json')) continue
      throw err
    }
    seen.add(r.seq); checks++
    await new Promise(resolve => setTimeout(resolve, 25))
  }
  const r = await pushing
  assert.equal(r.code, 0, r.stderr)
  const last = await checkPublished(dest, f.key.publicKey)
  assert.ok(last.seq > first.seq)
  assert.ok(checks >= 10, `only ${checks} checks ran during the push`)
  assert.ok(seen.has(first.seq), 'the old tree stayed complete while blobs were uploading')
})

test('push to a WebDAV remote (rclone serve webdav), read back through rotree serve on its folder', { skip, timeout: 60_000 }, async t => {
  const f = await fixture(t)
  const root = path.join(f.dir, 'davroot')
  await fs.mkdir(root)
  const port = await freePort()
  const dav = spawn('rclone', ['serve', 'webdav', root, '--addr', `127.0.0.1:${port}`], { stdio: 'ignore' })
  t.after(() => dav.kill())
  for (let i = 0; i < 100; i++) {
    const ok = await new Promise(resolve => net.connect(port, '127.0.0.1').on('connect', function () { this.destroy(); resolve(true) }).on('error', () => resolve(false)))
    if (ok) break
    await new Promise(resolve => setTimeout(resolve, 50))
  }
  const remote = `:webdav,url='http://127.0.0.1:${port}':pub`
  const r = await rotree(['push', f.out, remote])
  assert.equal(r.code, 0, r.stderr)
  const pub = path.join(root, 'pub')
  await checkPublished(pub, f.key.publicKey)
  const srv = await serve(pub); t.after(() => srv.close())
  const got = await readAll(srv.url, f.key, null)
  assert.deepEqual(Buffer.from(got.b), prng(300_000, 'b'))
})

test('push refuses an incomplete folder and names the missing blob; the remote keeps its tree', { skip, timeout: 60_000 }, async t => {
  const f = await fixture(t)
  const dest = path.join(f.dir, 'mirror')
  assert.equal((await rotree(['push', f.out, dest])).code, 0)
  const before = await fs.readFile(path.join(dest, 'fsinfo.json'))
  await writeTree(f.src, { 'c.bin': prng(200_000, 'c') })
  await buildTree(f.src, { key: f.key, out: f.out })
  const blobs = await fs.readdir(path.join(f.out, 'h'))
  const mine = new Set(await fs.readdir(path.join(dest, 'h')))
  const fresh = blobs.filter(b => !mine.has(b))
  assert.ok(fresh.length > 0)
  for (const b of fresh) await fs.rm(path.join(f.out, 'h', b))
  const r = await rotree(['push', f.out, dest])
  assert.equal(r.code, 1)
  assert.match(r.stderr, /^rotree: ROTREE_|ENOENT/m)
  assert.deepEqual(await fs.readFile(path.join(dest, 'fsinfo.json')), before)
})

test('push with rclone missing says what to install', { timeout: 30_000 }, async t => {
  const f = await fixture(t)
  const { push } = await import('../../builder/push.js')
  await assert.rejects(push(f.out, path.join(f.dir, 'x'), { rclone: path.join(f.dir, 'no-such-rclone') }), err => {
    assert.equal(err.code, 'ROTREE_PUSH_FAILED')
    assert.match(err.message, /Debian package rclone/)
    return true
  })
})

test('push refuses a DEST that starts with "-" in one line, exit 2, before rclone runs', { skip, timeout: 60_000 }, async t => {
  const f = await fixture(t)
  const before = (await fs.readdir(f.dir)).sort()
  // read by rclone as an option, this DEST would have it write a log file wherever it names
  for (const dest of [`--log-file=${path.join(f.dir, 'written')}:`, '-x', '-']) {
    const r = await rotree(['push', f.out, '--', dest])
    assert.equal(r.code, 2, r.stderr)
    const lines = r.stderr.split('\n')
    assert.match(lines[0], /^rotree push: DEST ".*" starts with '-', which rclone would take for an option; for a local folder of that name write \.\/-/)
    assert.match(lines[1], /^usage: rotree push /)
    assert.deepEqual((await fs.readdir(f.dir)).sort(), before, `${dest}: nothing written`)
  }
  const { push } = await import('../../builder/push.js')
  await assert.rejects(push(f.out, '--config=/dev/null:'), { code: 'ROTREE_USAGE' })
})

test('every rclone call ends its options with -- before its paths; OUT named -out or a:out is the local folder', { skip, timeout: 60_000 }, async t => {
  const f = await fixture(t)
  // the real rclone, behind a script that records each call's arguments (one line, tab-separated)
  const log = path.join(f.dir, 'rclone-calls')
  const wrapper = path.join(f.dir, 'rclone-wrapper')
  await fs.writeFile(wrapper, '#!/bin/sh\nfor a in "$@"; do printf \'%s\\t\' "$a"; done >> "$RCLONE_LOG"; echo >> "$RCLONE_LOG"\nexec rclone "$@"\n', { mode: 0o755 })
  const { push } = await import('../../builder/push.js')
  // :local:PATH is a remote to rclone (so fsinfo.json goes by rcat and moveto), and still a folder here
  const mirror = path.join(f.dir, 'mirror')
  await push(f.out, `:local:${mirror}`, { rclone: wrapper, env: { ...process.env, RCLONE_LOG: log } })
  await checkPublished(mirror, f.key.publicKey)
  const calls = (await fs.readFile(log, 'utf8')).trim().split('\n').map(l => l.replace(/\t$/, '').split('\t'))
  // blobs, history/, the log's tiles then its checkpoint then fsinfo.proof (FORMAT.md §13), fsinfo.json last
  assert.deepEqual(calls.map(c => c[0]), ['copy', 'copy', 'copy', 'copyto', 'copyto', 'rcat', 'moveto'])
  assert.deepEqual(calls.slice(2, 5).map(c => c.at(-1)), [`:local:${mirror}/log/tile`, `:local:${mirror}/log/checkpoint`, `:local:${mirror}/log/fsinfo.proof`])
  for (const f2 of ['checkpoint', 'fsinfo.proof']) assert.deepEqual(await fs.readFile(path.join(mirror, 'log', f2)), await fs.readFile(path.join(f.out, 'log', f2)))
  for (const c of calls) {
    const end = c.indexOf('--')
    assert.ok(end > 0, `rclone ${c[0]}: options end with --`)
    const paths = c.slice(end + 1)
    assert.equal(paths.length, c[0] === 'rcat' ? 1 : 2, `rclone ${c[0]}: only paths after --`)
    for (const p of paths) assert.ok(p.startsWith('/') || p.startsWith(`:local:${mirror}/`), `rclone ${c[0]}: ${p}`)
  }

  // an OUT whose name rclone would read as an option, or as a remote's, is the folder step 1 checked
  for (const name of ['-out', 'a:out']) {
    await fs.cp(f.out, path.join(f.dir, name), { recursive: true })
    const dest = path.join(f.dir, `mirror-${name.replace(':', '_')}`)
    const r = await rotree(['push', '--', name, dest], { cwd: f.dir })
    assert.equal(r.code, 0, r.stderr)
    await checkPublished(dest, f.key.publicKey)
  }
})

test('a gated tree\'s trust/revoked.json goes up with the trust documents, before fsinfo.json, and a new list replaces the old one even at the same size (FORMAT.md §12.12)', { skip, timeout: 60_000 }, async t => {
  const dir = await tmpdir('rotree-push-revoked-')
  t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const p = n => path.join(dir, n)
  const ok = async (...args) => { const r = await rotree(args); assert.equal(r.code, 0, `rotree ${args.join(' ')}\n${r.stderr}`); return r.stdout }
  await writeTree(p('src'), { 'a.txt': 'gated\n' })
  const pub = {}
  for (const n of ['tree', 'holder']) pub[n] = (await ok('keygen', p(`${n}.key`))).trim()
  await ok('build', p('src'), p('out'), '--key', p('tree.key'))
  await ok('grant', 'issue', p('out'), '--to', pub.holder, '--ttl', '1d', '--key', p('tree.key'), '-o', p('g.json'))
  await ok('grant', 'revoke', p('out'), p('g.json'), '--key', p('tree.key'))
  const list = p('out/trust/revoked.json')

  const log = p('rclone-calls')
  const wrapper = p('rclone-wrapper')
  await fs.writeFile(wrapper, '#!/bin/sh\nfor a in "$@"; do printf \'%s\\t\' "$a"; done >> "$RCLONE_LOG"; echo >> "$RCLONE_LOG"\nexec rclone "$@"\n', { mode: 0o755 })
  const { push } = await import('../../builder/push.js')
  const mirror = p('mirror')
  const calls = async () => (await fs.readFile(log, 'utf8')).trim().split('\n').map(l => l.replace(/\t$/, '').split('\t'))
  await push(p('out'), `:local:${mirror}`, { rclone: wrapper, env: { ...process.env, RCLONE_LOG: log } })
  assert.deepEqual(await fs.readFile(path.join(mirror, 'trust', 'revoked.json')), await fs.readFile(list))
  const c = await calls()
  const at = c.findIndex(x => x[0] === 'copyto' && x.at(-1) === `:local:${mirror}/trust/revoked.json`)
  assert.ok(at > 0, 'trust/revoked.json is uploaded')
  assert.ok(c.slice(0, at).some(x => x[0] === 'copy' && x.at(-1) === `:local:${mirror}/h`), 'after the blobs')
  assert.ok(at < c.findIndex(x => x[0] === 'rcat'), 'before fsinfo.json')
  assert.ok(c[at].includes('--ignore-times'), 'always sent again: a new list may have the old one\'s size')
  assert.ok(c[at].includes('Cache-Control: public, max-age=60'), 'cached as fsinfo.json is')
  for (const x of c.filter(x => x[0] === 'copy' && x.at(-1) === `:local:${mirror}/trust`)) assert.ok(x.includes('/revoked.json'), 'not also copied by size with the write-once documents')

  // a new list of the same length and time: replaces the old one on the remote
  const old = await fs.readFile(list)
  const st = await fs.stat(list)
  const next = Buffer.from(old.toString().replace(/"issued": "(\d{4})/, (m, y) => `"issued": "${Number(y) + 1}`))
  assert.equal(next.length, old.length)
  assert.ok(!next.equals(old))
  await fs.writeFile(list, next)
  await fs.utimes(list, st.atime, st.mtime)
  await fs.utimes(path.join(mirror, 'trust', 'revoked.json'), st.atime, st.mtime)
  await push(p('out'), mirror)
  assert.deepEqual(await fs.readFile(path.join(mirror, 'trust', 'revoked.json')), next)
})

// `rotree get` as a sync tool: a rerun keeps files already there (same size
// and mtime; --checksum hashes them against the verified chunks), --delete
// makes DEST an exact copy without leaving it or following links, Ctrl-C
// leaves nothing that looks complete and the rerun resumes from a verified
// prefix that only this tool could have written, and errors name the user's
// path, never a temporary file.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import http from 'node:http'
import { spawn } from 'node:child_process'
import { prng } from '../helpers/fixtures.js'
import { BIN, rotree, servedTree, snapshot, exists } from './helpers.js'

const TMP = /^\.rotree-[0-9a-f]{24}\.tmp$/

test('a rerun keeps what is already there; --checksum finds a same-size change; --delete removes the rest, only inside DEST', { timeout: 60_000 }, async t => {
  const tr = await servedTree(t, {
    'a.txt': 'alpha\n',
    'd/b.txt': 'bravo\n',
    'run.sh': { data: '#!/bin/sh\n', mode: 0o755 },
    'big.bin': prng(300_000),
    'l': { symlink: 'a.txt' }
  })
  const { env } = tr
  const copy = path.join(tr.dir, 'copy')
  const get = (...args) => rotree(['get', tr.addr, '/', '-o', copy, ...args], { env })
  const first = await get()
  assert.equal(first.code, 0, first.err)
  assert.match(first.err, /got .*: 4 files, 2 dirs, 1 symlinks, /)
  const want = await snapshot(copy)

  const again = await get()
  assert.equal(again.code, 0, again.err)
  assert.match(again.err, /got .*: 0 files, 2 dirs, 1 symlinks, 4 unchanged, 0 B verified/)
  assert.deepEqual(await snapshot(copy), want)

  // same size, same mtime, other bytes: kept by default, found by --checksum
  const a = path.join(copy, 'a.txt'); const big = path.join(copy, 'big.bin')
  // (mtimes in seconds aimed at the middle of their millisecond, as get sets them)
  const keepTime = async (p, write) => { const t = (Math.floor((await fs.stat(p)).mtimeMs) + 0.5) / 1000; await write(); await fs.utimes(p, t, t) }
  await keepTime(a, () => fs.writeFile(a, 'ALPHA\n'))
  const bigBytes = await fs.readFile(big); bigBytes[200_000] ^= 1
  await keepTime(big, () => fs.writeFile(big, bigBytes))
  await fs.chmod(path.join(copy, 'run.sh'), 0o644) // the mode is put right without a fetch
  const quick = await get()
  assert.match(quick.err, /4 unchanged/)
  assert.equal(await fs.readFile(a, 'utf8'), 'ALPHA\n')
  assert.equal((await fs.stat(path.join(copy, 'run.sh'))).mode & 0o777, 0o755)
  const sum = await get('--checksum')
  assert.equal(sum.code, 0, sum.err)
  assert.match(sum.err, /got .*: 2 files, .*2 unchanged/)
  assert.deepEqual(await snapshot(copy), want)

  // --delete: extra files, directories and links go; what they point to stays
  const outside = path.join(tr.dir, 'outside')
  await fs.mkdir(outside); await fs.writeFile(path.join(outside, 'victim'), 'victim\n')
  await fs.writeFile(path.join(copy, 'extra.txt'), 'x')
  await fs.mkdir(path.join(copy, 'd/old/deeper'), { recursive: true })
  await fs.writeFile(path.join(copy, 'd/old/deeper/f'), 'f')
  await fs.symlink(outside, path.join(copy, 'd/old/to-outside'))
  await fs.symlink(outside, path.join(copy, 'dirlink'))
  await fs.symlink(path.join(outside, 'victim'), path.join(copy, 'filelink'))
  await fs.writeFile(path.join(copy, '.rotree-0123456789abcdef01234567.tmp'), 'stale')
  // something of another kind where the tree has a file, and where it has a link
  await fs.rm(path.join(copy, 'd/b.txt')); await fs.mkdir(path.join(copy, 'd/b.txt')); await fs.writeFile(path.join(copy, 'd/b.txt/in'), 'in')
  await fs.rm(path.join(copy, 'l')); await fs.writeFile(path.join(copy, 'l'), 'not a link')
  const refused = await get()
  assert.equal(refused.code, 1)
  assert.match(refused.err, /^rotree: ROTREE_BAD_PATH: d\/b\.txt: a directory is where a file goes/)
  const del = await get('--delete')
  assert.equal(del.code, 0, del.err)
  assert.match(del.err, /rotree get: deleting extra\.txt\n/)
  assert.match(del.err, /rotree get: deleting d\/old\/\n/)
  assert.deepEqual(await snapshot(copy), want)
  assert.deepEqual(await snapshot(outside), { victim: 'file:victim\n' })
  const none = await get('--delete')
  assert.doesNotMatch(none.err, /deleting|deleted/)

  // a subtree: DEST is never removed, even where the tree has nothing
  const sub = path.join(tr.dir, 'sub')
  await fs.mkdir(sub); await fs.writeFile(path.join(sub, 'x'), 'x')
  const s = await rotree(['get', tr.addr, '/d', '-o', sub, '--delete'], { env })
  assert.equal(s.code, 0, s.err)
  assert.deepEqual(await snapshot(sub), { 'b.txt': 'file:bravo\n' })
})

test('an error about a file names the user\'s path, never a temporary file', { timeout: 60_000 }, async t => {
  const tr = await servedTree(t, { 'a.txt': 'alpha\n' })
  const copy = path.join(tr.dir, 'copy')
  await fs.mkdir(copy, { mode: 0o755 })
  let as = {}
  if (process.getuid?.() === 0) {
    // root writes anywhere: run as nobody, in a folder nobody can read but not write
    await fs.chmod(tr.dir, 0o755)
    as = { uid: 65534, gid: 65534 }
  } else {
    await fs.chmod(copy, 0o555)
    t.after(() => fs.chmod(copy, 0o755))
  }
  const state = path.join(tr.dir, 'nobody-state')
  await fs.mkdir(state, { mode: 0o777 }); await fs.chmod(state, 0o777)
  const r = await rotree(['get', tr.addr, '/', '-o', copy], { env: { ROTREE_STATE: state }, ...as })
  assert.equal(r.code, 1, r.err)
  assert.match(r.err, new RegExp(`^rotree: ROTREE_SYSTEM_EACCES: .*${copy.replaceAll('/', '\\/')}\\/a\\.txt`))
  assert.doesNotMatch(r.err, /\.rotree-[0-9a-f]+\.tmp/)
  assert.deepEqual(await fs.readdir(copy), [])
})

/**
 * A mirror in front of `upstream` that answers the first `passBlobs` blob
 * requests and holds every later one until closed; counts blob bytes sent.
 */
async function holdingMirror (t, upstream, passBlobs = Infinity) {
  const up = new URL(upstream)
  const held = new Set()
  const stats = { blobs: 0, blobBytes: 0 }
  const srv = http.createServer((req, res) => {
    const blob = req.url.startsWith('/h/')
    if (blob && ++stats.blobs > passBlobs) { held.add(res); return }
    http.get({ host: up.hostname, port: up.port, path: req.url, headers: req.headers }, r => {
      res.writeHead(r.statusCode, r.headers)
      r.on('data', b => { if (blob) stats.blobBytes += b.length })
      r.pipe(res)
    }).on('error', () => res.destroy())
  })
  await new Promise(resolve => srv.listen(0, '127.0.0.1', resolve))
  t.after(() => { for (const r of held) r.destroy(); srv.closeAllConnections(); srv.close() })
  return { url: `http://127.0.0.1:${srv.address().port}/`, stats }
}

/** Start `rotree get` through a mirror that stalls, wait for part of big.bin on disk, then Ctrl-C. */
async function interrupted (t, tr, copy) {
  const slow = await holdingMirror(t, tr.url, 4) // the root page and the first chunks, then nothing
  const p = spawn(process.execPath, [BIN, 'get', `${slow.url}#${tr.pub}`, '/', '-o', copy], { env: { ...process.env, ...tr.env } })
  let err = ''
  p.stderr.on('data', b => { err += b })
  const exited = new Promise(resolve => p.on('exit', (code, signal) => resolve({ code, signal })))
  t.after(() => p.kill('SIGKILL'))
  // wait (bounded) until big.bin's temporary file holds bytes: the first chunks arrived
  let tmp = null
  for (let i = 0; i < 600 && !tmp; i++) {
    await new Promise(resolve => setTimeout(resolve, 50))
    for (const n of await fs.readdir(copy).catch(() => [])) {
      // big.bin's: more than small.txt holds (another temporary file may come and go meanwhile)
      if (TMP.test(n) && ((await fs.stat(path.join(copy, n)).catch(() => null))?.size ?? 0) > 1024) tmp = n
    }
  }
  assert.ok(tmp, `no partial file appeared: ${err}`)
  p.kill('SIGINT')
  const { code } = await exited
  return { code, err, tmp }
}

test('Ctrl-C leaves nothing that looks complete; the rerun resumes from the verified prefix, and only from a file it made', { timeout: 120_000 }, async t => {
  const BIG = prng(6 << 20, 'resume')
  const tr = await servedTree(t, { 'big.bin': BIG, 'small.txt': 'small\n' })
  const copy = path.join(tr.dir, 'copy')
  const stateFiles = () => fs.readdir(path.join(tr.env.ROTREE_STATE, 'get')).catch(() => [])

  const one = await interrupted(t, tr, copy)
  assert.equal(one.code, 130, one.err)
  assert.match(one.err, /^rotree: ROTREE_ABORTED: interrupted; 1 partial file\(s\) kept: run the same command again to resume\n$/m)
  assert.equal(await exists(path.join(copy, 'big.bin')), false, 'nothing that looks complete')
  assert.deepEqual((await fs.readdir(copy)).filter(n => n !== 'small.txt'), [one.tmp])
  assert.equal((await stateFiles()).length, 1)

  const counted = await holdingMirror(t, tr.url)
  const two = await rotree(['get', `${counted.url}#${tr.pub}`, '/', '-o', copy], { env: tr.env })
  assert.equal(two.code, 0, two.err)
  assert.match(two.err, /got .*, \d+\.\d (KiB|MiB) resumed/)
  assert.ok(Buffer.from(await fs.readFile(path.join(copy, 'big.bin'))).equals(BIG), 'the exact bytes')
  assert.ok(counted.stats.blobBytes < BIG.length, `the prefix was not fetched again (${counted.stats.blobBytes} bytes)`)
  assert.deepEqual((await fs.readdir(copy)).sort(), ['big.bin', 'small.txt'])
  assert.deepEqual(await stateFiles(), [], 'nothing recorded after a complete run')

  // a partial file swapped for a link, or with other bytes, is never trusted
  await fs.rm(copy, { recursive: true })
  const victim = path.join(tr.dir, 'victim')
  await fs.writeFile(victim, 'victim\n')
  const three = await interrupted(t, tr, copy)
  assert.equal(three.code, 130, three.err)
  await fs.rm(path.join(copy, three.tmp))
  await fs.symlink(victim, path.join(copy, three.tmp))
  const four = await rotree(['get', tr.addr, '/', '-o', copy], { env: tr.env })
  assert.equal(four.code, 0, four.err)
  assert.doesNotMatch(four.err, /resumed/)
  assert.equal(await fs.readFile(victim, 'utf8'), 'victim\n')
  assert.ok(Buffer.from(await fs.readFile(path.join(copy, 'big.bin'))).equals(BIG))

  await fs.rm(copy, { recursive: true })
  const five = await interrupted(t, tr, copy)
  assert.equal(five.code, 130, five.err)
  const partial = path.join(copy, five.tmp)
  const bytes = await fs.readFile(partial); bytes[10] ^= 1 // the first chunk no longer hashes right
  await fs.writeFile(partial, bytes)
  const six = await rotree(['get', tr.addr, '/', '-o', copy], { env: tr.env })
  assert.equal(six.code, 0, six.err)
  assert.doesNotMatch(six.err, /resumed/)
  assert.ok(Buffer.from(await fs.readFile(path.join(copy, 'big.bin'))).equals(BIG))
})

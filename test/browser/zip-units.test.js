// web/zip.js, the web app's store-only ZIP writer, in Node: what it writes,
// Debian's unzip and Python's zipfile read back byte for byte: files (one
// byte at a time and in large pieces, empty, executable, UTF-8 names),
// folders, empty folders, symlinks, modification times; with every ZIP64
// field, and with the ZIP64 end records that 65,535 entries or more need.
// Names that could leave the folder they are extracted into are refused, and
// so are symlinks whose targets could (web/zipdir.js).
import { needing } from '../helpers/tools.js'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { spawnSync } from 'node:child_process'
import { crc32 as zlibCrc32 } from 'node:zlib'
import { tmpdir, prng } from '../helpers/fixtures.js'
import { ZipWriter, crc32, entryName } from '../../web/zip.js'
import { keptTarget, planFolder } from '../../web/zipdir.js'

const { test } = needing('unzip', 'python3')

const MTIME = Date.parse('2024-05-06T07:08:10Z')
const FILES = [
  ['top/a.txt', Buffer.from('alpha\n')],
  ['top/empty.bin', Buffer.alloc(0)],
  ['top/sub/big.bin', prng(3 << 20, 'zip big')],
  ['top/sub/ünïcödé name.txt', Buffer.from('utf-8 names\n')],
  ['top/run.sh', Buffer.from('#!/bin/sh\necho hi\n'), { exec: true }]
]

/** Write the standard archive with `opts`, in pieces of `piece` bytes. */
async function archive (file, opts = {}, piece = 65536) {
  const fh = await fs.open(file, 'w')
  const z = new ZipWriter(b => fh.write(b), opts)
  await z.directory('top', { mtime: MTIME })
  await z.directory('top/sub', { mtime: MTIME })
  await z.directory('top/nothing-here', { mtime: MTIME })
  for (const [name, data, o = {}] of FILES) {
    const step = data.length > 65536 ? Math.max(piece, 4093) : piece // the big file in odd pieces, not 3 million calls
    const chunks = function * () { for (let i = 0; i < data.length; i += step) yield data.subarray(i, i + step) }
    await z.file(name, chunks(), { size: data.length, mtime: MTIME, ...o })
  }
  await z.symlink('top/link-to-a', 'a.txt', { mtime: MTIME })
  await z.symlink('top/sub/up', '..', { mtime: MTIME })
  const size = await z.finish()
  await fh.close()
  assert.equal((await fs.stat(file)).size, size)
}

function run (cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 << 20, ...opts })
  assert.equal(r.status, 0, `${cmd} ${args.join(' ')}:\n${r.stdout}\n${r.stderr}`)
  return r.stdout
}

async function checkExtracted (dir) {
  for (const [name, data, o = {}] of FILES) {
    const p = path.join(dir, name)
    assert.ok((await fs.readFile(p)).equals(data), `${name} byte for byte`)
    const st = await fs.stat(p)
    assert.equal(st.mode & 0o111 ? 'exec' : 'plain', o.exec ? 'exec' : 'plain', `${name}'s mode`)
    assert.ok(Math.abs(st.mtimeMs - MTIME) < 2000, `${name}'s time`)
  }
  assert.deepEqual(await fs.readdir(path.join(dir, 'top/nothing-here')), [])
  assert.equal(await fs.readlink(path.join(dir, 'top/link-to-a')), 'a.txt')
  assert.equal(await fs.readlink(path.join(dir, 'top/sub/up')), '..')
}

for (const [label, opts, piece] of [['plain', {}, 65536], ['every field ZIP64', { zip64: true }, 1 << 20], ['one byte at a time', {}, 1]]) {
  test(`unzip and Python read it back byte for byte: ${label}`, async () => {
    const dir = await tmpdir()
    const file = path.join(dir, 'a.zip')
    await archive(file, opts, piece)
    run('unzip', ['-tq', file])
    run('python3', ['-m', 'zipfile', '-t', file])
    const out = path.join(dir, 'unzip')
    run('unzip', ['-q', file, '-d', out], { env: { ...process.env, LC_ALL: 'C.UTF-8' } })
    await checkExtracted(out)
    // Python writes a symlink as a file holding its target: the files are what counts there
    const py = path.join(dir, 'python')
    run('python3', ['-c', 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])', file, py])
    for (const [name, data] of FILES) assert.ok((await fs.readFile(path.join(py, name))).equals(data), `${name} (python)`)
    if (opts.zip64) {
      const raw = await fs.readFile(file)
      assert.ok(raw.includes(Buffer.from([0x50, 0x4b, 0x06, 0x06])), 'a ZIP64 end record')
    }
  })
}

test('65,535 entries or more: ZIP64 end records, read by unzip and Python', async () => {
  const dir = await tmpdir()
  const file = path.join(dir, 'many.zip')
  const fh = await fs.open(file, 'w')
  const z = new ZipWriter(b => fh.write(b))
  const N = 70_000
  await z.directory('many', { mtime: MTIME })
  const one = Buffer.from('x')
  for (let i = 0; i < N; i++) await z.file(`many/f${i}`, [one], { size: 1, mtime: MTIME })
  await z.finish()
  await fh.close()
  const raw = await fs.readFile(file)
  assert.ok(raw.includes(Buffer.from([0x50, 0x4b, 0x06, 0x06])), 'a ZIP64 end record')
  const count = run('python3', ['-c', 'import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); assert z.testzip() is None; print(len(z.namelist()))', file])
  assert.equal(Number(count), N + 1)
  run('unzip', ['-tq', file])
})

test('a file whose bytes do not add up to its size fails the archive', async () => {
  const z = new ZipWriter(() => {})
  await assert.rejects(z.file('short', [Buffer.from('abc')], { size: 4 }), /3 bytes, not its 4/)
  const z2 = new ZipWriter(() => {})
  await assert.rejects(z2.file('long', [Buffer.from('abcde')], { size: 4 }), /more than its 4 bytes/)
  const z3 = new ZipWriter(() => {})
  await z3.directory('d')
  await assert.rejects(z3.directory('d'), /in the archive already/, 'each name once')
})

test('names: relative, no part that climbs or hides a separator', () => {
  assert.equal(entryName(['a', 'b c', 'ü.txt']), 'a/b c/ü.txt')
  assert.equal(entryName(['a', 'b'], true), 'a/b/')
  for (const bad of [[], [''], ['.'], ['..'], ['a', '..', 'b'], ['a/b'], ['a\\..\\b'], ['nul\0'], ['line\nbreak']]) {
    assert.throws(() => entryName(bad), TypeError, JSON.stringify(bad))
  }
})

test('CRC-32 is zlib\'s, in one piece or many', () => {
  const data = prng(100_000, 'crc')
  assert.equal(crc32(data), zlibCrc32(data))
  let c = 0
  for (let i = 0; i < data.length; i += 777) c = crc32(data.subarray(i, i + 777), c)
  assert.equal(c, zlibCrc32(data))
  assert.equal(crc32(new Uint8Array(0)), 0)
})

test('symlinks: kept only when the target stays in the folder', () => {
  // relative, at depth 2 below the folder /p
  assert.equal(keptTarget('x.txt', 2, '/p'), 'x.txt')
  assert.equal(keptTarget('../../x.txt', 2, '/p'), '../../x.txt')
  assert.equal(keptTarget('../../../x.txt', 2, '/p'), null, 'above the folder')
  assert.equal(keptTarget('a/../../x', 2, '/p'), null, 'a .. after a name: a/ may itself be a link')
  assert.equal(keptTarget('..', 0, '/p'), null)
  // absolute: from the tree's root (FORMAT.md §4.6), rewritten relative when inside the folder
  assert.equal(keptTarget('/p/docs/a.txt', 1, '/p'), '../docs/a.txt')
  assert.equal(keptTarget('/p', 2, '/p'), '../..')
  assert.equal(keptTarget('/p', 0, '/p'), '.')
  assert.equal(keptTarget('/elsewhere', 0, '/p'), null)
  assert.equal(keptTarget('/pq/a', 0, '/p'), null, 'a sibling whose name starts the same')
  assert.equal(keptTarget('/a/b', 1, '/'), '../a/b')
  assert.equal(keptTarget('/p/../etc', 0, '/p'), null)
})

test('a folder\'s plan: names a ZIP cannot hold and links out are left out and said; too many entries are refused', async () => {
  const t = Date.parse('2024-01-01T00:00:00Z')
  const listing = {
    '/p': [{ name: 'a.txt', type: 'file', size: 3, mtimeMs: t }, { name: 'back\\slash', type: 'file', size: 1, mtimeMs: t },
      { name: 'd', type: 'dir', mtimeMs: t }, { name: 'abs', type: 'symlink', target: '/p/a.txt', mtimeMs: t }, { name: 'out', type: 'symlink', target: '/etc/passwd', mtimeMs: t }],
    '/p/d': [{ name: 'b.txt', type: 'file', size: 4, mtimeMs: t }]
  }
  const view = {
    stat: async p => ({ type: listing[p] ? 'dir' : 'file', mtimeMs: t }),
    list: async function * (p) { yield * listing[p] }
  }
  const plan = await planFolder(view, '/p', { top: 'p' })
  assert.deepEqual(plan.entries.map(e => [e.kind, e.name, e.target]), [
    ['dir', 'p/', undefined], ['file', 'p/a.txt', undefined], ['dir', 'p/d/', undefined], ['file', 'p/d/b.txt', undefined], ['symlink', 'p/abs', 'a.txt']])
  assert.deepEqual(plan.skipped.map(x => x.path), ['/p/back\\slash', '/p/out'])
  assert.deepEqual([plan.files, plan.bytes], [2, 7])
  await assert.rejects(planFolder(view, '/p', { top: 'p', maxEntries: 3 }), err => err.code === 'ROTREE_USAGE' && /more than 3 entries/.test(err.message))
})

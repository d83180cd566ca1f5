// `rotree stat --json` gives each file's SHA-256 as sha256sum prints it, for
// every shape of file a version-2 tree stores (FORMAT.md §12.7): inline, one
// chunk, a chunk list, a chunk index; and null in a version-1 tree wherever
// that format records no file hash.
import { test, after } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { createHash, randomBytes } from 'node:crypto'
import { tmpdir, writeTree } from '../helpers/fixtures.js'
import { startStaticMirror } from '../client/static-mirror.js'
import { rotree } from './helpers.js'

const cleanups = []
after(async () => { for (const c of cleanups.reverse()) await c() })

const FILES = {
  'inline.txt': Buffer.from('short\n'),
  'one-chunk.bin': randomBytes(40_000),
  'list.bin': randomBytes(1_500_000),
  'text.txt': Buffer.from(Array.from({ length: 200_000 }, (_, i) => `line ${i}\n`).join('')),
  'index.bin': randomBytes(12 * 1024 * 1024) // ~48 chunks, more than a direct list holds: a chunk index
}
const sha = b => createHash('sha256').update(b).digest('hex')

for (const format of ['2', '1']) {
  test(`stat --json sha256, format ${format}`, async () => {
    const base = await tmpdir('rotree-stat-sha-'); cleanups.push(() => fs.rm(base, { recursive: true, force: true }))
    const src = path.join(base, 'src'); const out = path.join(base, 'out')
    await writeTree(src, FILES)
    const key = (await rotree(['keygen', path.join(base, 'k.key')])).out.trim()
    const b = await rotree(['build', src, out, '--key', path.join(base, 'k.key'), '--format', format, '--no-fsync'])
    assert.equal(b.code, 0, b.err)
    const mirror = await startStaticMirror(out); cleanups.push(() => mirror.close())
    for (const [name, bytes] of Object.entries(FILES)) {
      const r = await rotree(['stat', `${mirror.url}#${key}`, '/' + name, '--json', '--state-dir', path.join(base, 'state')])
      assert.equal(r.code, 0, r.err)
      const s = JSON.parse(r.out)
      if (format === '2') assert.equal(s.sha256, sha(bytes), `${name}: sha256sum's value`)
      else if (s.sha256 !== null) assert.equal(s.sha256, sha(bytes), `${name}: a version-1 value, when given, is the file's hash`)
    }
    if (format === '1') {
      const r = await rotree(['stat', `${mirror.url}#${key}`, '/list.bin', '--json', '--state-dir', path.join(base, 'state')])
      assert.equal(JSON.parse(r.out).sha256, null, 'version 1 records no hash of a multi-chunk file')
    }
  })
}

// The disk cache's writing thread (gateway/disk-cache-writer.js): blobs
// copied into a shared ring are written as files, in order; a ring without
// room says so at once instead of waiting; a slot is reused only after
// free(); a file that cannot be written is an error for that blob alone and
// leaves no temporary file.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { randomBytes } from 'node:crypto'
import { BlobFileWriter } from '../../gateway/disk-cache-writer.js'
import { tmpdir } from '../helpers/fixtures.js'

test('blobs pass through a small ring in order; a full ring refuses at once; slots come back only with free()', async t => {
  const dir = await tmpdir('rotree-dcw-')
  t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const w = new BlobFileWriter(1 << 20)
  t.after(() => w.close())
  const blobs = Array.from({ length: 12 }, (_, i) => randomBytes(300_000 + i))
  const kept = new Map()
  let refused = 0
  for (let i = 0; i < blobs.length;) {
    const taken = []
    for (; i < blobs.length; i++) {
      const slot = w.take(blobs[i])
      if (slot === null) { refused++; break } // no room: the caller drops it, nothing waits
      assert.ok(w.read(slot).equals(blobs[i]), 'a slot reads back its bytes before it is written')
      taken.push({ file: path.join(dir, String(i % 3), `b${i}`), slot, i })
    }
    assert.ok(taken.length > 0, 'an empty ring takes a blob')
    const errs = await w.write(taken)
    assert.deepEqual(errs, taken.map(() => null))
    assert.equal(w.take(randomBytes(900_000)), null, 'written but not freed: the slots are still taken')
    w.free(taken[taken.length - 1].slot)
    for (const it of taken) kept.set(it.file, blobs[it.i])
  }
  assert.ok(refused > 0, 'a 1 MiB ring cannot hold twelve 300 KB blobs at once')
  for (const [file, bytes] of kept) assert.ok((await fs.readFile(file)).equals(bytes), file)
  assert.equal(kept.size, blobs.length)
})

test('a file that cannot be written fails alone and leaves no temporary file', async t => {
  const dir = await tmpdir('rotree-dcw-')
  t.after(() => fs.rm(dir, { recursive: true, force: true }))
  await fs.writeFile(path.join(dir, 'plain'), 'a file, not a folder')
  const w = new BlobFileWriter(1 << 20)
  t.after(() => w.close())
  const a = randomBytes(1000); const b = randomBytes(2000)
  const items = [
    { file: path.join(dir, 'plain', 'x', 'a'), slot: w.take(a) }, // its folder cannot be made
    { file: path.join(dir, 'ok', 'b'), slot: w.take(b) }
  ]
  const errs = await w.write(items)
  assert.ok(errs[0] instanceof Error && typeof errs[0].code === 'string', String(errs[0]))
  assert.equal(errs[1], null)
  assert.ok((await fs.readFile(items[1].file)).equals(b))
  assert.deepEqual(await fs.readdir(path.join(dir, 'ok')), ['b'], 'no .tmp left beside it')
})

test('after close() nothing is taken and writes fail', async () => {
  const w = new BlobFileWriter(1 << 20)
  await w.close()
  assert.equal(w.take(randomBytes(10)), null)
  const errs = await w.write([{ file: '/nonexistent/x', slot: { off: 0, len: 1, end: 1 } }])
  assert.ok(errs[0] instanceof Error)
})

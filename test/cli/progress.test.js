// The progress line: at most ten redraws a second whatever the number of
// updates (a first build, whose total is unknown, used to redraw once per
// file), no "0% …/0 B" bar without a total, plain lines every few seconds
// without a terminal when asked, and a build that reports progress inside a
// large file, not only once it is done.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import crypto from 'node:crypto'
import { progressBar } from '../../cli/progress.js'
import { build } from '../../builder/build.js'
import { generateKeyPair } from 'rotree-client/crypto'

const sink = (isTTY = true) => { const s = { isTTY, columns: 100, writes: [], write (t) { s.writes.push(t) } }; return s }
const sleep = ms => new Promise(resolve => setTimeout(resolve, ms))

test('at most ten redraws a second, and no bar without a total', async () => {
  const s = sink()
  const bar = progressBar({ label: 'build', stream: s })
  const t0 = Date.now()
  let n = 0
  while (Date.now() - t0 < 300) { bar.update(++n * 1000, 0, `${n} files`); if (n % 1000 === 0) await sleep(1) }
  const ms = Date.now() - t0
  assert.ok(n > 1000, 'many updates')
  assert.ok(s.writes.length <= Math.ceil(ms / 100) + 1, `${s.writes.length} redraws for ${n} updates in ${ms} ms`)
  assert.ok(s.writes.every(w => !w.includes('%') && !w.includes('/0 B')), s.writes[0])
  const t = sink()
  const withTotal = progressBar({ label: 'get', stream: t })
  withTotal.update(50, 100)
  assert.match(t.writes[0], / 50% 50 B\/100 B /)
})

test('without a terminal: nothing, or a plain line every lineEveryMs', async () => {
  const quiet = sink(false)
  progressBar({ label: 'pull', stream: quiet }).update(10, 100)
  assert.equal(quiet.writes.length, 0)
  const s = sink(false)
  const bar = progressBar({ label: 'push', stream: s, lineEveryMs: 50 })
  bar.update(10, 100, 'blobs')
  await sleep(70)
  bar.update(60, 100, 'blobs')
  assert.equal(s.writes.length, 1)
  assert.match(s.writes[0], /^push: 60 B of 100 B \(60%\), .*\/s blobs\n$/)
})

test('a build reports bytes inside a large file before the file is done', { timeout: 60_000 }, async t => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'rotree-progress-'))
  t.after(() => fs.rm(dir, { recursive: true, force: true }))
  await fs.mkdir(path.join(dir, 'src'))
  await fs.writeFile(path.join(dir, 'src', 'big.bin'), crypto.randomBytes(24 << 20))
  const seen = []
  await build({
    src: path.join(dir, 'src'), out: path.join(dir, 'out'), key: generateKeyPair(), ttlMs: 3600e3, fsync: false,
    threads: 2, workersAfter: 0, bigAt: 4 << 20, segment: 4 << 20,
    onProgress: p => seen.push({ done: p.done, files: p.files })
  })
  const before = seen.filter(p => p.files === 0 && p.done > 0)
  assert.ok(before.length >= 2, `progress inside the file: ${JSON.stringify(seen.slice(0, 5))}`)
  assert.ok(before.every((p, i) => i === 0 || p.done >= before[i - 1].done), 'never backwards')
  assert.deepEqual(seen.at(-1), { done: 24 << 20, files: 1 })
})

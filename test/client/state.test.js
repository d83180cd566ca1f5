// Trust rule 2: the highest sequence per key persists, and several reader
// processes share it at once without failing because another holds it.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { spawn } from 'node:child_process'
import { SeqStore } from 'rotree-client/src/state.js'
import { tmpdir } from '../helpers/fixtures.js'

const info = (seq, root = 'r' + seq) => ({ seq, root: { hash: root } })

test('the highest sequence survives a restart; rollback and fork are refused', async t => {
  const dir = await tmpdir(); t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const loc = path.join(dir, 'seq.db')
  const a = new SeqStore(loc)
  await a.accept('k', info(5))
  await a.accept('k', info(9))
  const b = new SeqStore(loc) // a new process, in effect
  assert.deepEqual(await b.get('k'), { seq: 9, root: 'r9' })
  await assert.rejects(b.accept('k', info(8)), { code: 'ROTREE_ROLLBACK' })
  await assert.rejects(b.accept('k', info(9, 'other')), { code: 'ROTREE_FORK' })
  await b.accept('k', info(9)) // the same root again is fine
  assert.equal(await b.get('other-key'), null)
})

test('many processes update one state directory at once; none fails, the max wins', { timeout: 60_000 }, async t => {
  const dir = await tmpdir(); t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const loc = path.join(dir, 'seq.db')
  const mod = new URL('../../client-js/src/state.js', import.meta.url).href
  const child = seqs => new Promise((resolve, reject) => {
    const code = `import { SeqStore } from ${JSON.stringify(mod)}
      const s = new SeqStore(${JSON.stringify(loc)})
      for (const n of ${JSON.stringify(seqs)}) {
        // another process may already hold a higher number: a rollback refusal is the right answer
        try { await s.accept('k', { seq: n, root: { hash: 'r' + n } }) } catch (err) { if (err.code !== 'ROTREE_ROLLBACK') throw err }
      }`
    const p = spawn(process.execPath, ['--input-type=module', '-e', code], { stdio: ['ignore', 'ignore', 'pipe'] })
    let err = ''
    p.stderr.on('data', b => { err += b })
    p.on('close', c => c === 0 ? resolve() : reject(new Error(`child failed: ${err}`)))
  })
  // four processes, each writing increasing numbers; all hammer the same LevelDB
  await Promise.all([0, 1, 2, 3].map(i => child(Array.from({ length: 15 }, (_, j) => 1000 + j * 4 + i))))
  assert.deepEqual(await new SeqStore(loc).get('k'), { seq: 1059, root: 'r1059' })
})

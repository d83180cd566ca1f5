// docs/TRUST.md rule 2: the highest sequence per key persists, several reader
// processes share it at once without failing because another holds it, and
// state that is damaged fails closed (ROTREE_STATE), never as "nothing seen".
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { spawn } from 'node:child_process'
import { Level } from 'level'
import { SeqStore } from 'rotree-client/trust'
import { openTree } from 'rotree-client'
import { tmpdir, makeKey, writeTree, buildTree, serve, address } from '../helpers/fixtures.js'

const hex = n => n.toString(16).padStart(64, '0')
const info = (seq, root = hex(seq)) => ({ seq, root: { hash: root } })

test('the highest sequence survives a restart; rollback and fork are refused', async t => {
  const dir = await tmpdir(); t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const loc = path.join(dir, 'seq.db')
  const a = new SeqStore(loc)
  await a.accept('k', info(5))
  await a.accept('k', info(9))
  const b = new SeqStore(loc) // a new process, in effect
  assert.deepEqual(await b.get('k'), { seq: 9, root: hex(9) })
  await assert.rejects(b.accept('k', info(8)), { code: 'ROTREE_ROLLBACK' })
  await assert.rejects(b.accept('k', info(9, hex(1234))), { code: 'ROTREE_FORK' })
  await b.accept('k', info(9)) // the same root again is fine
  assert.equal(await b.get('other-key'), null)
})

test('many processes update one state directory at once; none fails, the max wins', { timeout: 60_000 }, async t => {
  const dir = await tmpdir(); t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const loc = path.join(dir, 'seq.db')
  const mod = new URL('../../client-js/src/trust/state.js', import.meta.url).href
  const child = seqs => new Promise((resolve, reject) => {
    const code = `import { SeqStore } from ${JSON.stringify(mod)}
      const s = new SeqStore(${JSON.stringify(loc)})
      for (const n of ${JSON.stringify(seqs)}) {
        // another process may already hold a higher number: a rollback refusal is the right answer
        try { await s.accept('k', { seq: n, root: { hash: n.toString(16).padStart(64, '0') } }) } catch (err) { if (err.code !== 'ROTREE_ROLLBACK') throw err }
      }`
    const p = spawn(process.execPath, ['--input-type=module', '-e', code], { stdio: ['ignore', 'ignore', 'pipe'] })
    let err = ''
    p.stderr.on('data', b => { err += b })
    p.on('close', c => c === 0 ? resolve() : reject(new Error(`child failed: ${err}`)))
  })
  // four processes, each writing increasing numbers; all hammer the same LevelDB
  await Promise.all([0, 1, 2, 3].map(i => child(Array.from({ length: 15 }, (_, j) => 1000 + j * 4 + i))))
  assert.deepEqual(await new SeqStore(loc).get('k'), { seq: 1059, root: hex(1059) })
})

test('a state directory that lost its CURRENT file is refused, not started over', async t => {
  const dir = await tmpdir(); t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const loc = path.join(dir, 'seq.db')
  await new SeqStore(loc).accept('k', info(9))
  await fs.rm(path.join(loc, 'CURRENT'))
  const b = new SeqStore(loc)
  await assert.rejects(b.get('k'), err => err.code === 'ROTREE_STATE' && /lost its tables/.test(err.message))
  await assert.rejects(b.accept('k', info(5)), { code: 'ROTREE_STATE' }) // not accepted as if nothing was seen
  assert.ok(!(await fs.readdir(loc)).includes('CURRENT'), 'no empty database was created in its place')
})

test('a reader whose state lost its tables refuses to open the tree', async t => {
  const dir = await tmpdir(); t.after(() => fs.rm(dir, { recursive: true, force: true }))
  await writeTree(path.join(dir, 'src'), { 'a.txt': 'a' })
  const key = makeKey()
  const { out } = await buildTree(path.join(dir, 'src'), { key })
  const srv = await serve(out); t.after(srv.close)
  const stateDir = path.join(dir, 'state')
  ;(await openTree(address(srv.url, key.publicKey), { stateDir })).close()
  const loc = path.join(stateDir, 'seq.db')
  await fs.rm(path.join(loc, 'CURRENT'))
  await assert.rejects(openTree(address(srv.url, key.publicKey), { stateDir }), { code: 'ROTREE_STATE' })
})

test('a directory with no database yet (empty, or being created) is no loss', async t => {
  const dir = await tmpdir(); t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const loc = path.join(dir, 'seq.db')
  await fs.mkdir(loc)
  await fs.writeFile(path.join(loc, 'LOG'), '')
  const s = new SeqStore(loc)
  assert.equal(await s.get('k'), null)
  await s.accept('k', info(3))
  assert.deepEqual(await new SeqStore(loc).get('k'), { seq: 3, root: hex(3) })
})

test('a stored record without a valid seq or root is ROTREE_STATE, never "nothing seen"', async t => {
  const dir = await tmpdir(); t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const bad = [{ root: hex(9) }, { seq: -1, root: hex(9) }, { seq: 1.5, root: hex(9) }, { seq: '9', root: hex(9) },
    { seq: 2 ** 53, root: hex(9) }, { seq: 9 }, { seq: 9, root: 'r9' }, { seq: 9, root: hex(0xabc).toUpperCase() }, 'junk', 7, []]
  for (const [i, rec] of bad.entries()) {
    const loc = path.join(dir, `seq-${i}.db`)
    const db = new Level(loc, { valueEncoding: 'json' })
    await db.put('seq:k', rec)
    await db.close()
    const s = new SeqStore(loc)
    await assert.rejects(s.get('k'), { code: 'ROTREE_STATE' }, JSON.stringify(rec))
    await assert.rejects(s.accept('k', info(1)), { code: 'ROTREE_STATE' }, JSON.stringify(rec))
  }
})

test('format version 2 records: update() persists across restarts, damaged ones fail closed, a version-1 record gives way but never returns', async t => {
  const { checkRecord } = await import('rotree-client/trust')
  const dir = await tmpdir(); t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const loc = path.join(dir, 'seq.db')
  const trustOnly = { v: 2, trust: { seq: 2, hash: hex(2) }, trustDoc: '{"type":"rotree-trust"}', release: null, timestamp: null }
  const full = { ...trustOnly, release: { signers: [hex(7)], seq: 3, root: hex(3) }, timestamp: { signers: [hex(8), hex(9)], seq: 10, release: hex(10) } }
  assert.deepEqual(checkRecord(trustOnly, 'x'), trustOnly)
  assert.deepEqual(checkRecord({ ...full, trust: null, trustDoc: undefined }, 'x'), { ...full, trust: null, trustDoc: undefined })
  for (const bad of [
    { ...trustOnly, trustDoc: 5 }, // not a text
    { ...trustOnly, trustDoc: undefined }, // a trust document recorded without its bytes
    { ...full, trust: null }, // bytes without a recorded trust document
    { ...full, release: { signers: [hex(7)], seq: -1, root: hex(3) } },
    { ...full, release: { signers: [], seq: 3, root: hex(3) } }, // no signer: nothing to hold the sequence by
    { ...full, release: { id: hex(7), seq: 3, root: hex(3) } },
    { ...full, timestamp: { seq: 10 } }
  ]) assert.throws(() => checkRecord(bad, 'x'), { code: 'ROTREE_STATE' }, JSON.stringify(bad))

  const a = new SeqStore(loc)
  await a.accept('k', info(5)) // a version-1 tree …
  const seen = []
  await a.update('k', s => { seen.push(s); return trustOnly }) // … moves to version 2
  assert.deepEqual(seen, [{ seq: 5, root: hex(5) }, { seq: 5, root: hex(5) }]) // this process's copy, then the disk's
  await a.update('k', () => full)
  const b = new SeqStore(loc) // a restart
  assert.deepEqual(await b.get('k'), full)
  assert.equal(await b.update('k', () => null), null) // nothing to write: nothing written
  assert.deepEqual(await b.get('k'), full)
  await assert.rejects(b.accept('k', info(99)), { code: 'ROTREE_ROLLBACK' }) // a version-1 fsinfo.json after version 2
  // a state file another process rewound cannot take this one back: update() asks this process's copy first
  const db = new Level(loc, { valueEncoding: 'json' }); await db.open(); await db.put('seq:k', trustOnly); await db.close()
  const { RollbackError } = await import('rotree-client/errors')
  const behindFull = s => { if (s?.timestamp) throw new RollbackError('behind what this process accepted'); return full }
  await assert.rejects(a.update('k', behindFull), { code: 'ROTREE_ROLLBACK' }) // a holds `full` in memory
  assert.deepEqual(await b.update('k', behindFull), full) // b never saw it: the rewound disk is all it has
})

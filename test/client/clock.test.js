// Clock rules (docs/TRUST.md rule 2): skew allowances on both sides of issue
// and expiry times, and a reader whose clock is wrong gets an error that says
// so. Every mirror failing is ROTREE_ALL_MIRRORS_FAILED, each mirror's own
// code in `errors` (docs/TRUST.md rule 7).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { openTree } from 'rotree-client'
import { tmpdir, makeKey, writeTree, buildTree, serve, address } from '../helpers/fixtures.js'

/** assert.rejects matcher: every mirror gave the verdict `code`, reported as itself with each mirror's answer. */
const allWith = code => err => {
  assert.equal(err.code, code, err.message)
  assert.ok(err.errors.length > 0 && err.errors.every(e => e.code === code), JSON.stringify(err.errors))
  return true
}

test('issued/expires bounds with skew and grace, through the real reader', async t => {
  const dir = await tmpdir(); t.after(() => fs.rm(dir, { recursive: true, force: true }))
  await writeTree(path.join(dir, 'src'), { 'a.txt': 'a' })
  const key = makeKey()
  const issued = Date.UTC(2030, 0, 1)
  const { out } = await buildTree(path.join(dir, 'src'), { key, now: issued, ttlMs: 3600e3 })
  const srv = await serve(out); t.after(srv.close)
  const addr = address(srv.url, key.publicKey)
  const open = (now, o = {}) => openTree(addr, { stateDir: null, now: () => now, ...o })
  const MIN = 60e3

  // inside the window, and exactly at its edges
  for (const now of [issued, issued + 30 * MIN, issued + 60 * MIN]) (await open(now)).close()
  // a reader clock up to 5 min behind the publisher's still accepts; more does not, and says why
  ;(await open(issued - 5 * MIN)).close()
  await assert.rejects(open(issued - 6 * MIN), err => {
    allWith('ROTREE_NOT_YET_VALID')(err)
    assert.match(err.message, /check this machine's clock/)
    assert.match(err.message, /2029-12-31T23:54:00/) // the reader's own clock is in the message
    return true
  })
  ;(await open(issued - 20 * MIN, { skewMs: 30 * MIN })).close() // a wider allowance when asked
  // expiry: refused one ms after, unless a grace period is configured
  await assert.rejects(open(issued + 60 * MIN + 1), err => {
    allWith('ROTREE_EXPIRED')(err)
    assert.match(err.message, /expired at 2030-01-01T01:00:00\.000Z \(reader clock 2030-01-01T01:00:00\.001Z\)/)
    return true
  })
  ;(await open(issued + 70 * MIN, { graceMs: 15 * MIN })).close()
  await assert.rejects(open(issued + 76 * MIN, { graceMs: 15 * MIN }), allWith('ROTREE_EXPIRED'))
})

test('a root that expires while a tree is open is refreshed, and refused if nothing newer exists', async t => {
  const dir = await tmpdir(); t.after(() => fs.rm(dir, { recursive: true, force: true }))
  await writeTree(path.join(dir, 'src'), { 'a.txt': 'a' })
  const key = makeKey()
  const t0 = Date.UTC(2030, 0, 1)
  // the builder's default format, with its own sequence numbers (version 2: from the clock)
  const { out, result: first } = await buildTree(path.join(dir, 'src'), { key, now: t0, ttlMs: 3600e3 })
  const srv = await serve(out); t.after(srv.close)
  let now = t0
  const tree = await openTree(address(srv.url, key.publicKey), { stateDir: null, now: () => now }); t.after(() => tree.close())
  assert.equal(Buffer.from(await tree.readFile('/a.txt')).toString(), 'a')
  now = t0 + 2 * 3600e3 // past expiry, nothing newer published: refused
  await assert.rejects(tree.readFile('/a.txt'), allWith('ROTREE_EXPIRED'))
  const { result: second } = await buildTree(path.join(dir, 'src'), { key, out, now, ttlMs: 3600e3 }) // the publisher re-signs
  assert.ok(second.seq > first.seq)
  assert.equal(Buffer.from(await tree.readFile('/a.txt')).toString(), 'a')
  assert.equal(tree.info.seq, second.seq)
})

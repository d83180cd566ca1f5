// A reader of a gated tree (docs/FORMAT.md §12.11, client-js/src/net/gated-transport.js):
// the library asks the edge for a token before the first blob, renews it
// before it expires, and reports a refused grant as ROTREE_NO_ACCESS with the
// edge's one line (never a mirror fault); the CLI's --grant --grant-key does
// the same for rotree cat.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { openTree } from 'rotree-client'
import { gatedTransport } from 'rotree-client/net'
import { generateKeyPair } from 'rotree-client/crypto'
import { unsignedGrant, signGrant, encodeGrant, decodeGrant } from 'rotree-client/grant'
import { tmpdir, writeTree, makeKey, buildTree } from '../helpers/fixtures.js'
import { createRotreeServer } from '../../server/index.js'
import { writeKeyFile } from '../../builder/keys.js'
import { rotree } from '../cli/helpers.js'

const DAY = 86400e3
const iso = ms => new Date(ms).toISOString()
let dir, key, holder, url, srv, publicUrl, publicSrv

before(async () => {
  dir = await tmpdir('rotree-gated-reader-')
  await writeTree(path.join(dir, 'src'), { 'a.txt': 'gated hello\n', 'big/b.bin': Buffer.alloc(300_000, 7) })
  key = makeKey()
  const { out } = await buildTree(path.join(dir, 'src'), { key, out: path.join(dir, 'out'), ttlMs: 30 * DAY })
  holder = generateKeyPair()
  srv = await createRotreeServer({ dir: out, gate: { secret: 'c'.repeat(64), ttlS: 120 } })
  ;({ url } = await srv.listen({ port: 0, host: '127.0.0.1' }))
  publicSrv = await createRotreeServer({ dir: out })
  ;({ url: publicUrl } = await publicSrv.listen({ port: 0, host: '127.0.0.1' }))
})
after(async () => {
  await srv.close({ timeoutMs: 1000 }); await publicSrv.close({ timeoutMs: 1000 })
  await fs.rm(dir, { recursive: true, force: true })
})

const grant = ({ by = key, days = 30 } = {}) => decodeGrant(encodeGrant(signGrant(unsignedGrant({ anchor: key.publicKey, holder: holder.publicKey, issued: iso(Date.now() - 60e3), expires: iso(Date.now() + days * DAY) }), [by.secretKey])))

test('the library fetches a token before the first blob and renews it before it expires', async () => {
  let offset = 0
  const now = () => Date.now() + offset
  const exchanges = []
  const counting = (u, init) => { exchanges.push(u); return fetch(u, init) }
  const opts = { stateDir: null, now, wrapTransport: t => gatedTransport(t, { grant: grant(), secretKey: holder.secretKey, fetch: counting, now }) }
  const tree = await openTree(`${url}#${key.publicKey}`, opts)
  try {
    assert.equal(Buffer.from(await tree.readFile('/a.txt')).toString(), 'gated hello\n')
    assert.equal((await tree.readFile('/big/b.bin')).length, 300_000)
    assert.equal(exchanges.length, 1, 'one token for every blob')
    assert.equal(exchanges[0], `${url}.rotree/token`)
    // 90 s on, the two-minute token is within a minute of expiring: renewed before the next blob
    offset = 90e3
    tree.cache?.clear?.()
    const again = await openTree(`${url}#${key.publicKey}`, { ...opts, wrapTransport: t => gatedTransport(t, { grant: grant(), secretKey: holder.secretKey, fetch: counting, now }) })
    await again.readFile('/a.txt')
    await again.close()
    assert.equal(exchanges.length, 2)
  } finally { await tree.close() }
})

test('a mirror that is not gated is read as it is, with a grant or without', async () => {
  const tree = await openTree(`${publicUrl}#${key.publicKey}`, { stateDir: null, wrapTransport: t => gatedTransport(t, { grant: grant(), secretKey: holder.secretKey }) })
  try { assert.equal(Buffer.from(await tree.readFile('/a.txt')).toString(), 'gated hello\n') } finally { await tree.close() }
})

test('a refused grant is ROTREE_NO_ACCESS with the edge\'s reason, never a mirror fault; no grant is a 403 mirror fault', async () => {
  const forged = grant({ by: generateKeyPair() })
  const tree = await openTree(`${url}#${key.publicKey}`, { stateDir: null, wrapTransport: t => gatedTransport(t, { grant: forged, secretKey: holder.secretKey }) })
  try {
    await assert.rejects(tree.readFile('/a.txt'), err => err.code === 'ROTREE_NO_ACCESS' && /refuses this grant: the grant is not signed by the tree's access role/.test(err.message))
  } finally { await tree.close() }
  const plain = await openTree(`${url}#${key.publicKey}`, { stateDir: null })
  try {
    await assert.rejects(plain.readFile('/a.txt'), err => err.code === 'ROTREE_ALL_MIRRORS_FAILED' && err.errors.every(e => e.code === 'ROTREE_MIRROR_HTTP'))
  } finally { await plain.close() }
})

test('rotree cat --grant --grant-key reads a gated tree; a refused grant is one ROTREE_NO_ACCESS line', async () => {
  const keyFile = path.join(dir, 'holder.key')
  await fs.rm(keyFile, { force: true })
  const { publicKey } = await writeKeyFile(keyFile)
  const g = decodeGrant(encodeGrant(signGrant(unsignedGrant({ anchor: key.publicKey, holder: publicKey, issued: iso(Date.now() - 60e3), expires: iso(Date.now() + DAY) }), [key.secretKey])))
  await fs.writeFile(path.join(dir, 'g.json'), encodeGrant(g))
  const state = path.join(dir, 'state')
  let r = await rotree(['cat', `${url}#${key.publicKey}`, '/a.txt', '--grant', path.join(dir, 'g.json'), '--grant-key', keyFile, '--state-dir', state])
  assert.equal(r.code, 0, r.err)
  assert.equal(r.out, 'gated hello\n')
  await fs.writeFile(path.join(dir, 'bad.json'), encodeGrant(grant()))
  r = await rotree(['cat', `${url}#${key.publicKey}`, '/a.txt', '--grant', path.join(dir, 'bad.json'), '--grant-key', keyFile, '--state-dir', state])
  assert.notEqual(r.code, 0)
  assert.match(r.err, /^rotree: ROTREE_NO_ACCESS: http:\/\/127\.0\.0\.1:\d+ refuses this grant: the token request is not signed by the grant's holder/m)
  assert.doesNotMatch(r.err, /MIRROR|ALL_MIRRORS/)
})

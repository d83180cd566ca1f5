// Every error page of the gateway ends with one line of what to do, worded for
// its users (curl, wget, WebDAV clients, browsers), who cannot pass a reader's
// options: gateway/what-to-do.js. A missing path, a gateway given the wrong
// key, and a lying mirror, through the real server.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { serve } from '../helpers/fixtures.js'
import { startLyingServer } from '../helpers/lying-server.js'
import { ERROR_TABLE, MIRROR_FAULT_CODES, ABSENT_CODES } from 'rotree-client/errors'
import { gatewayWhatToDo, GATEWAY_WHAT_TO_DO_CODES } from '../../gateway/what-to-do.js'
import { makeFixture, startGateway, raw, makeKey, address } from './helpers.js'

const fx = {}
before(async () => {
  Object.assign(fx, await makeFixture({ 'a.txt': 'alpha\n', 'big.bin': Buffer.alloc(400_000, 7) }))
  fx.mirror = await serve(fx.out)
})
after(async () => { await fx.mirror?.close(); await fx.cleanup?.() })

const lastLine = body => body.toString().trimEnd().split('\n').pop()

test('a sentence for every code the gateway answers for a tree: each mirror fault, each verdict, each proved absence', () => {
  const codes = new Set(ERROR_TABLE.map(r => r[0]))
  for (const c of GATEWAY_WHAT_TO_DO_CODES) assert.ok(codes.has(c), `${c} is not an error code`)
  for (const c of [...MIRROR_FAULT_CODES, ...ABSENT_CODES, 'ROTREE_ALL_MIRRORS_FAILED', 'ROTREE_NO_ACCESS', 'ROTREE_RETIRED']) {
    assert.ok(gatewayWhatToDo(c), `no sentence for ${c}`)
    assert.doesNotMatch(gatewayWhatToDo(c), /--mirror|\?mirror=/, `${c}: a gateway user cannot add a mirror`)
  }
})

test('a missing path: 404, then what to do', async t => {
  const gw = await startGateway(t, { tree: address(fx.mirror.url, fx.pk) })
  const r = await raw(gw.url, '/no-such.txt')
  assert.equal(r.status, 404)
  assert.match(r.body.toString(), /^404 Not Found\nROTREE_NOT_FOUND: /)
  assert.equal(lastLine(r.body), 'What to do: ' + gatewayWhatToDo('ROTREE_NOT_FOUND'))
})

test('a gateway given another key: the verdict, and whom to tell', async t => {
  const gw = await startGateway(t, { tree: address(fx.mirror.url, makeKey().publicKey) })
  const r = await raw(gw.url, '/a.txt')
  assert.equal(r.status, 502)
  const code = r.headers['x-rotree-error']
  assert.ok(['ROTREE_WRONG_KEY', 'ROTREE_BAD_SIGNATURE', 'ROTREE_THRESHOLD'].includes(code), code)
  assert.equal(lastLine(r.body), 'What to do: ' + gatewayWhatToDo(code))
  assert.match(lastLine(r.body), /whoever runs this gateway/)
})

test('a lying mirror alone: every mirror failed, each one listed, then what to do', async t => {
  const liar = await startLyingServer(fx.out, { blob: () => 'truncate' })
  t.after(() => liar.close())
  const gw = await startGateway(t, { tree: address(liar.url, fx.pk) })
  const r = await raw(gw.url, '/big.bin')
  assert.equal(r.status, 502, r.body.toString())
  const lines = r.body.toString().trimEnd().split('\n')
  assert.equal(lines[1].split(':')[0], r.headers['x-rotree-error'])
  assert.ok(lines.slice(2, -1).every(l => l.startsWith('  ')), 'each mirror on its own line')
  assert.equal(lines.at(-1), 'What to do: ' + gatewayWhatToDo(r.headers['x-rotree-error']))
})

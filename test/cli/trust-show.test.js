// `rotree trust show` (and the reports of trust init and update) name each
// key by a short id with the roles it holds and whether it is the key in the
// address, not as bare hex: the signed trust document carries no labels
// (docs/FORMAT.md §12.2), so that is what there is to say. --json keeps the
// whole keys. Real CLI on a real built tree.
import { test, after } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { tmpdir, writeTree, serve } from '../helpers/fixtures.js'
import { rotree } from './helpers.js'
import { shortIds, describeRoles } from '../../builder/trust-publish.js'

const cleanups = []
after(async () => { for (const c of cleanups.reverse()) await c() })

async function ok (...args) {
  const r = await rotree(args)
  assert.equal(r.code, 0, `rotree ${args.join(' ')}\n${r.err}`)
  return r.out
}

async function keys (base, names) {
  const k = {}
  for (const n of names) {
    const file = path.join(base, `${n}.key`)
    k[n] = { key: file, hex: (await ok('keygen', file)).trim() }
  }
  return k
}

/** The key lines of a roles listing: [indent-4 lines]. */
const keyLines = text => text.split('\n').filter(l => /^ {4}\S/.test(l))

test('trust show lists each key by a short id, its roles, and the address key', async () => {
  const base = await tmpdir('rotree-trust-show-'); cleanups.push(() => fs.rm(base, { recursive: true, force: true }))
  const k = await keys(base, ['K', 'R', 'T'])
  const src = path.join(base, 'src'); const out = path.join(base, 'out')
  await writeTree(src, { 'a.txt': 'one\n' })
  await ok('build', src, out, '--key', k.K.key, '--no-fsync')
  // K, the address key, keeps the root and shares the release role with R
  const init = await ok('trust', 'init', out, '--root', k.K.hex, '--release', k.K.hex, '--release', k.R.hex, '--timestamp', k.T.hex)
  const id = n => k[n].hex.slice(0, 16)
  const want = {
    root: [`    ${id('K')}  root, release; the address key`],
    release: [[`    ${id('K')}  root, release; the address key`, k.K.hex], [`    ${id('R')}  release`, k.R.hex]].sort((a, b) => a[1] < b[1] ? -1 : 1).map(x => x[0]),
    timestamp: [`    ${id('T')}  timestamp`]
  }
  const roles = [...want.root, ...want.release, ...want.timestamp]
  assert.deepEqual(keyLines(init), roles)
  assert.match(init, /^ {2}root {6}1 of 1\n/m)
  assert.match(init, /^ {2}release {3}1 of 2\n/m)

  await ok('trust', 'sign', out, '--key', k.K.key, '--no-fsync')
  const shown = await ok('trust', 'show', out)
  assert.deepEqual(keyLines(shown), roles)
  for (const line of shown.split('\n')) assert.doesNotMatch(line, /^\s*[0-9a-f]{64}\s*$/, 'no bare hex line')
  // --json keeps every key whole
  assert.deepEqual(JSON.parse(await ok('trust', 'show', out, '--json')).trust.roles.release.keys, [k.K.hex, k.R.hex].sort())

  // what a reader accepts at the address says the same
  await ok('build', src, out, '--key', k.K.key, '--timestamp-key', k.T.key, '--no-fsync')
  const srv = await serve(out); cleanups.push(() => srv.close())
  const remote = await ok('trust', 'show', `${srv.url}#${k.K.hex}`, '--state-dir', path.join(base, 'state'))
  assert.deepEqual(keyLines(remote), roles)
})

test('short ids: 16 hex digits, more where two keys share them; no address key for a trust-hash address', () => {
  const a = 'ab'.repeat(32); const b = 'ab'.repeat(9) + 'cd'.repeat(23); const c = '12'.repeat(32)
  assert.equal(shortIds([a, c])(a), 'abababababababab')
  const id = shortIds([a, b, c])
  assert.equal(id(a), 'ab'.repeat(9) + 'a'); assert.equal(id(b), 'ab'.repeat(9) + 'c'); assert.equal(id(c).length, 19)
  const text = describeRoles({ roles: { root: { threshold: 1, keys: [c] }, release: { threshold: 1, keys: [a, b] }, timestamp: { threshold: 1, keys: [c] } } })
  assert.equal(text, [
    '  root      1 of 1', `    ${id(c)}  root, timestamp`,
    '  release   1 of 2', `    ${id(a)}  release`, `    ${id(b)}  release`,
    '  timestamp 1 of 1', `    ${id(c)}  root, timestamp`
  ].join('\n'))
  assert.doesNotMatch(text, /address key/)
  // the key in a #<key> address, after the tree adopted roles that leave it out
  assert.match(describeRoles({ roles: { root: { threshold: 1, keys: [c] }, release: { threshold: 1, keys: [c] }, timestamp: { threshold: 1, keys: [c] } } }, { addressKey: a }),
    /^ {2}the address key abababababababab holds no role$/m)
  assert.match(describeRoles({ roles: { root: { threshold: 1, keys: [a] }, release: { threshold: 1, keys: [a] }, timestamp: { threshold: 1, keys: [c] } } }, { addressKey: a }),
    /^ {4}abababababababab {2}root, release; the address key$/m)
})

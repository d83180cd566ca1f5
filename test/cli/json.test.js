// Every command's --json against docs/JSON.md: the doc holds one fenced
// ```json ID example per output, and each real output, from real commands on
// a real built tree behind a real `rotree serve`, must have exactly the
// example's keys (at every depth) with the same JSON types, as the doc's
// "How the examples are checked" says. The doc and the commands cannot
// drift apart: a renamed field fails here, and so does an example no command
// is checked against.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import net from 'node:net'
import { spawnSync } from 'node:child_process'
import { tmpdir, writeTree } from '../helpers/fixtures.js'
import { rotree, start } from './helpers.js'

const DOC = new URL('../../docs/JSON.md', import.meta.url)

/** docs/JSON.md's examples: ID → the parsed value of its ```json ID block. */
export async function docExamples () {
  const text = await fs.readFile(DOC, 'utf8')
  const out = new Map()
  for (const m of text.matchAll(/^```json ([\w-]+)\n([\s\S]*?)^```$/gm)) {
    assert.ok(!out.has(m[1]), `docs/JSON.md: two blocks named ${m[1]}`)
    out.set(m[1], JSON.parse(m[2]))
  }
  return out
}

const kind = x => x === null ? 'null' : Array.isArray(x) ? 'array' : typeof x
const HEX64 = /^[0-9a-f]{64}$/
const FORMATS = {
  key: x => x === null || /^t?[0-9a-f]{64}$/.test(x),
  root: x => x === null || HEX64.test(x),
  address: x => x === null || /^(https?:\/\/\S+|<mirror-url>)#t?[0-9a-f]{64}(:.+)?$/.test(x),
  expires: x => x === null || !Number.isNaN(Date.parse(x)),
  issued: x => x === null || !Number.isNaN(Date.parse(x)),
  mtime: x => !Number.isNaN(Date.parse(x))
}

/**
 * The doc's rules: the same keys; the same JSON type, where null in either
 * stands for "none here"; `{}` in the doc is an object whose keys are not
 * fixed; an array's items each match the doc's first item (an empty doc
 * array: any items).
 */
export function conforms (real, doc, where = '$') {
  if (real === null || doc === null) return
  assert.equal(kind(real), kind(doc), `${where}: a ${kind(real)}, the doc says ${kind(doc)}`)
  if (Array.isArray(doc)) {
    if (doc.length) real.forEach((x, i) => conforms(x, doc[0], `${where}[${i}]`))
    return
  }
  if (kind(doc) !== 'object' || Object.keys(doc).length === 0) return
  assert.deepEqual(Object.keys(real).sort(), Object.keys(doc).sort(), `${where}: the keys differ from docs/JSON.md`)
  for (const k of Object.keys(doc)) {
    if (FORMATS[k] && typeof real[k] !== 'object') assert.ok(FORMATS[k](real[k]), `${where}.${k}: ${JSON.stringify(real[k])} is not a ${k} as docs/JSON.md spells it`)
    conforms(real[k], doc[k], `${where}.${k}`)
  }
}

/** A port nothing listens on: a mirror that refuses every connection. */
async function deadPort () {
  const s = net.createServer().listen(0, '127.0.0.1')
  await new Promise(resolve => s.once('listening', resolve))
  const { port } = s.address()
  await new Promise(resolve => s.close(resolve))
  return port
}

const haveRclone = spawnSync('rclone', ['version'], { stdio: 'ignore' }).status === 0

test('every command\'s --json has the shape docs/JSON.md gives it', { timeout: 600_000 }, async t => {
  const docs = await docExamples()
  const checked = new Set()
  const check = (id, value) => {
    assert.ok(docs.has(id), `docs/JSON.md has no \`\`\`json ${id} block; the command printed:\n${JSON.stringify(value, null, 2)}`)
    conforms(value, docs.get(id), id)
    checked.add(id)
  }
  const dir = await tmpdir('rotree-json-')
  t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const env = { ROTREE_STATE: path.join(dir, 'state') }
  const run = async (...args) => {
    const r = await rotree(args, { env })
    assert.equal(r.code, 0, `rotree ${args.join(' ')}: ${r.err}`)
    return r.out
  }
  const one = async (id, ...args) => { const j = JSON.parse(await run(...args)); check(id, j); return j }
  const lines = async (id, ...args) => {
    const all = (await run(...args)).trimEnd().split('\n').map(l => JSON.parse(l))
    const last = all.pop()
    assert.ok(all.length > 0, `${id}: no item lines`)
    for (const l of all) check(id, l)
    check(id + '-summary', last)
    return { items: all, summary: last.summary }
  }

  // publish: a format-2 named tree, built twice (history for log and diff)
  const site = path.join(dir, 'site'); const out = path.join(dir, 'out')
  await writeTree(site, { 'a.txt': 'alpha\n', 'd/b.txt': 'bravo\n', big: Buffer.alloc(300_000, 7), l: { symlink: 'a.txt' } })
  const key = path.join(dir, 'k.key')
  await run('keygen', key)
  const first = await one('build', 'build', site, out, '--key', key, '--name', 'demo', '--no-fsync', '--json')
  await fs.writeFile(path.join(site, 'new.txt'), 'new\n')
  const second = await one('build', 'build', site, out, '--key', key, '--name', 'demo', '--no-fsync', '--json')
  const serve = await start(t, ['serve', out, '--port', '0'], { ready: /address: (\S+)\n/ })
  const addr = serve.match[1]
  assert.equal(second.address, addr.replace(/^[^#]*/, '<mirror-url>'), 'build prints the address serve does, its URL a placeholder')

  // read
  const st = await one('stat', 'stat', addr, '/d/b.txt', '--json')
  assert.deepEqual([st.address, st.name, st.key, st.seq, st.root, st.path], [addr, 'demo', first.key, second.seq, second.root, '/d/b.txt'])
  await one('cat', 'cat', addr, '/a.txt', '--json')
  const ls = await lines('ls', 'ls', addr, '/', '--json')
  assert.deepEqual(ls.items.map(e => e.path), ['a.txt', 'big', 'd', 'l', 'new.txt'])
  const lsR = await lines('ls', 'ls', '-R', addr, '--json')
  assert.equal(lsR.summary.count, 6)
  const diff = await lines('diff', 'diff', addr, String(first.seq), '--json')
  assert.deepEqual(diff.items, [{ op: '+', path: '/new.txt', type: 'file' }])
  assert.deepEqual([diff.summary.fromSeq, diff.summary.seq, diff.summary.changes], [first.seq, second.seq, 1])
  const log = await one('log', 'log', addr, '--json')
  assert.deepEqual(log.entries.map(e => e.seq), [second.seq, first.seq])
  const got = await one('get', 'get', addr, '/', '-o', path.join(dir, 'copy'), '--json')
  assert.deepEqual([got.files, got.symlinks, got.dirs], [4, 1, 2])
  await one('trust-show-address', 'trust', 'show', addr, '--json')
  await run('remote', 'add', 'origin', addr)
  await one('remote-list', 'remote', 'list', '--json')
  await one('pull', 'pull', addr, path.join(dir, 'mirror'), '--json', '--no-fsync')
  await one('fsck', 'fsck', path.join(dir, 'mirror'), '--key', `${first.key}:demo`, '--json')

  // a mirror that fails (refuses connections) while another answers: the
  // success carries it in `mirrors`; with no other mirror, the failure is the error object
  const dead = `http://127.0.0.1:${await deadPort()}/#${first.key}:demo`
  const faulty = await one('stat', 'stat', dead, '/a.txt', '--mirror', addr.slice(0, addr.indexOf('#')), '--json', '--timeout', '5')
  assert.ok(faulty.mirrors.some(m => m.code === 'ROTREE_MIRROR_NETWORK' && m.faults > 0), JSON.stringify(faulty.mirrors))
  const fail = await rotree(['stat', dead, '/a.txt', '--json', '--timeout', '5', '--state-dir', path.join(dir, 'other-state')])
  assert.equal(fail.code, 1)
  check('error', JSON.parse(fail.out))
  assert.equal(JSON.parse(fail.out).error.errors[0].code, 'ROTREE_MIRROR_NETWORK')
  const missing = await rotree(['stat', addr, '/nope', '--json'], { env })
  assert.equal(missing.code, 1)
  check('error', JSON.parse(missing.out))
  assert.equal(JSON.parse(missing.out).error.code, 'ROTREE_NOT_FOUND')
  const usage = await rotree(['get', addr, '/a.txt', '-o', '-', '--json'], { env })
  assert.equal(usage.code, 2)
  check('error', JSON.parse(usage.out))

  // the publisher's folder
  await one('resign', 'resign', out, '--key', key, '--json', '--no-fsync')
  const kept = await one('resign', 'resign', out, '--key', key, '--if-expiring-within', '1d', '--json', '--no-fsync')
  assert.equal(kept.skipped, true)
  await one('gc', 'gc', out, '--keep', '2', '--grace', '0', '--json')
  if (haveRclone) await one('push', 'push', out, path.join(dir, 'pushed'), '--json')
  else t.diagnostic('no rclone: push --json unchecked')

  // signed elsewhere: build --unsigned, sign -o, sign --publish
  const uout = path.join(dir, 'unsigned-out')
  await run('build', site, uout, '--unsigned', '--pubkey', first.key, '--name', 'demo', '--no-fsync')
  const fsinfo = path.join(dir, 'fsinfo.json')
  await one('sign-offline', 'sign', path.join(uout, 'unsigned.json'), '--key', key, '-o', fsinfo, '--json')
  await one('sign-publish', 'sign', fsinfo, '--publish', uout, '--json', '--no-fsync')

  // a private tree's readers
  const pout = path.join(dir, 'private-out')
  const id1 = (await run('keygen', '--reader', path.join(dir, 'id1'))).trim()
  const id2 = (await run('keygen', '--reader', path.join(dir, 'id2'))).trim()
  await one('build', 'build', site, pout, '--key', key, '--private', '--reader', id1, '--no-fsync', '--json')
  await one('access-list', 'access', 'list', pout, '--json')
  await one('access-change', 'access', 'add', pout, id2, '--json', '--no-fsync')

  // trust documents
  const tout = path.join(dir, 'trust-out')
  const keys = {}
  for (const n of ['root', 'release', 'timestamp']) { keys[n] = path.join(dir, `${n}.key`); await run('keygen', keys[n]) }
  await one('trust-init', 'trust', 'init', tout, '--root', keys.root, '--release', keys.release, '--timestamp', keys.timestamp, '--name', 'demo', '--json')
  await one('trust-sign', 'trust', 'sign', tout, '--key', keys.root, '--json', '--no-fsync')
  await one('trust-show', 'trust', 'show', tout, '--json')
  await one('trust-update', 'trust', 'update', tout, '--timestamp', keys.release, '--json')

  // a grant of the tree's access role (a single-key tree's key holds it)
  const holder = (await run('keygen', path.join(dir, 'holder.key'))).trim()
  await run('grant', 'issue', out, '--to', holder, '--ttl', '30d', '--key', key, '-o', path.join(dir, 'grant.json'))
  const grant = await one('grant-show', 'grant', 'show', path.join(dir, 'grant.json'), '--json')
  assert.deepEqual([grant.key, grant.name, grant.holder], [first.key, 'demo', holder])

  const unchecked = [...docs.keys()].filter(id => !checked.has(id) && !(id === 'push' && !haveRclone))
  assert.deepEqual(unchecked, [], 'every example in docs/JSON.md is checked against a real command')
})

test('a mirror that served bad bytes is in the mirrors of cat --json and get --json', { timeout: 300_000 }, async t => {
  const docs = await docExamples()
  const dir = await tmpdir('rotree-json-bad-')
  t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const site = path.join(dir, 'site'); const out = path.join(dir, 'out'); const key = path.join(dir, 'k.key')
  await writeTree(site, { 'big.bin': Buffer.alloc(300_000, 1).map((_, i) => (i * 7919) & 255), 'b.txt': 'bravo\n' })
  assert.equal((await rotree(['keygen', key])).code, 0)
  assert.equal((await rotree(['build', site, out, '--key', key, '--no-fsync'])).code, 0)
  // a copy of OUT whose every blob has a byte flipped, served as the address's own URL
  const bad = path.join(dir, 'bad')
  await fs.cp(out, bad, { recursive: true })
  for (const n of await fs.readdir(path.join(bad, 'h'))) {
    const p = path.join(bad, 'h', n)
    const b = await fs.readFile(p)
    b[b.length >> 1] ^= 1
    await fs.writeFile(p, b)
  }
  const good = await start(t, ['serve', out, '--port', '0'])
  const liar = await start(t, ['serve', bad, '--port', '0'], { ready: /address: (\S+)\n/ })
  const env = { ROTREE_STATE: path.join(dir, 'state') }
  for (const [id, args] of [['cat', ['cat', liar.match[1], '/big.bin']], ['get', ['get', liar.match[1], '/', '-o', path.join(dir, 'copy')]]]) {
    const r = await rotree([...args, '--mirror', good.match[1], '--json'], { env })
    assert.equal(r.code, 0, r.err)
    const j = JSON.parse(r.out)
    conforms(j, docs.get(id), id)
    const f = j.mirrors.find(m => m.url === liar.match[1].slice(0, liar.match[1].indexOf('#')))
    assert.ok(f && f.faults > 0 && f.code === 'ROTREE_HASH_MISMATCH', `${id}: ${JSON.stringify(j.mirrors)}`)
    assert.match(r.err, /warning: mirror .* failed/, 'stderr says so too')
  }
})

test('every command with a --json option has its section in docs/JSON.md', async () => {
  const { COMMAND_NAMES, loadCommand } = await import('../../cli/commands.js')
  const text = await fs.readFile(DOC, 'utf8')
  const headed = new Set([...text.matchAll(/^### `rotree ([a-z-]+)/gm)].map(m => m[1]))
  for (const name of COMMAND_NAMES) {
    const cmd = await loadCommand(name)
    if (cmd?.options?.json) assert.ok(headed.has(name), `rotree ${name} takes --json: docs/JSON.md needs a section for it`)
  }
})

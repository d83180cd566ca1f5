// rotree get --proof and rotree verify --offline (docs/FORMAT.md §13.2): a
// format-2 tree whose trust document names three witnesses (2 of 3), served
// on loopback; a get of a subtree writes its proof bundle; verify then runs
// with every network call refused (test/helpers/no-network.js preloaded) and
// passes for the folder and for the download; a flipped byte in the folder,
// the bundle or a downloaded file fails it with the reader's code; --at after
// expiry is ROTREE_EXPIRED.
import { test, after } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { tmpdir, writeTree } from '../helpers/fixtures.js'
import { rotree, start } from './helpers.js'
import { createWitness, parseLogList } from '../../lib/witness/witness.js'

const NO_NET = { NODE_OPTIONS: `--import=${new URL('../helpers/no-network.js', import.meta.url).href}` }
const cleanups = []
after(async () => { for (const c of cleanups.reverse()) await c() })

async function ok (args, env) {
  const r = await rotree(args, { env })
  assert.equal(r.code, 0, `rotree ${args.join(' ')}\n${r.err}`)
  return r
}
/** rotree verify --offline … with no network: { code, err } where code is the ROTREE_ code printed (or 0). */
async function verify (...args) {
  const r = await rotree(['verify', '--offline', ...args], { env: NO_NET })
  if (r.code === 0) return { code: 0, out: r.out, err: r.err }
  return { code: /rotree: (ROTREE_\w+)/.exec(r.err)?.[1] ?? `exit ${r.code}`, err: r.err }
}
async function flip (file, at, fn) {
  const b = await fs.readFile(file)
  const orig = b[at]
  b[at] ^= 1
  await fs.writeFile(file, b)
  try { return await fn() } finally { b[at] = orig; await fs.writeFile(file, b) }
}

test('get --proof, then verify --offline with no network: folder and download pass, flipped bytes and expiry fail', async t => {
  const base = await tmpdir('rotree-verify-offline-'); cleanups.push(() => fs.rm(base, { recursive: true, force: true }))
  const src = path.join(base, 'src')
  await writeTree(src, { 'index.html': 'hi\n', 'doc/a.txt': 'alpha\n'.repeat(10), 'doc/sub/b.bin': 'x'.repeat(70_000), 'doc/sub/c.txt': 'c\n' })
  // a 1-key family and three witnesses of its log, 2 of 3 required
  const A = path.join(base, 'A.key')
  const hex = (await ok(['keygen', A])).out.trim()
  const out = path.join(base, 'out')
  const init = await ok(['trust', 'init', out, '--root', A, '--release', A, '--timestamp', A, '--name', 'site'])
  await ok(['trust', 'sign', out, '--key', A])
  const fragment = init.out.trimEnd().split('\n').at(-1).split('#')[1]
  const add = []
  for (let i = 1; i <= 3; i++) {
    const kf = path.join(base, `W${i}.key`)
    await ok(['keygen', kf])
    const o = { name: `w${i}.example/witness`, key: JSON.parse(await fs.readFile(kf, 'utf8')), stateDir: path.join(base, `w${i}`), logs: parseLogList([`rotree/${fragment}=${hex}`]), fsync: false }
    const srv = await createWitness(o)
    const l = await srv.listen({ port: 0 })
    cleanups.push(() => srv.close())
    add.push('--add-witness', `${o.name}=${l.url}=${srv.verifierKey}`)
  }
  await ok(['trust', 'update', out, ...add, '--witness-threshold', '2'])
  await ok(['trust', 'sign', out, '--key', A])
  await ok(['build', src, out, '--key', A, '--no-fsync'])
  const serve = await start(t, ['serve', out, '--port', '0'])
  const addr = `${serve.match[1]}#${fragment}`
  const env = { ROTREE_STATE: path.join(base, 'state') }

  const dest = path.join(base, 'got', 'doc')
  const proof = dest + '.rotree-proof'
  const got = await ok(['get', addr, '/doc', '-o', dest, '--proof', proof], env)
  assert.match(got.err, /proof bundle .*doc\.rotree-proof/)
  const bundle = JSON.parse(await fs.readFile(proof, 'utf8'))
  assert.deepEqual(Object.keys(bundle), ['type', 'version', 'tree', 'path', 'fsinfo', 'trust', 'log', 'pages'])
  assert.equal(bundle.tree, fragment)
  assert.match(bundle.log, /^c2sp\.org\/tlog-proof@v1\nindex \d+\n/)
  assert.equal((bundle.log.match(/^— w\d\.example\/witness /gm) ?? []).length, 3)

  // the download, with the bundle found beside it, and the folder: both pass with no network
  let r = await verify('--key', fragment, dest)
  assert.equal(r.code, 0, r.err)
  assert.match(r.out, /3 fresh witness cosignature/)
  assert.match(r.out, /3 files/)
  r = await verify(dest)
  assert.equal(r.code, 0, r.err)
  assert.match(r.err, /no --key: trust comes from the proof bundle's own tree/)
  r = await verify('--key', fragment, out)
  assert.equal(r.code, 0, r.err)
  assert.match(r.out, /blobs +\d+ hashed/)

  // one file, its bundle the pages on its path only
  const one = path.join(base, 'got', 'index.html')
  await ok(['get', addr, '/index.html', '-o', one, '--proof', one + '.rotree-proof'], env)
  const v1 = await verify('--key', fragment, one); assert.equal(v1.code, 0, v1.err)
  assert.equal((await flip(one, 0, () => verify('--key', fragment, one))).code, 'ROTREE_HASH_MISMATCH')

  // the preload does refuse: the same command online cannot reach the mirror
  const online = await rotree(['ls', addr, '/'], { env: { ...env, ...NO_NET } })
  assert.notEqual(online.code, 0)

  // --at after fsinfo.json expires: the reader's verdict then
  const expires = Date.parse(JSON.parse(await fs.readFile(path.join(out, 'fsinfo.json'), 'utf8')).expires)
  const late = new Date(expires + 3600e3).toISOString()
  assert.equal((await verify('--key', fragment, '--at', late, dest)).code, 'ROTREE_EXPIRED')
  assert.equal((await verify('--key', fragment, '--at', late, out)).code, 'ROTREE_EXPIRED')

  // a downloaded file changed
  assert.equal((await flip(path.join(dest, 'sub', 'b.bin'), 1234, () => verify('--key', fragment, dest))).code, 'ROTREE_HASH_MISMATCH')
  // the folder: a blob, fsinfo.json's signed sequence number, the log's checkpoint
  const blobs = await fs.readdir(path.join(out, 'h'))
  const big = (await Promise.all(blobs.map(async h => [h, (await fs.stat(path.join(out, 'h', h))).size]))).sort((a, b) => b[1] - a[1])[0][0]
  assert.equal((await flip(path.join(out, 'h', big), 10, () => verify('--key', fragment, out))).code, 'ROTREE_HASH_MISMATCH')
  // the last digit of fsinfo.json's own sequence number (the member before "issued")
  const seqDigit = s => { const i = s.lastIndexOf('"seq"', s.indexOf('"issued"')); const m = /[0-9]+/.exec(s.slice(i)); return i + m.index + m[0].length - 1 }
  const fsinfo = await fs.readFile(path.join(out, 'fsinfo.json'), 'latin1')
  assert.equal((await flip(path.join(out, 'fsinfo.json'), seqDigit(fsinfo), () => verify('--key', fragment, out))).code, 'ROTREE_THRESHOLD') // version 2: too few valid timestamp signatures
  const history = path.join(out, 'history', (await fs.readdir(path.join(out, 'history'))).find(n => /^[0-9]+\.json$/.test(n)))
  assert.equal((await flip(history, 100, () => verify('--key', fragment, out))).code, 'ROTREE_SPLIT_VIEW')
  const cp = await fs.readFile(path.join(out, 'log', 'checkpoint'), 'utf8')
  assert.equal((await flip(path.join(out, 'log', 'checkpoint'), cp.indexOf('\n') + 1, () => verify('--key', fragment, out))).code, 'ROTREE_BAD_SIGNATURE')

  // the bundle: its inclusion proof's index, its fsinfo.json, a page; and some bytes anywhere
  const text = await fs.readFile(proof, 'utf8')
  const at = s => Buffer.byteLength(text.slice(0, text.indexOf(s)))
  assert.equal((await flip(proof, at('\\nindex ') + 8, () => verify('--key', fragment, dest))).code, 'ROTREE_SPLIT_VIEW')
  // inside the bundle's parts: fsinfo.json's sequence number, a page's last byte
  for (const [member, code] of [['fsinfo', 'ROTREE_THRESHOLD'], ['pages', 'ROTREE_MIRROR_HTTP']]) {
    const j = JSON.parse(text)
    if (member === 'pages') { const p = Buffer.from(j.pages[0], 'base64'); p[p.length - 1] ^= 1; j.pages[0] = p.toString('base64') } else { const p = Buffer.from(j.fsinfo, 'base64'); p[seqDigit(p.toString('latin1'))] ^= 1; j.fsinfo = p.toString('base64') }
    await fs.writeFile(proof, JSON.stringify(j) + '\n')
    assert.equal((await verify('--key', fragment, dest)).code, code, member)
  }
  await fs.writeFile(proof, text)
  for (const pos of [0, 20, 40, Math.floor(text.length / 3), Math.floor(text.length / 2), text.length - 10]) {
    const v = await flip(proof, pos, () => verify('--key', fragment, dest))
    assert.notEqual(v.code, 0, `a flipped bit at byte ${pos} of the bundle passed`)
  }
  assert.equal((await verify('--key', fragment, dest)).code, 0)
})

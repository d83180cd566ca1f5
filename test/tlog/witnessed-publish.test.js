// Publishing with witnesses (docs/FORMAT.md §13.1): a trust document that
// names three witnesses with threshold 2 (rotree trust update --add-witness
// --witness-threshold), real witnesses on loopback (lib/witness/witness.js),
// and builds that send each new checkpoint to them: log/checkpoint carries
// their cosignatures; one witness down still publishes, two down fail the
// publish before fsinfo.json is replaced, unless --no-witness; a witness back
// after missed publishes catches up through its 409.
import { test, after } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { decodeTrustDoc } from 'rotree-client/format'
import { publicKeyOf } from 'rotree-client/crypto'
import { parseCosignatureVerifierKey, verifyCosignatures, parseCheckpoint } from 'rotree-client/tlog'
import { tmpdir, writeTree } from '../helpers/fixtures.js'
import { rotree } from '../cli/helpers.js'
import { createWitness, parseLogList } from '../../lib/witness/witness.js'

const cleanups = []
after(async () => { for (const c of cleanups.reverse()) await c() })

async function ok (...args) {
  const r = await rotree(args)
  assert.equal(r.code, 0, `rotree ${args.join(' ')}\n${r.err}`)
  return r.out
}

/** A 1-key family (A holds every role), published in out, its origin and A's key. */
export async function family (base) {
  const A = path.join(base, 'A.key')
  const hex = (await ok('keygen', A)).trim()
  const out = path.join(base, 'out')
  const init = await ok('trust', 'init', out, '--root', A, '--release', A, '--timestamp', A, '--name', 'site')
  await ok('trust', 'sign', out, '--key', A)
  const fragment = init.trimEnd().split('\n').at(-1).split('#')[1]
  return { A, hex, out, origin: `rotree/${fragment}`, fragment }
}

/** Three witnesses of `origin` (log key `hex`) on loopback, each stoppable and restartable on its port. */
export async function witnesses (base, origin, hex, n = 3) {
  const ws = []
  for (let i = 1; i <= n; i++) {
    const key = JSON.parse(await fs.readFile(await keyFile(base, `W${i}`), 'utf8'))
    const o = { name: `w${i}.example/witness`, key, stateDir: path.join(base, `w${i}-state`), logs: parseLogList([`${origin}=${hex}`]), fsync: false }
    const w = { o, port: 0 }
    w.start = async () => { w.srv = await createWitness(o); const l = await w.srv.listen({ port: w.port }); w.port = l.port; w.url = l.url; w.vkey = w.srv.verifierKey }
    w.stop = async () => { await w.srv.close(); w.srv = null }
    await w.start()
    cleanups.push(async () => { if (w.srv) await w.stop() })
    ws.push(w)
  }
  return ws
}

async function keyFile (base, name) {
  const f = path.join(base, `${name}.key`)
  await ok('keygen', f)
  return f
}

test('publish with a 2-of-3 witness policy: cosigned, one down is fine, two down fail before fsinfo.json changes, --no-witness', async () => {
  const base = await tmpdir('rotree-witnessed-'); cleanups.push(() => fs.rm(base, { recursive: true, force: true }))
  const src = path.join(base, 'src')
  await writeTree(src, { 'a.txt': 'one\n' })
  const f = await family(base)
  const ws = await witnesses(base, f.origin, f.hex)
  const show = await ok('trust', 'update', f.out, ...ws.flatMap(w => ['--add-witness', `${w.o.name}=${w.url}=${w.vkey}`]), '--witness-threshold', '2')
  assert.match(show, /witnesses 2 of 3/)
  await ok('trust', 'sign', f.out, '--key', f.A)
  const doc = decodeTrustDoc(await fs.readFile(path.join(f.out, 'trust', '2.json')))
  assert.deepEqual(doc.witnesses.list.map(w => w.name), ws.map(w => w.o.name))
  assert.equal(doc.witnesses.threshold, 2)
  const verifiers = ws.map(w => parseCosignatureVerifierKey(w.vkey))
  const checkpoint = () => fs.readFile(path.join(f.out, 'log', 'checkpoint'), 'utf8')
  const cosigned = async () => verifyCosignatures(await checkpoint(), verifiers).map(s => s.name).sort()

  await ok('build', src, f.out, '--key', f.A, '--no-fsync')
  assert.deepEqual(await cosigned(), ws.map(w => w.o.name))

  // one witness down: 2 of 3 still publish
  await ws[0].stop()
  await writeTree(src, { 'a.txt': 'two\n' })
  await ok('build', src, f.out, '--key', f.A, '--no-fsync')
  assert.deepEqual(await cosigned(), [ws[1].o.name, ws[2].o.name])
  const size2 = parseCheckpoint((await checkpoint()).split('\n\n')[0] + '\n').size

  // two down: the publish fails, and nothing a reader sees changed
  await ws[1].stop()
  const before = { fsinfo: await fs.readFile(path.join(f.out, 'fsinfo.json')), checkpoint: await checkpoint() }
  await writeTree(src, { 'a.txt': 'three\n' })
  const r = await rotree(['build', src, f.out, '--key', f.A, '--no-fsync'])
  assert.notEqual(r.code, 0)
  assert.match(r.err, /ROTREE_THRESHOLD/)
  assert.match(r.err, /1 of the 2 witness cosignatures/)
  assert.match(r.err, /fsinfo\.json and log\/checkpoint are unchanged/)
  assert.match(r.err, new RegExp(`${ws[0].o.name.replace('.', '\\.')} \\(http://127\\.0\\.0\\.1:${ws[0].port}\\): ECONNREFUSED`))
  assert.deepEqual(await fs.readFile(path.join(f.out, 'fsinfo.json')), before.fsinfo)
  assert.equal(await checkpoint(), before.checkpoint)

  // --no-witness publishes without asking
  await ok('build', src, f.out, '--key', f.A, '--no-fsync', '--no-witness')
  assert.deepEqual(await cosigned(), [])
  assert.match(await fs.readFile(path.join(f.out, 'fsinfo.json'), 'utf8'), /three|"seq"/)

  // both back: they held sizes 1 and 2; the log is now larger (the failed and the unwitnessed publish
  // are in it, in order), and each catches up from its own size through a 409
  await ws[0].start(); await ws[1].start()
  await writeTree(src, { 'a.txt': 'four\n' })
  await ok('build', src, f.out, '--key', f.A, '--no-fsync')
  assert.deepEqual(await cosigned(), ws.map(w => w.o.name))
  assert.ok(parseCheckpoint((await checkpoint()).split('\n\n')[0] + '\n').size > size2 + 1)
})

test('trust document witnesses: sorted, distinct, threshold within their number, and in the signed message only when there', async () => {
  const { encodeTrustDoc } = await import('rotree-client/format')
  const k = n => publicKeyOf(String(n).padStart(2, '0').repeat(32)) // distinct valid keys from fixed seeds
  const base = { seq: 1, expires: '2030-01-01T00:00:00.000Z', roles: { root: { threshold: 1, keys: [k(1)] }, release: { threshold: 1, keys: [k(1)] }, timestamp: { threshold: 1, keys: [k(1)] } } }
  const plain = decodeTrustDoc(encodeTrustDoc(base))
  assert.equal(plain.witnesses, null)
  assert.doesNotMatch(new TextDecoder().decode(plain.message), /witnesses/)
  const list = [{ name: 'b.example/w', url: 'https://b.example/w', key: k(3) }, { name: 'a.example/w', url: 'http://a.example/w', key: k(2) }]
  const d = decodeTrustDoc(encodeTrustDoc({ ...base, witnesses: { threshold: 2, list } }))
  assert.deepEqual(d.witnesses.list.map(w => w.name), ['a.example/w', 'b.example/w'])
  assert.match(new TextDecoder().decode(d.message), new RegExp(`\nwitnesses 2 a\\.example/w ${k(2)} http://a\\.example/w b\\.example/w ${k(3)} https://b\\.example/w\n$`))
  const json = o => JSON.stringify({ type: 'rotree-trust', version: 2, seq: 1, prev: null, expires: base.expires, roles: base.roles, witnesses: o, signatures: [] })
  for (const bad of [
    { threshold: 3, list: [list[1], list[0]] }, { threshold: 0, list: [list[1]] }, { threshold: 1, list: [] }, { threshold: 1, list: [list[0], list[1]] },
    { threshold: 1, list: [{ ...list[1], name: 'a b' }] }, { threshold: 1, list: [{ ...list[1], name: 'a+b' }] }, { threshold: 1, list: [{ ...list[1], url: 'ftp://x' }] },
    { threshold: 1, list: [list[1], { ...list[0], key: k(2) }] }, { threshold: 1, list: [{ ...list[1], extra: 1 }] }, null
  ]) assert.throws(() => decodeTrustDoc(json(bad)), err => err.code === 'ROTREE_BAD_FORMAT', JSON.stringify(bad))
})

test('reader rule (client-js/src/trust/witnessed.js): 2-of-3 cosigned reads, too few or stale cosignatures and a root outside the log are refused', async () => {
  const { requireWitnessed, MAX_COSIGNATURE_AGE_S } = await import('../../client-js/src/trust/witnessed.js')
  const base = await tmpdir('rotree-witnessed-'); cleanups.push(() => fs.rm(base, { recursive: true, force: true }))
  const src = path.join(base, 'src')
  await writeTree(src, { 'a.txt': 'one\n' })
  const f = await family(base)
  const ws = await witnesses(base, f.origin, f.hex)
  await ok('trust', 'update', f.out, ...ws.flatMap(w => ['--add-witness', `${w.o.name}=${w.url}=${w.vkey}`]), '--witness-threshold', '2')
  await ok('trust', 'sign', f.out, '--key', f.A)
  const doc = decodeTrustDoc(await fs.readFile(path.join(f.out, 'trust', '2.json')))
  for (const s of ['one', 'two', 'three']) { await writeTree(src, { 'a.txt': s }); await ok('build', src, f.out, '--key', f.A, '--no-fsync') }
  const fetched = []
  const fetchFrom = dir => async (p, cap, check) => { fetched.push(p); const b = new Uint8Array(await fs.readFile(path.join(dir, p))); assert.ok(b.length <= cap); return check(b) }
  const fsinfoBytes = new Uint8Array(await fs.readFile(path.join(f.out, 'fsinfo.json')))
  const o = { fsinfoBytes, origin: f.origin, logKeys: [f.hex], witnesses: doc.witnesses, nowMs: Date.now() }
  const r = await requireWitnessed(fetchFrom(f.out), o)
  assert.equal(r.cosigned.length, 3); assert.equal(r.leaf, r.size - 1)
  assert.ok(fetched.length <= 3, fetched.join(', ')) // the checkpoint and one tile (two past 256 leaves)
  // stale: a day and a bit later
  await assert.rejects(requireWitnessed(fetchFrom(f.out), { ...o, nowMs: Date.now() + (MAX_COSIGNATURE_AGE_S + 120) * 1000 }), e => e.code === 'ROTREE_THRESHOLD')
  // too few: a 3-of-3 policy when one witness's line is taken out
  const cp = await fs.readFile(path.join(f.out, 'log', 'checkpoint'), 'utf8')
  const one = path.join(base, 'one'); await fs.cp(path.join(f.out, 'log'), path.join(one, 'log'), { recursive: true })
  await fs.writeFile(path.join(one, 'log', 'checkpoint'), cp.split('\n').filter(l => !l.startsWith(`— ${ws[0].o.name} `) && !l.startsWith(`— ${ws[1].o.name} `)).join('\n'))
  await assert.rejects(requireWitnessed(fetchFrom(one), o), e => e.code === 'ROTREE_THRESHOLD' && /1 fresh cosignature from/.test(e.message))
  // an fsinfo.json the log does not hold (another view signed by the same key): a split view
  const other = new Uint8Array(await fs.readFile(path.join(f.out, 'history', (await fs.readdir(path.join(f.out, 'history'))).find(n => /^\d+\.json$/.test(n)))))
  await requireWitnessed(fetchFrom(f.out), { ...o, fsinfoBytes: other }) // an older root of the log is in it
  const forged = new TextEncoder().encode(new TextDecoder().decode(fsinfoBytes).replace('"seq": ', '"seq": 1'))
  await assert.rejects(requireWitnessed(fetchFrom(f.out), { ...o, fsinfoBytes: forged }), e => e.code === 'ROTREE_SPLIT_VIEW')
})

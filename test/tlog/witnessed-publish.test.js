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
  let fetched = []
  const fetchFrom = dir => async (p, cap, check) => { fetched.push(p); const b = new Uint8Array(await fs.readFile(path.join(dir, p))); assert.ok(b.length <= cap); return check(b) }
  const fsinfoOf = async dir => new Uint8Array(await fs.readFile(path.join(dir, 'fsinfo.json')))
  const o = { origin: f.origin, logKeys: [f.hex], witnesses: doc.witnesses, nowMs: Date.now() }
  // the checkpoint a reader kept one publish in (size 1), the log as it was then
  await ok('build', src, f.out, '--key', f.A, '--no-fsync')
  const first = await requireWitnessed(fetchFrom(f.out), { ...o, fsinfoBytes: await fsinfoOf(f.out) })
  const logAt1 = path.join(base, 'log-at-1'); await fs.cp(f.out, logAt1, { recursive: true })
  for (const s of ['two', 'three']) { await writeTree(src, { 'a.txt': s }); await ok('build', src, f.out, '--key', f.A, '--no-fsync') }
  const fsinfoBytes = await fsinfoOf(f.out)
  Object.assign(o, { fsinfoBytes })
  fetched = []
  const r = await requireWitnessed(fetchFrom(f.out), o)
  assert.equal(r.cosigned.length, 3); assert.equal(r.leaf, r.size - 1); assert.equal(r.size, first.size + 2)
  assert.deepEqual(fetched, ['log/fsinfo.proof']) // one request: the proof of this fsinfo.json in the cosigned checkpoint
  // a kept checkpoint of the same size and hash: nothing more; a smaller one: the consistency tiles, never log/checkpoint
  fetched = []
  assert.deepEqual(await requireWitnessed(fetchFrom(f.out), { ...o, kept: { size: r.size, hash: r.hash } }), r)
  assert.deepEqual(fetched, ['log/fsinfo.proof'])
  fetched = []
  assert.deepEqual(await requireWitnessed(fetchFrom(f.out), { ...o, kept: { size: first.size, hash: first.hash } }), r)
  assert.equal(fetched[0], 'log/fsinfo.proof'); assert.ok(fetched.length >= 2 && fetched.slice(1).every(p => p.startsWith('log/tile/')), fetched.join(', '))
  // a kept checkpoint this log does not extend (another root hash at that size): a fork
  const other = { size: first.size, hash: first.hash.replace(/^./, c => c === '0' ? '1' : '0') }
  await assert.rejects(requireWitnessed(fetchFrom(f.out), { ...o, kept: other }), e => e.code === 'ROTREE_SPLIT_VIEW' && /does not extend the checkpoint of size 1/.test(e.message))
  await assert.rejects(requireWitnessed(fetchFrom(f.out), { ...o, kept: { size: r.size, hash: other.hash } }), e => e.code === 'ROTREE_SPLIT_VIEW' && /does not extend/.test(e.message))
  // a kept checkpoint larger than the proof's: log/checkpoint decides, and it is behind as well
  fetched = []
  await assert.rejects(requireWitnessed(fetchFrom(f.out), { ...o, kept: { size: r.size + 5, hash: r.hash } }), e => e.code === 'ROTREE_ROLLBACK')
  assert.deepEqual(fetched, ['log/fsinfo.proof', 'log/checkpoint'])
  // stale: a day and a bit later (the proof's cosignatures, then the checkpoint's: the same)
  await assert.rejects(requireWitnessed(fetchFrom(f.out), { ...o, nowMs: Date.now() + (MAX_COSIGNATURE_AGE_S + 120) * 1000 }), e => e.code === 'ROTREE_THRESHOLD')

  // the proof set aside, the checkpoint and tiles decide as before it existed
  const copy = async (name, edit) => {
    const d = path.join(base, name); await fs.cp(path.join(f.out, 'log'), path.join(d, 'log'), { recursive: true })
    if (edit) await edit(d)
    return d
  }
  const proofText = await fs.readFile(path.join(f.out, 'log', 'fsinfo.proof'), 'utf8')
  const cpText = await fs.readFile(path.join(f.out, 'log', 'checkpoint'), 'utf8')
  const drop = (text, names) => text.split('\n').filter(l => !names.some(n => l.startsWith(`— ${n} `))).join('\n')
  const flipCosignature = text => text.replace(new RegExp(`(— ${ws[0].o.name} )(.)`), (m, a, c) => a + (c === 'A' ? 'B' : 'A'))
  const honestFallbacks = {
    absent: d => fs.rm(path.join(d, 'log', 'fsinfo.proof')),
    truncated: d => fs.writeFile(path.join(d, 'log', 'fsinfo.proof'), proofText.slice(0, proofText.indexOf('\n\n') + 40)),
    'for another fsinfo.json': d => fs.copyFile(path.join(logAt1, 'log', 'fsinfo.proof'), path.join(d, 'log', 'fsinfo.proof')),
    'a bad cosignature, too few left': d => fs.writeFile(path.join(d, 'log', 'fsinfo.proof'), flipCosignature(drop(proofText, [ws[1].o.name]))),
    'not a tlog-proof': d => fs.writeFile(path.join(d, 'log', 'fsinfo.proof'), 'hello\n')
  }
  for (const [name, edit] of Object.entries(honestFallbacks)) {
    const d = await copy(name.replace(/\W+/g, '-'), edit)
    fetched = []
    const got = await requireWitnessed(fetchFrom(d), o)
    assert.deepEqual({ size: got.size, hash: got.hash, leaf: got.leaf }, { size: r.size, hash: r.hash, leaf: r.leaf }, name)
    assert.deepEqual(fetched.slice(0, 2), ['log/fsinfo.proof', 'log/checkpoint'], name)
    // and with the checkpoint lying alike, the checkpoint's verdict
    const few = await copy(name.replace(/\W+/g, '-') + '-few', async d2 => { await edit(d2); await fs.writeFile(path.join(d2, 'log', 'checkpoint'), drop(cpText, [ws[0].o.name, ws[1].o.name])) })
    await assert.rejects(requireWitnessed(fetchFrom(few), o), e => e.code === 'ROTREE_THRESHOLD' && /^log\/checkpoint: 1 fresh cosignature from/.test(e.message), name)
  }
  // too few: a liar drops two witnesses' lines from the checkpoint and from the proof
  const one = await copy('one', async d => {
    await fs.writeFile(path.join(d, 'log', 'checkpoint'), drop(cpText, [ws[0].o.name, ws[1].o.name]))
    await fs.writeFile(path.join(d, 'log', 'fsinfo.proof'), drop(proofText, [ws[0].o.name, ws[1].o.name]))
  })
  await assert.rejects(requireWitnessed(fetchFrom(one), o), e => e.code === 'ROTREE_THRESHOLD' && /1 fresh cosignature from/.test(e.message))
  // an fsinfo.json the log does not hold (another view signed by the same key): a split view
  const older = new Uint8Array(await fs.readFile(path.join(f.out, 'history', (await fs.readdir(path.join(f.out, 'history'))).find(n => /^\d+\.json$/.test(n)))))
  await requireWitnessed(fetchFrom(f.out), { ...o, fsinfoBytes: older }) // an older root of the log is in it
  const forged = new TextEncoder().encode(new TextDecoder().decode(fsinfoBytes).replace('"seq": ', '"seq": 1'))
  await assert.rejects(requireWitnessed(fetchFrom(f.out), { ...o, fsinfoBytes: forged }), e => e.code === 'ROTREE_SPLIT_VIEW' && /not in the log/.test(e.message))
})

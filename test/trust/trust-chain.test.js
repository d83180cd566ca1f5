// The trust chain of client-js/src/trust/trust-chain.js on its own, without
// a network: walkChain over made-up sources, and TrustChain over a Mirrors
// whose transport answers from memory, with its state in memory
// (SeqStore(null)). docs/TRUST.md rules 10, 13 and 14; FORMAT.md §12.2 (each
// document names the one before it, signed by the old and the new root
// threshold) and §12.9 step 4 (the probe of trust/<known + 1>.json, each
// accepted document persisted at once, at most MAX_TRUST_STEPS per refresh).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import {
  walkChain, firstTrustSource, mirrorTrustSource, TrustChain, SeqStore, trustAnchorOf, trustHash, anchorText,
  checkNotRetired, verifyFsinfoV2, advanceState, MAX_TRUST_STEPS
} from 'rotree-client/trust'
import { checkFreshness } from 'rotree-client/verify'
import { Mirrors } from 'rotree-client/fetch'
import { encodeTrustDoc } from 'rotree-client/format'
import { MirrorHttpError } from 'rotree-client/errors'
import { folderTrustSource } from '../../lib/published/signed-roots.js'
import { keys, role, trustDoc, fsinfo, T0 } from './helpers.js'

const code = c => err => { assert.equal(err.code, c, err.message); return true }
const clock = { now: T0 + 3600e3, skewMs: 300e3, graceMs: 0, checkFreshness }
const bytesOf = doc => Buffer.from(encodeTrustDoc(doc)) // the JSON a mirror serves for a decoded document
const RETIRED = { threshold: 0, keys: [] }

/**
 * A family of three documents: 1 certified by the anchor (`kind` 'key': the
 * address key K signs it; 'trust': the address names its hash), 2 rotates
 * the root from A, B to B, C (2 of 2 each), 3 keeps B, C.
 */
function family (kind = 'trust') {
  const [K, A, B, C, D, R, T] = keys(7)
  const rel = role([R])
  const ts = role([T])
  const d1 = trustDoc({ seq: 1, prev: null, root: role([A, B], 2), release: rel, timestamp: ts }, kind === 'key' ? [K, A, B] : [A, B])
  const d2 = trustDoc({ seq: 2, prev: d1, root: role([B, C], 2), release: rel, timestamp: ts }, [A, B, C])
  const d3 = trustDoc({ seq: 3, prev: d2, root: role([B, C], 2), release: rel, timestamp: ts }, [B, C])
  const anchor = kind === 'key' ? { kind: 'key', key: K.publicKey } : { kind: 'trust', hash: trustAnchorOf(d1).slice(1) }
  return { K, A, B, C, D, R, T, rel, ts, d1, d2, d3, anchor, id: anchorText(anchor) }
}

/** A TrustSource over decoded documents by seq, recording what it was asked. */
function memSource (docs) {
  const byN = new Map(docs.map(d => [d.seq, d]))
  const src = {
    asked: [],
    get (n, accept) {
      src.asked.push(n)
      return Promise.resolve(byN.has(n) ? accept(bytesOf(byN.get(n))) : null)
    }
  }
  return src
}

/**
 * Mirrors at http://m0/, http://m1/, … each serving `trust/<n>.json` from its
 * own map (a document, raw bytes, or a function of n; nothing: 404). `asked`
 * lists every URL requested, in order.
 */
function fakeMirrors (t, ...serving) {
  const asked = []
  const urls = serving.map((_, i) => `http://m${i}/`)
  const transport = {
    async get (url) {
      asked.push(url)
      const i = urls.findIndex(u => url.startsWith(u))
      const m = /trust\/(\d+)\.json$/.exec(url)
      const s = serving[i]
      const got = m ? (typeof s === 'function' ? s(Number(m[1])) : s.get(Number(m[1]))) : undefined
      if (got === undefined || got === null) throw new MirrorHttpError(`${url}: HTTP 404`, { details: { status: 404 } })
      return got instanceof Uint8Array ? got : bytesOf(got)
    }
  }
  const mirrors = new Mirrors(urls, { transport, timeoutMs: 5000 })
  t.after(() => mirrors.close())
  return { mirrors, asked, faults: () => mirrors.health().map(h => h.faults), lastFault: i => mirrors.health()[i].lastFault?.code }
}
const serve = (...docs) => new Map(docs.map(d => [d.seq, d]))

function chainOf (f, mirrors, state = new SeqStore(null)) {
  return new TrustChain({ anchor: f.anchor, id: f.id, mirrors, state })
}

const sameDoc = (got, want) => {
  assert.equal(got.seq, want.seq)
  assert.equal(trustHash(got), trustHash(want))
}

// give fetchAll's requests still out (a mirror that lost the race) their turn
const settle = () => new Promise(resolve => setImmediate(resolve))

for (const kind of ['key', 'trust']) {
  test(`a chain 1 → 2 → 3 from a ${kind} anchor, accepted one document at a time`, async t => {
    const f = family(kind)
    const src = memSource([f.d1, f.d2, f.d3])
    const steps = []
    const last = await walkChain(src, { anchor: f.anchor, onStep: d => { steps.push(d.seq) } })
    sameDoc(last, f.d3)
    assert.deepEqual(steps, [1, 2, 3])
    assert.deepEqual(src.asked, [1, 2, 3, 4], 'on until the source has no next document')
    assert.equal(last.text, encodeTrustDoc(f.d3), 'the JSON text it was accepted from')
    assert.deepEqual(Buffer.from(last.bytes), bytesOf(f.d3))

    // from a trusted document, up to a named one: only the documents between are asked for
    const partial = memSource([f.d1, f.d2, f.d3])
    const d1 = await walkChain(partial, { anchor: f.anchor, to: 1 })
    const d2 = await walkChain(partial, { anchor: f.anchor, from: d1, to: 2 })
    sameDoc(d2, f.d2)
    assert.deepEqual(partial.asked, [1, 2])
    assert.equal(await walkChain(partial, { anchor: f.anchor, from: d2, to: 2 }), d2, 'nothing to walk: `from` is the answer')

    // the reader's TrustChain, through the mirrors: each step persisted
    const { mirrors } = fakeMirrors(t, serve(f.d1, f.d2, f.d3))
    const state = new SeqStore(null)
    const chain = chainOf(f, mirrors, state)
    sameDoc(await chain.reach(1), f.d1)
    assert.equal((await state.get(f.id)).trust.seq, 1)
    sameDoc(await chain.reach(3), f.d3)
    const rec = await state.get(f.id)
    assert.deepEqual(rec.trust, { seq: 3, hash: trustHash(f.d3) })
    assert.equal(rec.trustDoc, encodeTrustDoc(f.d3))
    assert.equal(rec.release, null, 'only a trust document accepted yet')
  })
}

test('a document whose prev does not name the one before is another family\'s (ROTREE_WRONG_KEY)', async t => {
  const f = family()
  // signed by every root key the step needs, but naming another predecessor
  const stray = trustDoc({ seq: 2, prev: 'ab'.repeat(32), root: role([f.B, f.C], 2), release: f.rel, timestamp: f.ts }, [f.A, f.B, f.C])
  const steps = []
  await assert.rejects(walkChain(memSource([f.d1, stray]), { anchor: f.anchor, onStep: d => { steps.push(d.seq) } }), code('ROTREE_WRONG_KEY'))
  assert.deepEqual(steps, [1], 'document 1 was accepted before the refusal')

  // through the mirrors: every mirror's answer refused, each for that reason; document 1 stays persisted
  const { mirrors } = fakeMirrors(t, serve(f.d1, stray), serve(f.d1, stray))
  const state = new SeqStore(null)
  const chain = chainOf(f, mirrors, state)
  await assert.rejects(chain.reach(2), err => {
    assert.equal(err.code, 'ROTREE_ALL_MIRRORS_FAILED', err.message)
    assert.deepEqual(err.errors.map(e => e.code), ['ROTREE_WRONG_KEY', 'ROTREE_WRONG_KEY'])
    return true
  })
  assert.equal(chain.doc.seq, 1)
  assert.equal((await state.get(f.id)).trust.seq, 1)

  // a mirror that files document 3 as trust/2.json is refused too
  const misfiled = { get: async (n, accept) => accept(bytesOf(n === 1 ? f.d1 : f.d3)) }
  await assert.rejects(walkChain(misfiled, { anchor: f.anchor, to: 2 }), code('ROTREE_BAD_FORMAT'))
})

test('a step below the old root threshold, or below its own, is ROTREE_THRESHOLD', async () => {
  const f = family()
  // the new root C, D signs, but only one of document 1's A, B
  const oneOld = trustDoc({ seq: 2, prev: f.d1, root: role([f.C, f.D], 2), release: f.rel, timestamp: f.ts }, [f.A, f.C, f.D])
  await assert.rejects(walkChain(memSource([f.d1, oneOld]), { anchor: f.anchor }), code('ROTREE_THRESHOLD'))
  // both old keys sign, but only one of its own
  const oneNew = trustDoc({ seq: 2, prev: f.d1, root: role([f.C, f.D], 2), release: f.rel, timestamp: f.ts }, [f.A, f.B, f.C])
  await assert.rejects(walkChain(memSource([f.d1, oneNew]), { anchor: f.anchor }), code('ROTREE_THRESHOLD'))
  // a signature entry repeated does not count twice (rule 11)
  const twice = trustDoc({ seq: 2, prev: f.d1, root: role([f.C, f.D], 2), release: f.rel, timestamp: f.ts }, [f.A, f.A, f.C, f.D])
  await assert.rejects(walkChain(memSource([f.d1, twice]), { anchor: f.anchor }), code('ROTREE_THRESHOLD'))
  // with both thresholds the same rotation is taken
  const both = trustDoc({ seq: 2, prev: f.d1, root: role([f.C, f.D], 2), release: f.rel, timestamp: f.ts }, [f.A, f.B, f.C, f.D])
  sameDoc(await walkChain(memSource([f.d1, both]), { anchor: f.anchor }), both)
})

test('another family\'s document 1 is not the one the address certifies (ROTREE_THRESHOLD); its document 2 does not follow ours (ROTREE_WRONG_KEY)', async () => {
  const f = family('trust')
  const g = family('trust')
  await assert.rejects(walkChain(memSource([g.d1]), { anchor: f.anchor }), code('ROTREE_THRESHOLD'))
  // at a key address: a document 1 the address key did not sign
  const k = family('key')
  const unsigned = trustDoc({ seq: 1, prev: null, root: role([k.A, k.B], 2), release: k.rel, timestamp: k.ts }, [k.A, k.B])
  await assert.rejects(walkChain(memSource([unsigned]), { anchor: k.anchor }), code('ROTREE_THRESHOLD'))
  await assert.rejects(walkChain(memSource([f.d1]), { anchor: k.anchor }), code('ROTREE_THRESHOLD'))
  // one organisation's root keys over two families: the other family's
  // document 2 is signed by our root keys, but names its own document 1
  const [A, B, R, T] = keys(4)
  const F1 = trustDoc({ seq: 1, prev: null, root: role([A, B], 2), release: role([R]), timestamp: role([T]), expires: T0 + 400 * 86400e3 }, [A, B])
  const G1 = trustDoc({ seq: 1, prev: null, root: role([A, B], 2), release: role([R]), timestamp: role([T]), expires: T0 + 500 * 86400e3 }, [A, B])
  const G2 = trustDoc({ seq: 2, prev: G1, root: role([A, B], 2), release: role([R]), timestamp: role([T]) }, [A, B])
  const F = { kind: 'trust', hash: trustAnchorOf(F1).slice(1) }
  await assert.rejects(walkChain(memSource([F1, G2]), { anchor: F }), code('ROTREE_WRONG_KEY'))
  sameDoc(await walkChain(memSource([G1, G2]), { anchor: { kind: 'trust', hash: trustAnchorOf(G1).slice(1) } }), G2)
})

test('two documents numbered 2, both signed by the root keys: the second reader to persist one is refused (ROTREE_FORK)', async t => {
  const f = family()
  const fork = trustDoc({ seq: 2, prev: f.d1, root: role([f.B, f.C], 2), release: f.rel, timestamp: role([f.D]) }, [f.A, f.B, f.C])
  assert.notEqual(trustHash(fork), trustHash(f.d2))
  const state = new SeqStore(null) // one reader state, two trees on it (or two processes)
  const x = chainOf(f, fakeMirrors(t, serve(f.d1, f.d2)).mirrors, state)
  const y = chainOf(f, fakeMirrors(t, serve(f.d1, fork)).mirrors, state)
  await y.reach(1)
  await x.reach(2)
  await assert.rejects(y.reach(2), code('ROTREE_FORK'))
  assert.equal(y.doc.seq, 1, 'the forked document is not taken up')
  assert.deepEqual((await state.get(f.id)).trust, { seq: 2, hash: trustHash(f.d2) }, 'nor written')
  // the state's own document is what a reader takes from then on
  sameDoc(await y.load(), f.d2)
  sameDoc(await chainOf(f, fakeMirrors(t, serve(f.d1, fork)).mirrors, state).load(), f.d2)
})

test('the probe of trust/<known + 1>.json: a 404 from every mirror is "nothing new", not a fault', async t => {
  const f = family()
  const m = fakeMirrors(t, serve(), serve())
  const chain = chainOf(f, m.mirrors)
  assert.equal(await chain.probe(), null)
  assert.deepEqual(m.asked.sort(), ['http://m0/trust/1.json', 'http://m1/trust/1.json'])
  assert.deepEqual(m.faults(), [0, 0])

  const known = fakeMirrors(t, serve(f.d1), serve(f.d1))
  const reader = chainOf(f, known.mirrors)
  await reader.reach(1)
  known.asked.length = 0
  sameDoc(await reader.probe(), f.d1)
  assert.deepEqual(known.asked.sort(), ['http://m0/trust/2.json', 'http://m1/trust/2.json'], 'only the next one is asked for')
  assert.deepEqual(known.faults(), [0, 0])
})

test('the probe with one mirror lying and one honest: the honest chain is walked to its end, the liar is a fault', async t => {
  const f = family()
  const bad = trustDoc({ seq: 2, prev: f.d1, root: role([f.C, f.D], 2), release: f.rel, timestamp: f.ts }, [f.C, f.D]) // no old root key
  // the liar has a document 2 of its own; the honest mirror has 2 and 3
  const m = fakeMirrors(t, serve(f.d1, bad), serve(f.d1, f.d2, f.d3))
  const state = new SeqStore(null)
  const chain = chainOf(f, m.mirrors, state)
  await chain.reach(1)
  sameDoc(await chain.probe(), f.d3)
  assert.deepEqual((await state.get(f.id)).trust, { seq: 3, hash: trustHash(f.d3) }, 'persisted as it was walked')
  await settle()
  assert.equal(m.faults()[1], 0)
  assert.equal(m.lastFault(0), 'ROTREE_THRESHOLD')

  // the liar alone has a "next" document and the honest mirror says 404: nothing new, and no error
  const n = fakeMirrors(t, serve(f.d1, bad), serve(f.d1))
  const lone = chainOf(f, n.mirrors)
  await lone.reach(1)
  sameDoc(await lone.probe(), f.d1)
  assert.deepEqual(n.faults(), [1, 0])
  assert.equal(n.lastFault(0), 'ROTREE_THRESHOLD')
  // a mirror that files document 3 as trust/2.json is a fault as well
  const w = fakeMirrors(t, serve(f.d1), n0 => n0 === 1 ? f.d1 : n0 === 2 ? f.d3 : null)
  const misfiled = chainOf(f, w.mirrors)
  await misfiled.reach(1)
  sameDoc(await misfiled.probe(), f.d1)
  assert.equal(w.lastFault(1), 'ROTREE_BAD_FORMAT')
})

test('reach() through a lying mirror asks the next one (docs/TRUST.md rule 4)', async t => {
  const f = family()
  const bad = trustDoc({ seq: 2, prev: f.d1, root: role([f.C, f.D], 2), release: f.rel, timestamp: f.ts }, [f.C, f.D])
  const m = fakeMirrors(t, serve(f.d1, bad), serve(f.d1, f.d2))
  const chain = chainOf(f, m.mirrors)
  sameDoc(await chain.reach(2), f.d2)
  // with nothing measured yet the scheduler asks the mirrors in their order (sched.js): the liar first
  assert.deepEqual(m.asked, ['http://m0/trust/1.json', 'http://m0/trust/2.json', 'http://m1/trust/2.json'])
  assert.deepEqual(m.faults(), [1, 0])
  assert.equal(m.lastFault(0), 'ROTREE_THRESHOLD')
})

test('a retiring document is persisted and refuses the tree, across restarts (ROTREE_RETIRED)', async t => {
  const f = family()
  const retire = trustDoc({ seq: 2, prev: f.d1, root: role([f.A, f.B], 2), release: RETIRED, timestamp: f.ts }, [f.A, f.B])
  const state = new SeqStore(null)
  const chain = chainOf(f, fakeMirrors(t, serve(f.d1, retire)).mirrors, state)
  checkNotRetired(await chain.reach(1))
  sameDoc(await chain.reach(2), retire)
  assert.throws(() => checkNotRetired(chain.doc), code('ROTREE_RETIRED'))
  // a restart whose mirrors serve nothing at all: the retirement stands
  const restarted = chainOf(f, fakeMirrors(t, serve(), serve()).mirrors, state)
  sameDoc(await restarted.probe(), retire)
  assert.throws(() => checkNotRetired(restarted.doc), code('ROTREE_RETIRED'))

  // a reader that only probes (no fsinfo.json names document 2) learns of it too, and keeps it
  const probeState = new SeqStore(null)
  const prober = chainOf(f, fakeMirrors(t, serve(f.d1, retire)).mirrors, probeState)
  await prober.probe()
  assert.throws(() => checkNotRetired(prober.doc), code('ROTREE_RETIRED'))
  assert.equal((await probeState.get(f.id)).trust.seq, 2)
})

test('persisted state: a reader that trusts document 2 never goes back to 1, and judges an fsinfo.json under 1 as behind', async t => {
  const f = family()
  const state = new SeqStore(null)
  await chainOf(f, fakeMirrors(t, serve(f.d1, f.d2)).mirrors, state).reach(2)

  // restarted, against a mirror whose chain ends at document 1
  const stale = fakeMirrors(t, serve(f.d1))
  const chain = chainOf(f, stale.mirrors, state)
  sameDoc(await chain.load(), f.d2)
  sameDoc(await chain.reach(1), f.d2)
  sameDoc(await chain.probe(), f.d2)
  assert.deepEqual(stale.asked, ['http://m0/trust/3.json'], 'documents 1 and 2 are never fetched again')
  // what that mirror's chain vouches for, an fsinfo.json under document 1, is refused as a rollback (rule 13)
  const under1 = fsinfo({ trust: f.d1 }, { tsSigners: [f.T], relSigners: [f.R] })
  assert.throws(() => verifyFsinfoV2(under1, { anchor: f.anchor, name: '', trust: chain.doc, ...clock }), code('ROTREE_ROLLBACK'))
  const seen = await state.get(f.id)
  assert.throws(() => advanceState(seen, under1, f.d1.roles), code('ROTREE_ROLLBACK'))

  // a reader that loaded document 1 before another one persisted 3 walks to 2, but never writes it over 3
  const behind = chainOf(f, fakeMirrors(t, serve(f.d1, f.d2, f.d3)).mirrors, new SeqStore(null))
  await behind.reach(1)
  behind.state = state
  await chainOf(f, fakeMirrors(t, serve(f.d1, f.d2, f.d3)).mirrors, state).reach(3)
  await behind.reach(2)
  assert.deepEqual((await state.get(f.id)).trust, { seq: 3, hash: trustHash(f.d3) })
  sameDoc(await behind.load(), f.d3)

  // nor does a state rewound under it (another process, a restored backup) take a reader back
  const older = new SeqStore(null)
  await chainOf(f, fakeMirrors(t, serve(f.d1)).mirrors, older).reach(1)
  state.memory.set(f.id, await older.get(f.id))
  sameDoc(await behind.load(), f.d3)
  sameDoc(await behind.reach(1), f.d3)
})

test('persisted state that does not hold the document it records is ROTREE_STATE, not "nothing seen"', async t => {
  const f = family()
  const state = new SeqStore(null)
  await state.update(f.id, () => ({ v: 2, trust: { seq: 2, hash: trustHash(f.d1) }, trustDoc: encodeTrustDoc(f.d2), release: null, timestamp: null }))
  await assert.rejects(chainOf(f, fakeMirrors(t, serve()).mirrors, state).load(), code('ROTREE_STATE'))
  const garbled = new SeqStore(null)
  await garbled.update(f.id, () => ({ v: 2, trust: { seq: 2, hash: trustHash(f.d2) }, trustDoc: '{"type":"rotree-trust"', release: null, timestamp: null }))
  await assert.rejects(chainOf(f, fakeMirrors(t, serve()).mirrors, garbled).load(), code('ROTREE_STATE'))
})

/**
 * A single-key family whose chain never ends: document n, made on demand,
 * follows n − 1. Past 3 × MAX_TRUST_STEPS it throws a plain Error, so a walk
 * that lost its bound fails the test instead of running forever.
 */
function endless () {
  const [A] = keys(1)
  const r = role([A])
  const docs = [null]
  const at = n => {
    if (n > 3 * MAX_TRUST_STEPS) throw new Error(`trust/${n}.json asked for: the walk is not bounded`)
    while (docs.length <= n) docs.push(trustDoc({ seq: docs.length, prev: docs.at(-1), root: r, release: r, timestamp: r }, [A]))
    return docs[n]
  }
  const anchor = { kind: 'key', key: A.publicKey }
  return { at, anchor, id: anchorText(anchor) }
}

test(`bounded: a source that never ends stops at MAX_TRUST_STEPS (${MAX_TRUST_STEPS}) documents per refresh`, async t => {
  const e = endless()
  // the probe walks on while a mirror has the next one: at most MAX_TRUST_STEPS, then it stops without an error
  const m = fakeMirrors(t, n => e.at(n))
  const state = new SeqStore(null)
  const chain = new TrustChain({ anchor: e.anchor, id: e.id, mirrors: m.mirrors, state })
  assert.equal((await chain.probe()).seq, MAX_TRUST_STEPS)
  assert.equal(m.asked.length, MAX_TRUST_STEPS)
  assert.equal(m.asked.at(-1), `http://m0/trust/${MAX_TRUST_STEPS}.json`)
  assert.equal((await state.get(e.id)).trust.seq, MAX_TRUST_STEPS)
  // the next refresh goes on from there
  assert.equal((await chain.probe()).seq, 2 * MAX_TRUST_STEPS)

  // reach() to a document further than that: what it walked is persisted, and it fails; the next call continues
  const far = new TrustChain({ anchor: e.anchor, id: e.id, mirrors: fakeMirrors(t, n => e.at(n)).mirrors, state: new SeqStore(null) })
  const target = MAX_TRUST_STEPS + 10
  await assert.rejects(far.reach(target), code('ROTREE_BAD_FORMAT'))
  assert.equal(far.doc.seq, MAX_TRUST_STEPS)
  assert.equal((await far.state.get(e.id)).trust.seq, MAX_TRUST_STEPS)
  assert.equal((await far.reach(target)).seq, target)

  // walkChain itself is bounded by what its caller gives it
  const src = { asked: 0, get (n, accept) { src.asked++; return Promise.resolve(accept(bytesOf(e.at(n)))) } }
  assert.equal((await walkChain(src, { anchor: e.anchor, maxSteps: 5 })).seq, 5)
  assert.equal(src.asked, 5)
})

test('firstTrustSource: a folder\'s own copy first, the mirrors for a damaged or missing one; the last source\'s refusal is the error', async t => {
  const f = family()
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'rotree-trust-chain-'))
  t.after(() => fs.rm(dir, { recursive: true, force: true }))
  await fs.mkdir(path.join(dir, 'trust'))
  await fs.writeFile(path.join(dir, 'trust', '1.json'), bytesOf(f.d1))
  await fs.writeFile(path.join(dir, 'trust', '2.json'), bytesOf(f.d2).subarray(0, 40)) // damaged
  await fs.symlink(path.join(dir, 'elsewhere.json'), path.join(dir, 'trust', '3.json')) // not a regular file: not read
  await fs.writeFile(path.join(dir, 'elsewhere.json'), bytesOf(f.d3))

  const folder = folderTrustSource(dir)
  const m = fakeMirrors(t, serve(f.d1, f.d2, f.d3))
  const got = []
  const both = firstTrustSource(folder, mirrorTrustSource(m.mirrors))
  const last = await walkChain(both, { anchor: f.anchor, to: 3, onStep: d => { got.push([d.seq, d.source]) } })
  sameDoc(last, f.d3)
  assert.deepEqual(got, [[1, 0], [2, 1], [3, 1]])
  assert.ok(!m.asked.includes('http://m0/trust/1.json'), 'the folder\'s good copy is not fetched')
  // the mirrors are asked for documents something signed names: one no mirror has is a fault, not the end
  await assert.rejects(walkChain(both, { anchor: f.anchor, from: last, to: 4 }), code('ROTREE_ALL_MIRRORS_FAILED'))

  // only the folder, a damaged copy: its refusal is the error
  await assert.rejects(walkChain(folder, { anchor: f.anchor }), code('ROTREE_BAD_FORMAT'))
  // the mirrors refuse too: their error, not the folder's
  const stray = trustDoc({ seq: 2, prev: 'cd'.repeat(32), root: role([f.B, f.C], 2), release: f.rel, timestamp: f.ts }, [f.A, f.B, f.C])
  await assert.rejects(walkChain(firstTrustSource(folder, memSource([f.d1, stray])), { anchor: f.anchor }), code('ROTREE_WRONG_KEY'))
  // an error that is no verdict (a bug, an I/O failure) is not papered over by the next source
  const broken = { get: () => Promise.reject(new TypeError('boom')) }
  await assert.rejects(walkChain(firstTrustSource(broken, memSource([f.d1])), { anchor: f.anchor }), TypeError)
})

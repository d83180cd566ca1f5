// docs/SECURITY.md, the matrix: every lie × every reader. With only the lying mirror, the read
// fails with the documented code and hands out no unverified byte (a stream
// or stdout may have carried a verified prefix; nothing else), and leaves no
// file behind; with an honest mirror beside the liar, it succeeds with the
// true bytes (unless the lie is a validly signed bad tree, which no mirror can
// fix). The lies of lies.js are about a version-1 tree, those of lies-v2.js
// about a version-2 tree with roles, thresholds and a rotated trust document
// (fixture-v2.js). The results are written into docs/SECURITY.md.
import { test, after } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { openTree } from 'rotree-client'
import { startLyingServer } from '../helpers/lying-server.js'
import { serve, address, tmpdir } from '../helpers/fixtures.js'
import { makeFixture, TARGET } from './fixture.js'
import { LIES } from './lies.js'
import { makeFixtureV2, TARGET_V2 } from './fixture-v2.js'
import { LIES_V2 } from './lies-v2.js'
import { READERS as ALL_READERS } from './readers.js'
import { needs } from '../helpers/tools.js'
import { closeBrowserReader, browserReader } from './browser-reader.js'
import { writeSecurityDoc } from './security-doc.js'

// without Chromium every Node reader still runs; the browser's column is skipped in one line
const NO_BROWSER = needs('chromium')
const READERS = NO_BROWSER ? ALL_READERS.filter(r => r !== browserReader) : ALL_READERS

const TIMEOUT_S = 1
const ALL_LIES = [...LIES, ...LIES_V2]
const fx = await makeFixture()
const fx2 = await makeFixtureV2()
const honest = await serve(fx.out)
const honest2 = await serve(fx2.out)
const honestE = await serve(fx2.outE)
const results = []
after(async () => {
  await closeBrowserReader()
  await honest.close(); await honest2.close(); await honestE.close()
  await fx.cleanup(); await fx2.cleanup()
  // SECURITY.md is written only from a run of every reader, the browser's included
  if (READERS.length === ALL_READERS.length && results.length === ALL_LIES.length * READERS.length) await writeSecurityDoc(results, { readers: READERS.map(r => r.id), lies: ALL_LIES })
})

// the trees the lies are about: version 1 at #<key>, version 2 (fixture-v2.js) at
// #t<hash>:stable, and its family E whose first trust document expired
const WORLDS = {
  v1: { fx, out: fx.out, honest, big: fx.big, path: TARGET, at: url => address(url, fx.key.publicKey) },
  v2: { fx: fx2, out: fx2.out, honest: honest2, big: fx2.big, path: TARGET_V2, at: url => `${url}#${fx2.fragment}` },
  E: { fx: fx2, out: fx2.outE, honest: honestE, big: fx2.big, path: TARGET_V2, at: url => `${url}#${fx2.fragmentE}` }
}
// Chromium's first page pays its cold start (the browser's processes, the
// bundle's first compile), which on a loaded machine can hold a chunk past the
// 1 s each request is given: it is paid here, on an honest read checked byte
// for byte, so no lie's cell is timed against it.
test('the browser reader of the matrix reads the honest tree', { skip: NO_BROWSER }, async () => {
  const w = WORLDS.v1
  const r = await browserReader.run({ addr: w.at(w.honest.url), mirrors: [], seenAddr: null, timeoutS: 30, path: w.path })
  assert.equal(r.ok, true, `${r.code}${r.message ? ` (${r.message})` : ''}`)
  assert.ok(r.out.equals(w.big), 'the browser reader returned wrong bytes from the honest mirror')
})

const worldOf = lie => WORLDS[lie.family ?? (LIES_V2.includes(lie) ? 'v2' : 'v1')]

/** A fresh state dir; for lies that need it, the reader has already accepted the newest root. */
async function stateFor (lie, w) {
  const dir = await tmpdir('rotree-matrix-state-')
  if (lie.seenNewer) (await openTree(w.at(w.honest.url), { stateDir: dir })).close()
  return dir
}
/** The same for readers whose state is not a folder (the browser): the address they open first. */
const seenFor = (lie, w) => lie.seenNewer ? w.at(w.honest.url) : null

function isPrefix (got, truth) { return got.length <= truth.length && truth.subarray(0, got.length).equals(got) }

for (const lie of ALL_LIES) {
  const w = worldOf(lie)
  test(`lie: ${lie.id} (${lie.what})`, { timeout: 120_000 }, async t => {
    const started = performance.now()
    // CORS as real mirrors send it: the browser reader's page is on another
    // origin (the honest serve() sends it already)
    const liar = await startLyingServer(w.out, { ...lie.lie(w.fx), cors: true })
    t.after(() => liar.close())
    const accepts = reader => reader.accepts ?? ((codes, got) => codes.includes(got))
    if (lie.because) {
      // refused by the rule the lie stands for, not by another with the same code
      await assert.rejects(openTree(w.at(liar.url), { stateDir: await stateFor(lie, w), timeoutMs: TIMEOUT_S * 1000 }), err => {
        const why = (err.errors ?? [err]).map(e => `${e.code}: ${e.message}`).join(' | ')
        assert.match(why, lie.because, `${lie.id} was refused for another reason: ${why}`)
        return true
      })
    }
    const times = []
    for (const reader of READERS) {
      const t0 = performance.now()
      const cell = { lie: lie.id, threat: lie.threat, reader: reader.id }
      // the liar alone
      const scratch = await tmpdir('rotree-matrix-scratch-')
      const alone = await reader.run({ addr: w.at(liar.url), mirrors: [], stateDir: await stateFor(lie, w), seenAddr: seenFor(lie, w), timeoutS: TIMEOUT_S, path: w.path, scratch })
      assert.equal(alone.ok, false, `${reader.id} accepted ${lie.id}`)
      assert.ok(accepts(reader)(lie.codes, alone.code), `${reader.id} under ${lie.id}: got ${alone.code}, expected ${lie.codes.join('|')}${alone.message ? ` (${alone.message})` : ''}`)
      assert.ok(isPrefix(alone.out, w.big), `${reader.id} under ${lie.id} handed out bytes that are not the true file's`)
      assert.deepEqual(alone.leftovers ?? [], [], `${reader.id} under ${lie.id} left files behind`)
      cell.alone = alone.code
      cell.prefix = alone.out.length
      // the liar and an honest mirror
      const scratch2 = await tmpdir('rotree-matrix-scratch-')
      const both = await reader.run({ addr: w.at(liar.url), mirrors: [w.honest.url], stateDir: await stateFor(lie, w), seenAddr: seenFor(lie, w), timeoutS: TIMEOUT_S, path: w.path, scratch: scratch2 })
      if (lie.id === 'malformed-tree') {
        // the publisher's key signed a bad tree with the highest sequence: refusing is the only right answer
        assert.equal(both.ok, false); assert.ok(accepts(reader)(lie.codes, both.code), `${reader.id}: ${both.code}`)
        cell.withHonest = both.code
      } else {
        assert.equal(both.ok, true, `${reader.id} failed under ${lie.id} with an honest mirror: ${both.code}${both.message ? ` (${both.message})` : ''}`)
        assert.ok(both.out.equals(w.big), `${reader.id} under ${lie.id} with an honest mirror returned wrong bytes`)
        cell.withHonest = 'ok'
      }
      await fs.rm(scratch, { recursive: true, force: true }); await fs.rm(scratch2, { recursive: true, force: true })
      results.push(cell)
      times.push(`${reader.id} ${Math.round(performance.now() - t0)}`)
    }
    // a forged document the server could not send would pass for a refusal
    if (w !== WORLDS.v1) assert.deepEqual(liar.problems, [], 'the lying server reported problems')
    t.diagnostic(`${lie.id}: ${Math.round(performance.now() - started)} ms (${times.join(', ')})`)
  })
}

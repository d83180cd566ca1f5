// docs/SECURITY.md, the matrix: every lie × every reader. With only the lying mirror, the read
// fails with the documented code and hands out no unverified byte (a stream
// or stdout may have carried a verified prefix; nothing else), and leaves no
// file behind; with an honest mirror beside the liar, it succeeds with the
// true bytes (unless the lie is a validly signed bad tree, which no mirror can
// fix). The results are written into docs/SECURITY.md.
import { test, after } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { openTree } from 'rotree-client'
import { startLyingServer } from '../helpers/lying-server.js'
import { serve, address, tmpdir } from '../helpers/fixtures.js'
import { makeFixture, TARGET } from './fixture.js'
import { LIES } from './lies.js'
import { READERS as ALL_READERS } from './readers.js'
import { needs } from '../helpers/tools.js'
import { closeBrowserReader, browserReader } from './browser-reader.js'
import { writeSecurityDoc } from './security-doc.js'

// without Chromium every Node reader still runs; the browser's column is skipped in one line
const NO_BROWSER = needs('chromium')
const READERS = NO_BROWSER ? ALL_READERS.filter(r => r !== browserReader) : ALL_READERS
test('the browser reader of the matrix', { skip: NO_BROWSER }, () => {})

const TIMEOUT_S = 1
const fx = await makeFixture()
const honest = await serve(fx.out)
const results = []
after(async () => {
  await closeBrowserReader()
  await honest.close()
  await fx.cleanup()
  // SECURITY.md is written only from a run of every reader, the browser's included
  if (READERS.length === ALL_READERS.length && results.length === LIES.length * READERS.length) await writeSecurityDoc(results, { readers: READERS.map(r => r.id), lies: LIES })
})

/** A fresh state dir; for lies that need it, the reader has already accepted the newest root. */
async function stateFor (lie) {
  const dir = await tmpdir('rotree-matrix-state-')
  if (lie.seenNewer) (await openTree(address(honest.url, fx.key.publicKey), { stateDir: dir })).close()
  return dir
}
/** The same for readers whose state is not a folder (the browser): the address they open first. */
const seenFor = lie => lie.seenNewer ? address(honest.url, fx.key.publicKey) : null

function isPrefix (got, truth) { return got.length <= truth.length && truth.subarray(0, got.length).equals(got) }

for (const lie of LIES) {
  test(`lie: ${lie.id} (${lie.what})`, { timeout: 120_000 }, async t => {
    // CORS as real mirrors send it: the browser reader's page is on another
    // origin (the honest serve() sends it already)
    const liar = await startLyingServer(fx.out, { ...lie.lie(fx), cors: true })
    t.after(() => liar.close())
    for (const reader of READERS) {
      const cell = { lie: lie.id, threat: lie.threat, reader: reader.id }
      // the liar alone
      const scratch = await tmpdir('rotree-matrix-scratch-')
      const alone = await reader.run({ addr: address(liar.url, fx.key.publicKey), mirrors: [], stateDir: await stateFor(lie), seenAddr: seenFor(lie), timeoutS: TIMEOUT_S, path: TARGET, scratch })
      assert.equal(alone.ok, false, `${reader.id} accepted ${lie.id}`)
      const accepts = reader.accepts ?? ((codes, got) => codes.includes(got))
      assert.ok(accepts(lie.codes, alone.code), `${reader.id} under ${lie.id}: got ${alone.code}, expected ${lie.codes.join('|')}${alone.message ? ` (${alone.message})` : ''}`)
      assert.ok(isPrefix(alone.out, fx.big), `${reader.id} under ${lie.id} handed out bytes that are not the true file's`)
      assert.deepEqual(alone.leftovers ?? [], [], `${reader.id} under ${lie.id} left files behind`)
      cell.alone = alone.code
      cell.prefix = alone.out.length
      // the liar and an honest mirror
      const scratch2 = await tmpdir('rotree-matrix-scratch-')
      const both = await reader.run({ addr: address(liar.url, fx.key.publicKey), mirrors: [honest.url], stateDir: await stateFor(lie), seenAddr: seenFor(lie), timeoutS: TIMEOUT_S, path: TARGET, scratch: scratch2 })
      if (lie.id === 'malformed-tree') {
        // the publisher's key signed a bad tree with the highest sequence: refusing is the only right answer
        assert.equal(both.ok, false); assert.ok((reader.accepts ?? ((codes, got) => codes.includes(got)))(lie.codes, both.code), `${reader.id}: ${both.code}`)
        cell.withHonest = both.code
      } else {
        assert.equal(both.ok, true, `${reader.id} failed under ${lie.id} with an honest mirror: ${both.code}${both.message ? ` (${both.message})` : ''}`)
        assert.ok(both.out.equals(fx.big), `${reader.id} under ${lie.id} with an honest mirror returned wrong bytes`)
        cell.withHonest = 'ok'
      }
      await fs.rm(scratch, { recursive: true, force: true }); await fs.rm(scratch2, { recursive: true, force: true })
      results.push(cell)
    }
  })
}

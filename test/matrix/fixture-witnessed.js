// The witnessed tree of the matrix (docs/FORMAT.md §13.1, docs/TRUST.md rule
// 21): a one-key family whose trust document 2 names three witnesses, two of
// them required, published three times with real witnesses on loopback
// (lib/witness/witness.js, stopped once the fixture is made: readers never
// ask them). Read at #t<hash of trust 1>:stable. Beside it, what its liars
// serve:
//   fork     a copy of OUT at its first publish, published three more times
//            (the same final content, so the same blobs) after the same
//            witnesses' keys lost their memory: a log whose checkpoint K of
//            them cosigned, that forks from the honest one at leaf 1, under
//            a higher sequence number
//   logAt2   OUT's log as it was at its second publish: cosigned and honest,
//            but without the current fsinfo.json
//   oldCheckpoint  the honest checkpoint with every witness's cosignature
//            made two days ago (their real keys)
import fs from 'node:fs/promises'
import path from 'node:path'
import { tmpdir, writeTree, prng } from '../helpers/fixtures.js'
import { cosignerOf, cosignatureLine } from 'rotree-client/tlog'
import { witnessedTree, ok } from '../tlog/witness-fixture.js'

export const TARGET_W = '/data/big.bin'

export async function makeFixtureWitnessed () {
  const dir = await tmpdir('rotree-matrix-w-')
  const stops = []
  try {
    const big = prng(1024 * 1024 + 4321, 'matrix-big-w')
    const f = await witnessedTree(dir, stops, { builds: 0 })
    await writeTree(f.src, { 'data/big.bin': big, 'data/small.txt': 'small\n' })
    await f.build('one\n')
    const fork = path.join(dir, 'fork')
    await fs.cp(f.out, fork, { recursive: true })
    await f.build('two\n')
    const logAt2 = path.join(dir, 'log-at-2')
    await fs.cp(path.join(f.out, 'log'), path.join(logAt2, 'log'), { recursive: true })
    await f.build('three\n')
    // the same witness keys, their state lost: they cosign the fork from size 0
    for (const w of f.ws) { await w.stop(); w.o.stateDir += '-wiped'; await w.start() }
    for (const text of ['two (fork)\n', 'again (fork)\n', 'three\n']) {
      await writeTree(f.src, { 'a.txt': text })
      await ok('build', f.src, fork, '--key', f.A, '--no-fsync')
    }
    const cp = await fs.readFile(path.join(f.out, 'log', 'checkpoint'), 'utf8')
    const text = cp.slice(0, cp.indexOf('\n\n') + 1)
    const logLines = cp.slice(text.length + 1).split('\n').filter(l => l.startsWith(`— ${f.origin} `)).map(l => l + '\n')
    const twoDaysAgo = () => Math.floor(Date.now() / 1000) - 2 * 86400
    const old = f.ws.map(w => cosignatureLine(text, cosignerOf(w.o.name, w.o.key, twoDaysAgo)))
    return {
      dir,
      out: f.out,
      big,
      fragment: f.fragment,
      fork,
      logAt2,
      witnesses: f.ws.map(w => w.o.name),
      oldCheckpoint: Buffer.from(text + '\n' + logLines.join('') + old.join('')),
      cleanup: () => fs.rm(dir, { recursive: true, force: true })
    }
  } finally {
    for (const s of stops.reverse()) await s()
  }
}

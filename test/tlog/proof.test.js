// C2SP tlog-proof (client-js/src/tlog/proof.js): the text's exact lines, a
// round trip, inclusion checked for every leaf of small trees, and what the
// spec does not allow refused.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import {
  formatTlogProof, parseTlogProof, verifyTlogProof, inclusionProof, storedHashes, arrayHashReader, treeHash, leafHash, TlogError
} from 'rotree-client/tlog'

const CP = 'example.com/log\n5\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n\n— example.com/log AAAAAQ==\n'

/** A log of n entries: its stored hashes' reader and root. */
function log (n) {
  const stored = []
  const entries = Array.from({ length: n }, (_, i) => new TextEncoder().encode(`entry ${i}`))
  for (let i = 0; i < n; i++) stored.push(...storedHashes(i, entries[i], arrayHashReader(stored)))
  const read = arrayHashReader(stored)
  return { entries, read, root: treeHash(n, read) }
}

test('the lines: header, extra, index, one base64 hash a line, an empty line, the checkpoint verbatim', () => {
  const h = new Uint8Array(32).fill(7)
  const text = formatTlogProof({ index: 3, proof: [h, h], checkpoint: CP, extra: new Uint8Array([1, 2]) })
  assert.equal(text, `c2sp.org/tlog-proof@v1\nextra AQI=\nindex 3\n${Buffer.from(h).toString('base64')}\n${Buffer.from(h).toString('base64')}\n\n${CP}`)
  const p = parseTlogProof(text)
  assert.deepEqual([...p.extra], [1, 2]); assert.equal(p.index, 3); assert.equal(p.proof.length, 2); assert.equal(p.checkpoint, CP)
  const bare = formatTlogProof({ index: 0, proof: [], checkpoint: CP })
  assert.equal(bare, `c2sp.org/tlog-proof@v1\nindex 0\n\n${CP}`)
  assert.deepEqual(parseTlogProof(bare), { extra: null, index: 0, proof: [], checkpoint: CP })
})

test('inclusion of every leaf of trees of 1 to 20 leaves; a wrong leaf, index or hash is refused', () => {
  for (let n = 1; n <= 20; n++) {
    const { entries, read, root } = log(n)
    for (let i = 0; i < n; i++) {
      const p = parseTlogProof(formatTlogProof({ index: i, proof: inclusionProof(n, i, read), checkpoint: CP }))
      verifyTlogProof(p, leafHash(entries[i]), { size: n, hash: root })
      if (n > 1) {
        assert.throws(() => verifyTlogProof(p, leafHash(entries[(i + 1) % n]), { size: n, hash: root }), TlogError)
        assert.throws(() => verifyTlogProof({ ...p, index: (i + 1) % n }, leafHash(entries[i]), { size: n, hash: root }), TlogError)
        const bad = p.proof.map(x => x.slice()); bad[0][0] ^= 1
        assert.throws(() => verifyTlogProof({ ...p, proof: bad }, leafHash(entries[i]), { size: n, hash: root }), TlogError)
      }
    }
  }
})

test('what the spec does not allow', () => {
  const ok = formatTlogProof({ index: 1, proof: [new Uint8Array(32)], checkpoint: CP })
  for (const bad of [
    ok.replace('c2sp.org/tlog-proof@v1', 'c2sp.org/tlog-proof@v2'),
    ok.replace('index 1', 'index 01'),
    ok.replace('index 1', 'index -1'),
    ok.replace('index 1\n', ''),
    ok.replace('AAAA', 'AAA'), // not a 32-byte hash
    ok.replace('\n\n', '\n'), // no empty line before the checkpoint
    'c2sp.org/tlog-proof@v1\nindex 1\n\n', // no checkpoint
    'c2sp.org/tlog-proof@v1\nextra !!\nindex 1\n\n' + CP
  ]) assert.throws(() => parseTlogProof(bad), TlogError, JSON.stringify(bad))
})

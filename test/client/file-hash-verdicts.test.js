// A whole version-2 file is checked against its signed SHA-256 (FORMAT.md
// §12.7); a tree remembers the checks that passed (verify.js
// FileHashVerdicts), keyed by every ref that fixes the file's bytes, so a
// gateway streaming one file again does not hash it twice per byte. What
// must hold: only a passed check is remembered, and an entry that differs in
// any ref, size, codec or signed hash is a different file.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { FileHashVerdicts, fileHashImplied } from 'rotree-client/trust'

const h = c => c.repeat(64)
const chunk = (c, o = {}) => ({ hash: h(c), size: 1000, storedSize: 400, codec: 'deflate', ...o })
const listed = (o = {}) => ({ type: 'file', size: 2000, sha256: h('a'), chunks: [chunk('1'), chunk('2')], ...o })
const indexed = (o = {}) => ({ type: 'file', size: 9000, sha256: h('b'), index: { ...chunk('3'), levels: 2 }, lead: chunk('4'), ...o })

test('a remembered verdict answers only for an entry with the same signed hash, size and refs', () => {
  const v = new FileHashVerdicts()
  v.add(listed()); v.add(indexed())
  assert.ok(v.has(listed()) && v.has(indexed()), 'the same entry, decoded again')
  const others = [
    listed({ sha256: h('c') }), listed({ size: 2001 }),
    listed({ chunks: [chunk('1'), chunk('5')] }), listed({ chunks: [chunk('1'), chunk('2', { codec: undefined, storedSize: undefined })] }),
    listed({ chunks: [chunk('1'), chunk('2', { size: 999 })] }), listed({ chunks: [chunk('1'), chunk('2', { storedSize: 401 })] }),
    listed({ chunks: [chunk('2'), chunk('1')] }),
    indexed({ index: { ...chunk('3'), levels: 3 } }), indexed({ index: { ...chunk('6'), levels: 2 } }),
    indexed({ lead: chunk('7') }), indexed({ lead: undefined }), indexed({ sha256: h('d') })
  ]
  for (const e of others) assert.equal(v.has(e), false, JSON.stringify(e))
})

test('the verdicts are bounded: the oldest is forgotten first, a repeated one counts as new', () => {
  const v = new FileHashVerdicts(3)
  const e = i => listed({ sha256: h(String(i)) })
  v.add(e(1)); v.add(e(2)); v.add(e(3)); v.add(e(1)); v.add(e(4))
  assert.equal(v.has(e(2)), false, 'the least recently added went')
  assert.ok(v.has(e(1)) && v.has(e(3)) && v.has(e(4)))
})

test('one chunk stored as it is, whose handle is the signed hash, proves the file hash without hashing again', () => {
  const raw = (o = {}) => ({ hash: h('e'), size: 3000, storedSize: 3000, codec: 'none', ...o })
  const one = (o = {}) => ({ type: 'file', size: 3000, sha256: h('e'), chunks: [raw()], ...o })
  const v = new FileHashVerdicts()
  assert.equal(fileHashImplied(one()), true)
  assert.equal(v.has(one()), true, 'without any check remembered')
  // anything else is hashed as before
  const others = [
    one({ sha256: h('f') }), // the publisher signed another hash: the read hashes, and fails
    one({ chunks: [raw({ codec: 'deflate-raw', storedSize: 1200 })] }), // the handle names the stored bytes, not the file's
    one({ chunks: [raw({ storedSize: 2999 })] }), one({ chunks: [raw({ size: 2999 })] }), one({ size: 3001 }),
    one({ chunks: [raw(), raw()] }), // two chunks: the file is not the one blob
    one({ sha256: null }), // inline: hashed from its bytes
    { ...indexed(), sha256: h('4'), lead: chunk('4', { codec: 'none', storedSize: 1000 }) } // an index: the lead chunk is not the file
  ]
  for (const e of others) {
    assert.equal(fileHashImplied(e), false, JSON.stringify(e))
    assert.equal(v.has(e), false, JSON.stringify(e))
  }
})

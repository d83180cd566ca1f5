// `rotree trust show` (and the reports of trust init and update) name each
// key by a short id with the roles it holds and whether it is the key in the
// address, not as bare hex: the signed trust document carries no labels
// (docs/FORMAT.md §12.2), so that is what there is to say. --json keeps the
// whole keys.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { shortIds, describeRoles } from '../../builder/trust-publish.js'

test('short ids: 16 hex digits, more where two keys share them; no address key for a trust-hash address', () => {
  const a = 'ab'.repeat(32); const b = 'ab'.repeat(9) + 'cd'.repeat(23); const c = '12'.repeat(32)
  assert.equal(shortIds([a, c])(a), 'abababababababab')
  const id = shortIds([a, b, c])
  assert.equal(id(a), 'ab'.repeat(9) + 'a'); assert.equal(id(b), 'ab'.repeat(9) + 'c'); assert.equal(id(c).length, 19)
  const text = describeRoles({ roles: { root: { threshold: 1, keys: [c] }, release: { threshold: 1, keys: [a, b] }, timestamp: { threshold: 1, keys: [c] } } })
  assert.equal(text, [
    '  root      1 of 1', `    ${id(c)}  root, timestamp`,
    '  release   1 of 2', `    ${id(a)}  release`, `    ${id(b)}  release`,
    '  timestamp 1 of 1', `    ${id(c)}  root, timestamp`
  ].join('\n'))
  assert.doesNotMatch(text, /address key/)
  // the key in a #<key> address, after the tree adopted roles that leave it out
  assert.match(describeRoles({ roles: { root: { threshold: 1, keys: [c] }, release: { threshold: 1, keys: [c] }, timestamp: { threshold: 1, keys: [c] } } }, { addressKey: a }),
    /^ {2}the address key abababababababab holds no role$/m)
  assert.match(describeRoles({ roles: { root: { threshold: 1, keys: [a] }, release: { threshold: 1, keys: [a] }, timestamp: { threshold: 1, keys: [c] } } }, { addressKey: a }),
    /^ {4}abababababababab {2}root, release; the address key$/m)
})

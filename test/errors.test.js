// STYLE.md habit 4: docs list every error code, and this test keeps the list true.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import * as errors from 'rotree-client/errors'

test('every error code is documented in docs/ERRORS.md, and every class has its code', async () => {
  const doc = await fs.readFile(new URL('../docs/ERRORS.md', import.meta.url), 'utf8')
  const documented = new Set([...doc.matchAll(/`(ROTREE_[A-Z_]+)`/g)].map(m => m[1]))
  for (const [code, name] of errors.ERROR_TABLE) {
    assert.ok(documented.has(code), `${code} missing from docs/ERRORS.md`)
    const err = new errors[name]('x')
    assert.equal(err.code, code); assert.equal(err.name, name)
    assert.ok(err instanceof errors.RotreeError)
  }
  for (const code of errors.MIRROR_FAULT_CODES) assert.ok(errors.ERROR_TABLE.some(([c]) => c === code))
})

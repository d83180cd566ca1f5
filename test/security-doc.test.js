// docs/SECURITY.md states each actor's powers (test/matrix/actors.js), and
// what each learns of a private tree (PRIVATE_ACTORS): every
// suite it names must exist, and the document must carry the table as
// security-doc.js writes it (the matrix run regenerates the whole document).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import { ACTORS, PRIVATE_ACTORS, GATED_ACTORS } from './matrix/actors.js'
import { actorTable, privateActorTable, gatedActorTable, GATED_INTRO } from './matrix/security-doc.js'

const root = new URL('../', import.meta.url)

test('every suite the actor table names exists, and SECURITY.md carries the table', async () => {
  for (const a of [...ACTORS, ...PRIVATE_ACTORS, ...GATED_ACTORS]) {
    assert.ok(a.tests.length > 0 && a.rules.length > 0, a.id)
    for (const t of a.tests) await fs.access(new URL(t, root)).catch(() => assert.fail(`${a.id}: ${t} does not exist`))
  }
  const trust = await fs.readFile(new URL('docs/TRUST.md', root), 'utf8')
  for (const n of new Set([...ACTORS, ...PRIVATE_ACTORS, ...GATED_ACTORS].flatMap(a => a.rules))) assert.match(trust, new RegExp(`^${n}\\. \\*\\*`, 'm'), `docs/TRUST.md has no rule ${n}`)
  const doc = await fs.readFile(new URL('docs/SECURITY.md', root), 'utf8')
  for (const line of [...actorTable(), ...privateActorTable(), ...gatedActorTable(), GATED_INTRO]) assert.ok(doc.includes(line), `docs/SECURITY.md lacks: ${line.slice(0, 80)}… (run node --test test/matrix/ to regenerate it)`)
})

// docs/ERRORS.md lists every error code with its class, HTTP status and
// flags, and this test keeps it true in both directions: every row of
// ERROR_TABLE is in the doc, every code the doc's table names is in
// ERROR_TABLE, and what the doc says about each matches what the code does.
// The status table of docs/GATEWAY.md is checked against statusOf the same way.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import * as errors from 'rotree-client/errors'

const FLAG_WORDS = { fault: 'mirror fault', damage: 'damage', absent: 'absence' }
const flagText = flags => flags.split(' ').filter(Boolean).map(f => FLAG_WORDS[f]).join(', ')

async function docRows () {
  const doc = await fs.readFile(new URL('../docs/ERRORS.md', import.meta.url), 'utf8')
  const rows = new Map()
  for (const line of doc.split('\n')) {
    const m = /^\| `(ROTREE_[A-Z_]+)` \| `([A-Za-z]+)` \| (\d{3}) \| ([a-z, ]*) \| (.*) \|$/.exec(line)
    if (m) {
      assert.ok(!rows.has(m[1]), `${m[1]} listed twice in docs/ERRORS.md`)
      rows.set(m[1], { name: m[2], status: Number(m[3]), flags: m[4].trim(), meaning: m[5] })
    } else {
      assert.ok(!/^\| `ROTREE_/.test(line), `a table row of docs/ERRORS.md that does not parse: ${line}`)
    }
  }
  return { doc, rows }
}

test('every row of ERROR_TABLE is in docs/ERRORS.md with its class, status, flags and meaning', async () => {
  const { rows } = await docRows()
  for (const [code, name, status, flags, meaning] of errors.ERROR_TABLE) {
    const row = rows.get(code)
    assert.ok(row, `${code} missing from docs/ERRORS.md`)
    assert.deepEqual(row, { name, status, flags: flagText(flags), meaning }, `${code}: docs/ERRORS.md says otherwise than ERROR_TABLE`)
  }
})

test('every code in the table of docs/ERRORS.md is in ERROR_TABLE', async () => {
  const { rows } = await docRows()
  const codes = new Set(errors.ERROR_TABLE.map(r => r[0]))
  for (const code of rows.keys()) assert.ok(codes.has(code), `docs/ERRORS.md lists ${code}, which ERROR_TABLE does not have`)
  assert.equal(rows.size, codes.size)
})

test('every class has its code and name; the flag sets and statusOf follow the table', () => {
  for (const [code, name, status, flags] of errors.ERROR_TABLE) {
    const err = new errors[name]('x')
    assert.equal(err.code, code); assert.equal(err.name, name)
    assert.ok(err instanceof errors.RotreeError)
    const f = flags.split(' ')
    assert.equal(errors.MIRROR_FAULT_CODES.has(code), f.includes('fault'), code)
    assert.equal(errors.DAMAGE_CODES.has(code), f.includes('damage'), code)
    assert.equal(errors.ABSENT_CODES.has(code), f.includes('absent'), code)
    assert.equal(errors.statusOf(err), status, code)
  }
  assert.equal(errors.statusOf(new Error('a bug')), 500)
})

test('the prose is true: a mirror fault is 502 or 504, absence is 404, and all mirrors failing is one code', () => {
  for (const code of errors.MIRROR_FAULT_CODES) {
    const status = errors.statusOf({ code })
    assert.ok(status === 502 || status === 504, `${code} is a mirror fault answered with ${status}`)
  }
  for (const code of errors.ABSENT_CODES) assert.equal(errors.statusOf({ code }), 404)
  for (const [code, , status] of errors.ERROR_TABLE) if (status === 404) assert.ok(errors.ABSENT_CODES.has(code), `${code} is 404 but not an absence`)
  // one mirror or several, the same failure or not: ROTREE_ALL_MIRRORS_FAILED, each mirror's code kept
  const one = errors.allFailed('fsinfo.json', [{ mirror: 'http://a/', code: 'ROTREE_EXPIRED', message: 'old', err: new errors.ExpiredError('old') }])
  assert.equal(one.code, 'ROTREE_ALL_MIRRORS_FAILED')
  assert.deepEqual(one.errors, [{ mirror: 'http://a/', code: 'ROTREE_EXPIRED', message: 'old' }])
  assert.equal(one.cause.code, 'ROTREE_EXPIRED')
  const same = errors.allFailed('h/x', ['http://a/', 'http://b/'].map(mirror => ({ mirror, code: 'ROTREE_TIMEOUT', message: 'slow', err: new errors.TimeoutError('slow') })))
  assert.equal(same.code, 'ROTREE_ALL_MIRRORS_FAILED')
  assert.equal(errors.statusOf(same), 504)
  const mixed = errors.allFailed('h/x', [{ mirror: 'http://a/', code: 'ROTREE_TIMEOUT', message: 's' }, { mirror: 'http://b/', code: 'ROTREE_HASH_MISMATCH', message: 'h' }])
  assert.equal(errors.statusOf(mixed), 502)
})

// docs/GATEWAY.md "Status codes and the trust rules": a table of status, when,
// codes. Each code is listed under every status statusOf can give it (its
// row's status, and the refinements: 414 for a path too long, 504 when every
// mirror stalled) and under no other.
async function gatewayPairs () {
  const doc = await fs.readFile(new URL('../docs/GATEWAY.md', import.meta.url), 'utf8')
  const section = doc.slice(doc.indexOf('## Status codes and the trust rules'))
  const table = section.slice(0, section.indexOf('\n\n', section.indexOf('| status |')))
  const pairs = new Set()
  let rows = 0
  for (const line of table.split('\n').filter(l => /^\| \d/.test(l))) {
    const m = /^\| (\d{3}) \| [^|]+ \| ?((?:`ROTREE_[A-Z_]+`(?:, )?)*) ?\|$/.exec(line)
    assert.ok(m, `a row of the status table in docs/GATEWAY.md that does not parse: ${line}`)
    rows++
    for (const [, code] of m[2].matchAll(/`(ROTREE_[A-Z_]+)`/g)) {
      const pair = `${m[1]} ${code}`
      assert.ok(!pairs.has(pair), `docs/GATEWAY.md lists ${code} under ${m[1]} twice`)
      pairs.add(pair)
    }
  }
  assert.ok(rows >= 10, `the status table of docs/GATEWAY.md was not found (${rows} rows)`)
  return pairs
}

/** Every status statusOf gives an error of `code`: plain, a path too long, every mirror stalled. */
function statusesOf (code) {
  const variants = [{ code }, { code, status: 414 }, { code, errors: [{ code: 'ROTREE_TIMEOUT' }, { code: 'ROTREE_TIMEOUT' }] }]
  return new Set(variants.map(errors.statusOf))
}

test('the status table of docs/GATEWAY.md is statusOf\'s, both ways', async () => {
  const pairs = await gatewayPairs()
  const want = new Set()
  for (const [code] of errors.ERROR_TABLE) for (const s of statusesOf(code)) want.add(`${s} ${code}`)
  for (const pair of want) assert.ok(pairs.has(pair), `docs/GATEWAY.md does not list ${pair.split(' ')[1]} under ${pair.split(' ')[0]}`)
  for (const pair of pairs) assert.ok(want.has(pair), `docs/GATEWAY.md lists ${pair.split(' ')[1]} under ${pair.split(' ')[0]}, which statusOf never gives it`)
})

test('what to do: the command line and the web app say it for the same codes', async () => {
  const { WHAT_TO_DO } = await import('../cli/what-to-do.js')
  const { CODES } = await import('../web/explain.js')
  const all = errors.ERROR_TABLE.map(r => r[0])
  // every code but those whose message says what to do (a path, an interruption)
  assert.deepEqual(all.filter(c => !WHAT_TO_DO[c]).sort(), ['ROTREE_ABORTED', 'ROTREE_BAD_PATH'])
  for (const c of Object.keys(WHAT_TO_DO)) assert.ok(all.includes(c), `${c}: not an error code`)
  // every code the web app explains has a sentence at the command line too
  for (const c of CODES) if (all.includes(c) && c !== 'ROTREE_BAD_PATH' && c !== 'ROTREE_ABORTED') assert.ok(WHAT_TO_DO[c], `${c}: the web app says what to do, the CLI does not`)
})

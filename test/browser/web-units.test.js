// The pure modules of web/ (no DOM), in Node: the Range parser the Service
// Worker imports from the browser bundle is rotree-client's, the _redirects
// parser and matcher, expiry in words, what the key field makes of a
// pasted address, and what each error says to do.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { parseRange as sharedParseRange } from 'rotree-client/http'
import { ensureBundle, WEB_BUNDLE } from './helpers.js'
import { parseRedirects, matchRedirect, MAX_RULES, MAX_BYTES } from '../../web/redirects.js'
import { expiry, untilText, agoText, dayText } from '../../web/dates.js'
import { parseFragment, parseKeyInput } from '../../web/address.js'
import { explain, CODES } from '../../web/explain.js'

test('the Service Worker\'s parseRange (the browser bundle\'s) answers every Range header as rotree serve and the gateway do', async () => {
  await ensureBundle()
  const { parseRange } = await import(WEB_BUNDLE)
  assert.equal(typeof parseRange, 'function', 'the bundle exports parseRange (web/sw.js imports it)')
  const headers = [
    undefined, null, '', 'bytes=0-0', 'bytes=0-', 'bytes=5-3', 'bytes=-0', 'bytes=-5', 'bytes=-500',
    'bytes=99-', 'bytes=100-', 'bytes=100-200', 'bytes=0-999999999999999999999999999999', 'bytes=999999999999999999999999999999-',
    'BYTES=1-2', 'Bytes=1-2', 'items=0-1', 'bytes=0-1,5-9', 'bytes=0-1, ', 'bytes= 0-1', 'bytes=0 -1', 'bytes=-', 'bytes=a-b',
    ' bytes=2-3 ', 'bytes=,0-4', 'bytes', 'bytes=1-2;x', '=0-1', 'bytes=0-1,', 'bytes=00-01', 'bytes=1-1'
  ]
  for (const size of [0, 1, 100, 4 << 20]) {
    for (const h of headers) assert.deepEqual(parseRange(h, size), sharedParseRange(h, size), `${JSON.stringify(h)} of ${size} bytes`)
  }
  // the rows the old Service Worker answered otherwise
  assert.equal(parseRange('bytes=5-3', 100), null, 'an invalid range is ignored: 200, not 416')
  assert.equal(parseRange('bytes=0-1', 0), null, 'an empty file ignores ranges')
  assert.deepEqual(parseRange('BYTES=1-2', 100), { start: 1, end: 2 }, 'the unit is case-insensitive')
})

test('_redirects: the subset it reads', () => {
  const { rules, error } = parseRedirects(new TextEncoder().encode(`# an SPA
/old/:year/:slug  /posts/:year/:slug   301
/go               /docs/start.html     302   # trailing comment
/api/*            /api-down.html       404
/files/*          /store/:splat        200

/*                /index.html          200
`))
  assert.equal(error, null)
  assert.equal(rules.length, 5)
  assert.deepEqual(matchRedirect(rules, '/old/2024/hello'), { status: 301, to: ['posts', '2024', 'hello'] })
  assert.deepEqual(matchRedirect(rules, '/go'), { status: 302, to: ['docs', 'start.html'] })
  assert.deepEqual(matchRedirect(rules, '/go/'), { status: 302, to: ['docs', 'start.html'] })
  assert.deepEqual(matchRedirect(rules, '/api/v1/users'), { status: 404, to: ['api-down.html'] })
  assert.deepEqual(matchRedirect(rules, '/files/a/b.txt'), { status: 200, to: ['store', 'a', 'b.txt'] })
  assert.deepEqual(matchRedirect(rules, '/app/deep/link'), { status: 200, to: ['index.html'] })
  assert.deepEqual(matchRedirect(rules, '/old/2024'), { status: 200, to: ['index.html'] }, 'a placeholder is one whole segment')
  // a splat that would climb out of the tree never matches
  assert.equal(matchRedirect(parseRedirects('/f/* /store/:splat 200').rules, '/f/../../etc'), null)
  assert.deepEqual(parseRedirects('/a /b').rules[0].status, 301, 'a redirect by default')
  assert.deepEqual(parseRedirects('').rules, [])
})

test('_redirects: a file that breaks the rules is ignored as a whole, and says why', () => {
  const cases = {
    '/a https://evil.example/ 302': /TO must be a path starting with one "\/"/,
    '/a //evil.example/x 301': /TO must be a path/,
    '/a /b 418': /status 418 is not one of/,
    '/a /b 200!': /status "200!"/,
    '/a /b 301 Country=au': /expected "FROM TO \[STATUS\]", got 4 fields/,
    '/a': /got 1 field$/,
    'a /b': /FROM must be a path/,
    '/a/*/b /c 200': /`\*` only as its last segment/,
    '/a* /c 200': /`\*` only as a whole last segment/,
    '/:x /y/:z 301': /TO uses :z, which FROM does not define/,
    '/a /:splat 200': /TO uses :splat/,
    '/a /../etc 200': /"\." or "\.\." segments/,
    '/a /b?x=1 301': /may not hold "\?"/,
    '/a /%zz 301': /malformed %-escape/
  }
  for (const [text, why] of Object.entries(cases)) {
    const r = parseRedirects(`/ok /fine 301\n${text}\n`)
    assert.deepEqual(r.rules, [], text)
    assert.match(r.error, /^_redirects ignored: line 2: /, text)
    assert.match(r.error, why, text)
  }
  const long = parseRedirects(`/a https://${'x'.repeat(60000)} 302`).error
  assert.ok(long.length < 300, 'what the bar shows of a line is short')
  assert.match(parseRedirects(new Uint8Array([0x2f, 0xff, 0x20, 0x2f])).error, /not UTF-8/)
  assert.match(parseRedirects(new Uint8Array(MAX_BYTES + 1)).error, /over the limit of 65536/)
  const many = Array.from({ length: MAX_RULES + 1 }, (_, i) => `/r${i} /t 301`).join('\n')
  assert.match(parseRedirects(many).error, /more than 1000 rules/)
  assert.equal(parseRedirects(many.split('\n').slice(0, MAX_RULES).join('\n')).rules.length, MAX_RULES)
})

test('expiry in words, and when to warn', () => {
  const DAY = 864e5
  const now = Date.parse('2030-01-10T00:00:00Z')
  const info = (issuedDaysAgo, lifeDays) => ({ issued: new Date(now - issuedDaysAgo * DAY).toISOString(), expires: new Date(now - issuedDaysAgo * DAY + lifeDays * DAY).toISOString() })
  assert.deepEqual(expiry(info(0, 7), now), { text: 'in 7 days', warn: false, left: 7 * DAY })
  assert.equal(expiry(info(5, 7), now).warn, false) // 2 days of 7 left: more than a day and a seventh
  assert.deepEqual([expiry(info(6.5, 7), now).text, expiry(info(6.5, 7), now).warn], ['in 12 hours', true])
  assert.deepEqual([expiry(info(27, 30), now).text, expiry(info(27, 30), now).warn], ['in 3 days', true]) // under a seventh of 30 days
  assert.equal(expiry(info(0, 0.5), now).warn, true) // a 12-hour tree is always within a day
  assert.equal(untilText(90e3), 'in 2 minutes')
  assert.equal(untilText(60e3), 'in 1 minute')
  assert.equal(untilText(5e3), 'in under a minute')
  assert.equal(untilText(-1), 'expired')
  // when it was published, in words
  assert.equal(agoText(-5e3), 'just now', 'a clock a little behind the publisher\'s')
  assert.equal(agoText(30e3), 'just now')
  assert.equal(agoText(60e3), '1 minute ago')
  assert.equal(agoText(12 * 60e3), '12 minutes ago')
  assert.equal(agoText(3 * 3600e3), '3 hours ago')
  assert.equal(agoText(4 * DAY), '4 days ago')
  // a date as a reader says it: the day; the year only when it is not this one; the time only when it is near
  const dec = Date.parse('2030-12-14T12:00:00')
  assert.doesNotMatch(dayText(dec, dec - 5 * DAY), /2030|:/)
  assert.match(dayText(dec, dec - 400 * DAY), /2030/)
  assert.match(dayText(dec, dec - 3600e3), /\d:\d\d/)
})

test('the address: a fragment, and what a reader pastes', () => {
  const key = 'ab'.repeat(32)
  assert.equal(parseFragment(''), null)
  assert.equal(parseFragment('#'), null)
  assert.deepEqual(parseFragment(`#${key.toUpperCase()}/a/b%20c`), { key, path: '/a/b c' })
  assert.match(parseFragment('#abc/x').error, /"abc" is not a public key: a key is 64 hex digits \(0-9, a-f\), and this has 3\./)
  assert.match(parseFragment(`#${key.slice(1)}z`).error, /other characters \(z\)/)
  assert.deepEqual(parseKeyInput(`  ${key}  `), { key, path: '/', mirrors: [] })
  assert.deepEqual(parseKeyInput(`http://127.0.0.1:8080/pub/#${key}`), { key, path: '/', mirrors: ['http://127.0.0.1:8080/pub/'] })
  // format 2: the name selects the tree and is kept; a trust-document anchor is a tree id too
  assert.deepEqual(parseKeyInput(`https://m.example/pub#${key}:docs`), { key: `${key}:docs`, path: '/', mirrors: ['https://m.example/pub/'] })
  assert.deepEqual(parseKeyInput(`https://m.example/#t${key}:stable/a.txt`), { key: `t${key}:stable`, path: '/a.txt', mirrors: ['https://m.example/'] })
  assert.deepEqual(parseFragment(`#t${key}:stable/x`), { key: `t${key}:stable`, path: '/x' })
  assert.match(parseKeyInput(`https://m.example/#${key}:Bad Name`).error, /"Bad Name" is not a tree name/)
  assert.match(parseFragment(`#${key}:`).error, /is not a tree name/)
  assert.deepEqual(parseKeyInput(`http://app.example/index.html?mirror=https%3A%2F%2Fm2.example%2F#${key}/notes/a.txt`),
    { key, path: '/notes/a.txt', mirrors: ['http://app.example/', 'https://m2.example/'] })
  assert.deepEqual(parseKeyInput(`x#y#${key}`), { key, path: '/', mirrors: [] }, 'the part after the last #')
  assert.match(parseKeyInput('').error, /Paste a public key/)
  assert.match(parseKeyInput('http://m.example/#deadbeef:docs').error, /"deadbeef" is not a public key/)
  assert.match(parseKeyInput(`http://m.example/#u${key}`).error, /is not a public key/)
})

test('every error code says what happened and what to do, in one place for the app and the Service Worker', async () => {
  const errors = await import('rotree-client/errors')
  // every code a reader in a browser can meet (the builder's, push's and the lock's are the command line's)
  const CLI_ONLY = new Set(['ROTREE_BUILD_INPUT', 'ROTREE_PUSH_FAILED', 'ROTREE_LOCKED', 'ROTREE_BAD_KEY', 'ROTREE_ERR'])
  const codes = new Set(Object.values(errors).filter(c => typeof c === 'function' && /Error$/.test(c.name)).map(c => { try { return new c('x').code } catch { return null } }))
  for (const code of codes) {
    if (!code || CLI_ONLY.has(code)) continue
    assert.ok(CODES.includes(code), `${code} has texts in web/explain.js`)
  }
  for (const code of CODES) {
    const e = explain({ code })
    assert.equal(e.code, code)
    for (const k of ['title', 'text', 'todo']) assert.ok(typeof e[k] === 'string' && e[k].length > 3, `${code}: ${k}`)
    assert.doesNotMatch(e.todo, /--[a-z]/, `${code}: what to do in a browser, not a command-line flag`)
  }
  assert.match(explain({ code: 'ROTREE_WRONG_KEY' }).todo, /^Check the address: the part after # must be the publisher's key\./)
  assert.match(explain({ code: 'ROTREE_EXPIRED' }).todo, /^Ask the publisher to re-sign \(rotree resign\), or try again later/)
  assert.equal(explain({ code: 'ROTREE_NO_ACCESS' }).todo, 'Choose your identity file, or ask the publisher to add your age1… recipient.')
  // every mirror failing the same way is that way, and so is what to do
  const all = { code: 'ROTREE_ALL_MIRRORS_FAILED', errors: [{ mirror: 'a', code: 'ROTREE_EXPIRED', message: 'm' }] }
  assert.equal(explain(all).todo, explain({ code: 'ROTREE_EXPIRED' }).todo)
  assert.match(explain(new Error('odd')).todo, /Reload/)
})

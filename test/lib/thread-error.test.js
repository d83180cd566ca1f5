// The one thread-error codec (lib/thread-error.js): what a worker thread
// throws comes back, through structured clone, as the same rotree class with
// its code, message, details and cause, or as a system error with its code,
// errno, syscall and path; anything else thrown comes back as an Error
// carrying its text.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import { BuildInputError, StateError, RotreeError, AllMirrorsFailedError, allFailed, statusOf } from 'rotree-client/errors'
import { encodeError, decodeError } from '../../lib/thread-error.js'

/** Through the codec and a real structured clone, as between two threads. */
const across = err => decodeError(structuredClone(encodeError(err)))

test('a RotreeError subclass comes back as its class, with its code, message, details and cause', () => {
  const cause = Object.assign(new Error('EACCES: permission denied, open \'/a\''), { code: 'EACCES', errno: -13, syscall: 'open', path: '/a' })
  const err = new BuildInputError('/a: cannot open (EACCES)', { cause, details: { path: '/a', changed: true, size: 12 } })
  const back = across(err)
  assert.ok(back instanceof BuildInputError && back instanceof RotreeError)
  assert.deepEqual([back.name, back.code, back.message, back.path, back.changed, back.size], [err.name, err.code, err.message, '/a', true, 12])
  assert.equal(back.stack, err.stack, 'the stack of the thread that threw')
  assert.equal(back.cause.constructor, Error)
  assert.deepEqual([back.cause.code, back.cause.errno, back.cause.syscall, back.cause.path], ['EACCES', -13, 'open', '/a'])
  assert.ok(across(new StateError('the folder is a link')) instanceof StateError)
  assert.ok(across(new RotreeError('the base class')) instanceof RotreeError)
})

test('plain-data details survive: an AllMirrorsFailedError keeps `errors`, so its status stays 504', () => {
  const err = allFailed('h/ab', [{ mirror: 'http://a/', code: 'ROTREE_TIMEOUT', message: 'stalled' }, { mirror: 'http://b/', code: 'ROTREE_TIMEOUT', message: 'stalled' }])
  const back = across(err)
  assert.ok(back instanceof AllMirrorsFailedError)
  assert.deepEqual(back.errors, err.errors)
  assert.equal(statusOf(back), 504)
})

test('a system error comes back as an Error with its code, errno, syscall, path and dest', () => {
  let sys
  try { fs.renameSync('/nonexistent/rotree-a', '/nonexistent/rotree-b') } catch (err) { sys = err }
  sys.tmp = '/nonexistent/rotree-a' // a field a writing thread adds (cli/get-writer-worker.js)
  const back = across(sys)
  assert.equal(back.constructor, Error)
  for (const k of ['message', 'code', 'errno', 'syscall', 'path', 'dest', 'tmp', 'stack']) assert.equal(back[k], sys[k], k)
  assert.equal(back.code, 'ENOENT')
  const nospc = Object.assign(new Error('ENOSPC: no space left on device, write'), { errno: -28, code: 'ENOSPC', syscall: 'write' })
  assert.equal(across(nospc).code, 'ENOSPC', 'what `rotree get` and the CLI match on')
})

test('a built-in error keeps its class; a non-Error throw comes back as an Error with its text', () => {
  const range = across(new RangeError('out of range'))
  assert.ok(range instanceof RangeError)
  assert.equal(range.message, 'out of range')
  for (const [thrown, text] of [['a string', 'a string'], [42, '42'], [undefined, 'undefined'], [null, 'null'], [{ code: 'X' }, '[object Object]'], [Object.create(null), '[object Object]']]) {
    const back = across(thrown)
    assert.equal(back.constructor, Error, String(text))
    assert.equal(back.message, text)
    assert.equal(back.code, undefined)
  }
})

test('what is not data is dropped, a cause chain is cut, and nothing sets a prototype', () => {
  const err = new Error('x')
  Object.assign(err, { fn: () => 1, when: new Date(0), buf: Buffer.from('ab'), list: [1, 'a', () => 2], n: 10n })
  Object.defineProperty(err, '__proto__', { value: { polluted: true }, enumerable: true })
  let chain = err
  for (let i = 0; i < 10; i++) { const e = new Error(`cause ${i}`); chain.cause = e; chain = e }
  chain.cause = err // a cycle
  const o = encodeError(err)
  assert.doesNotThrow(() => structuredClone(o))
  const back = decodeError(structuredClone(o))
  assert.deepEqual(Object.keys(o.fields).sort(), ['list', 'n'])
  assert.deepEqual(back.list, [1, 'a', null])
  assert.equal(back.n, 10n)
  assert.equal(Object.getPrototypeOf(back), Error.prototype)
  assert.equal(back.polluted, undefined)
  let depth = 0
  for (let e = back; e.cause; e = e.cause) depth++
  assert.equal(depth, 4)
  assert.equal(decodeError('not encoded').constructor, Error)
})

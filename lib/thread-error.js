// An error thrown on a worker thread, carried back to the thread that asked
// as data and rebuilt there as what a call on that thread would have thrown.
//
// Structured clone keeps an Error's message and stack but not its class or
// its own fields, and callers rely on both: the builder's --skip-bad matches
// `code === 'ROTREE_BUILD_INPUT'`, the CLI prints ROTREE_SYSTEM_<code> for
// ENOSPC (docs/ERRORS.md), `rotree get` matches err.code === 'ENOSPC' and
// tells a temporary file's error with the user's path (err.path, err.tmp),
// the gateway's one error→status mapping reads `code` (and an
// AllMirrorsFailedError's `errors`). So an error crosses as
//
//   { name, message, stack, code, fields, cause? }
//
// where `fields` are its own plain-data properties (a RotreeError's details,
// a system error's errno, syscall, path, dest), and comes back as the
// rotree class its code names (rotree-client/errors' ERROR_TABLE), else as
// an Error (a built-in subclass by its name) with the same code and fields.
// Every thread of rotree that runs work for another uses this one codec:
// builder/chunk-pool.js and lib/ring-worker.js.
import * as errors from 'rotree-client/errors'

const CLASS_BY_CODE = new Map(errors.ERROR_TABLE.map(([code, name]) => [code, errors[name]]))
CLASS_BY_CODE.set('ROTREE_ERR', errors.RotreeError)
const BUILT_IN = new Map([Error, TypeError, RangeError, SyntaxError, ReferenceError, EvalError, URIError].map(C => [C.name, C]))
const OWN = new Set(['name', 'code', 'message', 'stack', 'cause', '__proto__'])
const MAX_CAUSES = 4 // a cause chain longer than this is cut (a cycle would never end)
const MAX_DEPTH = 4 // of arrays and objects inside one field

/**
 * `err` (anything thrown) as structured-clone data: never throws.
 * @param {unknown} err
 * @returns {{ name: string, message: string, stack?: string, code?: unknown, fields: object, cause?: object }}
 */
export function encodeError (err) { return _encode(err, 0) }

function _encode (err, depth) {
  // a thrown string, number or object that is not an Error: its text, as an Error
  if (!(err instanceof Error)) return { name: 'Error', message: _text(err), fields: {} }
  const fields = {}
  for (const [k, v] of Object.entries(err)) {
    if (OWN.has(k)) continue
    const d = _data(v, 0)
    if (d !== undefined) fields[k] = d
  }
  const o = { name: String(err.name), message: String(err.message), stack: err.stack, code: _data(err.code, MAX_DEPTH), fields }
  if (err.cause !== undefined && depth < MAX_CAUSES) o.cause = _encode(err.cause, depth + 1)
  return o
}

/** `v` if it is plain data (a primitive, or arrays and plain objects of them), else undefined: dropped. */
function _data (v, depth) {
  if (v === null || ['string', 'number', 'boolean', 'bigint'].includes(typeof v)) return v
  if (typeof v !== 'object' || depth >= MAX_DEPTH) return undefined
  if (Array.isArray(v)) return v.map(x => _data(x, depth + 1) ?? null)
  const proto = Object.getPrototypeOf(v)
  if (proto !== Object.prototype && proto !== null) return undefined
  const out = {}
  for (const [k, x] of Object.entries(v)) {
    const d = k === '__proto__' ? undefined : _data(x, depth + 1) // an own "__proto__" would set a prototype when assigned
    if (d !== undefined) out[k] = d
  }
  return out
}

function _text (v) {
  try { return String(v) } catch { return Object.prototype.toString.call(v) } // String() of an object can throw
}

/**
 * The error encodeError described: the rotree class of its code with the same
 * message and details, else an Error (or the built-in subclass of its name)
 * with the same name, code and fields; the same stack and cause.
 * @param {any} o
 * @returns {Error}
 */
export function decodeError (o) {
  if (o === null || typeof o !== 'object') return new Error(`an error that was not encoded: ${_text(o)}`)
  const message = typeof o.message === 'string' ? o.message : ''
  const cause = o.cause ? decodeError(o.cause) : undefined
  const fields = {}
  if (o.fields !== null && typeof o.fields === 'object') for (const [k, v] of Object.entries(o.fields)) if (!OWN.has(k)) fields[k] = v
  const Cls = typeof o.code === 'string' ? CLASS_BY_CODE.get(o.code) : undefined
  let err
  if (Cls) {
    err = new Cls(message, { cause, details: fields })
  } else {
    const Built = BUILT_IN.get(o.name) ?? Error
    err = new Built(message, cause === undefined ? undefined : { cause })
    if (typeof o.name === 'string' && o.name !== Built.name) err.name = o.name
    if (o.code !== undefined) err.code = o.code
    Object.assign(err, fields) // errno, syscall, path, dest of a system error
  }
  if (typeof o.stack === 'string') err.stack = o.stack
  return err
}

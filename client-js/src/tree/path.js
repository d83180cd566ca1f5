// Paths inside a tree: '/'-separated, resolved lexically, never above the root.
import { BadPathError } from '../errors.js'
import { utf8 } from '../format/bytes.js'
import { MAX_PATH, MAX_DEPTH } from '../format/limits.js'

/** Split a user path into components, resolving '.' and '..' lexically. */
export function splitPath (path) {
  if (typeof path !== 'string') throw new BadPathError('path must be a string')
  if (path.includes('\0')) throw new BadPathError('path contains NUL')
  if (utf8.encode(path).length > MAX_PATH) throw new BadPathError(`path longer than ${MAX_PATH} bytes`)
  const out = []
  for (const c of path.split('/')) {
    if (c === '' || c === '.') continue
    if (c === '..') {
      if (out.length === 0) throw new BadPathError(`path ${JSON.stringify(path)} goes above the tree root`)
      out.pop()
    } else out.push(c)
  }
  if (out.length > MAX_DEPTH) throw new BadPathError(`path deeper than ${MAX_DEPTH}`)
  return out
}

export function joinPath (parts) { return '/' + parts.join('/') }

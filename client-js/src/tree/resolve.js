// Path resolution inside one root (FORMAT.md §4.6), with bounded work
// (docs/TRUST.md rule 9). Symlink targets are chosen by the publisher, who
// may be hostile: 40 hops (as Linux's MAXSYMLINKS) bound the hops, but not
// the components each target injects. One target of 2,000 components followed
// 40 times froze the event loop on every resolve, and a gateway listing of
// such links froze every client (docs/BENCHMARKS.md P5, notes). So, as a
// kernel bounds a path walk, a resolve has a budget: components processed in
// all (the user's and every target's) and bytes of targets followed; past
// either it fails with ROTREE_SYMLINK_LOOP. And long walks yield to the event
// loop now and then, so one request cannot starve the others.
import { NotFoundError, NotADirectoryError, SymlinkLoopError } from '../errors.js'
import { MAX_SYMLINK_HOPS } from '../format/limits.js'
import { splitPath, joinPath } from './path.js'

/** Components one resolve may process, counting those symlink targets add. */
export const MAX_WALK_COMPONENTS = 4096
/** Bytes of symlink targets one resolve may follow. */
export const MAX_WALK_TARGET_BYTES = 32 * 1024
/** How long a walk or listing runs before it lets other work in. */
export const SLICE_MS = 8

const now = () => globalThis.performance?.now() ?? Date.now()
const macrotask = globalThis.setImmediate
  ? () => new Promise(resolve => globalThis.setImmediate(resolve))
  : () => new Promise(resolve => setTimeout(resolve, 0))

/**
 * A function to await often in a long loop: it yields to the event loop (a
 * macrotask, so timers and I/O run) once SLICE_MS have passed since the last
 * yield, and is a no-op otherwise. Cached pages resolve as microtasks, which
 * never let the event loop turn.
 */
export function slicer (sliceMs = SLICE_MS) {
  let since = now()
  return () => {
    if (now() - since < sliceMs) return null
    return macrotask().then(() => { since = now() })
  }
}

/**
 * Resolve `path` to its entry, following symlinks inside the tree.
 * @param {object} rootEntry the root directory as an entry
 * @param {string} path
 * @param {boolean} follow follow a final symlink
 * @param {(dirEntry: object, name: string) => Promise<object|null>} lookup a verified lookup (null: proven absent)
 * @returns {Promise<{ entry: object, path: string }>}
 */
export async function resolvePath (rootEntry, path, follow, lookup) {
  const queue = splitPath(path).reverse() // a stack: the next component is last
  const stack = [rootEntry]
  const names = []
  let hops = 0
  let steps = 0
  let targetBytes = 0
  const pause = slicer()
  const tooLong = () => new SymlinkLoopError(`resolving ${path} takes more than ${MAX_WALK_COMPONENTS} path components`)
  while (queue.length) {
    if (++steps > MAX_WALK_COMPONENTS) throw tooLong()
    const p = pause(); if (p) await p
    const c = queue.pop()
    if (c === '.' || c === '') continue
    if (c === '..') {
      if (stack.length === 1) throw new SymlinkLoopError(`symlink in ${path} leads above the tree root`)
      stack.pop(); names.pop(); continue
    }
    const dir = stack.at(-1)
    if (dir.type !== 'dir') throw new NotADirectoryError(`${joinPath(names)} is not a directory`)
    const e = await lookup(dir, c)
    if (!e) throw new NotFoundError(`${joinPath([...names, c])} does not exist`, { details: { path: joinPath([...names, c]) } })
    if (e.type === 'symlink' && (queue.length > 0 || follow)) {
      if (++hops > MAX_SYMLINK_HOPS) throw new SymlinkLoopError(`more than ${MAX_SYMLINK_HOPS} symlinks resolving ${path}`)
      targetBytes += e.size
      if (targetBytes > MAX_WALK_TARGET_BYTES) throw new SymlinkLoopError(`resolving ${path} follows over ${MAX_WALK_TARGET_BYTES} bytes of symlink targets`)
      // FORMAT.md §4.6: targets resolve inside the tree; a leading '/' means the tree root
      if (e.target.startsWith('/')) { stack.length = 1; names.length = 0 }
      const parts = e.target.split('/')
      if (steps + queue.length + parts.length > MAX_WALK_COMPONENTS) throw tooLong()
      for (let i = parts.length - 1; i >= 0; i--) queue.push(parts[i])
      continue
    }
    stack.push(e.type === 'dir' ? { ...e, entries: e.size } : e); names.push(c)
  }
  return { entry: stack.at(-1), path: joinPath(names) }
}

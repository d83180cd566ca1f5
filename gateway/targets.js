// A directory's entries with what each symlink leads to, for listings and
// WebDAV (a symlinked directory is linked as "name/" and shown as a
// collection), with the work per request bounded (docs/TRUST.md rule 9). A hostile tree can hold a directory of a million symlinks,
// each a chain of 40 hops, whose pages are all cached: resolving them is pure
// CPU, and awaiting a resolved promise never lets the event loop turn. So:
//   - the loop yields to the event loop every YIELD_EVERY entries, and other
//     requests (of this tree or another) are served in between;
//   - symlink targets are resolved CONCURRENCY at a time (a cold tree's
//     fetches overlap; a warm one's work is bounded per turn);
//   - at most `budget` symlinks are resolved per request; past that a
//     symlink is listed with target `undefined` (not looked at), not dropped
//     from an HTML listing, and left out of WebDAV, which has no symlinks.
import { setImmediate as nextTurn } from 'node:timers/promises'
import { entriesOf, resolve } from './tree-access.js'
import { NOWHERE_CODES } from './http-status.js'

export const YIELD_EVERY = 64
export const CONCURRENCY = 8
export const TARGET_BUDGET = 10_000

/**
 * @param {import('./mount.js').Pin} pin
 * @param {string[]} rel the directory's names below the tree root
 * @param {object} dirEntry its verified entry
 * @param {{ links?: boolean, budget?: number }} [o] links: false lists symlinks without resolving them
 * @returns {AsyncGenerator<{ entry: object, target: object|null|undefined }>}
 *   target: the entry itself, a symlink's verified target, null when it leads
 *   nowhere (absent, or round in a loop), undefined when it was not resolved
 */
export async function * withTargets (pin, rel, dirEntry, { links = true, budget = TARGET_BUDGET } = {}) {
  const state = { left: links ? budget : 0 }
  let batch = []
  for await (const e of entriesOf(pin, dirEntry)) {
    batch.push(e)
    if (batch.length < YIELD_EVERY) continue
    yield * await targetsOf(pin, rel, batch, state)
    batch = []
    await nextTurn()
  }
  if (batch.length > 0) yield * await targetsOf(pin, rel, batch, state)
}

/** One batch, in order: symlinks resolved CONCURRENCY at a time while the budget lasts. */
async function targetsOf (pin, rel, batch, state) {
  const out = batch.map(e => ({ entry: e, target: e.type === 'symlink' ? undefined : e }))
  const todo = out.filter(o => o.entry.type === 'symlink')
  let next = 0
  let failed = null
  const worker = async () => {
    while (failed === null && next < todo.length && state.left > 0) {
      const o = todo[next++]
      state.left--
      try {
        o.target = await resolve(pin, [...rel, o.entry.name])
      } catch (err) {
        if (!NOWHERE_CODES.has(err.code)) { failed ??= err; return }
        o.target = null
      }
    }
  }
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, todo.length) }, worker))
  if (failed !== null) throw failed
  return out
}
